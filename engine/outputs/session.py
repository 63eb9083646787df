"""The outputs of a scoring session (engine.results.session.SessionResult): for a file of one item and no
raters, exactly the single audit's files; with items, the items overview (items.csv and the top of
report.md), every item's detail after it, and an `item` column in predictions.csv and tuning.csv;
with raters, the rater table (raters.csv and report.md) and a `rater` column; with reads (answers
read twice or more, or raters), the lead's lists (engine.actions: backreads.csv, third_reads.csv,
rater_status.csv, and a section of report.md and report.html)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engine.actions.plan import Actions, has_reads, plan_actions
from engine.core.errors import ExportError
from engine.core.run_warnings import warnings_text
from engine.core.stages import OUTPUTS, StageTimer, with_stage
from engine.input.scale import pooled_labels
from engine.input.settings.config import AuditConfig
from engine.input.several_reads import rater_column_given, records_raters, several_reads
from engine.outputs import declared, tables, workbook
from engine.outputs.names import (
    ACTION_FILES,
    AGREEMENT_FILE,
    BACKREADS_FILE,
    BIAS_FILE,
    CONSENSUS_FILE,
    CSV,
    DECISIONS_FILE,
    FEEDBACK_FILE,
    HTML_FILE,
    ITEMS_FILE,
    OUTPUT_FILES,
    RATERS_FILE,
    REPORT_JSON,
    REVIEWED_FILE,
    STATUS_FILE,
    THIRD_READS_FILE,
    WARNINGS_FILE,
    WORKBOOK_FILE,
    XLSX,
)
from engine.outputs.report import action_outputs, rater_outputs, reads_outputs, report_json
from engine.outputs.report.report_md import session_markdown
from engine.outputs.reviewed import reviewed_table
from engine.outputs.write import json_text, run_csv, write_files
from engine.results.decision import Decisions
from engine.results.item import AuditResult
from engine.results.session import SessionResult

_NONE = Actions((), (), ())


def output_files(config: AuditConfig, table_format: str = CSV) -> tuple[str, ...]:
    """The files a session with these settings can write, in the order they are written: the
    four outputs, report.html and warnings.txt; items.csv and raters.csv (with
    rater_item_bias.csv and rater_feedback.csv) when the settings name an item column and
    raters (engine.input.several_reads.records_raters); consensus.csv and agreement.csv when they name
    several reads per answer; the lead's lists with either; then decisions.csv and
    scores_reviewed.csv, which need the decision store and the input table. table_format
    (engine.outputs.names): "xlsx" puts the tables in results.xlsx instead (decisions.csv
    stays), "both" writes the workbook after the CSVs."""
    extra: tuple[str, ...] = (ITEMS_FILE,) if config.item_column is not None else ()
    if records_raters(config):
        extra += (RATERS_FILE, BIAS_FILE, FEEDBACK_FILE)
    if several_reads(config):
        extra += (CONSENSUS_FILE, AGREEMENT_FILE)
    if records_raters(config) or several_reads(config):
        extra += ACTION_FILES
    files = OUTPUT_FILES + (HTML_FILE, WARNINGS_FILE) + extra + (DECISIONS_FILE, REVIEWED_FILE)
    if table_format == CSV:
        return files
    if table_format == XLSX:
        files = tuple(n for n in files if n not in workbook.SHEETS or n == DECISIONS_FILE)
    return files + (WORKBOOK_FILE,)


def _csv_of(made: Callable[[], tuple[list[str], list[list]]], run_id: str) -> Callable[[], str]:
    """The CSV of a table, made when asked for (only the files chosen are made)."""
    return lambda: run_csv(made(), run_id)


def items_table(session: SessionResult) -> tuple[list[str], list[list]]:
    """items.csv: one row per item, audited ones in file order, then the skipped ones."""
    return declared.ITEMS.csv(session.overview)


def raters_table(session: SessionResult) -> tuple[list[str], list[list]]:
    """raters.csv: one row per rater, the farthest from the rest first (leniency in points);
    the expert columns only with an expert score column."""
    table = declared.RATERS
    assert session.raters is not None  # written only for a file whose raters are named
    if session.raters.expert is None:
        table = table.without(declared.WITH_EXPERT)
    return table.csv(session.raters.rows, session.raters)


def prediction_table(session: SessionResult) -> tuple[list[str], list[list]]:
    """predictions.csv over all items in input-row order, with `item` (and `rater`) columns
    after `id` and the probability columns of every score on any item's scale (empty where a
    score is not on an item's scale)."""
    if not _combined(session):
        return tables.prediction_table(session.results[0])
    parts = [_with_who(session, result) for result in session.results]
    header = _in_score_order(_union_header([h for h, _ in parts]), session)
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
    if responses.raters is not None and rater_column_given(result.config):
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


