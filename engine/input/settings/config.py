"""`AuditConfig`: every setting of the table (engine.input.settings.declared), read and validated in one
place: each setting by its rule (engine.input.settings.rules), then the rules between settings.

The messages about settings come from here and from the rules: each names the key, the value and
what is accepted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, field, make_dataclass, replace
from pathlib import Path

from engine.core.errors import ConfigError
from engine.core.files import atomic_write_text, open_regular
from engine.core.suggest import did_you_mean
from engine.input.settings.declared import DEFAULT_MODEL, DEFAULTS, SETTINGS, digested
from engine.input.settings.rules import PowerInterval

# The two similarity modes (`similarity_mode`), as report.json's similarity_mode names them.
SINGLE_VECTOR = "single-vector"
LATE_INTERACTION = "late-interaction"
# The fast path: a static model distilled from the bundled one (engine.embedding.static).
STATIC_MODEL = "static"
DEFAULTS_PATH = Path(__file__).resolve().parents[3] / "defaults.json"
# A settings file is a few hundred bytes; a bigger one is the wrong file, and is not read whole.
MAX_CONFIG_BYTES = 1024 * 1024


class _Views:
    """What the engine asks of the settings beyond their values (AuditConfig's methods)."""

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
        # Grids and lists of labels or columns are tuples here and lists in JSON.
        out = {
            key: list(value) if isinstance(value, tuple) else value for key, value in out.items()
        }
        p = self.similarity_power
        if isinstance(p, PowerInterval):
            out["similarity_power"] = {"min": p.min, "max": p.max, "tol": p.tol}
        return out

    def updated(self, **changes) -> AuditConfig:
        """A new validated config with some keys changed (values in JSON form)."""
        merged = self.to_dict()
        merged.update(changes)
        return config_from_dict(merged)


AuditConfig = make_dataclass(
    "AuditConfig",
    [
        (
            setting.name,
            setting.type,
            field(default=setting.rule.read(setting.name, setting.default)),
        )
        for setting in SETTINGS
    ]
    + [("warnings", "tuple[str, ...]", field(default=(), compare=False))],
    bases=(_Views,),
    frozen=True,
)
AuditConfig.__module__ = __name__  # where pickle (worker processes, Dask) finds it
AuditConfig.__doc__ = """Validated settings: one field per setting of engine.input.settings.declared (in its
order, with its type and its default read by its rule), and the warnings validation gave.
`similarity_top_k`/`similarity_power` are tuples when they are grids."""


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


def config_from_dict(values: dict) -> AuditConfig:
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
    _check_candidates(config)
    _check_reads(config)
    _check_actions(config)
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


def _check_reads(config: AuditConfig) -> None:
    """The settings of several reads agree: score_columns starts with score_column and does not
    come with second_score_column; rater_columns goes with score_columns, one per read, and
    starts with rater_column when that is set; a long file has an id and a rater column and
    keeps each read on a row of its own."""

    def refuse(key: str, why: str) -> ConfigError:
        value = json.dumps(getattr(config, key), default=list)
        return ConfigError(f"Setting '{key}' = {value} {why}", key)

    reads = config.score_columns
    if reads is not None:
        if config.second_score_column is not None:
            raise refuse("second_score_column", "and 'score_columns' both name reads: use one.")
        if reads[0] != config.score_column:
            raise refuse("score_columns", f"must start with the audited score column "
                         f"'score_column' ({config.score_column!r}).")  # fmt: skip
    raters = config.rater_columns
    if raters is not None:
        if reads is None or len(raters) != len(reads):
            raise refuse("rater_columns", "needs 'score_columns' with as many columns: one rater "
                         "column per read.")  # fmt: skip
        if config.rater_column is not None and raters[0] != config.rater_column:
            raise refuse("rater_columns", f"must start with 'rater_column' "
                         f"({config.rater_column!r}).")  # fmt: skip
    if config.reads == "long":
        for key, why in (("id_column", "an id column says which answer a row reads"),
                         ("rater_column", "a rater column says who gave each read")):  # fmt: skip
            if getattr(config, key) is None:
                raise refuse("reads", f"needs '{key}': {why}.")
        for key in ("score_columns", "second_score_column"):
            if getattr(config, key) is not None:
                raise refuse(key, "is for a wide file: a long file has one read per row.")
    elif config.answers_file is not None:
        raise refuse("answers_file", "is for a long file (reads \"long\"): a wide file has "
                     "its answers on its rows.")  # fmt: skip


def _check_actions(config: AuditConfig) -> None:
    """The lead's lists (engine.actions): a raised backread rate is not lower than the rate,
    and the status rules' window holds at least the reads they need to judge."""
    if config.backread_watch_rate < config.backread_rate:
        raise ConfigError(
            f"Setting 'backread_watch_rate' = {config.backread_watch_rate:g} is below "
            f"'backread_rate' = {config.backread_rate:g}: the rate on watch is a raised one.",
            "backread_watch_rate",
        )
    if config.status_window < config.status_minimum:
        raise ConfigError(
            f"Setting 'status_window' = {config.status_window} is below 'status_minimum' = "
            f"{config.status_minimum}: no rater could ever be judged.",
            "status_window",
        )


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


def settings_digest(config: AuditConfig) -> str:
    """A short fingerprint of the settings: 12 hex digits of SHA-256 over their JSON form (keys
    sorted; engine.input.settings.declared.digested says which count), so runs with the same settings
    carry the same digest on any machine, and an upgrade keeps the digests of earlier runs."""
    values = {k: v for k, v in config.to_dict().items() if digested(k, v)}
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
