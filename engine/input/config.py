"""`AuditConfig`: every defaults.json key, parsed and validated in one place.

This module is the only source of error messages about settings: each names the key, the value
and what is accepted.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from engine.cluster.address import local_workers
from engine.core.errors import ConfigError
from engine.core.files import atomic_write_text, open_regular
from engine.core.metric_names import METRIC_NAMES
from engine.core.suggest import did_you_mean
from engine.core.text import is_safe

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# The two similarity modes (`similarity_mode`), as report.json's similarity_mode names them.
SINGLE_VECTOR = "single-vector"
LATE_INTERACTION = "late-interaction"
# The fast path: a static model distilled from the bundled one (engine.embedding.static).
STATIC_MODEL = "static"
DEFAULTS_PATH = Path(__file__).resolve().parents[2] / "defaults.json"
# Where the embedding model runs (`device`): auto picks CUDA (or Apple MPS) when PyTorch sees it.
DEVICES = ("auto", "cpu", "cuda")
# How an answer longer than the model's input limit is read (`long_answers`,
# engine.embedding.reading): its first window only, or whole in overlapping windows.
LONG_ANSWERS = ("truncate", "windows")
# The answer cache's bound in MB (`embedding_cache_mb`): about 1.3 million answers of the bundled
# model (1.6 KB each with the database's own share); 0 keeps nothing.
DEFAULT_CACHE_MB = 2048
# A settings file is a few hundred bytes; a bigger one is the wrong file, and is not read whole.
MAX_CONFIG_BYTES = 1024 * 1024


@dataclass(frozen=True)
class PowerInterval:
    """Bounded interval for Brent's method on the power p."""

    min: float
    max: float
    tol: float = 0.02


@dataclass(frozen=True)
class AuditConfig:
    """Validated settings. `similarity_top_k`/`similarity_power` are tuples when they are grids.

    The field defaults are the engine's built-in copy of the repository's defaults.json (the
    specification; tests/test_packaging.py keeps the two equal), so an installed engine without
    the file behaves the same. DEFAULTS below is their JSON form.
    """

    embedding_model: str = DEFAULT_MODEL
    normalize_similarities: bool = True
    similarity_power: float | tuple[float, ...] | PowerInterval = 1.0
    similarity_top_k: int | tuple[int, ...] | None = (5, 10, 15, 20, 25, 30, 35, 40, 45, 50)
    similarity_top_k_symmetric: bool = True
    similarity_top_k_chunk: int = 2048
    colbert_top_k: int | None = 100
    colbert_batch_size: int = 256
    colbert_maxsim: str = "normalised"
    selection_metric: str = "kappa"
    class_weight: str | None = "balanced"
    text_column: str = "answer"
    score_column: str = "score"
    id_column: str | None = "id"
    second_score_column: str | None = None
    score_order: tuple[str, ...] | None = None
    item_column: str | None = None
    rater_column: str | None = None
    second_rater_column: str | None = None
    time_column: str | None = None
    on_bad_rows: str = "error"
    embedding_batch_size: int = 32
    long_answers: str = "truncate"
    embedding_cache_mb: int = DEFAULT_CACHE_MB
    near_duplicate_threshold: float = 0.95
    bootstrap_samples: int = 200
    cross_fit_folds: int = 5
    seed: int = 0
    jobs: int = 1
    scheduler: str | None = None
    scheduler_timeout: float = 20.0
    device: str = "auto"
    saved_runs: int = 10
    warnings: tuple[str, ...] = field(default=(), compare=False)

    # -- views used by the engine ---------------------------------------------------------------
    @property
    def top_k_values(self) -> tuple[int | None, ...]:
        k = self.similarity_top_k
        return (None,) if k is None else (k,) if isinstance(k, int) else tuple(k)

    @property
    def power_values(self) -> tuple[float, ...] | None:
        """The fixed or grid powers, or None when the power is tuned on an interval."""
        p = self.similarity_power
        if isinstance(p, PowerInterval):
            return None
        return (p,) if isinstance(p, float) else tuple(p)

    @property
    def late_interaction(self) -> bool:
        return is_late_interaction(self.embedding_model)

    def to_dict(self) -> dict:
        """The JSON form, the same shape defaults.json has."""
        out = asdict(self)
        out.pop("warnings")
        p = self.similarity_power
        out["similarity_power"] = (
            {"min": p.min, "max": p.max, "tol": p.tol}
            if isinstance(p, PowerInterval)
            else list(p)
            if isinstance(p, tuple)
            else p
        )
        k = self.similarity_top_k
        out["similarity_top_k"] = list(k) if isinstance(k, tuple) else k
        out["score_order"] = None if self.score_order is None else list(self.score_order)
        return out

    def updated(self, **changes) -> AuditConfig:
        """A new validated config with some keys changed (values in JSON form)."""
        merged = self.to_dict()
        merged.update(changes)
        return config_from_dict(merged)


