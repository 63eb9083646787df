"""The report's content, built from an `AuditResult`: everything report.json holds, as plain
JSON-ready values. engine.outputs.report.markdown renders it for people; this module knows nothing of
rendering."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np

from engine.audit.intervals import LEVEL
from engine.core.versions import parm_version
from engine.model.metrics import ORDINAL_METRICS, confusion, metric_names
from engine.results.headline import NOMINAL_NOTE
from engine.results.item import AuditResult

SEVERITY_DEFINITION = (
    "the probability that another read would give the answer another score, on one scale "
    "across items: 1 - p(human score) from models that never saw the response's score (two "
    "logistic regressions, on the embeddings and on word and character n-grams, cross-fitted "
    "over random folds and stacked with the PARM graph's features, and over folds of whole "
    "groups of similar answers, so a wording scored the same wrong way throughout is not "
    "learned), their logits averaged (for an answer read once where the file names two raters "
    "or more, with a third of the weight to a model that never saw the rater's own scores, up "
    "to two thirds where that rater read most of the item), "
    "then mapped to that probability by a calibration fitted on real second reads (or "
    "relearned from the session's own answers read twice). Chosen by leaving one kind of file "
    "out (docs/explanation/severity.md)"
)
BOOTSTRAP_METHOD = (
    "bootstrap over responses (kappa and QWK: the estimate +- t x the draws' SD, within [-1, 1]; "
    "accuracy: Wilson's score interval); the model's predictions are held fixed (not refitted)"
)
CROSS_FIT_METHOD = (
    "K, p and the parameters chosen on the other folds' labels only; held-out labels masked "
    "from the features; agreement over all held-out predictions"
)
STANDARD_ERRORS_METHOD = (
    "H^-1 B H^-1, H the Hessian of the weighted log pseudo-likelihood and B = sum of g_i g_j^T "
    "over every response i and j = i or a neighbour of i in the selected graph (g_i response "
    "i's score contribution; with balanced weights centred within its category, as the weights "
    "are estimated); valid when the scores follow the model on that graph, conditional on the "
    "selected K and p; 95% interval: estimate +/- 1.96 SE. With balanced weights, beta and "
    "gamma estimate the model's parameters and mu_c estimates mu_c + log(n_0 / n_c). The dense "
    "graph has no neighbourhoods, hence no standard errors"
)
# The field's usual minimums for agreement with human scores (as ETS's RSMTool highlights
# them): exact agreement 50%, adjacent (near) agreement 95%, QWK 0.70. A figure below its
# minimum is highlighted in report.md and report.html.
FIELD_THRESHOLDS = {"accuracy": 0.50, "near": 0.95, "qwk": 0.70}
# Human-human QWK minus the model's: above this the model falls short of the raters.
DEGRADATION_THRESHOLD = 0.10
EVIDENCE_FORMAT = (
    "row:score:weight for the strongest neighbours in the fitted graph (weight = normalised "
    "similarity to the power p), separated by ';'"
)


def _clean(value):
    """JSON-safe numbers: NaN and infinities become None."""
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else round(float(value), 6)
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


def parameters(result: AuditResult) -> list[dict]:
    """beta_c, gamma_c, mu_c for c = 1..C with their standard errors."""
    fitted = result.fitted
    labels = result.responses.labels
    c = len(labels) - 1
    out = []
    for f, name in enumerate(("beta", "gamma", "mu")):
        values = getattr(fitted, name)
        for k in range(1, c + 1):
            out.append(
                {
                    "name": f"{name}_{labels[k]}",
                    "parameter": name,
                    "category": labels[k],
                    "estimate": _clean(values[k]),
                    "se": _clean(fitted.se[f * c + k - 1]),
                }
            )
    return out


def report_dict(result: AuditResult) -> dict:
    """Everything report.json holds."""
    responses = result.responses
    best = result.selected
    counts = np.bincount(responses.scores, minlength=responses.n_classes)
    return {
        "parm_version": parm_version(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        # decisions.csv names the run each decision was made on (decided_run_id).
        "run_id": result.run_id,
        "input": {
            "file": responses.source,
            "responses": len(responses),
            # Blank answers are audited (engine.embedding.blank), so they count as responses.
            "blank_answers": int(responses.blank.sum()),
            "skipped_rows": [{"row": r, "reason": why} for r, why in responses.skipped],
            "labels": list(responses.labels),
            "scores_ordered": responses.ordered,
            "score_counts": {lab: int(n) for lab, n in zip(responses.labels, counts)},
        },
        "config": result.config.to_dict(),
        "similarity_mode": result.mode,
        "embedding": {k: _clean(v) for k, v in result.embedding_record.items()},
        "selected": {
            "top_k": best.top_k,
            "power": _clean(best.power),
            "graph": "dense" if best.top_k is None else "top-k",
        },
        "metrics": {m: _clean(best.metrics[m]) for m in metric_names(responses.ordered)},
        "metrics_left_out": None
        if responses.ordered
        else {"metrics": list(ORDINAL_METRICS), "reason": NOMINAL_NOTE},
        "uncertainty": uncertainty_dict(result),
        "confusion_matrix": {
            "rows": "human score",
            "columns": "predicted score",
            "labels": list(responses.labels),
            "counts": confusion(responses.scores, result.predicted, responses.n_classes).tolist(),
        },
        "parameters": parameters(result),
        "standard_errors": result.fitted.se_method,
        "optimiser": {
            "converged": result.fitted.converged,
            "message": result.fitted.message,
            "iterations": result.fitted.iterations,
            "at_bounds": result.fitted.at_bounds,
        },
        "severity": SEVERITY_DEFINITION,
        "evidence_format": EVIDENCE_FORMAT,
        "flagged": int(result.flagged.sum()),
        "wrong_estimate": result.wrong_estimate.record(),
        "second_rater": _second_rater_dict(result),
        "near_duplicates": near_duplicate_rows(result),
        "configurations_tried": len(result.tuning.rows),
        "timings_seconds": result.timings,
        "warnings": list(result.warnings),
    }


def uncertainty_dict(result: AuditResult) -> dict:
    """Bootstrap intervals (predictions fixed) and the cross-fitted agreement, JSON-ready."""
    config = result.config
    crossed = result.cross_fit
    return {
        "bootstrap": {
            "method": BOOTSTRAP_METHOD,
            "samples": config.bootstrap_samples,
            "seed": config.seed,
            "level": LEVEL,
            "intervals": {
                m: {k: _clean(v) for k, v in iv.as_dict().items()}
                for m, iv in result.intervals.items()
            },
        },
        "cross_fit": None
        if crossed is None
        else {
            "method": CROSS_FIT_METHOD,
            "folds": len(crossed.folds),
            "seed": config.seed,
            "metrics": {m: _clean(v) for m, v in crossed.metrics.items()},
            "in_sample": {m: _clean(result.metrics[m]) for m in crossed.metrics},
            "selected_per_fold": [
                {
                    "fold": f.fold,
                    "held_out": int(f.held_out.size),
                    "top_k": f.top_k,
                    "power": _clean(f.power),
                }
                for f in crossed.folds
            ],
        },
        "standard_errors": {
            "method": result.fitted.se_method,
            "definition": STANDARD_ERRORS_METHOD,
        },
    }


def _second_rater_dict(result: AuditResult) -> dict | None:
    second = result.second_rater
    if second is None:
        return None
    out = second.as_dict()
    for key in ("rater1_vs_rater2", "model_vs_rater1", "model_vs_rater2"):
        if out[key] is not None:
            out[key] = {m: _clean(v) for m, v in out[key].items()}
    out["column"] = result.config.second_score_column
    return out


def near_duplicate_rows(result: AuditResult) -> list[dict]:
    """Near-duplicate pairs with different human scores: both rows, ids, scores and texts."""
    responses = result.responses
    out = []
    for pair in result.near_duplicates:
        entry = {"similarity": _clean(pair.similarity)}
        for name, i in (("first", pair.first), ("second", pair.second)):
            entry[name] = {
                "row": int(responses.rows[i]),
                "id": responses.ids[i],
                "score": responses.labels[responses.scores[i]],
                "text": responses.texts[i],
            }
        out.append(entry)
    return out
