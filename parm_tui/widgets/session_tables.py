"""A scoring session's tables on the Results screen: the items overview (which items are scored
inconsistently), the raters (which raters need a word: each one's verdict and the effects that
fit the width), the rater x item bias cells beyond the rule, and where answers are read twice or
more the agreement of every pair of raters. `enter` on a row opens the
review on that item, rater or cell (an `OpenReview` message the app acts on).

Figures are read from the session (engine.results.overview, engine.audit.raters.table and its
effects and verdicts), never computed here; item and rater names go into Text objects only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from engine.core.text import safe_text
from engine.results.lead import SMALL_RULE
from engine.workspace.reporting import (
    RATERS,
    TOO_FEW,
    interval_text,
    pair_cells,
    prmse_text,
    read_pair,
)
from parm_tui.widgets.metrics import fmt

if TYPE_CHECKING:
    from engine.audit.raters.table import RaterRow
    from engine.results.session import SessionResult


# From this screen width the raters table shows every effect, below it the most useful ones.
WIDE_RATERS = 120
# From this width the pairs of raters show each figure's interval.
WIDE_PAIRS = 160
LENIENT, HARSH = "lenient", "harsh"


class OpenReview(Message):
    """Open the review on an item, a rater or both (a bias cell); whole: list every response
    of it, flagged or not (a cell), else keep the view."""

    def __init__(self, item: str | None, rater: str | None, whole: bool = False) -> None:
        super().__init__()
        self.item, self.rater, self.whole = item, rater, whole


def name(value) -> Text:
    return Text(safe_text(value, one_line=True))


class SessionTable(DataTable):
    """A table whose rows open the review (enter): each row key is a (item, rater) pair."""

    WHOLE = False

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)
        self.targets: list[tuple[str | None, str | None]] = []

    def add_target(self, cells, item: str | None, rater: str | None) -> None:
        self.add_row(*cells, key=str(len(self.targets)))
        self.targets.append((item, rater))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        item, rater = self.targets[int(event.row_key.value)]
        if item is None and rater is None:
            self.notify("Nothing to review in this row.")
            return
        self.post_message(OpenReview(item, rater, self.WHOLE))


# The two reads the Items tab's raters' column compares (named under the table: pair_note).
PAIR_HEADER = "reads κ"


class ItemsTable(SessionTable):
    """One row per item, the figures that matter first so that they stay in view at 80
    columns: size, the cross-fitted kappa and QWK, the session model's cross-fitted figure
    where the run fitted it, flags, the first and second reads' kappa where some item has answers
    read twice (PAIR_HEADER), a
    short note (⚠ memorised: in-sample more than .05 above cross-fitted; ⚠ small: fewer than
    ten answers per score value beyond the most common one; skipped), then the in-sample figures ("small" for a small
    item, engine.results.lead) and the selected K and p. A skipped item's reason is under the
    table (`items_notes`), never in a figure's column."""

    def show(self, session: SessionResult) -> None:
        self.clear(columns=True)
        modelled = session.session_model is not None
        twice = session.second_reads
        headers = items_headers(modelled, twice)
        for header in headers:
            self.add_column(header, key=header)
        for s in session.overview:
            if s.skipped is not None:
                cells = [name(s.item), Text(f"{s.n:,}", justify="right")]
                cells += [""] * (headers.index("note") - 2) + [Text("skipped ↓", "dim")]
                self.add_target(cells + [""] * (len(headers) - len(cells)), None, None)
                continue
            self.add_target(item_cells(s, modelled, twice), s.item, None)


def _right(value: str) -> Text:
    return Text(value, justify="right")


def items_headers(modelled: bool, twice: bool) -> list[str]:
    """The Items tab's columns (`item_cells`'s)."""
    headers = ["item", "n", "κ x-fit", "QWK x-fit", *(["session"] if modelled else [])]
    headers += ["flagged", *([PAIR_HEADER] if twice else []), "note", "κ in", "QWK in"]
    return headers + ["K", "p"]


