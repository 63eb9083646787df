"""report.html: the audit as one self-contained page to read in a browser, print or send.

It opens with what a lead concludes, in plain words a director can read in a minute
(engine.outputs.report.conclusions: how consistent the raters are, how many scores look wrong and how
sure parm is, which raters and items need attention, what to do first), then the evidence
behind it (each item's headline and its raters, cross-fitted), then follows ETS's RSMTool
reports: the data, and for every item the score
distributions, agreement with 95% intervals and cross-fitted figures (the field's minimums
highlighted), human-human agreement and the degradation from it, the confusion matrix, the
tuning, the parameters with standard errors, the top of the review queue with its evidence and
the near-duplicates scored differently; for a session the items and raters with their plots and
verdicts; the model's own fit (in-sample against cross-fitted, the session model, the items
too small for their scores) in a section of its own; and the review's decisions.

This module turns a session into the page's content (plain values: text and numbers, and plots
as SVG from engine.outputs.report.plots); the layout is the Jinja2 template
`templates/report.html.j2`, rendered with autoescaping, so every value from the data is text.
The page loads nothing (no script, font, style sheet or image from anywhere) and says so in its
Content-Security-Policy. jinja2 and matplotlib are imported only here, when a report is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from engine.core.metric_names import METRIC
from engine.core.numbers import signed
from engine.core.run_warnings import summary_lines
from engine.core.text import safe_text
from engine.input.several_reads import read_pair
from engine.outputs.columns import fixed
from engine.outputs.report import html_items, report_json
from engine.outputs.report.action_outputs import actions_view
from engine.outputs.report.conclusions import conclusions
from engine.outputs.report.html_agreement import agreement_view
from engine.outputs.report.html_items import SHOWN
from engine.outputs.report.item_content import DEGRADATION_THRESHOLD, FIELD_THRESHOLDS
from engine.outputs.report.markdown import MEANINGS, THRESHOLDS_SENTENCE, below_minimum
from engine.outputs.report.plots import drawing as plots
from engine.outputs.report.report_md import blank_count
from engine.outputs.report.review_summary import NO_REVIEW
from engine.results.compare import compare
from engine.results.figures import run_figures
from engine.results.lead import (
    ANSWERS_PER_SCORE,
    SMALL_RULE,
    item_lead,
    run_lead,
    session_model_lead,
)
from engine.results.overview import is_small
from engine.results.session import SessionResult

# No script, no remote or local load of anything: styles inline, plots inline SVG.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)
TEMPLATE = "report.html.j2"


def html_report(session: SessionResult, decisions: dict | None, actions=None) -> str:
    """The page for a session and its review's decisions (by data row; None: no store), with
    the lead's lists (engine.actions.plan.Actions; None: none)."""
    data = report_json.session_dict(session, decisions)
    reports = _item_reports(session, data)
    first = set(html_items.attention_order(session.results, reports)[:SHOWN])
    items = [
        html_items.item_view(session, report, k, k in first, decisions)
        for k, report in enumerate(reports)
    ]
    context = {
        "csp": CONTENT_SECURITY_POLICY,
        "title": f"parm audit report: {Path(session.items.source).name or 'input'}",
        "source": session.items.source,
        "run_id": session.run_id,
        "created": data["created"],
        "version": data["parm_version"],
        "summary": summary(session, data, items),
        "model_fit": model_fit(session),
        "data": data_section(session),
        "review": review_view(data["review"]),
        "overview": overview(session) if session.by_item else None,
        "raters": raters_view(session, data.get("raters")),
        "agreement": agreement_view(data.get("agreement")),
        "actions": actions_view(actions),
        "items": items,
        "plotted": len(first),
        "parameters": parameters_appendix(items),
        "by_item": session.by_item,
        "meanings": MEANINGS,
        "thresholds": THRESHOLDS_SENTENCE,
        "warnings": summary_lines(session.warnings),
    }
    return render(context)


