"""report.html's section for one item (a file without items is one): its headline for the
summary, score distributions, agreement with intervals and cross-fitted figures, human-human
agreement and the degradation from it, the confusion matrix, tuning, parameters, the top of the
review queue with the evidence, and the near-duplicates scored differently. Plain values and
SVG plots for the template (engine.outputs.report.report_html)."""

from __future__ import annotations

import math

import numpy as np

from engine.core.metric_names import METRIC
from engine.input.settings.config import SINGLE_VECTOR
from engine.outputs.columns import fixed
from engine.outputs.report.conclusions import degradation, model_against_first, raters_named
from engine.outputs.report.item_content import FIELD_THRESHOLDS
from engine.outputs.report.markdown import below_minimum
from engine.outputs.report.plots import drawing as plots
from engine.results.compare import minimum
from engine.results.headline import Headline, item_headline
from engine.results.item import AuditResult
from engine.results.overview import is_small
from engine.results.session import SessionResult

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
    session: SessionResult,
    report: dict,
    k: int,
    plotted: bool = True,
    decisions: dict | None = None,
) -> dict:
    """Everything the page shows of the session's k-th item. report: its part of report.json;
    plotted: whether its plots are drawn (a long session draws those of the items it shows
    first); decisions: the review's, by data row (None: no store)."""
    result, row = session.results[k], session.overview[k]
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
        "headline": _headline(result, item_headline(session, k)),
        "human_line": _human_line(result, report),
        "attention": attention(result, report),
        "priority": priority(report),
        "distribution": _distribution(result, which) if plotted else None,
        "agreement": _agreement(report, row.small),
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


def _headline(result: AuditResult, headline: Headline) -> dict:
    """The evidence's line for the item: its headline (engine.results.headline, as the CLI and
    the app write it) and its cross-fitted figures under the field's minimum as tags; a
    too-small item's label as its only tag."""
    who = "" if result.responses.item is None else f"{result.responses.item}: "
    tags = [headline.small] if headline.small else [c.tag() for c in figures_below(result)]
    return {"text": who + "; ".join(headline.findings()), "below": tags}


def figures_below(result: AuditResult) -> list:
    """The item's figures under the field's minimum (engine.results.compare.minimum): the
    cross-fitted ones where cross-fitting ran, else the in-sample ones (labelled so); none for
    an item too small for its scores."""
    if is_small(result):
        return []
    crossed = None if result.cross_fit is None else result.cross_fit.metrics
    figures, how = (
        (crossed, "cross-fitted ") if crossed is not None else (result.metrics, "in-sample ")
    )
    found = [
        minimum(how + METRIC[m].word, figures.get(m), FIELD_THRESHOLDS[m], "the field's minimum")
        for m in FIELD_THRESHOLDS
        if figures.get(m) is not None
    ]
    return [c for c in found if c.within is False]


def _human_line(result: AuditResult, report: dict) -> dict | None:
    """The two raters against each other and the model's cross-fitted agreement against the
    first beside theirs, each with its rule; whether a shortfall is the raters' or the model's;
    `below`: the raters' figures under the field's minimum, as tags."""
    second = result.second_rater
    if second is None or second.human_human is None:
        return None
    raters = raters_comparison(result)
    first, other = raters_named(result)
    model = None if is_small(result) else degradation(result)
    if is_small(result):
        said = "the model is not compared with them: the item is too small for its scores"
    elif model is None:
        said = (f"the model is not compared with them: it was not cross-fitted, and in-sample "
                f"it has seen {first}'s scores")  # fmt: skip
    else:
        said = model.sentence
    who = "" if result.responses.item is None else f"{result.responses.item}: "
    text = f"{who}{raters.sentence}; {said}. {_who_disagrees(raters, model)}"
    tags = [c.tag() for c in raters_below(result)]
    return {"text": text.rstrip(), "below": tags}


def human_columns(result: AuditResult, second: dict) -> list[tuple[str, dict | None]]:
    """The second-rater table's columns, named by the raters' columns: the raters against each
    other, the model against the first cross-fitted (where cross-fitting ran), then in-sample
    against each. second: the item's report.json `second_rater`."""
    first, other = raters_named(result)
    crossed = model_against_first(result)
    pairs = [(f"{first} vs {other}", second["rater1_vs_rater2"])]
    pairs += [] if crossed is None else [(f"model vs {first}, cross-fitted", crossed)]
    return pairs + [(f"model vs {first}, in-sample", second["model_vs_rater1"]),
                    (f"model vs {other}, in-sample", second["model_vs_rater2"])]  # fmt: skip


