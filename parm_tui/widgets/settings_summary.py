"""The settings a run uses, in a few words each, for the Run screen and the resume question."""

from __future__ import annotations

MAX_LISTED = 4


def _numbers(values) -> str:
    shown = [f"{v:g}" for v in values]
    if len(shown) > MAX_LISTED:
        return f"{shown[0]}, {shown[1]}, …, {shown[-1]}"
    return ", ".join(shown)


def top_k_text(config) -> str:
    k = config.similarity_top_k
    if k is None:
        return "dense graph"
    return f"K {k}" if isinstance(k, int) else f"K {_numbers(k)}"


def power_text(config) -> str:
    p = config.power_values
    if p is None:
        interval = config.similarity_power
        return f"p {interval.min:g}–{interval.max:g} (Brent)"
    return f"p {_numbers(p)}"


def model_name(config, precomputed: bool = False) -> str:
    if precomputed:
        return "precomputed embeddings"
    return config.embedding_model.rstrip("/").split("/")[-1]


def settings_text(config, precomputed: bool = False) -> str:
    """Two lines: 'all-MiniLM-L6-v2 · K 5, 10, …, 50 · p 1 · by kappa · balanced' and
    'bootstrap 200 · 5 folds · seed 0'."""
    method = [
        model_name(config, precomputed),
        top_k_text(config),
        power_text(config),
        f"by {config.selection_metric}",
        config.class_weight or "unweighted",
    ]
    checks = [
        f"bootstrap {config.bootstrap_samples}",
        f"{config.cross_fit_folds} folds" if config.cross_fit_folds >= 2 else "no cross-fit",
        f"seed {config.seed}",
    ]
    if config.jobs > 1:
        checks.append(f"{config.jobs} worker processes")
    if config.scheduler:
        checks.append(f"Dask {config.scheduler}")
    return " · ".join(method) + "\n" + " · ".join(checks)


def columns_text(config) -> str:
    """'columns: text answer, score score, id id, 2nd score score2, ...': each role, then the
    column the run reads for it (a role and its column often share a name, so the role comes
    first and a colon starts the list)."""
    several = config.score_columns or ()
    roles = [
        ("text", config.text_column),
        ("score", config.score_column),
        ("id", config.id_column),
        ("2nd score", config.second_score_column),
        ("more reads", ",".join(several[1:])),  # the audited score's column is named above
        ("item", config.item_column),
        ("rater", config.rater_column),
        ("more raters", ",".join((config.rater_columns or ())[1:])),
        ("2nd rater", config.second_rater_column),
        ("time", config.time_column),
        ("question", config.question_column),
        ("reference", config.reference_column),
        ("expert", config.expert_column),
    ]
    long = " (long: one row per read)" if config.reads == "long" else ""
    return "columns: " + ", ".join(f"{role}={column}" for role, column in roles if column) + long
