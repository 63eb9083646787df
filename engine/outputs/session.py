"""The outputs of a scoring session (engine.results.session.SessionResult): for a file of one item and no
raters, exactly the single audit's files; with items, the items overview (items.csv and the top of
report.md), every item's detail after it, and an `item` column in predictions.csv and tuning.csv;
with raters, the rater table (raters.csv and report.md) and a `rater` column."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

from engine.audit.decisions import DecisionStore
from engine.audit.rater_expectation import METHOD as RATER_EXPECTATION
from engine.core.errors import ExportError
from engine.input.config import AuditConfig
from engine.outputs import markdown, rater_files, report, tables
from engine.outputs.names import BIAS_FILE, FEEDBACK_FILE, ITEMS_FILE, OUTPUT_FILES, RATERS_FILE
from engine.outputs.write import json_text, run_csv, write_files
from engine.results.item import AuditResult
from engine.results.overview import ItemSummary
from engine.results.session import SessionResult

ITEM_COLUMNS = [
    "item", "status", "n", "scores", "top_k", "power", "kappa", "qwk", "cross_fit_kappa",
    "flagged", "human_exact", "human_kappa",
]  # fmt: skip
RATER_COLUMNS = [
    "rater", "verdict", "n", "items", "exact", "kappa", "qwk", "flagged", "flagged_share", "flagged_low",
    "flagged_high", "leniency", "leniency_low", "leniency_high", "second_n", "second_exact",
    "second_kappa", "note", *rater_files.EFFECT_COLUMNS,
]  # fmt: skip
TOO_FEW = "too few to judge"


def output_files(config: AuditConfig) -> tuple[str, ...]:
    """The files a session with these settings writes: the four outputs, and items.csv and
    raters.csv (with rater_item_bias.csv and rater_feedback.csv) when the settings name an item
    and a rater column."""
    extra = (ITEMS_FILE,) if config.item_column is not None else ()
    if config.rater_column is not None:
        extra += (RATERS_FILE, BIAS_FILE, FEEDBACK_FILE)
    return OUTPUT_FILES + extra


def _number(value, digits: int = 6):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return f"{value:.{digits}f}" if isinstance(value, float) else value


def items_table(session: SessionResult) -> tuple[list[str], list[list]]:
    """items.csv: one row per item, audited ones in file order, then the skipped ones."""
    rows = []
    for s in session.overview:
        scores = " ".join(f"{label}:{n}" for label, n in s.score_counts.items())
        figures = (s.top_k, s.power, s.kappa, s.qwk, s.cross_fit_kappa, s.flagged)
        figures += (s.human_exact, s.human_kappa)
        status = "audited" if s.skipped is None else f"skipped: {s.skipped}"
        rows.append([s.item, status, s.n, scores, *(_number(v) for v in figures)])
    return list(ITEM_COLUMNS), rows


def raters_table(session: SessionResult) -> tuple[list[str], list[list]]:
    """raters.csv: one row per rater, the farthest from the rest first (leniency in points)."""
    rows = []
    for r in session.raters.rows:
        rows.append(
            [
                r.rater,
                r.verdict,
                r.n,
                r.items,
                _number(r.exact),
                _number(r.kappa),
                _number(r.qwk),
                r.flagged,
                _number(r.flagged_share),
                _number(r.flagged_low),
                _number(r.flagged_high),
                _number(r.leniency),
                _number(r.leniency_low),
                _number(r.leniency_high),
                r.second_n,
                _number(r.second_exact),
                _number(r.second_kappa),
                "" if r.judged else TOO_FEW,
                *rater_files.effect_cells(r, session.raters.bias),
            ]  # fmt: skip
        )
    return list(RATER_COLUMNS), rows


def prediction_table(session: SessionResult) -> tuple[list[str], list[list]]:
    """predictions.csv over all items in input-row order, with `item` (and `rater`) columns
    after `id` and the probability columns of every score on any item's scale (empty where a
    score is not on an item's scale)."""
    if not _combined(session):
        return tables.prediction_table(session.results[0])
    parts = [_with_who(session, result) for result in session.results]
    header = _union_header([h for h, _ in parts])
    rows = []
    for part_header, part_rows in parts:
        where = [part_header.index(name) if name in part_header else None for name in header]
        rows += [[row[j] if j is not None else "" for j in where] for row in part_rows]
    rows.sort(key=lambda row: row[0])
    return header, rows


def _combined(session: SessionResult) -> bool:
    return session.by_item or session.raters is not None


def _with_who(session: SessionResult, result: AuditResult) -> tuple[list[str], list[list]]:
    """One item's prediction rows with its item and rater columns inserted after `id`."""
    header, rows = tables.prediction_table(result)
    responses = result.responses
    extra_header, extra = [], []
    if session.by_item:
        extra_header.append("item")
        extra.append([responses.item] * len(responses))
    if responses.raters is not None:
        extra_header.append("rater")
        extra.append(list(responses.raters))
    header = header[:2] + extra_header + header[2:]
    rows = [row[:2] + [col[i] for col in extra] + row[2:] for i, row in enumerate(rows)]
    return header, rows