# The built-in defaults in the JSON form defaults.json has: every setting a run knows.
DEFAULTS: dict = AuditConfig().to_dict()


def similarity_mode(model_name: str) -> str:
    """How responses are compared, by the paper's rule: a model whose name or path contains
    colbert, lateon or late-interaction (any case) compares token vectors (late interaction,
    MaxSim); any other compares one vector per response (cosine)."""
    name = model_name.lower()
    late = any(tag in name for tag in ("colbert", "lateon", "late-interaction"))
    return LATE_INTERACTION if late else SINGLE_VECTOR


def is_late_interaction(model_name: str) -> bool:
    return similarity_mode(model_name) == LATE_INTERACTION


def is_static_model(model_name: str) -> bool:
    """The name `static` (any case) selects the static model distilled from the bundled one."""
    return model_name.strip().lower() == STATIC_MODEL


def _fail(key: str, value, accepted: str) -> ConfigError:
    return ConfigError(
        f"Setting '{key}' = {json.dumps(value, default=str)} is invalid: {accepted}.", key
    )


def _bool(key, value):
    if not isinstance(value, bool):
        raise _fail(key, value, "expected true or false")
    return value


def _int(key, value, minimum=1, nullable=False):
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        extra = " or null" if nullable else ""
        raise _fail(key, value, f"expected an integer >= {minimum}{extra}")
    return value