def _in_score_order(header: list[str], session: SessionResult) -> list[str]:
    """The probability columns in the order of the session's pooled scale (0, 0.5, 1, ... 10 on
    numbers; the stated score_order on text), not in the order the items first used them."""
    labels = pooled_labels(
        [r.responses.labels for r in session.results], session.config.score_order
    )
    ordered = [f"p_{label}" for label in labels if f"p_{label}" in header]
    first = min(header.index(name) for name in ordered) if ordered else len(header)
    rest = [name for name in header if name not in set(ordered)]
    return rest[:first] + ordered + rest[first:]


def tuning_table(session: SessionResult) -> tuple[list[str], list[list]]:
    """tuning.csv; with items, an `item` column first and every item's configurations."""
    if not session.by_item:
        return tables.tuning_table(session.results[0])
    header: list[str] = []
    rows: list[list] = []
    for result in session.results:
        header, own = tables.tuning_table(result)
        rows += [[result.responses.item, *row] for row in own]
    return ["item", *header], rows


def decisions_table(store: Decisions, session: SessionResult) -> tuple[list[str], list[list]]:
    """decisions.csv over all items, in input-row order, with `item` (and `rater`) columns after
    `id`, as predictions.csv has them, and with answers read twice or more the consensus and its
    probability, then the reads typed in the review, last."""
    header, rows = _decisions_rows(store, session)
    if session.reads is None:
        return header, rows
    consensus = reads_outputs.consensus_by_row(session)
    typed = reads_outputs.typed_reads_by_row(store.added_reads())
    return [*header, "consensus", "consensus_p", "added_reads"], [
        [*row, *consensus.get(int(row[0]), ("", "")), typed.get(int(row[0]), "")] for row in rows
    ]


def _decisions_rows(store: Decisions, session: SessionResult) -> tuple[list[str], list[list]]:
    if not _combined(session):
        return tables.decisions_table(store, session.results[0])
    header: list[str] = []
    rows: list[list] = []
    who: list[str] = []
    for result in session.results:
        header, own = tables.decisions_table(store, result)
        responses = result.responses
        position = {int(r): i for i, r in enumerate(responses.rows)}
        named = responses.raters is not None and rater_column_given(result.config)
        who = (["item"] if session.by_item else []) + (["rater"] if named else [])
        for row in own:
            i = position[int(row[0])]
            extra = [responses.item] if session.by_item else []
            if named:
                assert responses.raters is not None  # `named` says the file names its raters
                extra.append(responses.raters[i])
            rows.append([*row[:2], *extra, *row[2:]])
    rows.sort(key=lambda row: row[0])
    return [*header[:2], *who, *header[2:]], rows


def write_session(
    session: SessionResult,
    out_dir: str | Path,
    overwrite: bool = False,
    names=None,
    extra=None,
    on_switched=None,
    store: Decisions | None = None,
    table=None,
    table_format: str = CSV,
) -> list[Path]:
    """Write the session's outputs (all of `output_files` that can be written by default, in
    `table_format`, or `names`) and the `extra` files ({name: text}) into out_dir as one output
    set (engine.outputs.sets); returns the paths written, the manifest last. store: the file's
    decision store (decisions.csv, the review in the reports); table: the input file as read
    (scores_reviewed.csv). on_switched: called with the paths the moment the set is in place."""
    contents = session_contents(session, names, extra, store, table, table_format)
    # Every file the run can write (names None) is a whole set: nothing of another run stays.
    whole = names is None
    return write_files(out_dir, session.run_id, contents, overwrite, on_switched, whole)


