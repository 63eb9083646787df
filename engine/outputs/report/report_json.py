"""report.json of a session: one item's report (with the rater table), or for many items the
overview, the raters and every item's report; the review's decisions under `review`. Its own
module, so report.html (engine.outputs.report.report_html) reads the same content without importing
the writer (engine.outputs.session), which imports report.html's renderer."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from engine.audit.raters.expectation import METHOD as RATER_EXPECTATION
from engine.audit.raters.expert import MIN_EXPERT_READS
from engine.core.versions import parm_version
from engine.outputs.declared import TOO_FEW
from engine.outputs.report import item_content as report
from engine.outputs.report import rater_outputs, reads_outputs, review_summary
from engine.outputs.report.report_md import MIN_PAIR, blank_count
from engine.results.figures import run_figures
from engine.results.lead import ANSWERS_PER_SCORE, GAP, memorised
from engine.results.overview import ItemSummary
from engine.results.session import SessionResult

# report.json's shape (engine/outputs/report.schema.json describes it; CHANGELOG.md says what
# each version changed). 2: one shape for one item and for many.
SCHEMA_VERSION = 2
SCHEMA_FILE = "report.schema.json"


def report_schema() -> dict:
    """The JSON Schema of report.json, shipped in the package beside this module."""
    from importlib.resources import files

    return json.loads((files("engine.outputs") / SCHEMA_FILE).read_text(encoding="utf-8"))


def session_dict(
    session: SessionResult, decisions: dict | None = None, timings: dict | None = None
) -> dict:
    """report.json: the run, the input, the settings, the items overview, the raters, the
    review's decisions (`decisions`, by data row; None: no decision store) under `review`, and
    every item's report under `items`. One shape whatever the file: a file without an item
    column is a session of one item (its `item` is null). timings: the run's stages as the
    output set has them (with its own making, engine.outputs.session); default the run's."""
    skipped = session.items.skipped
    return {
        "schema_version": SCHEMA_VERSION,
        "parm_version": parm_version(),
        # The run every file of the set names (a run_id column in each CSV).
        "run_id": session.run_id,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "input": {
            "file": session.items.source,
            "item_column": session.config.item_column if session.by_item else None,
            "items": len(session.results) + len(skipped),
            "items_audited": len(session.results),
            "responses": session.n_responses,
            "blank_answers": blank_count(session),
            "skipped_items": [
                {"item": s.item, "rows": s.rows, "reason": s.reason} for s in skipped
            ],
        },
        "config": session.config.to_dict(),
        "headline": headline_dict(session),
        "items_overview": [dict(zip(*_overview_record(s))) for s in session.overview],
        "raters": None if session.raters is None else _raters_dict(session),
        # Answers read twice or more: rater pairs, alpha, PRMSE, consensus (null otherwise).
        "agreement": reads_outputs.agreement_dict(session),
        "flagged": int(session.flagged.sum()),
        "review": review_summary.review_summary(session, decisions),
        "timings_seconds": session.timings if timings is None else timings,
        "warnings": [warning.record() for warning in session.warnings],
        "items": [_item_dict(session, result) for result in session.results],
    }


def _item_dict(session: SessionResult, result) -> dict:
    """One item's report (engine.outputs.report.item_content), named by its item (null for a file without
    an item column)."""
    return {
        "item": result.responses.item if session.by_item else None,
        **report.report_dict(result),
    }


def _overview_record(summary: ItemSummary) -> tuple[list[str], list]:
    keys = ["item", "n", "score_counts", "top_k", "power", "kappa", "qwk", "cross_fit_kappa"]
    keys += ["cross_fit_qwk", "session_model", "session_model_in_sample", "warning"]
    keys += ["flagged", "estimated_wrong", "estimated_wrong_low", "estimated_wrong_high"]
    keys += ["estimated_from", "human_exact", "human_kappa", "skipped"]
    return keys, [report._clean(getattr(summary, key)) for key in keys]


def headline_dict(session: SessionResult) -> dict:
    """The figures screens and reports lead with (engine.results.lead): pooled kappa and QWK,
    cross-fitted and in-sample, whether they part by more than the gap, the items too small for
    their scores and the session model's figures."""
    figures = run_figures(session)

    def pair(inside, crossed):
        return {"in_sample": report._clean(inside), "cross_fitted": report._clean(crossed)}

    modelled = session.session_model
    return {
        "lead": "cross_fitted",
        "kappa": pair(figures.kappa, figures.cross_kappa),
        "qwk": None if figures.qwk is None else pair(figures.qwk, figures.cross_qwk),
        "memorised": memorised(figures.kappa, figures.cross_kappa)
        or memorised(figures.qwk, figures.cross_qwk),
        "gap": GAP,
        "answers_per_score": ANSWERS_PER_SCORE,
        "small_items": [s.item for s in session.overview if s.small],
        "session_model": None if modelled is None else modelled.to_dict(),
    }


def _raters_dict(session: SessionResult) -> dict:
    raters = session.raters
    assert raters is not None  # made only for a session with raters (session_dict)
    rows = []
    for r in raters.rows:
        row = {key: report._clean(getattr(r, key)) for key in r.__dataclass_fields__}
        row["verdict"] = r.verdict
        row["effects"] = rater_outputs.effects_dict(r.effects)
        rows.append(row)
    pairs = [
        {
            **{k: report._clean(getattr(p, k)) for k in p.__dataclass_fields__},
            "note": "" if p.n >= MIN_PAIR else TOO_FEW,
        }
        for p in raters.pairs
    ]
    return {
        "method": raters.method,
        "column": session.config.rater_column,
        "unassigned_scores": raters.unassigned,
        "raters": rows,
        "pairs": pairs,
        "expectation": RATER_EXPECTATION if raters.rater_left_out else "fitted model",
        "time_column": session.config.time_column,
        "rules": dict(rater_outputs.RULES),
        "bias_cells": rater_outputs.bias_dicts(session),
        "expert": _expert_dict(session),
    }


def _expert_dict(session: SessionResult) -> dict | None:
    """Each rater against the expert's scores (validity papers), and whether leniency is
    measured against them; None without an expert score column."""
    raters = session.raters
    assert raters is not None  # asked by _raters_dict only
    if raters.expert is None:
        return None
    return {
        "column": session.config.expert_column,
        "anchored": raters.anchored,
        "reads": sum(f.n for f in raters.expert.values()),
        "min_reads": MIN_EXPERT_READS,
        "interval": "t interval, the larger of the rater's own and the pooled sd of rater - expert",
        "raters": [
            {"rater": name, **{k: report._clean(getattr(f, k)) for k in f.__dataclass_fields__}}
            for name, f in raters.expert.items()
        ],
    }