def _positive(key, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(key, value, "expected a number > 0")
    if not math.isfinite(value) or value <= 0:
        raise _fail(key, value, "expected a finite number > 0")
    return float(value)


def _text(key, value, nullable=False):
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _fail(key, value, "expected a non-empty string" + (" or null" if nullable else ""))
    if not is_safe(value):
        raise _fail(
            key, value, "control characters (escape sequences, bidi overrides) are not allowed"
        )
    return value


def _top_k(value):
    key = "similarity_top_k"
    accepted = "expected an integer >= 1, a non-empty list of them, or null for the dense graph"
    if value is None:
        return None
    if isinstance(value, list):
        if not value:
            raise _fail(key, value, accepted)
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise _fail(key, value, accepted)
        return tuple(sorted(set(value)))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _fail(key, value, accepted)
    return value


def _power(value):
    key = "similarity_power"
    if isinstance(value, dict):
        unknown = set(value) - {"min", "max", "tol"}
        if unknown or "min" not in value or "max" not in value:
            raise _fail(key, value, 'an interval needs "min" and "max" (and optionally "tol")')
        lo, hi = _positive(key, value["min"]), _positive(key, value["max"])
        tol = _positive(key, value.get("tol", 0.02))
        if lo >= hi:
            raise _fail(key, value, "the interval needs min < max")
        return PowerInterval(lo, hi, tol)
    if isinstance(value, list):
        if not value:
            raise _fail(key, value, "a grid needs at least one power")
        return tuple(sorted({_positive(key, v) for v in value}))
    return _positive(key, value)


def _score_order(value):
    """The score labels lowest first, as written in the file: a list, or one comma-separated
    string (as `--score-order "low,medium,high"` gives it); null: numbers in numeric order,
    text labels unordered."""
    key = "score_order"
    if value is None:
        return None
    labels = value.split(",") if isinstance(value, str) else value
    accepted = 'expected null or the score labels lowest first, e.g. ["low", "medium", "high"]'
    if not isinstance(labels, list) or not all(isinstance(v, str) for v in labels):
        raise _fail(key, value, accepted)
    labels = [v.strip() for v in labels]
    if len(labels) < 2 or "" in labels:
        raise _fail(key, value, accepted + " (at least two, none empty)")
    if not all(is_safe(v) for v in labels):
        raise _fail(key, value, "control characters are not allowed in score labels")
    repeated = sorted({v for v in labels if labels.count(v) > 1})
    if repeated:
        raise _fail(key, value, f"each label once ({', '.join(repeated)} repeated)")
    return tuple(labels)


def _choice(key, value, choices):
    if value not in choices:
        shown = ", ".join("null" if c is None else str(c) for c in choices)
        raise _fail(key, value, f"expected one of {shown}")
    return value


def unknown_settings(names: list[str], where: str = "") -> str:
    """The message about settings this parm does not know: the closest known one for each
    (difflib), or, when none is close, every known setting."""
    hints = [did_you_mean(name, DEFAULTS) for name in names]
    named = ", ".join(f"'{name}'" for name in names)
    text = f"Unknown setting{'s' if len(names) > 1 else ''} {named}{where}."
    if any(hints):
        return text + "".join(hint for hint in hints if hint)
    return text + f" Known settings: {', '.join(DEFAULTS)}."


def config_from_dict(values: dict) -> AuditConfig:
    """Validate a dict of settings (missing keys take the defaults) into an `AuditConfig`."""
    if not isinstance(values, dict):
        raise ConfigError(f"Settings must be a JSON object, got {type(values).__name__}.")
    unknown = sorted(str(key) for key in set(values) - set(DEFAULTS))
    if unknown:
        raise ConfigError(unknown_settings(unknown))
    v = {**DEFAULTS, **values}
    warnings = []
    power = _power(v["similarity_power"])
    if not v["normalize_similarities"] and power != 1.0:
        warnings.append(
            "normalize_similarities is false: negative cosine similarities are set to 0 "
            "before the power is applied."
        )
    config = AuditConfig(
        embedding_model=_text("embedding_model", v["embedding_model"]),
        normalize_similarities=_bool("normalize_similarities", v["normalize_similarities"]),
        similarity_power=power,
        similarity_top_k=_top_k(v["similarity_top_k"]),
        similarity_top_k_symmetric=_bool(
            "similarity_top_k_symmetric", v["similarity_top_k_symmetric"]
        ),
        similarity_top_k_chunk=_int("similarity_top_k_chunk", v["similarity_top_k_chunk"]),
        colbert_top_k=_int("colbert_top_k", v["colbert_top_k"], nullable=True),
        colbert_batch_size=_int("colbert_batch_size", v["colbert_batch_size"]),
        colbert_maxsim=_choice("colbert_maxsim", v["colbert_maxsim"], ("normalised", "raw")),
        selection_metric=_choice("selection_metric", v["selection_metric"], METRIC_NAMES),
        class_weight=_choice("class_weight", v["class_weight"], ("balanced", None)),
        text_column=_text("text_column", v["text_column"]),
        score_column=_text("score_column", v["score_column"]),
        id_column=_text("id_column", v["id_column"], nullable=True),
        second_score_column=_text("second_score_column", v["second_score_column"], nullable=True),
        score_order=_score_order(v["score_order"]),
        item_column=_text("item_column", v["item_column"], nullable=True),
        rater_column=_text("rater_column", v["rater_column"], nullable=True),
        second_rater_column=_text("second_rater_column", v["second_rater_column"], nullable=True),
        time_column=_text("time_column", v["time_column"], nullable=True),
        on_bad_rows=_choice("on_bad_rows", v["on_bad_rows"], ("error", "skip")),
        embedding_batch_size=_int("embedding_batch_size", v["embedding_batch_size"]),
        long_answers=_choice("long_answers", v["long_answers"], LONG_ANSWERS),
        embedding_cache_mb=_int("embedding_cache_mb", v["embedding_cache_mb"], minimum=0),
        near_duplicate_threshold=_unit("near_duplicate_threshold", v["near_duplicate_threshold"]),
        bootstrap_samples=_int("bootstrap_samples", v["bootstrap_samples"], minimum=0),
        cross_fit_folds=_int("cross_fit_folds", v["cross_fit_folds"], minimum=0),
        seed=_int("seed", v["seed"], minimum=0),
        jobs=_int("jobs", v["jobs"]),
        scheduler=_scheduler(v["scheduler"]),
        scheduler_timeout=_positive("scheduler_timeout", v["scheduler_timeout"]),
        device=_choice("device", v["device"], DEVICES),
        saved_runs=_int("saved_runs", v["saved_runs"]),
        warnings=tuple(warnings),
    )
    _check_candidates(config)
    if config.second_rater_column is not None and config.second_score_column is None:
        raise ConfigError(
            f"Setting 'second_rater_column' = {json.dumps(config.second_rater_column)} needs "
            "'second_score_column': it names who gave the second scores.",
            "second_rater_column",
        )
    if config.time_column is not None and config.rater_column is None:
        raise ConfigError(
            f"Setting 'time_column' = {json.dumps(config.time_column)} needs 'rater_column': "
            "the time column dates each rater's scores, to see whether a rater drifts.",
            "time_column",
        )
    return config


def _check_candidates(config: AuditConfig) -> None:
    """In late-interaction mode the top-K graph is pruned from the colbert_top_k candidates."""
    if not config.late_interaction or config.colbert_top_k is None:
        return
    too_large = [k for k in config.top_k_values if k is not None and k > config.colbert_top_k]
    if too_large:
        raise ConfigError(
            f"Setting 'similarity_top_k' has {', '.join(map(str, too_large))} above "
            f"'colbert_top_k' = {config.colbert_top_k}: in late-interaction mode the top-K graph "
            "is pruned from the colbert_top_k MaxSim candidates, so every similarity_top_k must be "
            "<= colbert_top_k. Raise colbert_top_k or lower similarity_top_k.",
            "similarity_top_k",
        )


def _scheduler(value):
    """A Dask scheduler's address (`tcp://host:8786`, `host:8786`), `local` or `local:N` (a
    cluster of N worker processes on this machine, engine.cluster.address), or null: none."""
    key = "scheduler"
    accepted = (
        'expected null, a Dask scheduler\'s address such as "tcp://10.0.0.5:8786", or "local:N" '
        "for N worker processes on this machine"
    )
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value.strip()):
        raise _fail(key, value, accepted)
    if not is_safe(value):
        raise _fail(key, value, "control characters are not allowed")
    local_workers(value.strip())  # a bad N in "local:N" is refused here, naming the setting
    return value.strip()


