"""report.html's section for one item (a file without items is one): its headline for the
summary, score distributions, agreement with intervals and cross-fitted figures, human-human
agreement and the degradation from it, the confusion matrix, tuning, parameters, the top of the
review queue with the evidence, and the near-duplicates scored differently. Plain values and
SVG plots for the template (engine.outputs.html_report)."""

from __future__ import annotations

import math

import numpy as np

from engine.core.metric_names import METRIC
from engine.input.config import SINGLE_VECTOR
from engine.input.reads import read_pair
from engine.outputs import plots
from engine.outputs.columns import fixed
from engine.outputs.markdown import below_minimum
from engine.outputs.report import DEGRADATION_THRESHOLD, FIELD_THRESHOLDS
from engine.results.item import AuditResult
from engine.results.lead import lead_text

TOP = 20
# The summary names at most this many items and raters, and only the items it names have plots
# and full lists: a report of 135 items stays small and quick to write; the tables have all.
SHOWN = 5
# Items without plots (a session's items beyond those that need attention most) list fewer of
# their queue's top and near-duplicates: the review, predictions.csv and report.json have them.
SHORT_TOP = 5
# Raters who agree with each other below this (the field's QWK minimum, held to kappa too)
# make a shortfall of the model the scores' uncertainty as much as the model's.
RATERS_AGREE = FIELD_THRESHOLDS["qwk"]
# Neighbours shown per flagged response (predictions.csv has them all).
EVIDENCE = 3
DUPLICATES = 50
HUMAN_NAMES = (
    ("exact", "Exact agreement", "accuracy"),
    ("adjacent", "Adjacent (within 1)", "near"),
    ("kappa", "Cohen's kappa", None),
    ("qwk", "Quadratic weighted kappa", "qwk"),
)


def item_view(
    result: AuditResult,
    report: dict,
    k: int,
    plotted: bool = True,
    decisions: dict | None = None,
) -> dict:
    """Everything the page shows of one item. report: its part of report.json; plotted:
    whether its plots are drawn (a long session draws those of the items it shows first);
    decisions: the review's, by data row (None: no store)."""
    responses = result.responses
    name = responses.item
    title = "" if name is None else f"Item {name}"
    # The plots' accessible names hold the item's position, never its name (data).
    which = "" if name is None else f", item {k + 1}"
    return {
        "anchor": f"item-{k + 1}",
        "name": name,
        "title": title,
        "n": len(responses),
        "headline": _headline(result, report),
        "human_line": _human_line(result, report),
        "attention": attention(result, report),
        "priority": priority(report),
        "distribution": _distribution(result, which) if plotted else None,
        "agreement": _agreement(result, report),
        "cross_fit": _cross_fit(report),
        "human": _human(result, report),
        "confusion": plots.confusion_heatmap(
            responses.labels,
            report["confusion_matrix"]["counts"],
            f"Confusion matrix{which}",
        )
        if plotted
        else None,  # fmt: skip
        "tuning": _tuning(result, report, which, plotted),
        "parameters": _parameters(report),
        "queue": _queue(result, decisions or {}, TOP if plotted else SHORT_TOP),
        "flagged": int(result.flagged.sum()),
        "duplicates": _duplicates(report, DUPLICATES if plotted else SHORT_TOP),
        "duplicates_total": len(report["near_duplicates"]),
        "threshold": result.config.near_duplicate_threshold,
        "single_vector": report["similarity_mode"] == SINGLE_VECTOR,
        "warnings": list(result.warnings) if name is not None else [],
    }


def _headline(result: AuditResult, report: dict) -> dict:
    """The summary's line for the item: kappa (and QWK) cross-fitted first, in-sample beside it
    (engine.results.lead), the in-sample interval."""
    metrics = report["metrics"]
    interval = report["uncertainty"]["bootstrap"]["intervals"].get("kappa")
    crossed = report["uncertainty"]["cross_fit"]
    crossed = {} if crossed is None else crossed["metrics"]
    parts = [lead_text("kappa", crossed.get("kappa"), metrics["kappa"])]
    if interval is not None and interval.get("low") is not None:
        parts.append(
            f"in-sample 95% interval {fixed(interval['low'])} to {fixed(interval['high'])}"
        )
    if "qwk" in metrics:
        parts.append(lead_text("QWK", crossed.get("qwk"), metrics["qwk"]))
    parts.append(f"exact agreement {metrics['accuracy']:.1%}")
    who = "" if result.responses.item is None else f"{result.responses.item}: "
    return {"text": who + ", ".join(parts), "below": _below(metrics)}


