"""Getting the embedding model: loaded once per process, reported as a stage of its own
("model"), and startable in the background so that a run finds it ready.

`preload_model(name)` is for a front end that knows early which model a run will need (the app,
when a file is opened, while the user checks the columns): it returns at once and loads in a
daemon thread. `model_for(name, reporter)` is what the embedding step calls: the loaded model at
once, or it waits for the load in progress (relaying its progress, and stopping at the run's own
cancel), or it loads the model itself. Either way one model is loaded once per process, whatever
the number of items. Loading the static model the first time includes its distillation (stage
"distilling", engine.embedding.static).
"""

from __future__ import annotations

import threading
import time

from engine.core.progress import MODEL, CancelToken, ProgressEvent, Reporter
from engine.input.settings.config import DEFAULT_MODEL, is_static_model

MODEL_STAGE = MODEL
# How often a run waiting for a load started elsewhere looks at its own cancel token.
WAIT_SECONDS = 0.1


class ModelLoad:
    """One model's loading. The thread that runs it fills `model` (or `error`) and sets `done`;
    progress goes to every run waiting on it. `cancel()` stops a distillation at its next batch
    (loading a transformer cannot be interrupted; the app may simply ignore a load it no longer
    needs)."""

    def __init__(self, name: str, device: str = "auto") -> None:
        self.name = name
        self.device = device
        self.done = threading.Event()
        self.model = None
        self.error: BaseException | None = None
        self.seconds = 0.0
        self.token = CancelToken()
        self._listeners: list = []
        self._lock = threading.Lock()

    def cancel(self) -> None:
        self.token.cancel()

    @property
    def failed(self) -> bool:
        return self.done.is_set() and self.error is not None

    def run(self) -> None:
        """Load the model in this thread; never raises (the error is kept for the waiters)."""
        started = time.perf_counter()
        try:
            self.model = _load(self.name, Reporter(self._broadcast, self.token), self.device)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the model
            self.error = exc
        finally:
            self.seconds = time.perf_counter() - started
            self.done.set()

    def listen(self, callback) -> None:
        with self._lock:
            self._listeners.append(callback)

    def forget(self, callback) -> None:
        with self._lock:
            if callback in self._listeners:
                self._listeners.remove(callback)

    def _broadcast(self, event: ProgressEvent) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for callback in listeners:
            try:
                callback(event)
            except Exception:  # noqa: BLE001, S110 - a front end's display error must not stop the load
                pass


_LOADS: dict[str, ModelLoad] = {}
_LOADS_LOCK = threading.Lock()


def model_key(name: str, device: str = "auto") -> str:
    """One key per model and device, whatever name it was asked by (the bundled model has
    several); the static model runs on the CPU whatever the device."""
    from engine.embedding.bundled import BUNDLED_NAMES

    if is_static_model(name):
        return "static"
    stripped = name.strip()
    model = DEFAULT_MODEL if stripped.lower() in BUNDLED_NAMES else stripped
    return model if device == "auto" else f"{model}@{device}"


def preload_model(name: str, device: str = "auto") -> ModelLoad:
    """Start loading `name` in a background (daemon) thread and return at once. Thread-safe and
    idempotent: while a load of the same model is running or has succeeded, that load is
    returned; after a failed or cancelled one, a new one starts. Errors are not raised here: a
    run that needs the model gets them from `model_for`."""
    with _LOADS_LOCK:
        load = _LOADS.get(model_key(name, device))
        if load is not None and not load.failed:
            return load
        load = ModelLoad(name, device)
        _LOADS[model_key(name, device)] = load
    threading.Thread(target=load.run, name="parm-model-load", daemon=True).start()
    return load


def preload_for(items, config, precomputed: bool = False) -> None:
    """What a front end calls as soon as it knows the file and the settings (the app: when a
    file is opened): in a background thread, check whether any item's answers are missing from
    the embedding cache and, if so, start loading the model (`preload_model`). Returns at once;
    does nothing with precomputed embeddings, in late-interaction mode (whose token models
    load with the run) and with a Dask scheduler, whose workers embed (engine.cluster). Safe to
    call again, e.g. after the settings change: a model already loading or loaded is not loaded
    twice."""
    from engine.cluster.address import scheduler_address

    if precomputed or config.late_interaction or scheduler_address(config.scheduler):
        return

    def check_then_load() -> None:
        from engine.embedding.cache.run_cache import RunCache

        name = config.embedding_model
        run = RunCache(name, config.embedding_cache_mb)
        try:
            held = run.holds([r.texts for r in items.audited], config.long_answers)
        finally:
            run.close()
        if not held:
            preload_model(name, config.device)

    threading.Thread(target=check_then_load, name="parm-model-check", daemon=True).start()


def model_for(name: str, reporter: Reporter | None = None, device: str = "auto"):
    """The model for `name` on `device` (the `device` setting) and the seconds this call spent
    loading it or waiting for it (0.0 when it was ready). Stage "model" (and "distilling" the
    static model's first time) is reported only when there is something to wait for. Raises
    Cancelled when the run's token is set (a load started by `preload_model` goes on in its
    thread), EmbeddingError when the model is not available or the device is not there."""
    reporter = reporter or Reporter()
    key = model_key(name, device)
    with _LOADS_LOCK:
        load = _LOADS.get(key)
        # None yet, or a load that failed or was cancelled: this run loads the model itself.
        ours = load is None or load.failed
        if ours:
            load = ModelLoad(name, device)
            load.token = reporter.token
            _LOADS[key] = load
    assert load is not None  # made just above where there was none
    if load.done.is_set() and load.error is None:
        return load.model, 0.0
    started = time.perf_counter()
    reporter(MODEL_STAGE, 0, 1, f"loading model {name}")
    if ours:
        load.listen(_relay(reporter))
        load.run()
    else:
        _wait(load, reporter)
    if load.error is not None:
        raise load.error
    reporter(MODEL_STAGE, 1, 1, f"model {name} loaded")
    return load.model, time.perf_counter() - started


def _wait(load: ModelLoad, reporter: Reporter) -> None:
    relay = _relay(reporter)
    load.listen(relay)
    try:
        while not load.done.wait(WAIT_SECONDS):
            reporter.check()
    finally:
        load.forget(relay)


def _relay(reporter: Reporter):
    """Forward the load's events to a run's front end (never the run's cancel check: that is
    the run's business, not the load's)."""
    callback = reporter.callback

    def relay(event: ProgressEvent) -> None:
        if callback is not None:
            callback(event)

    return relay


def _load(name: str, reporter: Reporter, device: str = "auto"):
    if is_static_model(name):  # numpy on the CPU, whatever the device
        from engine.embedding.static import load_static

        return load_static(reporter)
    from engine.embedding.models import load_sentence_model

    return load_sentence_model(name, device=device)