def _unit(key, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise _fail(key, value, "expected a number in (0, 1]")
    return float(value)


def fit_top_k(config: AuditConfig, n_responses: int) -> tuple[AuditConfig, list[str]]:
    """Keep only the K values a run on `n_responses` responses can use (K < N).

    Grid values at or above N are dropped with a warning, so the default grid still runs on a
    small file; when no value is left the run stops with an error naming the setting.
    Returns the (possibly changed) config and its warnings.
    """
    k = config.similarity_top_k
    if k is None:
        return config, []
    values = (k,) if isinstance(k, int) else tuple(k)
    usable = [v for v in values if v < n_responses]
    if len(usable) == len(values):
        return config, []
    too_big = ", ".join(str(v) for v in values if v >= n_responses)
    if not usable:
        raise ConfigError(
            f"Setting 'similarity_top_k' = {json.dumps(list(values) if len(values) > 1 else k)} "
            f"is invalid for this file: every K must be smaller than the number of responses "
            f"({n_responses}). Use values below {n_responses}, or null for the dense graph.",
            "similarity_top_k",
        )
    changed = config.updated(similarity_top_k=usable if len(usable) > 1 else usable[0])
    return changed, [
        f"Setting 'similarity_top_k': left out K = {too_big}, not smaller than the number of "
        f"responses ({n_responses})."
    ]


def load_defaults() -> AuditConfig:
    """The repository's defaults.json when present, else the built-in copy of it."""
    if DEFAULTS_PATH.is_file():
        return load_config(DEFAULTS_PATH)
    return config_from_dict({})


def load_config(path: str | Path) -> AuditConfig:
    """Read a JSON settings file; keys it leaves out take the defaults. Only a regular file of
    at most MAX_CONFIG_BYTES is read, and nesting too deep for the parser is an error."""
    path = Path(path).expanduser()
    with open_regular(path, "Config file", ConfigError) as handle:
        try:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
        except OSError as exc:
            raise ConfigError(f"Config file {path} cannot be read: {exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"Config file {path} is larger than {MAX_CONFIG_BYTES // 1024} KB; a settings file "
            "is a few hundred bytes (is it the right file?)."
        )
    try:
        values = _json(raw.decode("utf-8-sig"), f"Config file {path}")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"Config file {path} cannot be read: {exc}") from None
    try:
        return config_from_dict(values)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}", exc.key) from None