def _below(metrics: dict) -> list[str]:
    return [
        f"{METRIC[m].label} {fixed(metrics[m])} < {FIELD_THRESHOLDS[m]:.2f}"
        for m in FIELD_THRESHOLDS
        if below_minimum(m, metrics.get(m))
    ]


def _human_line(result: AuditResult, report: dict) -> dict | None:
    """Two raters against each other and the model's shortfall from them, saying whether the
    raters or the model disagree; `below`: the figures under the field's minimum."""
    second = report["second_rater"]
    if second is None or not second["rater1_vs_rater2"]:
        return None
    human, model = second["rater1_vs_rater2"], second["model_vs_rater1"]
    metric, label = _human_metric(human, model)
    gap = human[metric] - model[metric]
    first, other = read_pair([result.responses.reads])
    who = f"{first} and {other}"
    who = who if result.responses.item is None else f"{result.responses.item}: {who}"
    verdict = (
        f"more than the field's limit of {DEGRADATION_THRESHOLD:.2f}"
        if gap > DEGRADATION_THRESHOLD
        else f"within the field's limit of {DEGRADATION_THRESHOLD:.2f}"
    )
    text = (
        f"{who} agree with {label} {human[metric]:.3f} on the "
        f"{second['rows_with_both_scores']:,} responses scored twice; the model's {label} "
        f"against {first} is {model[metric]:.3f}, {abs(gap):.3f} "
        f"{'below' if gap > 0 else 'above'} the raters' ({verdict}). {_who_disagrees(human, model)}"
    )
    below = [f"raters' {b}" for b in human_below(human)]
    below += [f"model's {b}" for b in human_below(model)]
    return {"text": text.rstrip(), "below": below}


def human_below(figures: dict) -> list[str]:
    """A pair's figures (exact, adjacent, kappa, qwk) under the field's minimum, as tags."""
    return [
        f"{METRIC[metric].word} {fixed(figures.get(key))} < {FIELD_THRESHOLDS[metric]:.2f}"
        for key, _, metric in HUMAN_NAMES
        if metric is not None and below_minimum(metric, figures.get(key))
    ]


def _human_metric(human: dict, model: dict) -> tuple[str, str]:
    """QWK where both pairs have it (ordered scores), else kappa; and its label."""
    if human.get("qwk") is not None and model.get("qwk") is not None:
        return "qwk", "QWK"
    return "kappa", "kappa"


def _who_disagrees(human: dict, model: dict) -> str:
    """Whether a shortfall is the model's (the raters agree well) or the scores' (the raters
    themselves disagree), in a sentence; '' when the model keeps up with agreeing raters."""
    metric, label = _human_metric(human, model)
    raters, gap = human[metric], human[metric] - model[metric]
    if raters < RATERS_AGREE:
        return (
            f"The raters themselves agree below {RATERS_AGREE:.2f} ({label} {raters:.3f}): the "
            "scores are uncertain here, not only the model."
        )
    if gap > DEGRADATION_THRESHOLD:
        return (
            f"The raters agree well ({label} {raters:.3f}): the model, not the scores, is at "
            "odds here."
        )
    return ""


def attention(result: AuditResult, report: dict) -> str:
    """Why the item needs attention, or '' when nothing does; a shortfall from two raters says
    whether the raters or the model disagree."""
    reasons = _below(report["metrics"])
    second = report["second_rater"]
    if second is not None and second["rater1_vs_rater2"]:
        human, model = second["rater1_vs_rater2"], second["model_vs_rater1"]
        metric, label = _human_metric(human, model)
        gap = human[metric] - model[metric]
        if human[metric] < RATERS_AGREE:
            reasons.append(f"the raters agree with {label} {human[metric]:.3f} only")
        elif gap > DEGRADATION_THRESHOLD:
            reasons.append(
                f"the model's {label} is {gap:.2f} below the raters' {human[metric]:.3f}: "
                "the model, not the scores, is at odds"
            )
    if not reasons:
        return ""
    name = result.responses.item
    who = "The scores" if name is None else name
    flagged = int(result.flagged.sum())
    return f"{who}: {'; '.join(reasons)} ({flagged:,} of {len(result.responses):,} flagged)"


