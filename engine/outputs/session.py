"""The outputs of a scoring session (engine.results.session.SessionResult): for a file of one item and no
raters, exactly the single audit's files; with items, the items overview (items.csv and the top of
report.md), every item's detail after it, and an `item` column in predictions.csv and tuning.csv;
with raters, the rater table (raters.csv and report.md) and a `rater` column; with reads (answers
read twice or more, or raters), the lead's lists (engine.actions: backreads.csv, third_reads.csv,
rater_status.csv, and a section of report.md and report.html)."""

from __future__ import annotations

from pathlib import Path

from engine.actions.plan import Actions, has_reads, plan_actions
from engine.core.errors import ExportError
from engine.core.run_warnings import warnings_text
from engine.input.config import AuditConfig
from engine.outputs import action_files, declared, rater_files, read_files, session_report, tables
from engine.outputs.names import (
    ACTION_FILES,
    AGREEMENT_FILE,
    BACKREADS_FILE,
    BIAS_FILE,
    CONSENSUS_FILE,
    DECISIONS_FILE,
    FEEDBACK_FILE,
    HTML_FILE,
    ITEMS_FILE,
    OUTPUT_FILES,
    RATERS_FILE,
    REVIEWED_FILE,
    STATUS_FILE,
    THIRD_READS_FILE,
    WARNINGS_FILE,
)
from engine.outputs.reviewed import reviewed_table
from engine.outputs.session_markdown import session_markdown
from engine.outputs.write import json_text, run_csv, write_files
from engine.results.decision import Decisions
from engine.results.item import AuditResult
from engine.results.session import SessionResult

_NONE = Actions((), (), ())


def output_files(config: AuditConfig) -> tuple[str, ...]:
    """The files a session with these settings can write, in the order they are written: the
    four outputs, report.html and warnings.txt; items.csv and raters.csv (with
    rater_item_bias.csv and rater_feedback.csv) when the settings name an item and a rater
    column; consensus.csv and agreement.csv when they name several reads per answer; the lead's
    lists with either; then decisions.csv and scores_reviewed.csv, which need the decision store
    and the input table."""
    extra = (ITEMS_FILE,) if config.item_column is not None else ()
    if config.rater_column is not None:
        extra += (RATERS_FILE, BIAS_FILE, FEEDBACK_FILE)
    if read_files.several_reads(config):
        extra += (CONSENSUS_FILE, AGREEMENT_FILE)
    if config.rater_column is not None or read_files.several_reads(config):
        extra += ACTION_FILES
    return OUTPUT_FILES + (HTML_FILE, WARNINGS_FILE) + extra + (DECISIONS_FILE, REVIEWED_FILE)


def items_table(session: SessionResult) -> tuple[list[str], list[list]]:
    """items.csv: one row per item, audited ones in file order, then the skipped ones."""
    return declared.ITEMS.csv(session.overview)


def raters_table(session: SessionResult) -> tuple[list[str], list[list]]:
    """raters.csv: one row per rater, the farthest from the rest first (leniency in points);
    the expert columns only with an expert score column."""
    table = declared.RATERS
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


def decisions_table(store: Decisions, session: SessionResult) -> tuple[list[str], list[list]]:
    """decisions.csv over all items, in input-row order, with `item` (and `rater`) columns after
    `id`, as predictions.csv has them, and with answers read twice or more the consensus and its
    probability, then the reads typed in the review, last."""
    header, rows = _decisions_rows(store, session)
    if session.reads is None:
        return header, rows
    consensus = read_files.consensus_by_row(session)
    typed = read_files.typed_reads_by_row(store.added_reads())
    return [*header, "consensus", "consensus_p", "added_reads"], [
        [*row, *consensus.get(int(row[0]), ("", "")), typed.get(int(row[0]), "")] for row in rows
    ]


