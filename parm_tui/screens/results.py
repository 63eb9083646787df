"""Results: agreement metrics for the selected configuration with bootstrap intervals and their
cross-fitted values, the confusion matrix, agreement with a second rater, the tuning table with a
plot of the selection metric against K and p, parameter estimates with SEs, and near-duplicate
answers that were scored differently. For a file of items, an item selector chooses which item
those tabs show, and two more tabs hold the items overview and the raters."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Select, Static, TabbedContent, TabPane

from engine.core.text import safe_text
from engine.results.session import SessionResult
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
    metrics_summary,
    metrics_table,
    parameters_table,
    selected_text,
    uncertainty_note,
)
from parm_tui.widgets.plain import plain
from parm_tui.widgets.plot import MetricPlot
from parm_tui.widgets.session_tables import items_table, raters_table
from parm_tui.widgets.tuning_table import TuningTable


class ResultsScreen(Screen):
    """The finished audit. `c` copies the metrics summary to the clipboard."""

    SUB_TITLE = "Results"
    # Below 100 columns the confusion matrix goes under the metrics instead of beside them.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    BINDINGS = [
        Binding("c", "copy_summary", "Copy"),
        Binding("1", "tab('summary')", "Summary", show=False),
        Binding("2", "tab('tuning')", "Tuning", show=False),
        Binding("3", "tab('parameters')", "Parameters", show=False),
        Binding("4", "tab('consistency')", "Consistency", show=False),
        Binding("5", "tab('items')", "Items", show=False),
        Binding("6", "tab('raters')", "Raters", show=False),
    ]

    def __init__(self, session: SessionResult, item: int = 0) -> None:
        super().__init__()
        self.session = session
        self.item = item
        self.result = self.session.results[item]

    def compose(self) -> ComposeResult:
        result = self.result
        session = self.session
        yield Header()
        if session.by_item:
            choices = [
                (plain(f"item {r.responses.item} · {len(r.responses):,} responses"), k)
                for k, r in enumerate(session.results)
            ]
            yield Select(
                choices, value=self.item, allow_blank=False, id="results-item", compact=True
            )
        with TabbedContent(id="results-tabs"):
            with TabPane("1 Summary", id="summary"):
                with VerticalScroll():
                    yield Static(self.headline(), id="results-headline")
                    with Horizontal(id="results-tables"):
                        yield RichPanel(metrics_table(result), id="results-metrics")
                        yield RichPanel(confusion_table(result), id="results-confusion")
                    yield Static(uncertainty_note(result), id="results-uncertainty")
                    yield RichPanel(second_rater_table(result), id="results-second-rater")
                    yield Static(disagreement_line(result), id="results-disagree")
                    yield Static(self.warnings_text(), id="results-warnings")
            with TabPane("2 Tuning", id="tuning"):
                with VerticalScroll():
                    yield TuningTable(id="results-tuning")
                    yield MetricPlot(id="results-plot")
            with TabPane("3 Parameters", id="parameters"):
                with VerticalScroll():
                    yield RichPanel(parameters_table(result), id="results-parameters")
            with TabPane("4 Consistency", id="consistency"):
                with VerticalScroll():
                    yield Static(consistency_heading(result), id="consistency-heading")
                    yield Static(consistency_pairs(result), id="consistency-pairs")
            if session.by_item:
                with TabPane("5 Items", id="items"), VerticalScroll():
                    yield RichPanel(items_table(session), id="results-items")
            if session.raters is not None:
                with TabPane("6 Raters", id="raters"), VerticalScroll():
                    yield RichPanel(raters_table(session), id="results-raters")
        yield ParmFooter()

    async def on_select_changed(self, event: Select.Changed) -> None:
        """Another item: the per-item tabs show it, the tab open stays open."""
        if event.select.id != "results-item" or event.value == self.item:
            return
        active = self.query_one("#results-tabs", TabbedContent).active
        self.item, self.result = event.value, self.session.results[event.value]
        await self.recompose()
        self.on_mount()
        self.query_one("#results-tabs", TabbedContent).active = active

    def on_mount(self) -> None:
        metric = self.result.config.selection_metric
        table = self.query_one("#results-tuning", TuningTable)
        table.show_rows(self.result.tuning.rows, metric)
        self.query_one("#results-plot", MetricPlot).show(self.result.tuning.rows, metric)
        self.query_one("#results-disagree").display = self.result.second_rater is not None

    def headline(self) -> Text:
        result = self.result
        flagged = int(result.flagged.sum())
        text = Text(style="bold")
        if self.session.by_item:
            text.append_text(plain(f"Item {result.responses.item} ", style="bold"))
            text.append(
                f"({self.item + 1} of {len(self.session.results)}; 5 lists every item) · ", "dim"
            )
        text.append("Selected: ", "bold")
        text.append(selected_text(result))
        text.append(f"\n{flagged:,} of {len(result.responses):,} responses flagged for review")
        text.append(" (F6 opens the review)", "dim")
        return text

    def warnings_text(self) -> Text:
        warnings = list(self.result.warnings)
        if not warnings:
            return Text("No warnings.", "dim")
        text = Text("Warnings\n", "bold yellow")
        for warning in warnings:
            text.append(safe_text(f"⚠ {warning}\n"), "yellow")
        text.rstrip()
        return text

    def action_copy_summary(self) -> None:
        self.app.copy_to_clipboard(metrics_summary(self.result))
        self.app.notify("Metrics summary copied to the clipboard.")

    def action_tab(self, tab: str) -> None:
        tabs = self.query_one("#results-tabs", TabbedContent)
        if tabs.query(f"#{tab}"):
            tabs.active = tab
