"""A file's saved runs on the Results screen: the figures of the run on show beside the run
before it (what a re-run changed), and the list of the file's kept runs, from which `enter`
reopens one (an `OpenRun` message the app acts on; an earlier run opens read-only).

The differences are engine.results.figures.figure_changes'; this module only writes them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from engine.core.numbers import signed
from engine.results.figures import figure_changes
from parm_tui.widgets.metrics import fmt

if TYPE_CHECKING:
    from engine.results.figures import ItemFigures, RunFigures
    from engine.saved.store import SavedSession

LABELS = {"kappa": "kappa", "qwk": "QWK", "flagged": "flagged", "top_k": "K", "power": "p"}


def saved_when(saved_at: str) -> str:
    """'2026-11-23T14:02:11+00:00' -> '2026-11-23 14:02 UTC'."""
    return saved_at[:16].replace("T", " ") + " UTC"


def _figure(name: str, value) -> str:
    if value is None:
        return "dense" if name == "top_k" else "—"
    if name in ("flagged", "top_k"):
        return f"{int(value):,}"
    if name == "power":
        return f"{value:.3g}"
    return fmt(value)


def _difference(name: str, value) -> str:
    if name in ("flagged", "top_k"):
        return f"{int(value):+,}".replace("-", "−")
    if name == "power":
        return f"{value:+.3g}".replace("-", "−")
    return signed(value, 3).replace("-", "−")


def comparison_text(
    now: RunFigures | ItemFigures, before: RunFigures | ItemFigures, saved_at: str
) -> Text:
    """'Previous run (2026-11-23 14:05 UTC): kappa cross-fitted 0.675 → 0.668 (−0.007) · ...':
    kappa and QWK cross-fitted where both runs have them (engine.results.figures), each change
    as engine.results.compare states it; a figure that did not change is written once."""
    text = Text("Previous run ", style="bold")
    text.append(f"({saved_when(saved_at)}): ", style="dim")
    for n, change in enumerate(figure_changes(now, before)):
        if n:
            text.append(" · ")
        label = f"{LABELS[change.name]} {change.how}".rstrip()
        text.append(f"{label} ")
        if change.name in ("kappa", "qwk"):
            stated = change.comparison().change()
            text.append(stated, style="dim" if stated.endswith("(same)") else "")
            continue
        if change.before == change.now:
            text.append(f"{_figure(change.name, change.now)} (same)", style="dim")
            continue
        text.append(f"{_figure(change.name, change.before)} → ")
        text.append(_figure(change.name, change.now), style="bold")
        if change.difference:
            text.append(f" ({_difference(change.name, change.difference)})")
    return text


def read_only_note(saved: SavedSession) -> str:
    """What the screens say while an earlier run is open (one line at 80 columns)."""
    when = saved.saved_at[:16].replace("T", " ")
    return f"Earlier run ({when} UTC), read-only. Decide on the newest (7 Runs)."


class OpenRun(Message):
    """Reopen a saved run of the file."""

    def __init__(self, run: SavedSession) -> None:
        super().__init__()
        self.run = run


class RunsTable(DataTable):
    """The file's saved runs, newest first: when, its cross-fitted kappa and QWK (those a
    headline leads with), and which is on show; enter reopens one."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)
        self.runs: tuple = ()

    def show(self, runs: tuple, on_show: str | None) -> None:
        """List `runs` (newest first); `on_show`: the run id of the result on show. The run id
        comes last, so the figures stay in view at 80 columns."""
        self.clear(columns=True)
        self.runs = tuple(runs)
        for header in ("", "saved (UTC)", "n", "flagged", "κ x-fit", "QWK x-fit", "K", "p", "run"):
            self.add_column(header, key=header or "mark")
        for run in self.runs:
            mark = Text("▶" if run.run_id == on_show else "", "bold")
            row = [mark, run.saved_at[:16].replace("T", " ")]
            figures = run.figures
            if figures is None:  # saved by an earlier parm, which kept no figures
                flagged = sum(entry.flagged for entry in run.results)
                responses = sum(entry.responses for entry in run.results)
                row += [f"{responses:,}", f"{flagged:,}", "—", "—", "—", "—"]
            else:
                selected = figures.selected
                k, p = (
                    ("items", "")
                    if selected is None
                    else (_figure("top_k", selected[0]), _figure("power", selected[1]))
                )
                # The cross-fitted figures, those a headline leads with ("—": not cross-fitted).
                row += [
                    f"{figures.responses:,}", f"{figures.flagged:,}", fmt(figures.cross_kappa),
                    fmt(figures.cross_qwk), k, p,
                ]  # fmt: skip
            row.append(Text(run.run_id, "dim"))
            self.add_row(*row, key=run.run_id)
        on_show_rows = [n for n, run in enumerate(self.runs) if run.run_id == on_show]
        if on_show_rows:
            self.move_cursor(row=on_show_rows[0], animate=False)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.post_message(OpenRun(self.runs[event.cursor_row]))