def _union_header(headers: list[list[str]]) -> list[str]:
    """Columns of every item's header, in first-seen order, with the probability columns
    kept together."""
    out: list[str] = []
    for header in headers:
        for position, name in enumerate(header):
            if name in out:
                continue
            if name.startswith("p_"):
                last = max((i for i, c in enumerate(out) if c.startswith("p_")), default=None)
                if last is not None:
                    out.insert(last + 1, name)
                    continue
            before = header[position - 1] if position else None
            out.insert(out.index(before) + 1 if before in out else len(out), name)
    return out


def tuning_table(session: SessionResult) -> tuple[list[str], list[list]]:
    """tuning.csv; with items, an `item` column first and every item's configurations."""
    if not session.by_item:
        return tables.tuning_table(session.results[0])
    header, rows = None, []
    for result in session.results:
        header, own = tables.tuning_table(result)
        rows += [[result.responses.item, *row] for row in own]
    return ["item", *header], rows


def decisions_table(store: DecisionStore, session: SessionResult) -> tuple[list[str], list[list]]:
    """decisions.csv over all items, in input-row order, with an `item` column after `id`."""
    if not session.by_item:
        return tables.decisions_table(store, session.results[0])
    header, rows = None, []
    for result in session.results:
        header, own = tables.decisions_table(store, result)
        rows += [[*row[:2], result.responses.item, *row[2:]] for row in own]
    rows.sort(key=lambda row: row[0])
    return [*header[:2], "item", *header[2:]], rows


def session_dict(session: SessionResult) -> dict:
    """report.json: a single item's report (plus the rater table), or for many items the
    overview, the raters and every item's report."""
    raters = None if session.raters is None else _raters_dict(session)
    if not session.by_item:
        data = report.report_dict(session.results[0])
        if raters is not None:
            data["raters"] = raters
        return data
    skipped = session.items.skipped
    return {
        "parm_version": report._version(),
        # The run every file of the set names (a run_id column in each CSV).
        "run_id": session.run_id,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "input": {
            "file": session.items.source,
            "items": len(session.results) + len(skipped),
            "items_audited": len(session.results),
            "responses": session.n_responses,
            "blank_answers": _blanks(session),
            "skipped_items": [
                {"item": s.item, "rows": s.rows, "reason": s.reason} for s in skipped
            ],
        },
        "config": session.config.to_dict(),
        "items_overview": [dict(zip(*_overview_record(s))) for s in session.overview],
        "raters": raters,
        "flagged": int(session.flagged.sum()),
        "timings_seconds": session.timings,
        "warnings": list(session.warnings),
        "items": [report.report_dict(result) for result in session.results],
    }


def _blanks(session: SessionResult) -> int:
    return int(sum(result.responses.blank.sum() for result in session.results))


def _overview_record(summary: ItemSummary) -> tuple[list[str], list]:
    keys = ["item", "n", "score_counts", "top_k", "power", "kappa", "qwk", "cross_fit_kappa"]
    keys += ["flagged", "human_exact", "human_kappa", "skipped"]
    return keys, [report._clean(getattr(summary, key)) for key in keys]


def _raters_dict(session: SessionResult) -> dict:
    raters = session.raters
    rows = []
    for r in raters.rows:
        row = {key: report._clean(getattr(r, key)) for key in r.__dataclass_fields__}
        row["verdict"] = r.verdict
        row["effects"] = rater_files.effects_dict(r.effects)
        rows.append(row)
    pairs = [
        {k: report._clean(getattr(p, k)) for k in p.__dataclass_fields__} for p in raters.pairs
    ]
    return {
        "method": raters.method,
        "column": session.config.rater_column,
        "unassigned_scores": raters.unassigned,
        "raters": rows,
        "pairs": pairs,
        "expectation": RATER_EXPECTATION if raters.rater_left_out else "fitted model",
        "time_column": session.config.time_column,
        "rules": dict(rater_files.RULES),
        "bias_cells": rater_files.bias_dicts(session),
    }


def write_session(
    session: SessionResult,
    out_dir: str | Path,
    overwrite: bool = False,
    names=None,
    extra=None,
    on_switched=None,
) -> list[Path]:
    """Write the session's outputs (all of `output_files` by default, or `names`) and the
    `extra` files ({name: text}, e.g. decisions.csv from `decisions_csv`) into out_dir as one
    output set (engine.outputs.sets); returns the paths written, the manifest last.
    on_switched: called with them the moment the set is in place."""
    return write_files(
        out_dir, session.run_id, session_contents(session, names, extra), overwrite, on_switched
    )