def _json(text: str, what: str):
    """Parse JSON; syntax errors and nesting too deep to parse are ConfigErrors naming `what`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{what} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}."
        ) from None
    except RecursionError:
        raise ConfigError(f"{what} is nested too deeply to be settings.") from None


def parse_override(item: str) -> tuple[str, object]:
    """`KEY=VALUE` from the command line: VALUE as JSON, or a plain string when it is not JSON."""
    if "=" not in item:
        raise ConfigError(f"--set expects KEY=VALUE, got '{item}'.")
    key, raw = item.split("=", 1)
    key = key.strip()
    if key not in DEFAULTS:
        raise ConfigError(unknown_settings([key], " in --set"))
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    except RecursionError:
        raise ConfigError(
            f"--set {key}: the value is nested too deeply to be a setting.", key
        ) from None
    return key, value


def build_config(
    config_path: str | Path | None = None,
    overrides: list[str] = (),
    columns: dict | None = None,
) -> AuditConfig:
    """The settings a run uses, assembled in one order for every front end: defaults.json (or
    the --config file), then the column choices (and --score-order), then each --set
    KEY=VALUE; validated once."""
    config = load_config(config_path) if config_path else load_defaults()
    changes = {key: value for key, value in (columns or {}).items() if value is not None}
    for item in overrides:
        key, value = parse_override(item)
        changes[key] = value
    return config.updated(**changes) if changes else config


def save_config(config: AuditConfig, path: str | Path) -> None:
    """Write the settings as JSON (atomically), so they can be loaded again."""
    atomic_write_text(Path(path), json.dumps(config.to_dict(), indent=2) + "\n")


# Settings that change nothing a run computes, only what is kept of it or where it runs (a
# cluster's results equal one process's; the device only moves the same model): not in the
# digest, so the digests of decisions and saved runs stay those of earlier parm versions.
NOT_DIGESTED = ("saved_runs", "scheduler", "scheduler_timeout", "device", "embedding_cache_mb")
# Settings added later, left out of the digest at the value that reproduces what earlier
# versions computed, so their runs keep their digests.
DIGESTED_WHEN_NOT = {"long_answers": "truncate"}


def settings_digest(config: AuditConfig) -> str:
    """A short fingerprint of the settings: 12 hex digits of SHA-256 over their JSON form (keys
    sorted, NOT_DIGESTED left out), so runs with the same settings carry the same digest on any
    machine."""
    values = {
        k: v
        for k, v in config.to_dict().items()
        if k not in NOT_DIGESTED and (k not in DIGESTED_WHEN_NOT or DIGESTED_WHEN_NOT[k] != v)
    }
    text = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


__all__ = [
    "AuditConfig",
    "PowerInterval",
    "DEFAULTS",
    "config_from_dict",
    "load_config",
    "load_defaults",
    "parse_override",
    "save_config",
    "settings_digest",
    "build_config",
    "fit_top_k",
    "is_late_interaction",
    "is_static_model",
    "similarity_mode",
    "replace",
]
