"""The content of the outputs, built from an `AuditResult`: prediction rows, tuning rows, the
report dictionary (report.json) and the readable Markdown report (report.md)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np

from engine.metrics import confusion
from engine.tuning import METRIC_NAMES

METRIC_LABELS = {
    "accuracy": "Exact agreement (accuracy)",
    "kappa": "Cohen's kappa",
    "qwk": "Quadratic weighted kappa",
    "near": "Near agreement (within 1)",
    "f1": "Macro F1",
    "nll": "Average negative log-likelihood",
}


def _clean(value):
    """JSON-safe numbers: NaN and infinities become None."""
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else round(float(value), 6)
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


def evidence_text(result, i: int) -> str:
    """Compact evidence: `row:score:weight` for each neighbour, separated by `;`."""
    responses = result.responses
    parts = []
    for nb in result.evidence[i]:
        label = responses.labels[responses.scores[nb.index]]
        parts.append(f"{responses.rows[nb.index]}:{label}:{nb.weight:.3f}")
    return ";".join(parts)


def prediction_table(result) -> tuple[list[str], list[list]]:
    """Header and rows of predictions.csv, one row per response in input order."""
    responses = result.responses
    labels = responses.labels
    proba = result.fitted.proba
    header = ["row", "id", "text", "score", "predicted"]
    header += [f"p_{label}" for label in labels]
    header += ["severity", "flagged", "evidence"]
    second = responses.second_scores
    if second is not None:
        header += ["score2", "raters_disagree"]
    rows = []
    for i in range(len(responses)):
        row = [
            int(responses.rows[i]),
            responses.ids[i],
            responses.texts[i],
            labels[responses.scores[i]],
            labels[result.predicted[i]],
        ]
        row += [f"{p:.6f}" for p in proba[i]]
        row += [f"{result.severity[i]:.6f}", bool(result.flagged[i]), evidence_text(result, i)]
        if second is not None:
            code = second[i]
            row += [
                "" if code < 0 else labels[code],
                "" if code < 0 else bool(code != responses.scores[i]),
            ]
        rows.append(row)
    return header, rows


def tuning_table(result) -> tuple[list[str], list[list]]:
    header = ["top_k", "power", *METRIC_NAMES, "selected"]
    rows = [
        [
            "" if r.top_k is None else r.top_k,
            f"{r.power:.6g}",
            *(f"{r.metrics[m]:.6f}" for m in METRIC_NAMES),
            r.selected,
        ]
        for r in result.tuning.rows
    ]
    return header, rows


def parameters(result) -> list[dict]:
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


def report_dict(result) -> dict:
    """Everything report.json holds."""
    responses = result.responses
    best = result.selected
    counts = np.bincount(responses.scores, minlength=responses.n_classes)
    return {
        "parm_version": _version(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "input": {
            "file": responses.source,
            "responses": len(responses),
            "skipped_rows": [{"row": r, "reason": why} for r, why in responses.skipped],
            "labels": list(responses.labels),
            "score_counts": {lab: int(n) for lab, n in zip(responses.labels, counts)},
        },
        "config": result.config.to_dict(),
        "similarity_mode": result.mode,
        "embedding": {k: _clean(v) for k, v in result.embedding_info.items()},
        "selected": {
            "top_k": best.top_k,
            "power": _clean(best.power),
            "graph": "dense" if best.top_k is None else "top-k",
        },
        "metrics": {m: _clean(best.metrics[m]) for m in METRIC_NAMES},
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
        "flagged": int(result.flagged.sum()),
        "configurations_tried": len(result.tuning.rows),
        "timings_seconds": result.timings,
        "warnings": list(result.warnings),
    }


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("parm")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return "unknown"


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _md_escape(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def report_markdown(result, top: int = 20) -> str:
    """A readable report for a rater-lead."""
    data = report_dict(result)
    responses = result.responses
    labels = responses.labels
    sel = data["selected"]
    graph = "dense graph" if sel["top_k"] is None else f"top-K graph, K = {sel['top_k']}"
    out = [
        "# parm audit report",
        "",
        f"- File: `{responses.source}` ({len(responses):,} responses, "
        f"{len(responses.skipped)} skipped)",
        "- Scores: " + ", ".join(f"{k}: {v}" for k, v in data["input"]["score_counts"].items()),
        f"- Similarity: {result.mode}, model `{result.config.embedding_model}`",
        f"- Selected configuration: {graph}, power p = {sel['power']:.3g} "
        f"(by {result.config.selection_metric}, {len(result.tuning.rows)} configurations tried)",
        f"- Flagged for review: {data['flagged']} responses (model and human score differ)",
        "",
        "## Agreement between the model and the human scores",
        "",
        _table(
            ["Metric", "Value"],
            [[METRIC_LABELS[m], _fmt(data["metrics"][m])] for m in METRIC_NAMES],
        ),
        "",
        "## Confusion matrix (rows: human score, columns: model)",
        "",
        _table(
            ["human \\ model", *labels],
            [[labels[i], *row] for i, row in enumerate(data["confusion_matrix"]["counts"])],
        ),
        "",
        f"## Top {top} responses to review",
        "",
    ]
    order = result.review_order()[:top]
    rows = []
    for i in order:
        if not result.flagged[i]:
            break
        rows.append(
            [
                responses.rows[i],
                _md_escape(responses.ids[i], 40),
                labels[responses.scores[i]],
                labels[result.predicted[i]],
                f"{result.severity[i]:.3f}",
                _md_escape(responses.texts[i], 160),
                evidence_text(result, i),
            ]
        )
    out.append(
        _table(
            ["row", "id", "human", "model", "severity", "text", "evidence (row:score:sim)"], rows
        )
        if rows
        else "No responses are flagged."
    )
    if result.warnings:
        out += ["", "## Warnings", ""] + [f"- {w}" for w in result.warnings]
    return "\n".join(out) + "\n"


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"