def session_contents(session: SessionResult, names=None, extra=None) -> list[tuple[str, str]]:
    """The files of the session's output set as (name, text), in the order they are written:
    the one place a set is put together (a new kind of output joins here)."""
    known = output_files(session.config)
    names = known if names is None else [name for name in known if name in names]
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ExportError(f"Unknown output file(s) {', '.join(unknown)}; choose from {known}.")
    run_id = session.run_id
    builders = {
        "predictions.csv": lambda: run_csv(prediction_table(session), run_id),
        "tuning.csv": lambda: run_csv(tuning_table(session), run_id),
        "report.json": lambda: json_text(session_dict(session)),
        "report.md": lambda: session_markdown(session),
        ITEMS_FILE: lambda: run_csv(items_table(session), run_id),
        RATERS_FILE: lambda: run_csv(raters_table(session), run_id),
        BIAS_FILE: lambda: run_csv(rater_files.bias_table(session), run_id),
        FEEDBACK_FILE: lambda: run_csv(rater_files.feedback_table(session), run_id),
    }
    return [(name, builders[name]()) for name in names] + list((extra or {}).items())


def decisions_csv(store: DecisionStore, session: SessionResult) -> str:
    """decisions.csv of a session (formula cells guarded, the exported run in run_id)."""
    return run_csv(decisions_table(store, session), session.run_id)


def session_markdown(session: SessionResult) -> str:
    """report.md: one item's report (with the raters after it), or the items overview and the
    raters first, then every item's report under its own heading."""
    raters = _raters_section(session) if session.raters is not None else ""
    if not session.by_item:
        text = markdown.markdown_report(session.results[0])
        return text + ("\n" + raters + "\n" if raters else "")
    parts = ["# parm audit report", _overview_section(session)]
    if raters:
        parts.append(raters)
    for result in session.results:
        title = f"Item {markdown.md_text(result.responses.item, 80)}"
        parts.append(markdown.markdown_report(result, title=title, depth=2).rstrip())
    return "\n\n".join(parts) + "\n"


def _overview_section(session: SessionResult) -> str:
    items = session.items
    lines = [
        "## Items",
        "",
        f"File {markdown.md_text(items.source, 200)}: {len(session.results)} item(s) "
        f"audited, {len(items.skipped)} skipped, {session.n_responses:,} responses "
        f"({_blanks(session):,} blank), {int(session.flagged.sum()):,} flagged for review. Each item was audited on its own graph, "
        "tuning and parameters.",
        "",
        f"Run: {markdown.md_text(session.run_id, 80)}",
        "",
    ]
    header = ["item", "n", "scores", "K", "p", "kappa", "QWK", "cross-fitted kappa", "flagged"]
    header += ["rater 1 vs 2 (exact, kappa)"]
    rows = []
    for s in session.overview:
        if s.skipped is not None:
            rows.append([s.item, s.n, f"skipped: {s.skipped}"] + [""] * 7)
            continue
        scores = ", ".join(f"{k}: {v}" for k, v in s.score_counts.items())
        human = "" if s.human_kappa is None else f"{s.human_exact:.3f}, {s.human_kappa:.3f}"
        k = "dense" if s.top_k is None else s.top_k
        figures = [markdown._fmt(v) for v in (s.kappa, s.qwk, s.cross_fit_kappa)]
        rows.append([s.item, s.n, scores, k, f"{s.power:.3g}"])
        rows[-1] += [*figures, s.flagged, human]
    lines.append(markdown._table(header, rows))
    return "\n".join(lines)


def _raters_section(session: SessionResult) -> str:
    raters = session.raters
    header = ["rater", "verdict", "n", "exact", "kappa", "flagged (95% interval)"]
    header += ["leniency (95% interval)"]
    rows = []
    for r in raters.rows:
        name = r.rater
        if not r.judged:
            rows.append(
                [name, "", r.n, markdown._fmt(r.exact), markdown._fmt(r.kappa), TOO_FEW, ""]
            )
            continue
        flagged = f"{r.flagged_share:.1%} ({r.flagged_low:.1%} to {r.flagged_high:.1%})"
        leniency = (
            "n/a (unordered labels)"
            if r.leniency is None
            else f"{r.leniency:+.2f} ({r.leniency_low:+.2f} to {r.leniency_high:+.2f})"
        )
        figures = [markdown._fmt(r.exact), markdown._fmt(r.kappa), flagged, leniency]
        rows.append([name, r.verdict, r.n, *figures])
    lines = [
        "## Raters",
        "",
        "Farthest from the rest first. Leniency is in score points: how much higher (positive) "
        "or lower (negative) a rater scores than the model expects, compared within items and "
        "against the typical rater (the median of the reference raters). Flagged: the share of "
        "their scores the model would change. Verdicts and their rules below.",
        "",
        markdown._table(header, rows),
    ]
    lines += rater_files.verdicts_section(session)
    if raters.unassigned:
        lines += ["", f"{raters.unassigned} score(s) have no rater recorded and are not counted."]
    if raters.pairs:
        pair_rows = [
            [p.first, p.second, p.n] + [markdown._fmt(p.exact), markdown._fmt(p.kappa)]
            for p in raters.pairs
        ]
        lines += ["", "Rater pairs on the responses both scored:", ""]
        lines.append(markdown._table(["first", "second", "n", "exact", "kappa"], pair_rows))
    return "\n".join(lines)
