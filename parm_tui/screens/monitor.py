"""The Monitor screen: a live session's folder opened from the Load screen (or `parm DIR`). The
open alerts first (red first; the highlighted one's whole sentence under the table), then what
changed since a run chosen in the "since" selector (the run before by default), then today's
lists (rater statuses, backreads, third reads routed; `t` writes the three files into the
folder beside the session, `<session>-lists`), then each item's and each rater's exact
agreement by day as sparklines with the latest figure. The session is looked at, not changed:
no run is kept (`parm monitor` adds files and keeps runs).
Everything shown is the engine's (engine.workspace.monitor); untrusted names are plain text."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Select, Sparkline, Static
from textual.worker import Worker, WorkerState

from engine import workspace
from engine.core.errors import ExportError
from parm_tui import keymap
from parm_tui.widgets.footer import ParmFooter
from parm_tui.widgets.lists import VimDataTable
from parm_tui.widgets.plain import plain

FIRST_RUN = "first"


class MonitorScreen(Screen):
    """A session's alerts, changes and trends (see the module docstring)."""

    SUB_TITLE = "Monitor"
    BINDINGS = keymap.MONITOR

    def __init__(self, folder: Path) -> None:
        super().__init__(id="monitor-screen")
        self.folder = Path(folder)
        self.result = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="monitor-body"):
            yield Static(plain(f"Reading the session {self.folder} …"), id="monitor-summary")
            yield VimDataTable(id="monitor-alerts", cursor_type="row", zebra_stripes=True)
            yield Static("", id="monitor-alert")
            with Horizontal(id="monitor-since-row"):
                yield Static("Since", id="monitor-since-label")
                yield Select([], id="monitor-since", compact=True, prompt="(no earlier run)")
            yield Static("", id="monitor-changes")
            yield Static("", id="monitor-lists")
            with Horizontal(id="monitor-trends"):
                yield Vertical(id="monitor-items")
                yield Vertical(id="monitor-raters")
        yield ParmFooter()

    def on_mount(self) -> None:
        table = self.query_one("#monitor-alerts", VimDataTable)
        table.add_columns("level", "kind", "item", "rater", "period")
        table.border_title = "Open alerts"
        self.query_one("#monitor-items").border_title = "Items: exact agreement by day"
        self.query_one("#monitor-raters").border_title = "Raters: agreement with co-raters"
        self.look()

    def action_reload(self) -> None:
        self.look()

    def action_focus_alerts(self) -> None:
        self.query_one("#monitor-alerts").focus()

    def action_focus_since(self) -> None:
        self.query_one("#monitor-since").focus()

    def lists_folder(self) -> Path:
        return self.folder.parent / f"{self.folder.name}-lists"

    def action_write_lists(self) -> None:
        """The look's three lists, into the folder beside the session (one key)."""
        box = self.query_one("#monitor-lists", Static)
        if self.result is None or not self.result.actions.files:
            box.update(plain("No lists yet: the session has no reads with a rater."))
            return
        try:
            written = workspace.monitor_lists(self.result, self.lists_folder())
        except ExportError as exc:  # the engine's message names the folder and what to do
            box.update(plain(f"The lists were not written: {exc}", "bold red"))
            return
        names = ", ".join(p.name for p in written if p.suffix == ".csv")
        box.update(plain(self.lists_text(self.result) + f"\nWrote {names} into "
                         f"{self.lists_folder()}."))  # fmt: skip

    @staticmethod
    def lists_text(result) -> str:
        lines = result.actions.lines()
        if not lines:
            return "Today's lists: none (no reads with a rater)."
        return "Today's lists (t writes them):\n" + "\n".join(lines)

    @work(thread=True, exclusive=True, exit_on_error=False, group="monitor-look")
    def look(self):
        """The session as it stands, judged with the app's settings; nothing is kept."""
        config = self.app.state.config
        return workspace.monitor(self.folder, [], config, record=False).result

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "monitor-look":
            return
        if event.state == WorkerState.SUCCESS:
            self.show(event.worker.result)
        elif event.state == WorkerState.ERROR:
            self.query_one("#monitor-summary", Static).update(
                plain(f"The session cannot be read: {event.worker.error}", "bold red")
            )

    # -- showing a look ------------------------------------------------------------------------
    def show(self, result) -> None:
        self.result = result
        record, reads = result.record, result.reads
        summary = (f"{result.folder} · {record['reads']:,} reads of {record['answers']:,} "
                   f"answers · {len(reads.items)} items · {len(reads.raters)} raters · "
                   f"latest day {result.latest_day or 'none'}")  # fmt: skip
        self.query_one("#monitor-summary", Static).update(plain(summary))
        self.show_alerts(result.alerts)
        self.show_since(result)
        self.query_one("#monitor-lists", Static).update(plain(self.lists_text(result)))
        self.show_trends(workspace.monitor_trends(result))

    def show_alerts(self, alerts) -> None:
        table = self.query_one("#monitor-alerts", VimDataTable)
        table.clear()
        table.border_title = f"Open alerts ({len(alerts)})"
        for alert in alerts:
            style = "bold red" if alert.level == "red" else "bold yellow"
            table.add_row(plain(alert.level, style), plain(alert.kind),
                          plain(alert.item or "(all)"), plain(alert.rater), plain(alert.period))  # fmt: skip
        detail = self.query_one("#monitor-alert", Static)
        if not alerts:
            detail.update(plain("No open alert: every figure judged on its latest day keeps "
                                "to its rule."))  # fmt: skip
        else:
            detail.update(plain(alerts[0].message))

    def on_data_table_row_highlighted(self, event: VimDataTable.RowHighlighted) -> None:
        if self.result is None or event.data_table.id != "monitor-alerts":
            return
        alerts = self.result.alerts
        if 0 <= event.cursor_row < len(alerts):
            self.query_one("#monitor-alert", Static).update(plain(alerts[event.cursor_row].message))

    def show_since(self, result) -> None:
        select = self.query_one("#monitor-since", Select)
        runs = list(reversed(result.earlier))
        options = [(f"the last run, {r['at']}" if k == 0 else f"run {r['run_id']}", r["run_id"])
                   for k, r in enumerate(runs)]  # fmt: skip
        options.append(("the session's start", FIRST_RUN))
        select.set_options(options)
        select.value = runs[0]["run_id"] if runs else FIRST_RUN

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id != "monitor-since" or self.result is None:
            return
        chosen = None if event.value in (FIRST_RUN, Select.BLANK) else event.value
        changes = workspace.changes_since(self.result, chosen)
        self.query_one("#monitor-changes", Static).update(plain("\n".join(changes.lines())))

    def show_trends(self, trends) -> None:
        for what, box_id in (("item", "#monitor-items"), ("rater", "#monitor-raters")):
            box = self.query_one(box_id, Vertical)
            box.remove_children()
            rows = []
            for (kind, name), series in trends.items():
                if kind != what:
                    continue
                values = [share for _, share, _ in series if share is not None]
                latest = next((s for _, s, _ in reversed(series) if s is not None), None)
                shown = "—" if latest is None else f"{latest:.0%}"
                label = Static(Text.assemble(plain(name[:14].ljust(14)), f" {shown:>4}"),
                               classes="trend-label")  # fmt: skip
                line = Sparkline(values or [0.0], classes="trend-line")
                rows.append(Horizontal(label, line, classes="trend-row"))
            box.mount_all(rows)
