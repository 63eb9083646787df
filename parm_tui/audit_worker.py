"""The audit run the app starts: a thread worker that runs the prepared file
(engine.workspace.run), keeps the run as the file's saved session (engine.workspace.keep) and
reports with an `AuditFinished` message (post_message is safe from a thread); cancelling;
failures to the error modal. ParmApp takes these methods from `AuditWorker`."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from textual import work
from textual.message import Message
from textual.screen import ModalScreen
from textual.worker import Worker, WorkerState

from engine import workspace
from engine.core.errors import Cancelled
from engine.core.progress import CancelToken
from engine.workspace import Prepared
from parm_tui.screens.run import run_problem

if TYPE_CHECKING:
    from engine.results.session import SessionResult
    from engine.saved.store import SavedSession


class AuditFinished(Message):
    """The audit worker's report: the run's SessionResult, its saved run and the file's saved
    runs now (None when it was not kept) and why it was not kept (None when it was, or the file
    has no digest)."""

    def __init__(
        self,
        result: SessionResult,
        saved: SavedSession | None,
        runs: tuple[SavedSession, ...] | None,
        problem: str | None,
        token: CancelToken,
    ) -> None:
        super().__init__()
        self.result, self.saved, self.runs = result, saved, runs
        self.problem, self.token = problem, token


class AuditWorker:
    """The audit run of ParmApp (which sets audit_worker, audit_threads and cancel_token)."""

    @property
    def audit_running(self) -> bool:
        return self.audit_worker is not None and self.audit_worker.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    async def start_audit(self) -> None:
        problem = run_problem(self.state)
        if problem is not None:
            self.notify(f"Cannot start: {problem}", severity="warning")
            if self.is_screen_installed("run") and self.get_screen("run").is_mounted:
                self.get_screen("run").show_readiness()
            return
        if self.audit_running:
            self.notify("An audit is already running (Esc cancels it).")
            return
        run = self.get_screen("run")
        if self.screen is not run:
            if isinstance(self.screen, ModalScreen):
                return
            await self.switch_screen(run)
        state = self.state
        feed = run.begin(state.config, state.config.late_interaction)
        self.cancel_token = CancelToken()
        self.audit_worker = self.audit(
            state.prepared, feed, self.cancel_token, self.embeddings_path
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="audit")
    def audit(self, prepared: Prepared, feed, token, embeddings_path) -> None:
        """Runs in a thread: the engine appends progress events to `feed` (a deque); the run's
        SessionResult, kept as the file's saved session, comes back as an AuditFinished
        message (post_message is safe from a thread)."""
        thread = threading.current_thread()
        self.audit_threads.add(thread)
        try:
            result = workspace.run(prepared, feed.append, token, embeddings_path)
            kept = workspace.keep(prepared.file, result)
            self.post_message(AuditFinished(result, kept.saved, kept.runs, kept.problem, token))
        finally:
            self.audit_threads.discard(thread)

    def cancel_audit(self) -> None:
        """Esc: the engine stops at its next check; the UI is free at once."""
        if not self.audit_running:
            self.notify("No audit is running.")
            return
        self.cancel_token.cancel()
        self.audit_worker.cancel()
        self.audit_worker = None
        self.get_screen("run").finish("Cancelled. Nothing was written; s starts again.")
        self.notify("Audit cancelled.")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self.audit_worker and event.state == WorkerState.ERROR:
            self.audit_failed(event.worker.error)

    async def on_audit_finished(self, message: AuditFinished) -> None:
        """The run's result becomes the app's (unless the run was cancelled meanwhile)."""
        if message.token is not self.cancel_token or message.token.cancelled:
            return
        self.audit_worker = None
        self.finish_run(message.result, message.saved, message.runs)
        if message.problem is not None:
            self.notify(message.problem, severity="warning", timeout=10)
        total = message.result.timings.get("total", 0.0)
        run = self.get_screen("run")
        run.finish(f"Finished in {total:.1f} s. F5 shows the results.", message.result)
        if isinstance(self.screen, ModalScreen):
            self.notify("Audit finished: F5 shows the results.")
            return
        if self.screen is not run:
            # Leave any screen of the previous result, so none of them is shown stale.
            await self.switch_screen(run)
        await self.action_show("results")

    def audit_failed(self, error: BaseException) -> None:
        self.audit_worker = None
        run = self.get_screen("run")
        if isinstance(error, Cancelled):
            run.finish("Cancelled. Nothing was written.")
            return
        run.finish("The audit stopped: see the message.")
        self.show_error(error)