def session_contents(
    session: SessionResult,
    names=None,
    extra=None,
    store: Decisions | None = None,
    table=None,
    table_format: str = CSV,
) -> list[tuple[str, str | bytes]]:
    """The files of the session's output set as (name, text or bytes), in the order they are
    written: the one place a set is put together (a new kind of output joins here). Without
    `names`, every file of `output_files` (in `table_format`) whose inputs are there:
    decisions.csv needs the store, scores_reviewed.csv the table, consensus.csv and
    agreement.csv an answer read twice, the lead's lists reads (asked for without them, they
    hold their header only). results.xlsx holds a sheet for each of those tables that the set
    could write. The session counts the reads typed in the review (engine.workspace.export):
    the lists take their kinds from the store."""
    known = output_files(session.config, table_format="both")
    needs = {DECISIONS_FILE: store, REVIEWED_FILE: table}
    reads = {CONSENSUS_FILE, AGREEMENT_FILE} if session.reads is None else set()
    reads |= set() if has_reads(session) else set(ACTION_FILES)
    possible = [n for n in known if needs.get(n, True) is not None and n not in reads]
    if names is None:
        names = [n for n in output_files(session.config, table_format) if n in possible]
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ExportError(f"Unknown output file(s) {', '.join(unknown)}; choose from {known}.")
    missing = [name for name in names if needs.get(name, True) is None]
    if missing:
        raise ExportError(f"{', '.join(missing)} cannot be written without the review's data.")
    run_id = session.run_id
    decisions = None if store is None else store.all()
    typed = [] if store is None else store.added_reads()
    lists = plan_actions(session, typed) if has_reads(session) else None
    tables = session_tables(session, store, table, decisions, lists)
    builders: dict[str, Callable[[], str | bytes]] = {
        name: _csv_of(made, run_id) for name, made in tables.items()
    }
    sheets = {name: made for name, made in tables.items() if name in possible}
    builders |= {
        "report.md": lambda: session_markdown(session, decisions, lists),
        HTML_FILE: lambda: html_report(session, decisions, lists),
        WARNINGS_FILE: lambda: warnings_file(session),
        WORKBOOK_FILE: lambda: workbook.workbook_bytes(session, sheets),
    }
    chosen = [name for name in known if name in names]
    # report.json comes last, so its timings can say how long the others took to make.
    timer = StageTimer()
    with timer.stage(OUTPUTS):
        made = {name: builders[name]() for name in chosen if name != REPORT_JSON}
    timings = with_stage(session.timings, OUTPUTS, timer.timings[OUTPUTS])
    if REPORT_JSON in chosen:
        made[REPORT_JSON] = json_text(report_json.session_dict(session, decisions, timings))
    return [(name, made[name]) for name in chosen] + list((extra or {}).items())


def session_tables(session: SessionResult, store, table, decisions, lists=None) -> dict:
    """{file name: a function giving its (header, rows)}: every table of a set, each written
    as a CSV and as a sheet of results.xlsx from the same rows. lists: the lead's lists
    (engine.actions), None without reads."""
    return {
        "predictions.csv": lambda: prediction_table(session),
        "tuning.csv": lambda: tuning_table(session),
        ITEMS_FILE: lambda: items_table(session),
        RATERS_FILE: lambda: raters_table(session),
        BIAS_FILE: lambda: rater_outputs.bias_table(session),
        FEEDBACK_FILE: lambda: rater_outputs.feedback_table(session),
        CONSENSUS_FILE: lambda: reads_outputs.consensus_table(session),
        AGREEMENT_FILE: lambda: reads_outputs.agreement_table(session),
        BACKREADS_FILE: lambda: action_outputs.backreads_table(lists or _NONE),
        THIRD_READS_FILE: lambda: action_outputs.third_reads_table(lists or _NONE),
        STATUS_FILE: lambda: action_outputs.status_table(lists or _NONE),
        DECISIONS_FILE: lambda: decisions_table(store, session),
        REVIEWED_FILE: lambda: reviewed_table(session, table, decisions),
    }


def decisions_csv(store: Decisions, session: SessionResult) -> str:
    """decisions.csv of a session (formula cells guarded, the exported run in run_id)."""
    return run_csv(decisions_table(store, session), session.run_id)


def warnings_file(session: SessionResult) -> str:
    """warnings.txt: every warning of the run, one a line, "[kind] Item 'X': sentence"."""
    if not session.warnings:
        return f"No warnings (run {session.run_id}).\n"
    header = f"{len(session.warnings)} warning(s) of run {session.run_id}, one a line.\n"
    return header + warnings_text(session.warnings)


def html_report(session: SessionResult, decisions: dict | None, lists=None) -> str:
    """report.html (engine.outputs.report.report_html; jinja2 and matplotlib load only here)."""
    from engine.outputs.report.report_html import html_report as render

    return render(session, decisions, lists)
