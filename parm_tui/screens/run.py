"""Run: start the audit, follow each stage live (embedding, neighbour search, late-interaction
MaxSim, tuning grid, bootstrap and cross-fitting) and cancel with Esc. Progress events arrive
from the engine's thread in a queue that a timer on this screen drains ten times a second, so
the UI thread never waits on the engine."""

from __future__ import annotations

import time
from collections import deque

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Button, Header, Label, ProgressBar, Static

from engine.core.progress import (
    CLUSTER,
    DISTILLING,
    ITEMS,
    MAXSIM,
    MODEL,
    SESSION_MODEL,
    STAGES,
    TUNING,
)
from parm_tui import keymap
from parm_tui.state import AppState
from parm_tui.widgets.footer import ParmFooter
from parm_tui.widgets.plain import plain
from parm_tui.widgets.settings_summary import columns_text, settings_text
from parm_tui.widgets.tuning_table import TuningTable

# The model's loading (and the static model's one-time distillation) shows only when a run
# has to wait for it; the session model only in a run that fits it.
WHEN_REPORTED = (DISTILLING, MODEL, CLUSTER, SESSION_MODEL)  # shown once reported
DRAIN_SECONDS = 0.1


def duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


# The clock of a stage starts after its first batches: they include the stage's start-up (loading
# a model, the first block), which says nothing about the pace of the rest. It then waits for
# MIN_SECONDS of work before it names a rate.
WARMUP_BATCHES = 2
MIN_SECONDS = 1.0


class StageClock:
    """Rate and time left for one stage, measured from the end of its first WARMUP_BATCHES
    batches (events that moved it on) to its latest event."""

    def __init__(self) -> None:
        self.total: int | None = None
        self.last: int | None = None
        self.batches = 0
        self.start: tuple[float, int] | None = None

    def describe(self, done: int, total: int, now: float) -> str:
        # A new total is a new loop within the stage (bootstrap, then cross-fitting): restart.
        if self.total is None or total != self.total or done < self.last:
            self.total, self.last, self.batches, self.start = total, done, 0, None
            return ""
        if done > self.last:
            self.batches += 1
        self.last = done
        if self.start is None:
            if self.batches >= WARMUP_BATCHES:
                self.start = (now, done)
            return ""
        t0, d0 = self.start
        elapsed, finished = now - t0, done - d0
        if elapsed < MIN_SECONDS or finished <= 0:
            return ""
        rate = finished / elapsed
        left = (total - done) / rate if total > done else 0.0
        return f"{rate:,.1f}/s · {duration(left)} left"


def stage_message(event) -> str:
    """The part of an engine message that the counts do not already say: "bootstrap" from
    "bootstrap 10 of 200", nothing from "1,000 of 5,000 rows", the whole of other messages."""
    for counts in (f"{event.done:,} of {event.total:,}", f"{event.done} of {event.total}"):
        if counts in event.message:
            return event.message.split(counts)[0].strip()
    return event.message


def run_problem(state: AppState) -> str | None:
    """Why an audit cannot start now (no file, or settings the form shows as invalid)."""
    if state.responses is None:
        return "load a file first (F2)."
    if state.settings_problem is not None:
        return f"the settings have an error (F3): {state.settings_problem}"
    return None


def settings_lines(state: AppState, precomputed: bool) -> Text:
    """What a run reads and the settings it runs with, as the Run screen lists them."""
    if state.responses is None:
        return Text("No file loaded: F2 opens one.")
    config = state.config
    name = state.source_path.name if state.source_path else "input"
    text = Text()
    text.append_text(plain(name, style="bold"))
    text.append(f" · {len(state.responses):,} responses · ")
    text.append_text(plain(columns_text(config) + "\n"))
    text.append_text(plain(settings_text(config, precomputed=precomputed)))
    return text


