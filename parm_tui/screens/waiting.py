"""Before a run: what Results, Review and Export will hold, and how to get there (F2 opens a
file, F4 then `s` runs the audit), instead of a notification per key press. The real screen
takes its place once there is a result (parm_tui.app.ParmApp.screen_for)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Static

from parm_tui.widgets.footer import ParmFooter

# What each result screen holds once an audit has run.
WILL_HOLD = {
    "results": (
        "Results",
        "The agreement of the model with the human scores (kappa, QWK, accuracy, with 95% "
        "intervals and cross-fitted figures), the confusion matrix, the tuning of K and p, the "
        "parameters, near-duplicates scored differently, and the file's saved runs. With an item "
        "column: the session's headline, the items and the raters, with each rater's verdict.",
    ),
    "review": (
        "Review",
        "The scores that deserve a second look, most doubtful first, each with the answer, the "
        "model's score and the nearest neighbours that are the evidence. You keep a score, "
        "change it or mark it unsure, one key each; decisions are saved at once.",
    ),
    "export": (
        "Export",
        "Write the outputs into a folder: predictions.csv, tuning.csv, report.json and "
        "report.md, your decisions.csv, and in a session items.csv, raters.csv, "
        "rater_item_bias.csv and rater_feedback.csv.",
    ),
}


class WaitingScreen(Screen):
    """A result screen before there is a result: what it will hold and the next step."""

    def __init__(self, name: str) -> None:
        super().__init__(id=f"waiting-{name}")
        self.target = name
        self.sub_title = WILL_HOLD[name][0]

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(classes="waiting"):
            title, holds = WILL_HOLD[self.target]
            yield Static(Text(f"{title} will show here after an audit.", "bold"))
            yield Static(Text(holds))
            yield Static(id="waiting-next")
        yield ParmFooter()

    def on_mount(self) -> None:
        self.show_next(None, self.app.state)
        self.watch(self.app, "state", self.show_next, init=False)

    def show_next(self, old, new) -> None:
        if new.responses is None:
            step = "Next: F2 opens a file."
        elif new.settings_problem is not None:
            step = "Next: F3 shows the setting to fix, then F4 and s run the audit."
        else:
            step = "Next: F4, then s, runs the audit of the loaded file."
        self.query_one("#waiting-next", Static).update(Text(step, "bold green"))