def _decisions_rows(store: Decisions, session: SessionResult) -> tuple[list[str], list[list]]:
    if not _combined(session):
        return tables.decisions_table(store, session.results[0])
    header, rows, who = None, [], []
    for result in session.results:
        header, own = tables.decisions_table(store, result)
        responses = result.responses
        position = {int(r): i for i, r in enumerate(responses.rows)}
        who = (["item"] if session.by_item else []) + (
            ["rater"] if responses.raters is not None else []
        )
        for row in own:
            i = position[int(row[0])]
            extra = [responses.item] if session.by_item else []
            if responses.raters is not None:
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
) -> list[Path]:
    """Write the session's outputs (all of `output_files` that can be written by default, or
    `names`) and the `extra` files ({name: text}) into out_dir as one output set
    (engine.outputs.sets); returns the paths written, the manifest last. store: the file's
    decision store (decisions.csv, the review in the reports); table: the input file as read
    (scores_reviewed.csv). on_switched: called with the paths the moment the set is in place."""
    contents = session_contents(session, names, extra, store, table)
    # Every file the run can write (names None) is a whole set: nothing of another run stays.
    whole = names is None
    return write_files(out_dir, session.run_id, contents, overwrite, on_switched, whole)


def session_contents(
    session: SessionResult, names=None, extra=None, store: Decisions | None = None, table=None
) -> list[tuple[str, str]]:
    """The files of the session's output set as (name, text), in the order they are written:
    the one place a set is put together (a new kind of output joins here). Without `names`,
    every file of `output_files` whose inputs are there: decisions.csv needs the store,
    scores_reviewed.csv the table, consensus.csv and agreement.csv an answer read twice, the
    lead's lists reads (asked for without them, they hold their header only). The session counts
    the reads typed in the review (engine.workspace.export): the lists take their kinds from the
    store."""
    known = output_files(session.config)
    needs = {DECISIONS_FILE: store, REVIEWED_FILE: table}
    if names is None:
        reads = {CONSENSUS_FILE, AGREEMENT_FILE} if session.reads is None else set()
        reads |= set() if has_reads(session) else set(ACTION_FILES)
        names = [n for n in known if needs.get(n, True) is not None and n not in reads]
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
    builders = {
        "predictions.csv": lambda: run_csv(prediction_table(session), run_id),
        "tuning.csv": lambda: run_csv(tuning_table(session), run_id),
        "report.json": lambda: json_text(session_report.session_dict(session, decisions)),
        "report.md": lambda: session_markdown(session, decisions, lists),
        HTML_FILE: lambda: html_report(session, decisions, lists),
        WARNINGS_FILE: lambda: warnings_file(session),
        ITEMS_FILE: lambda: run_csv(items_table(session), run_id),
        RATERS_FILE: lambda: run_csv(raters_table(session), run_id),
        BIAS_FILE: lambda: run_csv(rater_files.bias_table(session), run_id),
        FEEDBACK_FILE: lambda: run_csv(rater_files.feedback_table(session), run_id),
        CONSENSUS_FILE: lambda: run_csv(read_files.consensus_table(session), run_id),
        AGREEMENT_FILE: lambda: run_csv(read_files.agreement_table(session), run_id),
        BACKREADS_FILE: lambda: run_csv(action_files.backreads_table(lists or _NONE), run_id),
        THIRD_READS_FILE: lambda: run_csv(action_files.third_reads_table(lists or _NONE), run_id),
        STATUS_FILE: lambda: run_csv(action_files.status_table(lists or _NONE), run_id),
        DECISIONS_FILE: lambda: decisions_csv(store, session),
        REVIEWED_FILE: lambda: run_csv(reviewed_table(session, table, decisions), run_id),
    }
    chosen = [name for name in known if name in names]
    return [(name, builders[name]()) for name in chosen] + list((extra or {}).items())


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
    """report.html (engine.outputs.html_report; jinja2 and matplotlib load only here)."""
    from engine.outputs.html_report import html_report as render

    return render(session, decisions, lists)