def item_cells(s, modelled: bool, twice: bool = True) -> list:
    """An audited item's row of the Items tab (ItemsTable's columns; twice: whether the
    PAIR_HEADER column is there, as it is where some item has answers read twice)."""
    share = f"{s.flagged:,} ({s.flagged / max(s.n, 1):.0%})"
    inside = (Text("small", "dim", justify="right"),) * 2 if s.small else (
        _right(fmt(s.kappa)), _right(fmt(s.qwk)))  # fmt: skip
    cells = [name(s.item), _right(f"{s.n:,}"), _right(fmt(s.cross_fit_kappa)),
             _right(fmt(s.cross_fit_qwk))]  # fmt: skip
    cells += [_right(fmt(s.session_model))] if modelled else []
    cells += [_right(share), *([_right(fmt(s.human_kappa))] if twice else []), warning_cell(s)]
    cells += inside
    return cells + [_right("dense" if s.top_k is None else str(s.top_k)), _right(f"{s.power:.3g}")]


def items_notes(session: SessionResult) -> Text:
    """Under the Items tab: what its marks mean, and each skipped item with its reason."""
    text = Text(
        "x-fit: cross-fitted (each score predicted without it); in: in-sample. ⚠ memorised: "
        f"in-sample more than 0.05 above cross-fitted. ⚠ small: {SMALL_RULE} (3 parameters "
        "each), in-sample figures not shown.",
        "dim",
    )
    pair = pair_note(session)
    if pair is not None:
        text.append("\n" + pair, "dim")
    for s in session.overview:
        if s.skipped is not None:
            text.append("\nSkipped ", "bold")
            text.append_text(name(s.item))
            text.append(f" ({s.n:,} rows): ")
            text.append(safe_text(s.skipped))
    return text


def pair_note(session: SessionResult) -> str | None:
    """Whose reads the PAIR_HEADER column compares (engine.input.several_reads.read_pair: the
    raters by name where one rater gave every answer's first or second read), and where the
    other pairs are when more than two raters read; None when no item has second reads."""
    if not session.second_reads:
        return None
    first, other = read_pair(result.responses.reads for result in session.results)
    note = f"{PAIR_HEADER}: Cohen's kappa of {_whose(first)} against {_whose(other)}"
    raters = 0 if session.reads is None else len(session.reads.raters)
    if raters > 2:
        note += f"; {raters} raters read: every pair's agreement is in the Raters tab"
    return safe_text(note + ".")


def _whose(reader: str) -> str:
    """ "first read" -> "the first reads"; a rater's name -> "G1's reads"."""
    return f"the {reader}s" if reader.endswith(" read") else f"{reader}'s reads"


def warning_cell(row) -> Text:
    """'⚠ small' (engine.results.lead.too_small: its in-sample figures are not shown,
    so not called memorised either), '⚠ memorised' (in-sample more than .05 above
    cross-fitted), or nothing."""
    mark = "small" if row.small else "memorised" if row.memorised else ""
    return Text("⚠ " + mark, "bold yellow") if mark else Text("")


def leniency_cell(r: RaterRow, wide: bool, raters=None) -> Text:
    """The leniency in points (with its interval when wide); ▲ or ▼ when the verdict says
    lenient or harsh (the verdict's rule, engine.audit.raters.verdicts, not the interval)."""
    if r.leniency is None:  # unordered text labels: no score points to differ by
        return Text("— (no order)", "dim")
    text = Text(RATERS.cell("leniency", r, raters, with_interval=wide))
    names = verdict_names(r)
    if LENIENT in names or HARSH in names:
        text.stylize("bold yellow")
        text.append(" ▲" if LENIENT in names else " ▼")
    return text


def effect_cell(value, digits: int = 2, flagged: bool = False) -> Text:
    text = Text(fmt(value, digits), justify="right")
    if flagged:
        text.stylize("bold yellow")
    return text


# The Raters tab's column of the rater's most severe status (engine.actions.rater_status).
STATUS = "status"
STATUS_STYLES = {"qualified": "dim", "watch": "bold yellow", "retrain": "bold red",
                 "stop": "bold red reverse"}  # fmt: skip