def render(context: dict) -> str:
    """The template with `context`: every value with its control characters replaced
    (engine.core.text.safe_text) and escaped (plots are marked safe after
    engine.outputs.report.plots.drawing.inline_svg neutralised them)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined
    from markupsafe import Markup

    def shown(value):
        # Every value printed goes through safe_text first (a path given on the command line
        # was never read from a file, so never sanitised), then autoescaping; plots are Markup.
        return (
            value if isinstance(value, Markup) or not isinstance(value, str) else safe_text(value)
        )

    environment = Environment(
        loader=PackageLoader("engine.outputs.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=shown,
    )
    return environment.get_template(TEMPLATE).render(**context)


def _item_reports(session: SessionResult, data: dict) -> list[dict]:
    return data["items"]


def parameters_appendix(items: list[dict]) -> dict:
    """Every item's parameters in one table for the appendix (not for a director's eyes)."""
    rows = [[item["name"] or "", *row] for item in items for row in item["parameters"]["rows"]]
    methods = sorted({item["parameters"]["method"] for item in items})
    return {"rows": rows, "method": ", ".join(methods)}


# -- the director's summary ----------------------------------------------------------------------
def summary(session: SessionResult, data: dict, items: list[dict]) -> dict:
    """The first screen: what the lead concludes (engine.outputs.report.conclusions), what to do
    first, the review; then the evidence: the items' headlines and their raters, cross-fitted,
    those that need attention most first."""
    found = conclusions(session, data["review"])
    order = html_items.attention_order(session.results, data["items"])
    ranked = [items[k] for k in order]
    human = [view["human_line"] for view in ranked if view["human_line"]]
    return {
        "short": found.short,
        "points": [
            {"heading": p.heading, "text": " ".join(p.sentences), "concern": p.concern}
            for p in found.points
        ],
        "steps": list(found.steps),
        "agreement": [view["headline"] for view in ranked[:SHOWN]],
        "agreement_more": max(len(ranked) - SHOWN, 0),
        "human": human[:SHOWN],
        "human_heading": "Against " + " and ".join(session_read_pair(session)),
        "human_more": max(len(human) - SHOWN, 0),
        "review": _review_line(data["review"]),
    }


def model_fit(session: SessionResult) -> dict:
    """The model's own fit: the session's figures cross-fitted against in-sample (the gap that
    says memorised), the session model's, and the items too small for their scores, with the
    rule behind "too small"."""
    figures = run_figures(session)
    lines = run_lead(figures) if session.by_item else item_lead(session.overview[0])
    modelled = session_model_lead(figures)
    lines += [] if modelled is None or not session.by_item else [modelled]
    small = [s.item for s in session.overview if s.small]
    note = "" if not small else (
        f"{len(small)} of {len(session.results)} item(s) have {SMALL_RULE}: their in-sample "
        "figures are not shown, and their cross-fitted ones rest on a few answers."
    )  # fmt: skip
    return {"lines": [line for line in lines if not line.startswith("⚠ ")], "small": note,
            "rule": SMALL_REASON}  # fmt: skip


# Why an item is too small (engine.results.lead), for the report's readers.
SMALL_REASON = (
    f"An item is too small to judge parm's fit when it has {SMALL_RULE} (counting the answers "
    "not given that score): the per-item fit estimates three parameters for each score value "
    "beyond the first, and the answers of the rarer scores are what inform them, so "
    f"{ANSWERS_PER_SCORE} answers per value leave about three per parameter, already under the "
    "ten per parameter logistic models are held to. Below that, the in-sample figures are "
    "memorised (on such items they are often 1.000) and the cross-fitted ones swing with a few "
    "answers."
)


def review_kappa(review: dict) -> str | None:
    """'0.650 → 0.653 (+0.003)': the model's kappa against the original scores and against the
    final ones (engine.results.compare); None where either is missing."""
    agreement = review["agreement"]
    before = agreement["model_vs_original"].get("kappa")
    after = agreement["model_vs_final"].get("kappa")
    if before is None or after is None:
        return None
    return compare("the model's kappa, final scores", after, "original", before).change()


def _review_line(review: dict) -> str:
    if review["status"] == NO_REVIEW:
        return f"No review yet: {review['why']}."
    flagged, queue = review["counts"]["flagged"], review["counts"]["queue"]
    changed = review["scores_changed"]
    moved = review_kappa(review)
    shift = "" if moved is None else (
        f"; the model's kappa against the scores stayed at {moved.removesuffix(' (same)')}"
        if moved.endswith("(same)") else f"; the model's kappa against the scores moved {moved}"
    )  # fmt: skip
    return (
        f"The review changed {changed:,} score{'' if changed == 1 else 's'} "
        f"({review['decisions']:,} decision{'' if review['decisions'] == 1 else 's'}: "
        f"{queue['keep']:,} kept, {queue['change']:,} changed, {queue['unsure']:,} unsure); "
        f"{flagged['undecided']:,} of {flagged['responses']:,} flagged responses are still "
        f"undecided{shift}."
    )


# -- data ----------------------------------------------------------------------------------------
def data_section(session: SessionResult) -> dict:
    """Rows read, responses audited (blank answers among them), what was left out and why,
    and what the data lacks (second scores, raters)."""
    items = session.items
    left_out: dict[str, list[int]] = {}
    blank_second, second_total = 0, 0
    for result in session.results:
        responses = result.responses
        for row, reason in responses.skipped:
            key = "score is not a number" if reason.startswith("score '") else reason
            left_out.setdefault(key, []).append(int(row))
        if responses.second_scores is not None:
            second_total += len(responses)
            blank_second += int(np.sum(responses.second_scores < 0))
    reasons: list[dict[str, Any]] = [  # each a str or a count
        {"reason": reason, "n": len(rows), "rows": _rows_text(rows)}
        for reason, rows in left_out.items()
    ]
    reasons += [
        {"reason": f"item '{s.item}' not audited: {s.reason}", "n": s.rows, "rows": ""}
        for s in items.skipped
    ]
    audited_rows = session.n_responses + sum(r["n"] for r in reasons)
    if items.file_rows > audited_rows:
        reasons.append({"reason": "no item given", "n": items.file_rows - audited_rows, "rows": ""})
    notes = []  # what the data lacks: second scores, raters
    if second_total:
        notes.append(
            f"Second scores: {blank_second:,} of {second_total:,} audited responses have none"
            if blank_second
            else "Second scores: every audited response has one"
        )
    if session.raters is not None and session.raters.unassigned:
        notes.append(f"Raters: {session.raters.unassigned:,} scores have no rater recorded")
    return {
        "file": items.source,
        "rows": items.file_rows,
        "responses": session.n_responses,
        "items": len(session.results),
        "left_out": reasons,
        # Blank answers are audited like any other (engine.embedding.blank).
        "blank_answers": blank_count(session),
        "notes": notes,
        "columns": _columns(session),
    }


def _rows_text(rows: list[int], shown: int = 8) -> str:
    more = f" and {len(rows) - shown:,} more" if len(rows) > shown else ""
    return ", ".join(map(str, rows[:shown])) + more


def _columns(session: SessionResult) -> list[list[str]]:
    config = session.config
    named = [
        ("text", config.text_column), ("score", config.score_column), ("id", config.id_column),
        ("second score", config.second_score_column), ("item", config.item_column),
        ("rater", config.rater_column), ("second rater", config.second_rater_column),
        ("time", config.time_column),
    ]  # fmt: skip
    return [[role, column] for role, column in named if column is not None]


# -- the review's decisions ----------------------------------------------------------------------
def review_view(review: dict) -> dict:
    """The review section: counts, by score, changes, agreement before and after."""
    if review["status"] == NO_REVIEW:
        return {"done": False, "why": review["why"]}
    agreement = review["agreement"]
    before, after = agreement["model_vs_original"], agreement["model_vs_final"]
    return {
        "done": True,
        "line": _review_line(review),
        "counts": [
            ["flagged", *(review["counts"]["flagged"][k] for k in _COUNTS)],
            ["whole queue", *(review["counts"]["queue"][k] for k in _COUNTS)],
        ],
        "by_score": [
            [s["score"], s["responses"], s["flagged"], *(s[k] for k in _COUNTS[1:-1])]
            for s in review["by_score"]
        ],
        "changes": [[c["from"], c["to"], c["n"]] for c in review["changes"]],
        "agreement": [
            [METRIC[m].label, fixed(before[m]), fixed(after[m])] for m in before
        ],
        "kappa_change": review_kappa(review) or "n/a",
        "note": agreement["definition"],
        "items": [
            [i["item"], i["decided"], i["scores_changed"], fixed(i["kappa_original"]),
             fixed(i["kappa_final"]),
             "n/a" if i["kappa_change"] is None else signed(i['kappa_change'], 3)]
            for i in review.get("items", [])
        ],
    }  # fmt: skip


_COUNTS = ("responses", "decided", "keep", "change", "unsure", "undecided")


# -- a session: items and raters -----------------------------------------------------------------
def overview(session: SessionResult) -> dict:
    """The items table (the cross-fitted kappa and QWK first; "too small" for the in-sample
    kappa of an item too small for its scores) and the items plot: kappa per item with its 95%
    interval and the cross-fitted kappa."""
    rows = []
    anchors = {r.responses.item: f"item-{k + 1}" for k, r in enumerate(session.results)}
    # The reads' column only where some item has answers read twice (as report.md).
    twice = session.second_reads
    for s in session.overview:
        if s.skipped is not None:
            rows.append({"item": s.item, "n": s.n, "skipped": s.skipped, "cells": [], "anchor": ""})
            continue
        human = "" if s.human_kappa is None else f"{s.human_exact:.3f}, {s.human_kappa:.3f}"
        human_below = below_minimum("accuracy", s.human_exact)
        inside = [{"text": "too small", "below": False}] if s.small else [_cell(s.kappa)]
        cells = [
            _cell(s.cross_fit_kappa), _cell(s.cross_fit_qwk, "qwk"), *inside,
            {"text": f"{s.flagged:,}", "below": False},
            *([{"text": human, "below": human_below}] if twice else []),
        ]  # fmt: skip
        rows.append(
            {"item": s.item, "n": s.n, "skipped": None, "cells": cells, "anchor": anchors[s.item]}
        )
    audited = session.results
    # An item too small for its scores has no in-sample dot: only its cross-fitted diamond.
    small = [is_small(r) for r in audited]
    intervals = [None if tiny else r.intervals.get("kappa") for r, tiny in zip(audited, small)]
    crossed = [None if r.cross_fit is None else r.cross_fit.metrics["kappa"] for r in audited]
    plot = plots.interval_dots(
        [r.responses.item for r in audited],
        [None if tiny else r.metrics["kappa"] for r, tiny in zip(audited, small)],
        [None if iv is None else iv.low for iv in intervals],
        [None if iv is None else iv.high for iv in intervals],
        "Cohen's kappa, model vs human",
        "Kappa per item",
        extra=("cross-fitted", crossed) if any(c is not None for c in crossed) else None,
        series="in-sample (95% interval)",
    )
    first, other = session_read_pair(session)
    return {
        "rows": rows,
        "plot": plot,
        "human_column": f"{first} vs {other} (exact, kappa)" if twice else None,
        "in_sample": not all(small),
    }


def session_read_pair(session: SessionResult) -> tuple[str, str]:
    """Who gave the session's audited and second reads (engine.input.several_reads.read_pair)."""
    return read_pair(result.responses.reads for result in session.results)