def raters_comparison(result: AuditResult):
    """The item's two raters' QWK (kappa for unordered scores) against the field's minimum."""
    second = result.second_rater
    # Asked only of an item with the two raters' figures (its callers check).
    assert second is not None and second.human_human is not None
    name = "qwk" if "qwk" in second.human_human else "kappa"
    first, other = raters_named(result)
    return minimum(
        f"the {'QWK' if name == 'qwk' else 'kappa'} of {first} and {other} on the "
        f"{second.rows_with_both:,} responses both scored",
        second.human_human[name], RATERS_AGREE, "the field's minimum",
    )  # fmt: skip


def raters_below(result: AuditResult) -> list:
    """The two raters' exact, near agreement and QWK under the field's minimum."""
    second = result.second_rater
    assert second is not None and second.human_human is not None  # as raters_comparison
    human = second.human_human
    found = [minimum(f"raters' {METRIC[metric].word}", human.get(key), FIELD_THRESHOLDS[metric],
                     "the field's minimum") for key, _, metric in HUMAN_NAMES
             if metric is not None and human.get(key) is not None]  # fmt: skip
    return [c for c in found if c.within is False]


def _who_disagrees(raters, model) -> str:
    """Whether a shortfall is the model's (the raters agree well) or the scores' (the raters
    themselves disagree), in a sentence; '' when the model keeps up with agreeing raters."""
    if raters.within is False:
        return "The raters themselves disagree here: the scores are uncertain, not only the model."
    if model is not None and model.within is False:
        return "The raters agree well: the model, not the scores, is at odds here."
    return ""


def attention(result: AuditResult, report: dict) -> str:
    """Why the item needs attention, or '' when nothing does: its cross-fitted figures under the
    field's minimum, its raters under it, its model short of its raters by more than the
    degradation limit (an item too small for its scores is judged by its raters only)."""
    reasons = [c.tag() for c in figures_below(result)]
    if result.second_rater is not None and result.second_rater.human_human is not None:
        raters = raters_comparison(result)
        model = degradation(result)
        if raters.within is False:
            reasons.append(f"the raters agree with {raters.shown(raters.value)} only")
        elif model is not None and model.within is False and not is_small(result):
            reasons.append(f"the model is {model.gap()} the raters: the model, not the scores, "
                           "is at odds")  # fmt: skip
    if not reasons:
        return ""
    name = result.responses.item
    who = "The scores" if name is None else name
    flagged = int(result.flagged.sum())
    return f"{who}: {'; '.join(reasons)} ({flagged:,} of {len(result.responses):,} flagged)"


def attention_order(results: list[AuditResult], reports: list[dict]) -> list[int]:
    """The items' positions, the one that needs attention most first: those with a reason
    (`attention`), then the rest; each group by the lowest cross-fitted kappa (else kappa), the
    items too small for their scores after the others; ties by position."""
    needs = [bool(attention(result, report)) for result, report in zip(results, reports)]
    small = [is_small(result) for result in results]
    return sorted(
        range(len(reports)), key=lambda k: (not needs[k], small[k], priority(reports[k]), k)
    )


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


def _agreement(report: dict, small: bool = False) -> list[dict]:
    """The item's agreement table: each metric cross-fitted first, then in-sample with its
    interval ("too small" for an item too small for its scores, engine.results.lead)."""
    intervals = report["uncertainty"]["bootstrap"]["intervals"]
    crossed = report["uncertainty"]["cross_fit"]
    rows = []
    for m, value in report["metrics"].items():
        iv = intervals.get(m)
        cross = None if crossed is None else crossed["metrics"].get(m)
        interval = "" if iv is None or iv.get("low") is None else (
            f"{fixed(iv['low'])} to {fixed(iv['high'])}")  # fmt: skip
        rows.append({
            "label": METRIC[m].label,
            "value": "too small" if small else fixed(value),
            "interval": "" if small else interval,
            "cross_fit": "" if cross is None else fixed(cross),
            "below": not small and below_minimum(m, value),
            "cross_below": below_minimum(m, cross),
            "minimum": "" if m not in FIELD_THRESHOLDS else f"{FIELD_THRESHOLDS[m]:.2f}",
        })  # fmt: skip
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
    """The two raters against each other beside the model against each (cross-fitted against
    the first where cross-fitting ran), and the degradation as engine.results.compare states
    it."""
    second = report["second_rater"]
    if second is None:
        return None
    pairs = human_columns(result, second)
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
    found = degradation(result) if second["rater1_vs_rater2"] and not is_small(result) else None
    return {
        "columns": [name for name, _ in pairs],
        "rows": rows,
        "both": second["rows_with_both_scores"],
        "disagree": second["raters_disagree"],
        "column": second["column"],
        "degradation": None if found is None else {
            "text": found.sentence[0].upper() + found.sentence[1:] + ".",
            "below": found.within is False},
    }  # fmt: skip


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
