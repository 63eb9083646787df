"""engine.embedding.loading: the model loads once per process and as its own stage; a load
started in the background (`preload_model`, `preload_for`) is waited for, not repeated; a run
cancelled while waiting stops, the load goes on; a session of many items loads it once."""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest

from engine.core.errors import Cancelled, EmbeddingError
from engine.core.progress import CancelToken, Reporter
from engine.embedding import loading


class FakeModel:
    """Deterministic 8-dimensional vectors from the text, no truncation."""

    max_seq_length = None
    device = "cpu"

    def encode(self, texts, **_):
        out = np.array([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=8) for t in texts])
        return out.astype(np.float32)


@pytest.fixture
def loads(monkeypatch):
    """A fake loader that counts its calls, can be held back, and says it is distilling."""
    monkeypatch.setattr(loading, "_LOADS", {})
    calls = []
    gate = threading.Event()
    gate.set()

    def fake_load(name, reporter, device="auto"):
        calls.append(name)
        reporter("distilling", 0, 2, "making")
        while not gate.wait(0.01):
            reporter.check()
        reporter("distilling", 2, 2, "made")
        if name == "missing":
            raise EmbeddingError("Embedding model 'missing' could not be loaded")
        return FakeModel()

    monkeypatch.setattr(loading, "_load", fake_load)
    return calls, gate


def _recorder():
    seen = []
    return seen, Reporter(seen.append)


def test_a_model_loads_once_and_reports_its_stage_once(loads):
    calls, _ = loads
    seen, reporter = _recorder()
    model, seconds = loading.model_for("static", reporter)
    again, seconds_again = loading.model_for("STATIC", reporter)
    assert again is model and calls == ["static"]
    assert seconds >= 0.0 and seconds_again == 0.0
    stages = [(e.stage, e.done, e.total) for e in seen]
    assert stages == [("model", 0, 1), ("distilling", 0, 2), ("distilling", 2, 2), ("model", 1, 1)]


def test_the_bundled_models_names_are_one_model(loads):
    calls, _ = loads
    loading.model_for("sentence-transformers/all-MiniLM-L6-v2")
    loading.model_for("all-MiniLM-L6-v2")
    assert len(calls) == 1


def test_preloading_is_idempotent_and_thread_safe(loads):
    calls, gate = loads
    gate.clear()
    started = []
    threads = [
        threading.Thread(target=lambda: started.append(loading.preload_model("static")))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(load) for load in started}) == 1
    gate.set()
    started[0].done.wait(5)
    assert calls == ["static"]


def test_a_run_waits_for_the_background_load_and_hears_its_progress(loads):
    calls, gate = loads
    gate.clear()
    load = loading.preload_model("static")
    seen, reporter = _recorder()
    threading.Timer(0.2, gate.set).start()
    model, seconds = loading.model_for("static", reporter)
    assert model is load.model and calls == ["static"]
    assert seconds >= 0.1
    assert ("distilling", 2, 2) in [(e.stage, e.done, e.total) for e in seen]


def test_cancelling_a_waiting_run_stops_the_run_not_the_load(loads):
    calls, gate = loads
    gate.clear()
    load = loading.preload_model("static")
    token = CancelToken()
    threading.Timer(0.1, token.cancel).start()
    with pytest.raises(Cancelled):
        loading.model_for("static", Reporter(None, token))
    assert not load.done.is_set()
    gate.set()
    assert load.done.wait(5) and load.error is None
    assert loading.model_for("static")[0] is load.model and calls == ["static"]


def test_a_cancelled_or_failed_load_is_tried_again(loads):
    calls, gate = loads
    gate.clear()
    load = loading.preload_model("static")
    load.cancel()
    assert load.done.wait(5) and isinstance(load.error, Cancelled)
    gate.set()
    model, _ = loading.model_for("static")
    assert isinstance(model, FakeModel) and calls == ["static", "static"]
    with pytest.raises(EmbeddingError):
        loading.model_for("missing")
    with pytest.raises(EmbeddingError):
        loading.model_for("missing")
    assert calls.count("missing") == 2


def _items(config, n_items=3, per_item=12, words="answer"):
    """Items whose texts no other test embeds (the cache is shared by the test session)."""
    from engine.input.items import split_items

    rows = [
        {"item": f"q{i}", "answer": f"{words} {j} to question {i}", "score": str(j % 3)}
        for i in range(n_items)
        for j in range(per_item)
    ]
    return split_items(pd.DataFrame(rows), config)


def test_a_session_of_many_items_loads_the_model_once(loads):
    from engine.input.settings.config import load_defaults
    from engine.session import run_session

    calls, _ = loads
    config = load_defaults().updated(
        item_column="item", embedding_model="static", bootstrap_samples=0, cross_fit_folds=0
    )
    seen, reporter = _recorder()
    session = run_session(_items(config), config, progress=reporter.callback)
    assert calls == ["static"]
    assert [e.done for e in seen if e.stage == "model"] == [0, 1]
    assert "loading_model" in session.timings
    assert session.timings["embedding"] >= 0.0


def test_preload_for_loads_only_when_the_cache_lacks_answers(loads):
    from engine.embedding.sentence import embed_texts
    from engine.input.settings.config import load_defaults

    calls, _ = loads
    config = load_defaults().updated(item_column="item", embedding_model="static")
    items = _items(config, n_items=2, words="preloaded answer")
    loading.preload_for(items, config, precomputed=True)
    time.sleep(0.2)
    assert calls == []
    loading.preload_for(items, config)
    for _ in range(200):
        if calls:
            break
        time.sleep(0.02)
    assert calls == ["static"]
    for responses in items.audited:  # now every item is cached
        embed_texts(responses.texts, "static")
    loading._LOADS.clear()
    loading.preload_for(items, config)
    time.sleep(0.3)
    assert calls == ["static"]


def test_a_background_load_that_fails_says_so_when_the_run_needs_the_model(loads):
    """The error of a load started early reaches the run that needs the model, with the message
    a load in the run itself gives; nothing is said before. In flight, the run waits for it
    (one load); done, the run tries once more (as it would have loaded it itself)."""
    calls, gate = loads
    with pytest.raises(EmbeddingError) as direct:
        loading.model_for("missing")
    loading._LOADS.clear()
    gate.clear()
    load = loading.preload_model("missing")
    threading.Timer(0.1, gate.set).start()
    with pytest.raises(EmbeddingError) as waited:
        loading.model_for("missing")
    assert load.failed and str(waited.value) == str(direct.value)
    assert calls == ["missing", "missing"]
    with pytest.raises(EmbeddingError) as again:
        loading.model_for("missing")
    assert str(again.value) == str(direct.value) and calls.count("missing") == 3


def test_the_preloaded_model_is_the_one_the_session_uses(loads):
    """preload_for (what the CLI and the app call once the items are known) and the run: one
    load in the process; the run's model stage is its wait for that load."""
    from engine.input.settings.config import load_defaults
    from engine.session import run_session

    calls, gate = loads
    config = load_defaults().updated(
        item_column="item", embedding_model="static", bootstrap_samples=0, cross_fit_folds=0
    )
    items = _items(config, n_items=2, words="warmed answer")
    gate.clear()
    loading.preload_for(items, config)
    for _ in range(200):
        if calls:
            break
        time.sleep(0.02)
    threading.Timer(0.1, gate.set).start()
    session = run_session(items, config)
    assert calls == ["static"]
    assert session.timings["loading_model"] >= 0.0