def raters_view(session: SessionResult, raters: dict | None) -> dict | None:
    """The rater table, its plot, the verdicts with their rules, and each pair of raters."""
    if raters is None:
        return None
    assert session.raters is not None  # report.json has raters exactly when the session has
    from engine.outputs.declared import RATERS, TOO_FEW, rule_text
    from engine.outputs.report.report_md import (
        MIN_PAIR,
        RATER_COLUMNS,
        expert_rows,
        expert_sentence,
        rater_cells,
    )

    rows = session.raters.rows
    judged = [r for r in rows if r.judged]
    table = [rater_cells(session.raters, r) for r in rows]
    plot = None
    if judged:
        ordered = all(r.leniency is not None for r in judged)
        leniency = (
            [r.leniency for r in judged], [r.leniency_low for r in judged],
            [r.leniency_high for r in judged],
        ) if ordered else None  # fmt: skip
        differs = (
            [r.model_differs_share for r in judged], [r.model_differs_low for r in judged],
            [r.model_differs_high for r in judged],
        )  # fmt: skip
        plot = plots.raters_panels([r.rater for r in judged], leniency, differs, "Raters")
    pairs = [
        [p.first, p.second, p.n, *([_cell(p.exact, "accuracy"), _cell(p.kappa)]
                                   if p.n >= MIN_PAIR else [{"text": TOO_FEW, "below": False},
                                                            _cell(None)])]
        for p in session.raters.pairs
    ]  # fmt: skip
    return {
        "header": [RATERS.heading(name) for name in RATER_COLUMNS],
        "rows": table,
        "plot": plot,
        "verdicts": [[r.rater, rule_text(r.effects)] for r in judged],
        "pairs": pairs,
        "min_pair": MIN_PAIR,
        "expert": None
        if session.raters.expert is None
        else {
            "sentence": expert_sentence(session.raters),
            "table": expert_rows(session.raters),
        },
        "unassigned": session.raters.unassigned,
        "bias": [
            [c.rater, c.item, c.n, signed(c.bias), signed(c.t, 1)]
            for c in session.raters.bias
            if c.listed
        ],  # fmt: skip
    }


# -- shared --------------------------------------------------------------------------------------
def _cell(value, metric: str | None = None) -> dict:
    """A figure for a table cell, with whether it is below the field's minimum."""
    return {"text": fixed(value), "below": metric is not None and below_minimum(metric, value)}


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "DEGRADATION_THRESHOLD",
    "FIELD_THRESHOLDS",
    "html_report",
]