def attention_order(results: list[AuditResult], reports: list[dict]) -> list[int]:
    """The items' positions, the one that needs attention most first: those with a figure under
    the field's minimum or a shortfall from two raters, then the rest, each by the lowest
    cross-fitted kappa (else kappa); ties by position. reports: each one's report_dict."""
    needs = [bool(attention(result, report)) for result, report in zip(results, reports)]
    return sorted(range(len(reports)), key=lambda k: (not needs[k], priority(reports[k]), k))


def priority(report: dict) -> float:
    """How much an item needs attention, lowest first: its cross-fitted kappa where there is
    one (the honest figure), else its kappa."""
    crossed = report["uncertainty"]["cross_fit"]
    kappa = report["metrics"].get("kappa")
    if crossed is not None and crossed["metrics"].get("kappa") is not None:
        kappa = crossed["metrics"]["kappa"]
    return math.inf if kappa is None or math.isnan(kappa) else float(kappa)


def _distribution(result: AuditResult, which: str) -> str:
    responses = result.responses
    c = responses.n_classes
    counts = {
        "human": np.bincount(responses.scores, minlength=c).tolist(),
        "model": np.bincount(result.predicted, minlength=c).tolist(),
    }
    second = responses.second_scores
    if second is not None and np.any(second >= 0):
        counts["second rater"] = np.bincount(second[second >= 0], minlength=c).tolist()
    return plots.score_distribution(responses.labels, counts, f"Score distribution{which}")


def _agreement(result: AuditResult, report: dict) -> list[dict]:
    intervals = report["uncertainty"]["bootstrap"]["intervals"]
    crossed = report["uncertainty"]["cross_fit"]
    rows = []
    for m, value in report["metrics"].items():
        iv = intervals.get(m)
        cross = None if crossed is None else crossed["metrics"].get(m)
        rows.append(
            {
                "label": METRIC[m].label,
                "value": fixed(value),
                "interval": "" if iv is None or iv.get("low") is None
                else f"{fixed(iv['low'])} to {fixed(iv['high'])}",
                "cross_fit": "" if cross is None else fixed(cross),
                "below": below_minimum(m, value),
                "cross_below": below_minimum(m, cross),
                "minimum": "" if m not in FIELD_THRESHOLDS else f"{FIELD_THRESHOLDS[m]:.2f}",
            }
        )  # fmt: skip
    return rows


def _cross_fit(report: dict) -> str:
    crossed = report["uncertainty"]["cross_fit"]
    if crossed is None:
        return ""
    return (
        f"Cross-fitted over {crossed['folds']} folds: every response predicted by a model whose K, "
        "p and parameters were chosen without its score."
    )


def _human(result: AuditResult, report: dict) -> dict | None:
    second = report["second_rater"]
    if second is None:
        return None
    first, other = read_pair([result.responses.reads])
    pairs = [
        (f"{first} vs {other}", second["rater1_vs_rater2"]),
        (f"Model vs {first}", second["model_vs_rater1"]),
        (f"Model vs {other}", second["model_vs_rater2"]),
    ]
    rows = []
    for key, label, metric in HUMAN_NAMES:
        if key not in second["model_vs_rater1"]:
            continue
        cells = []
        for _, figures in pairs:
            value = None if not figures else figures.get(key)
            cells.append({"text": fixed(value), "below": metric is not None
                          and below_minimum(metric, value)})  # fmt: skip
        rows.append({"label": label, "cells": cells})
    human, model = second["rater1_vs_rater2"], second["model_vs_rater1"]
    degradation = []
    for key in ("kappa", "qwk"):
        if human and human.get(key) is not None and model.get(key) is not None:
            gap = human[key] - model[key]
            degradation.append(
                {
                    "label": "QWK" if key == "qwk" else "kappa",
                    "value": f"{gap:+.3f}",
                    "below": gap > DEGRADATION_THRESHOLD,
                }  # fmt: skip
            )
    return {
        "columns": [name for name, _ in pairs],
        "rows": rows,
        "both": second["rows_with_both_scores"],
        "disagree": second["raters_disagree"],
        "column": second["column"],
        "degradation": degradation,
    }