def status_cell(found) -> Text:
    """'retrain (item Q3)' styled by how severe it is; '' for a rater with no status."""
    if found is None:
        return Text("")
    status, item, _ = found
    text = Text(status, STATUS_STYLES.get(status, ""))
    if status != "qualified" and item:
        text.append_text(name(f" ({item})"))
    return text


# Which verdict a rater table's column marks (its cell in bold yellow when the rater has it).
MARKS = {"infit": "noisy", "spread": "central tendency", "drift": "drifting"}


class RatersTable(SessionTable):
    """One row per rater, the farthest from the rest first: the verdict, n, the share the model
    would change, leniency and infit; wide (WIDE_RATERS columns and more) also the items, exact
    agreement and kappa with the model, the intervals, outfit, spread, the middle categories'
    share, drift, the fair average and the bias cells; with an expert score column the rater
    against the expert (wide: also n and exact agreement). Columns, headings and figures are the
    rater table's declaration (engine.outputs.declared.RATERS)."""

    NARROW = ("rater", "verdict", "n", "model_differs_share", "leniency", "infit")
    WIDE = ("rater", "verdict", "n", "items", "exact", "kappa", "model_differs_share", "leniency",
            "infit", "outfit", "spread", "middle_share", "drift", "fair_average", "bias_cells")  # fmt: skip
    EXPERT_NARROW = ("expert_difference",)
    EXPERT_WIDE = ("expert_n", "expert_exact", "expert_difference")

    def show(self, session: SessionResult, wide: bool, statuses=None) -> None:
        """statuses: {rater: (status, item, rule)} (engine.workspace.status_by_rater): a status
        column after the verdict; None: none."""
        self.clear(columns=True)
        self.rater_columns = self.WIDE if wide else self.NARROW
        if statuses:
            at = self.rater_columns.index("verdict") + 1
            self.rater_columns = (*self.rater_columns[:at], STATUS, *self.rater_columns[at:])
        if session.raters.expert is not None:
            self.rater_columns += self.EXPERT_WIDE if wide else self.EXPERT_NARROW
        for column in self.rater_columns:
            self.add_column(self.heading(column, wide), key=column)
        for r in session.raters.rows:
            cells = self.cells(r, wide, session.raters)
            if statuses:
                cells[self.rater_columns.index(STATUS)] = status_cell(statuses.get(r.rater))
            self.add_target(cells, None, r.rater)
        if session.raters.unassigned:
            note = Text(f"({session.raters.unassigned:,} scores with no rater)", "dim")
            self.add_target([note] + [""] * (len(self.columns) - 1), None, None)

    @staticmethod
    def heading(column: str, wide: bool) -> str:
        if column == STATUS:
            return "status"
        declared = RATERS.column(column)
        return declared.heading + (" (95%)" if wide and declared.interval else "")

    def cells(self, r: RaterRow, wide: bool, raters) -> list:
        columns = self.rater_columns
        if not r.judged:
            cells = [name(r.rater), Text(TOO_FEW, "dim"), *[""] * (len(columns) - 2)]
            cells[columns.index("n")] = f"{r.n:,}"
            return cells
        names = verdict_names(r)
        cells = []
        for column in columns:
            if column == "rater":
                cells.append(name(r.rater))
            elif column == "verdict":
                cells.append(Text(r.verdict, "bold" if r.judged and r.verdict != "fine" else "dim"))
            elif column == "leniency":
                cells.append(leniency_cell(r, wide, raters))
            elif column == STATUS:
                cells.append("")  # filled by show from the lead's lists
            else:
                text = Text(RATERS.cell(column, r, raters, with_interval=wide), justify="right")
                if MARKS.get(column) in names:
                    text.stylize("bold yellow")
                cells.append(text)
        return cells


def verdict_names(r: RaterRow) -> list[str]:
    return [] if r.effects is None else [v.name for v in r.effects.verdicts]


def effect(r: RaterRow, figure: str):
    """One of the rater's effects (None where none were measured)."""
    return None if r.effects is None else getattr(r.effects, figure)


