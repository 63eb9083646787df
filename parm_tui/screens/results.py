"""Results: agreement metrics for the selected configuration with bootstrap intervals and their
cross-fitted values, the confusion matrix, agreement with a second rater, the tuning table with a
plot of the selection metric against K and p, parameter estimates with SEs, near-duplicate
answers that were scored differently, and the file's saved runs (7). After a re-run the
headline shows the run before it beside this one.

For a file of items, the screen opens on the session's headline (all items pooled), with the
item selector below it choosing which item the per-item tabs show, and two more tabs: the items
overview (5) and the raters with their verdicts and the rater x item bias cells (6); `enter` on
an item, a rater or a cell opens the review on it (parm_tui.widgets.session_tables).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Header, Select, Static, TabbedContent, TabPane

from engine import workspace
from engine.core.run_warnings import summary_lines
from engine.core.text import safe_text
from engine.results.figures import run_figures
from engine.results.headline import item_headline
from engine.results.session import SessionResult
from engine.workspace.reporting import NO_BIAS_CELL, RATER_RULES, agreement_dict
from parm_tui import keymap
from parm_tui.widgets.action_tables import WIDE_THIRD, ThirdReadsTable, lists_line
from parm_tui.widgets.checks import (
    consistency_heading,
    consistency_pairs,
    disagreement_line,
    second_rater_table,
)
from parm_tui.widgets.footer import ParmFooter
from parm_tui.widgets.metrics import (
    RichPanel,
    confusion_table,
    item_lead,
    lead_lines,
    metrics_summary,
    metrics_table,
    parameters_table,
    uncertainty_note,
)
from parm_tui.widgets.plain import plain
from parm_tui.widgets.plot import MetricPlot
from parm_tui.widgets.runs import RunsTable, comparison_text, read_only_note
from parm_tui.widgets.session_tables import (
    WIDE_PAIRS,
    WIDE_RATERS,
    BiasTable,
    ItemsTable,
    PairsTable,
    RatersTable,
    agreement_lines,
    items_notes,
    rater_rule,
)
from parm_tui.widgets.tuning_table import TuningTable

# The widget each tab's keys go to when the tab opens (so arrows scroll or move at once).
TAB_FOCUS = {
    "summary": "#summary-scroll",
    "tuning": "#results-tuning",
    "parameters": "#parameters-scroll",
    "consistency": "#consistency-scroll",
    "items": "#results-items",
    "raters": "#results-raters",
    "runs": "#results-runs",
}
# The tabs that show one item (the item selector chooses which); the others show the session.
ITEM_TABS = ("summary", "tuning", "parameters", "consistency")


class ResultsScreen(Screen):
    """The finished audit. `c` copies the metrics summary to the clipboard."""

    SUB_TITLE = "Results"
    # Below 100 columns the confusion matrix goes under the metrics instead of beside them.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    BINDINGS = [
        *keymap.RESULTS,
        # The n-th tab shown (tabs_shown): the numbers on the tabs run 1, 2, 3 without gaps.
        *(Binding(str(n), f"tab_number({n})", show=False) for n in range(1, len(TAB_FOCUS) + 1)),
    ]

    def __init__(self, session: SessionResult, item: int = 0) -> None:
        super().__init__()
        self.show_session(session, item)

    def show_session(self, session: SessionResult, item: int = 0) -> None:
        self.session = session
        self.item = item
        self.result = session.results[item]
        self.figures = run_figures(session)

    # -- what the app's state says about the result's runs -----------------------------------
    def previous_figures(self):
        """(the run before this one, its figures), or (None, None)."""
        previous = self.app.state.previous_run()
        if previous is None or previous.figures is None:
            return None, None
        return previous, previous.figures

    def compose(self) -> ComposeResult:
        result = self.result
        session = self.session
        yield Header()
        if session.by_item:
            yield Static(self.session_headline(), id="session-headline")
            choices = [
                (plain(f"item {r.responses.item} · {len(r.responses):,} responses"), k)
                for k, r in enumerate(session.results)
            ]
            yield Select(
                choices, value=self.item, allow_blank=False, id="results-item", compact=True
            )
        earlier = self.app.state.earlier_run()
        if earlier is not None:
            yield Static(Text(read_only_note(earlier), "bold yellow"), id="results-read-only")
        with TabbedContent(id="results-tabs"):
            with TabPane(self.tab_label("summary"), id="summary"):
                with VerticalScroll(id="summary-scroll"):
                    yield Static(self.headline(), id="results-headline")
                    with Horizontal(id="results-tables"):
                        small = session.overview[self.item].small
                        yield RichPanel(metrics_table(result, small), id="results-metrics")
                        yield RichPanel(confusion_table(result), id="results-confusion")
                    yield Static(uncertainty_note(result), id="results-uncertainty")
                    yield RichPanel(second_rater_table(result), id="results-second-rater")
                    yield Static(disagreement_line(result), id="results-disagree")
                    yield Static(self.warnings_text(), id="results-warnings")
            with TabPane(self.tab_label("tuning"), id="tuning"):
                with VerticalScroll():
                    yield TuningTable(id="results-tuning")
                    yield MetricPlot(id="results-plot")
            with TabPane(self.tab_label("parameters"), id="parameters"):
                with VerticalScroll(id="parameters-scroll"):
                    yield RichPanel(parameters_table(result), id="results-parameters")
            with TabPane(self.tab_label("consistency"), id="consistency"):
                with VerticalScroll(id="consistency-scroll"):
                    yield Static(consistency_heading(result), id="consistency-heading")
                    yield Static(consistency_pairs(result), id="consistency-pairs")
            if session.by_item:
                with TabPane(self.tab_label("items"), id="items"), VerticalScroll():
                    yield Static(Text("enter: review the item", "dim"), classes="table-hint")
                    yield ItemsTable(id="results-items")
                    yield Static(items_notes(session), id="items-notes")
            if session.raters is not None or session.reads is not None:
                with TabPane(self.tab_label("raters"), id="raters"), VerticalScroll():
                    if session.raters is not None:
                        yield from self.compose_raters()
                    # Today's lists (engine.actions) before the pairs: what to do comes first.
                    yield Static(id="lists-line", classes="table-hint")
                    yield ThirdReadsTable(id="results-third-reads")
                    if session.reads is not None:
                        yield from self.compose_pairs()
            with TabPane(self.tab_label("runs"), id="runs"), VerticalScroll():
                yield Static(self.runs_hint(), classes="table-hint")
                yield RunsTable(id="results-runs")
        yield ParmFooter()

    def compose_pairs(self) -> ComposeResult:
        """Answers read twice or more: the pairs of raters, alpha, the consensus."""
        yield Static(
            Text("Pairs of raters on the answers both read (▼ under RSMTool's threshold; dim: "
                 "too few to judge) · enter: review the item", "dim"),
            classes="table-hint",
        )  # fmt: skip
        yield PairsTable(id="results-pairs")
        yield Static(id="agreement-lines")

    def compose_raters(self) -> ComposeResult:
        yield Static(
            Text("Raters (farthest from the rest first) · enter: review the rater", "dim"),
            classes="table-hint",
        )
        yield RatersTable(id="results-raters")
        yield Static(id="rater-rule")
        yield Static(id="bias-title", classes="table-hint")
        yield BiasTable(id="results-bias")

    def runs_hint(self) -> Text:
        state = self.app.state
        if not state.runs:
            return Text("No saved runs of this file.", "dim")
        return Text(
            f"Saved runs, newest first ({len(state.runs)} of at most {state.config.saved_runs}: "
            "saved_runs) · enter: open one\nAn earlier run opens read-only: decisions are made "
            "on the newest.",
            "dim",
        )

    async def on_select_changed(self, event: Select.Changed) -> None:
        """Another item: the per-item tabs show it, the tab open stays open."""
        if event.select.id != "results-item" or event.value == self.item:
            return
        active = self.query_one("#results-tabs", TabbedContent).active
        self.show_session(self.session, event.value)
        await self.recompose()
        self.on_mount()
        self.query_one("#results-tabs", TabbedContent).active = active

    def on_mount(self) -> None:
        metric = self.result.config.selection_metric
        table = self.query_one("#results-tuning", TuningTable)
        table.show_rows(self.result.tuning.rows, metric)
        self.query_one("#results-plot", MetricPlot).show(self.result.tuning.rows, metric)
        self.query_one("#results-disagree").display = self.result.second_rater is not None
        if self.session.by_item:
            self.query_one(ItemsTable).show(self.session)
        if self.session.raters is not None:
            self.show_raters()
        if self.session.reads is not None:
            self.show_pairs()
        if self.session.raters is not None or self.session.reads is not None:
            self.show_lists()
        state = self.app.state
        self.query_one(RunsTable).show(state.runs, self.session.run_id)
        self.query_one("#summary-scroll").focus()
        self.watch(self.app, "state", self.follow_state, init=False)

    def follow_state(self, old, new) -> None:
        """Another result on show (a saved run reopened from the runs list): show it here."""
        if new.result is not None and new.result is not old.result and self.is_current:
            self.parm_result = new.result
            self.call_later(self.rebuild, new.result)

    async def rebuild(self, session: SessionResult) -> None:
        self.show_session(session)
        await self.recompose()
        self.on_mount()

    def lists(self):
        """Today's lists of the run on show, with the reads typed in its review."""
        return workspace.todays_lists(self.session, self.app.state.store)

    def show_lists(self) -> None:
        lists = self.lists()
        self.query_one("#lists-line", Static).update(lists_line(lists))
        table = self.query_one(ThirdReadsTable)
        wide = self.app.size.width >= WIDE_THIRD
        table.display = table.show(lists, self.session.by_item, wide) > 0

    def show_raters(self) -> None:
        wide = self.app.size.width >= WIDE_RATERS
        statuses = workspace.status_by_rater(self.lists())
        self.query_one(RatersTable).show(self.session, wide, statuses)
        listed = self.query_one(BiasTable).show(self.session)
        bias = self.session.raters.bias
        if listed:
            title = (
                f"Rater × item bias: {listed} of {len(bias)} cells beyond the rule "
                f"({RATER_RULES['bias cell']}) · enter: review the cell"
            )
        elif bias:
            title = f"Rater × item bias: none of the {len(bias)} cells is beyond the rule."
        else:
            title = f"Rater × item bias: {NO_BIAS_CELL}."
        self.query_one("#bias-title", Static).update(Text(title, "dim"))
        self.query_one(BiasTable).display = listed > 0
        self.show_rule(0)

    def show_rule(self, row: int) -> None:
        rows = self.session.raters.rows
        if 0 <= row < len(rows):
            text = rater_rule(rows[row])
            found = workspace.status_by_rater(self.lists()).get(rows[row].rater)
            if found is not None:  # the most severe status and the rule that gave it
                text.append(f"\nStatus {found[0]}" + (" on item " if found[1] else ""), "bold")
                text.append_text(plain(f"{found[1]}: {found[2]}" if found[1] else f": {found[2]}"))
            self.query_one("#rater-rule", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if isinstance(event.data_table, RatersTable):
            self.show_rule(event.cursor_row)

    def show_pairs(self) -> None:
        agreement = agreement_dict(self.session)
        self.query_one(PairsTable).show(agreement, self.app.size.width >= WIDE_PAIRS)
        self.query_one("#agreement-lines", Static).update(agreement_lines(agreement))

    def on_resize(self) -> None:
        if self.session.raters is not None and self.is_mounted:
            self.show_raters()
        if self.session.reads is not None and self.is_mounted:
            self.show_pairs()
        if (self.session.raters is not None or self.session.reads is not None) and self.is_mounted:
            self.show_lists()

    # -- headlines ---------------------------------------------------------------------------
    def session_headline(self) -> Text:
        """A session's figures over all its items, the raters who need a word and, after a
        re-run, the run before it."""
        figures, session = self.figures, self.session
        text = Text("Session: ", style="bold")
        count = f"{len(session.results)} items"
        if session.items.skipped:
            count += f" ({len(session.items.skipped)} skipped)"
        text.append(f"{count}, {figures.responses:,} responses · ")
        text.append(f"{figures.flagged:,} flagged", style="bold")
        text.append(" (all items pooled; 5 lists them)", style="dim")
        text.append_text(lead_lines(figures))
        if session.raters is not None:
            words = [r for r in session.raters.rows if r.judged and r.verdict != "fine"]
            text.append("\nRaters who need a word: ", style="bold")
            if not words:
                text.append("none", style="dim")
            for n, r in enumerate(words):
                text.append(", " if n else "")
                text.append_text(plain(r.rater, style="bold"))
                text.append(f" ({r.verdict})")
            text.append(" (6 lists them)", style="dim")
        previous, before = self.previous_figures()
        if before is not None:
            text.append("\n")
            text.append_text(comparison_text(figures, before, previous.saved_at))
        return text

    def headline(self) -> Text:
        result = self.result
        headline = item_headline(self.session, self.item)
        text = Text(style="bold")
        if self.session.by_item:
            text.append_text(plain(f"Item {result.responses.item} ", style="bold"))
            text.append(f"({self.item + 1} of {len(self.session.results)}) · ", "dim")
        text.append("Selected: ", "bold")
        text.append(headline.selected)
        text.append(f"\n{headline.flagged}")
        text.append(" (F6 opens the review)", "dim")
        # The item's headline as the CLI and the reports write it (engine.results.headline).
        text.append_text(item_lead(headline))
        previous, before = self.previous_figures()
        if before is not None:
            earlier = before if not self.session.by_item else before.item(result.responses.item)
            now = self.figures if not self.session.by_item else self.figures.items[self.item]
            if earlier is not None:
                text.append("\n")
                text.append_text(comparison_text(now, earlier, previous.saved_at))
        return text

    def warnings_text(self) -> Text:
        """This item's warnings; with items, the session's too, one line per kind."""
        warnings = list(self.result.warnings)
        text = Text("Warnings\n", "bold yellow") if warnings else Text("No warnings.\n", "dim")
        for warning in warnings:
            text.append(safe_text(f"⚠ {warning}\n"), "yellow")
        if self.session.by_item and self.session.warnings:
            n = len(self.session.warnings)
            text.append(f"All items: {n} warning{'' if n == 1 else 's'}\n", "bold yellow")
            for line in summary_lines(self.session.warnings):
                text.append(f"⚠ {line}\n", "yellow")
        text.rstrip()
        return text

    def action_copy_summary(self) -> None:
        self.app.copy_to_clipboard(metrics_summary(self.result))
        self.app.notify("Metrics summary copied to the clipboard.")

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """The item selector only where it changes what is shown."""
        for select in self.query("#results-item"):
            select.display = event.pane.id in ITEM_TABS

    def tabs_shown(self) -> list[str]:
        """The tabs this result has, in order: Items with an item column, Raters with raters or
        with several reads per answer (the pairs of raters)."""
        absent = set() if self.session.by_item else {"items"}
        has_raters = self.session.raters is not None or self.session.reads is not None
        absent |= set() if has_raters else {"raters"}
        return [tab for tab in TAB_FOCUS if tab not in absent]

    def tab_label(self, tab: str) -> str:
        return f"{self.tabs_shown().index(tab) + 1} {tab.capitalize()}"

    def action_tab_number(self, n: int) -> None:
        shown = self.tabs_shown()
        if n <= len(shown):
            self.action_tab(shown[n - 1])

    def action_tab(self, tab: str) -> None:
        tabs = self.query_one("#results-tabs", TabbedContent)
        if tabs.query(f"#{tab}"):
            tabs.active = tab
            found = self.query(TAB_FOCUS[tab])
            # A session read twice without a rater column has the pairs, not the rater table.
            (found.first() if found else self.query_one(PairsTable)).focus()