def _tuning(result: AuditResult, report: dict, which: str, plotted: bool = True) -> dict:
    metric = result.config.selection_metric
    rows = result.tuning.rows
    selected = report["selected"]
    graph = "dense graph" if selected["top_k"] is None else f"K = {selected['top_k']}"
    text = (
        f"Selected {graph}, p = {selected['power']:.3g} by {METRIC[metric].label}, of "
        f"{len(rows)} configuration{'' if len(rows) == 1 else 's'} tried."
    )
    plot = None
    if len(rows) > 1 and plotted:
        plot = plots.tuning_lines(rows, metric, METRIC[metric].label, f"Tuning{which}")
    return {"text": text, "plot": plot}


def _parameters(report: dict) -> dict:
    rows = []
    for p in report["parameters"]:
        se = p["se"]
        interval = ""
        if se is not None and p["estimate"] is not None:
            interval = f"{p['estimate'] - 1.96 * se:.3f} to {p['estimate'] + 1.96 * se:.3f}"
        rows.append([p["name"], fixed(p["estimate"]), fixed(se), interval])
    return {"rows": rows, "method": report["standard_errors"]}


def _queue(result: AuditResult, decisions: dict, top: int = TOP) -> list[dict]:
    """The first `top` flagged responses in the review queue's order, with their evidence, the
    decision taken on each and its other reads."""
    responses = result.responses
    labels = responses.labels
    order = result.review_order()
    rows = []
    for i in order[result.flagged[order]][:top]:
        evidence = [
            {
                "row": int(responses.rows[nb.index]),
                "id": responses.ids[nb.index],
                "score": labels[responses.scores[nb.index]],
                "similarity": "" if math.isnan(nb.similarity) else f"{nb.similarity:.3f}",
                "text": _short(responses.texts[nb.index], 100),
            }
            for nb in result.evidence[i][:EVIDENCE]
        ]
        rows.append(
            {
                "row": int(responses.rows[i]),
                "id": responses.ids[i],
                "human": labels[responses.scores[i]],
                "model": labels[result.predicted[i]],
                "severity": f"{result.severity[i]:.3f}",
                "decision": _decision(decisions.get(int(responses.rows[i]))),
                "reads": _other_reads(responses, i),
                "text": _short(responses.texts[i], 800),
                "evidence": evidence,
            }
        )
    return rows


def _decision(decision) -> str:
    """The review's decision on a response, in words; '' when none was taken."""
    if decision is None:
        return ""
    if decision.action == "change":
        return f"changed to {decision.new_score}"
    return "kept" if decision.action == "keep" else decision.action


def _other_reads(responses, i: int) -> str:
    """Response i's other reads (those not audited), each with its rater where recorded."""
    reads = responses.reads
    if reads is None:
        second = responses.second_scores
        return "" if second is None or second[i] < 0 else responses.labels[second[i]]
    mine = (reads.answer == i) & ~reads.first
    return ", ".join(
        responses.labels[reads.score[r]] + (f" ({reads.rater[r]})" if reads.rater[r] else "")
        for r in np.flatnonzero(mine)
    )


def _duplicates(report: dict, shown: int = DUPLICATES) -> list[dict]:
    return [
        {
            "similarity": f"{p['similarity']:.3f}",
            "pair": [
                {
                    "row": p[k]["row"],
                    "id": p[k]["id"],
                    "score": p[k]["score"],
                    "text": _short(p[k]["text"], 300),
                }
                for k in ("first", "second")
            ],
        }  # fmt: skip
        for p in report["near_duplicates"][:shown]
    ]


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