def rater_rule(r: RaterRow) -> Text:
    """Why the rater got their verdict: each verdict with the figures that gave it."""
    text = Text()
    text.append_text(name(r.rater))
    if not r.judged:
        text.append(f": {TOO_FEW} ({r.n} scores)", "dim")
        return text
    if r.effects is None or not r.effects.verdicts:
        text.append(": fine, no rule holds", "dim")
        return text
    for n, verdict in enumerate(r.effects.verdicts):
        text.append(" · " if n else ": ")
        text.append(verdict.name, "bold")
        text.append(f" ({verdict.because})")
    return text


class BiasTable(SessionTable):
    """The rater x item cells beyond the rule (FACETS' bias table): observed and expected
    averages, the bias in points and its t. enter lists every score of the cell."""

    WHOLE = True

    def show(self, session: SessionResult) -> int:
        """Fill the table; returns how many cells are listed."""
        self.clear(columns=True)
        for header in ("rater", "item", "n", "observed", "expected", "bias", "t"):
            self.add_column(header, key=header)
        listed = session.raters.listed_bias()
        for cell in listed:
            cells = [
                name(cell.rater), name(cell.item), f"{cell.n:,}", effect_cell(cell.observed),
                effect_cell(cell.expected), effect_cell(cell.bias, flagged=True),
                effect_cell(cell.t, 1),
            ]  # fmt: skip
            self.add_target(cells, cell.item, cell.rater)
        return len(listed)


class PairsTable(SessionTable):
    """Answers read twice or more: every pair of raters on each item and over the session (item
    'all'), n shared answers and each agreement figure with its 95% interval; ▼ marks a figure
    under RSMTool's threshold (in bold yellow), a pair with too few shared answers is dim.
    Figures come from report.json's `agreement` (engine.outputs.report.reads_outputs). enter reviews the
    pair's item. Intervals from WIDE_PAIRS columns on."""

    def show(self, agreement: dict, wide: bool = False) -> None:
        self.clear(columns=True)
        ordered = any(p["figures"].get("qwk") for p in agreement["pairs"])
        names = FIGURES_ORDERED if ordered else FIGURES_NOMINAL
        for header in ("item", "rater", "rater", "n", *names):
            self.add_column(header + (" (95%)" if wide and header in names else ""))
        for pair in agreement["pairs"]:
            style = "dim" if pair["too_few"] else ""
            figures = [
                Text(cell, "bold yellow" if cell.endswith("▼") else style, justify="right")
                for cell in pair_cells(pair, names, intervals=wide)
            ]
            item = pair["item"] or None
            cells = [name(pair["item"] or "the file"), name(pair["rater_a"]),
                     name(pair["rater_b"]), Text(f"{pair['n']:,}", style, justify="right"),
                     *figures]  # fmt: skip
            self.add_target(cells, None if item == "all" else item, None)


FIGURES_ORDERED = ("exact", "adjacent", "kappa", "qwk")
FIGURES_NOMINAL = ("exact", "kappa")


def agreement_lines(agreement: dict) -> Text:
    """Alpha per item and over the session, PRMSE, the consensus's counts and each rater's
    reliability, under the pair table."""
    text = Text()
    consensus = agreement["consensus"]
    text.append("Consensus: ", "bold")
    text.append(
        f"{consensus['answers']:,} answers read twice or more, {consensus['sure']:,} sure, "
        f"{consensus['third_reads']:,} need a third read (review: T lists them).\n"
    )
    text.append("Krippendorff's alpha: ", "bold")
    for n, alpha in enumerate(agreement["alpha"]):
        level = "ordinal" if "ordinal" in alpha["levels"] else "nominal"
        text.append(" · " if n else "")
        text.append_text(name(alpha["item"] or "the file"))
        text.append(f" {interval_text(alpha['levels'][level])} ({level})")
    text.append("\nPRMSE of the model's cross-fitted expected scores: ", "bold")
    text.append(prmse_text(agreement))
    text.append("\nReliability (consensus): ", "bold")
    shown = [r for r in agreement["reliability"] if r["reads"]]
    for n, rater in enumerate(shown):
        text.append(" · " if n else "")
        text.append_text(name(rater["rater"]))
        text.append(f" {interval_text(rater, 'accuracy')}")
    return text