class RunScreen(Screen):
    """Live progress of the audit worker; Esc cancels it."""

    SUB_TITLE = "Run"
    BINDINGS = keymap.RUN

    def __init__(self) -> None:
        super().__init__(id="run-screen")
        self.feed: deque = deque()
        # One clock per stage from the start: the drain timer may meet an event before begin().
        self.clocks: dict[str, StageClock] = {stage: StageClock() for stage in STAGES}
        self.started_at: float | None = None
        self.running = False
        # The result the status line's last outcome is about (it is stale for any other).
        self.outcome_for = None
        self.metric = "kappa"
        self.next_item = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="run-controls"):
            yield Button("Start audit", id="run-start", variant="primary", compact=True)
            yield Button("Cancel (Esc)", id="run-cancel", variant="error", compact=True)
        yield Static("", id="run-settings")
        # Items only show for a file of several items, MaxSim only in late-interaction mode.
        for name, stage in STAGES.items():
            with Horizontal(classes="stage", id=f"stage-{name}"):
                yield Label(stage.label, classes="stage-name")
                yield ProgressBar(id=f"bar-{name}", show_eta=False, show_percentage=False)
                yield Static("", id=f"detail-{name}", classes="stage-detail")
        yield Static("", id="run-status")
        yield TuningTable(id="run-tuning")
        yield ParmFooter()

    def on_mount(self) -> None:
        self.query_one("#run-tuning").border_title = "Tuning (★ current best)"
        self.query_one(f"#stage-{MAXSIM}").display = False
        self.query_one(f"#stage-{ITEMS}").display = False
        for stage in WHEN_REPORTED:
            self.query_one(f"#stage-{stage}").display = False
        self.query_one("#run-cancel", Button).disabled = True
        for bar in self.query(ProgressBar):
            bar.update(total=1, progress=0)  # empty, not the "waiting" animation
        self.set_interval(DRAIN_SECONDS, self.drain)
        self.on_screen_resume()

    def on_screen_resume(self) -> None:
        if not self.running:
            self.show_readiness()

    def show_readiness(self) -> None:
        """The settings a run would use, and whether it can start (and if not, why not)."""
        self.query_one("#run-settings", Static).update(self.settings_lines())
        problem = run_problem(self.app.state)
        self.query_one("#run-start", Button).disabled = problem is not None
        if problem is not None:
            self.set_status(Text(f"Cannot start: {problem}", style="bold red"))
        elif self.outcome_for is None or self.outcome_for is not self.app.state.result:
            self.set_status(Text("Ready: s starts the audit with the settings above."))

    def settings_lines(self) -> Text:
        return settings_lines(self.app.state, self.app.embeddings_path is not None)

    async def action_start_run(self) -> None:
        await self.app.start_audit()

    def action_cancel_run(self) -> None:
        self.app.cancel_audit()

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run-start":
            await self.app.start_audit()
        elif event.button.id == "run-cancel":
            self.app.cancel_audit()

    # -- called by the app ----------------------------------------------------------------------
    def begin(self, config, late_interaction: bool) -> deque:
        """Reset the display for a new run; returns the queue the engine's callback fills."""
        self.set_status("Running… (Esc cancels)")
        self.feed = deque()
        self.clocks = {stage: StageClock() for stage in STAGES}
        self.started_at = time.monotonic()
        self.running = True
        self.outcome_for = None
        for stage in STAGES:
            self.query_one(f"#bar-{stage}", ProgressBar).update(total=None, progress=0)
            self.query_one(f"#detail-{stage}", Static).update("waiting")
        self.query_one(f"#stage-{MAXSIM}").display = late_interaction
        self.query_one(f"#stage-{ITEMS}").display = config.item_column is not None
        for stage in WHEN_REPORTED:
            self.query_one(f"#stage-{stage}").display = False
        self.metric = config.selection_metric
        self.query_one("#run-tuning", TuningTable).reset(config.selection_metric)
        self.query_one("#run-start", Button).disabled = True
        self.query_one("#run-cancel", Button).disabled = False
        self.query_one("#run-settings", Static).update(self.settings_lines())
        return self.feed

    def torn_down(self) -> bool:
        """True while the screen is being removed: its timer can still fire once, childless."""
        return not self.is_mounted or not self.query("#run-tuning")

    def finish(self, message: str, result=None) -> None:
        """The run ended (finished, cancelled or failed): show any last events and `message`
        (about `result` when it finished)."""
        self.running = False
        self.outcome_for = result
        if self.torn_down():
            return
        self.drain()
        for bar in self.query(ProgressBar):
            if bar.total is None:  # stop the "waiting" animation of stages that never began
                bar.update(total=1, progress=0)
        self.query_one("#run-start", Button).disabled = run_problem(self.app.state) is not None
        self.query_one("#run-cancel", Button).disabled = True
        self.set_status(message)
        table = self.query_one("#run-tuning", TuningTable)
        if table.best_index is not None:
            table.move_cursor(row=table.best_index)

    def set_status(self, message: str | Text) -> None:
        text = message if isinstance(message, Text) else plain(message)
        self.query_one("#run-status", Static).update(text)

    # -- progress -------------------------------------------------------------------------------
    def drain(self) -> None:
        """Apply every queued event: the latest one per stage, each tuning row."""
        if self.torn_down():
            return
        latest = {}
        table = self.query_one("#run-tuning", TuningTable)
        while self.feed:
            event = self.feed.popleft()
            latest[event.stage] = event
            if event.stage == ITEMS:
                # An item finished and another follows: its grid replaces this one.
                self.next_item = 0 < event.done < event.total
            if event.stage == TUNING and event.payload is not None:
                if self.next_item:
                    table.reset(self.metric)
                    self.next_item = False
                table.add_tuning_row(event.payload)
                table.move_cursor(row=table.row_count - 1)
        now = time.monotonic()
        for stage, event in latest.items():
            if stage in STAGES:
                self.show_stage(event, now)
        if self.running and self.started_at is not None:
            self.query_one("#run-status", Static).update(
                Text(f"Running… {duration(now - self.started_at)} elapsed (Esc cancels)")
            )

    def show_stage(self, event, now: float) -> None:
        if event.stage in WHEN_REPORTED:
            self.query_one(f"#stage-{event.stage}").display = True
        bar = self.query_one(f"#bar-{event.stage}", ProgressBar)
        total = event.total if event.total > 0 else None
        bar.update(total=total, progress=event.done)
        detail = f"{event.done:,}/{event.total:,}" if total else f"{event.done:,}"
        timing = self.clocks[event.stage].describe(event.done, event.total, now)
        message = stage_message(event)
        text = " · ".join(part for part in (detail, timing, message) if part)
        self.query_one(f"#detail-{event.stage}", Static).update(plain(text))
