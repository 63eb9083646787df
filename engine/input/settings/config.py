"""`AuditConfig`: every setting of the table (engine.input.settings.declared), read and validated in one
place: each setting by its rule (engine.input.settings.rules), then the rules between settings
(engine.input.settings.checks).

The messages about settings come from here and from the rules: each names the key, the value and
what is accepted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.core.errors import ConfigError
from engine.core.files import atomic_write_text, open_regular
from engine.core.suggest import did_you_mean
from engine.input.settings.checks import check_between
from engine.input.settings.declared import (
    DEFAULT_CACHE_MB,
    DEFAULT_MODEL,
    DEFAULTS,
    SETTINGS,
    digested,
)
from engine.input.settings.rules import PowerInterval

# The two similarity modes (`similarity_mode`), as report.json's similarity_mode names them.
SINGLE_VECTOR = "single-vector"
LATE_INTERACTION = "late-interaction"
# The fast path: a static model distilled from the bundled one (engine.embedding.static).
STATIC_MODEL = "static"
DEFAULTS_PATH = Path(__file__).resolve().parents[3] / "defaults.json"
# A settings file is a few hundred bytes; a bigger one is the wrong file, and is not read whole.
MAX_CONFIG_BYTES = 1024 * 1024


@dataclass(frozen=True)
class AuditConfig:
    """Validated settings: one field per setting of engine.input.settings.declared, in its order,
    with its type and its default as its rule reads it (tests/test_config_fields.py keeps them
    equal), and the warnings validation gave. `similarity_top_k`/`similarity_power` are tuples
    when they are grids. Build one with `config_from_dict` (or `updated`), which validates."""

    # How answers are compared (the Settings form; colbert_*: late interaction).
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

    # The file's columns and how it holds its reads (the Load screen, the CLI's column flags).
    text_column: str = "answer"
    score_column: str = "score"
    id_column: str | None = "id"
    second_score_column: str | None = None
    score_columns: tuple[str, ...] | None = None
    rater_columns: tuple[str, ...] | None = None
    reads: str = "wide"
    answers_file: str | None = None
    sheet: str | None = None
    score_order: tuple[str, ...] | None = None
    item_column: str | None = None
    rater_column: str | None = None
    second_rater_column: str | None = None
    time_column: str | None = None
    expert_column: str | None = None
    question_column: str | None = None
    reference_column: str | None = None
    kind_column: str | None = None

    # The fit, its figures, and where and how a run happens.
    on_bad_rows: str = "error"
    embedding_batch_size: int = 32
    long_answers: str = "truncate"
    session_model: str = "auto"
    embedding_cache_mb: int = DEFAULT_CACHE_MB
    near_duplicate_threshold: float = 0.95
    flag_precision: float | None = None
    bootstrap_samples: int = 200
    cross_fit_folds: int = 5
    seed: int = 0
    jobs: int = 1
    scheduler: str | None = None
    scheduler_timeout: float = 20.0
    device: str = "auto"
    saved_runs: int = 10
    reviewer: str | None = None
    serve_max_sessions: int = 4
    serve_idle_minutes: int = 30

    # The lead's lists (engine.actions).
    backread_rate: float = 0.05
    backread_minimum: int = 5
    backread_watch_rate: float = 0.1
    backread_random_share: float = 0.5
    backread_supervisors: tuple[str, ...] | None = None
    third_read_gap: int = 2
    third_read_unsure: bool = True
    third_read_cap: int = 50
    exact_targets: tuple[float, ...] = (0.85, 0.8, 0.75, 0.75, 0.6)
    qualify_targets: tuple[float, ...] = (0.9, 0.8, 0.7)
    adjacent_target: float = 0.95
    status_minimum: int = 10
    status_window: int = 50

    # A live session's alert rules (engine.live.alerts.rules).
    monitor_min_reads: int = 20
    monitor_alert_p: float = 0.01
    monitor_adjacent_targets: tuple[float, ...] = (1.0, 0.95, 0.95, 0.95, 0.9)
    monitor_validity_window: int = 20
    monitor_history_periods: int = 3
    monitor_history_percentiles: tuple[float, ...] = (20.0, 5.0)
    monitor_within_day_drop: float = 0.05
    monitor_drift_points: float = 0.1

    warnings: tuple[str, ...] = field(default=(), compare=False)

    # -- what the engine asks of the settings beyond their values ---------------------------------
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
    def power_interval(self) -> PowerInterval:
        """The interval the power is tuned on (where `power_values` is None)."""
        p = self.similarity_power
        if not isinstance(p, PowerInterval):
            raise TypeError(f"similarity_power is not an interval: {p!r}")
        return p

    @property
    def late_interaction(self) -> bool:
        return is_late_interaction(self.embedding_model)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, the same shape defaults.json has."""
        out = asdict(self)
        out.pop("warnings")
        # Grids and lists of labels or columns are tuples here and lists in JSON.
        out = {
            key: list(value) if isinstance(value, tuple) else value for key, value in out.items()
        }
        p = self.similarity_power
        if isinstance(p, PowerInterval):
            out["similarity_power"] = {"min": p.min, "max": p.max, "tol": p.tol}
        return out

    def updated(self, **changes: object) -> AuditConfig:
        """A new validated config with some keys changed (values in JSON form)."""
        merged = self.to_dict()
        merged.update(changes)
        return config_from_dict(merged)


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


def unknown_settings(names: list[str], where: str = "") -> str:
    """The message about settings this parm does not know: the closest known one for each
    (difflib), or, when none is close, every known setting."""
    hints = [did_you_mean(name, DEFAULTS) for name in names]
    named = ", ".join(f"'{name}'" for name in names)
    text = f"Unknown setting{'s' if len(names) > 1 else ''} {named}{where}."
    if any(hints):
        return text + "".join(hint for hint in hints if hint)
    return text + f" Known settings: {', '.join(DEFAULTS)}."


def config_from_dict(values: dict[str, Any]) -> AuditConfig:
    """Validate a dict of settings (missing keys take the defaults) into an `AuditConfig`."""
    if not isinstance(values, dict):
        raise ConfigError(f"Settings must be a JSON object, got {type(values).__name__}.")
    unknown = sorted(str(key) for key in set(values) - set(DEFAULTS))
    if unknown:
        raise ConfigError(unknown_settings(unknown))
    v = {**DEFAULTS, **values}
    warnings: list[str] = []
    values = {
        setting.name: setting.rule.read(setting.name, v[setting.name]) for setting in SETTINGS
    }
    if not values["normalize_similarities"] and values["similarity_power"] != 1.0:
        warnings.append(
            "normalize_similarities is false: negative cosine similarities are set to 0 "
            "before the power is applied."
        )
    config = AuditConfig(**values, warnings=tuple(warnings))
    check_between(config)
    return config


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


def _json(text: str, what: str) -> Any:
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
    overrides: Sequence[str] = (),
    columns: dict[str, Any] | None = None,
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


def settings_digest(config: AuditConfig, leave_out: tuple[str, ...] = ()) -> str:
    """A short fingerprint of the settings: 12 hex digits of SHA-256 over their JSON form (keys
    sorted; engine.input.settings.declared.digested says which count), so runs with the same settings
    carry the same digest on any machine, and an upgrade keeps the digests of earlier runs.
    leave_out: settings not counted (what one part of a run does not read)."""
    values = {k: v for k, v in config.to_dict().items() if digested(k, v) and k not in leave_out}
    text = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


__all__ = [
    "AuditConfig",
    "PowerInterval",
    "DEFAULT_MODEL",
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
