"""`ParmApp`: the screens, the global bindings and command palette, and the thread worker that
calls engine.session.run_session. Heavy modules (torch, sentence-transformers, the pipeline)
are imported inside the worker, so the first screen appears at once."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState

from parm_tui.recent import add_recent, log_exception
from parm_tui.screens.error import ErrorModal, describe_error
from parm_tui.screens.load import LoadScreen
from parm_tui.screens.run import RunScreen, run_problem
from parm_tui.screens.settings import SettingsScreen

RESULT_SCREENS = ("results", "review", "export")


class ParmApp(App):
    """parm's interactive app. Attributes the screens share: items (engine.input.items.Items of
    the file loaded), responses (all its items' responses pooled on one scale, what the decision
    store keeps decisions for), config, source_path, source_digest (SHA-256 of the file read),
    result (engine.session.SessionResult of the last run, or None), store
    (engine.audit.decisions.DecisionStore or None), session (engine.saved.store.SavedSession of
    the file, or None) and settings_problem (the Settings form's error, or None)."""

    CSS_PATH = "parm.tcss"
    TITLE = "parm"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        # q first: the footer shows a screen's keys, then these in order as far as they fit.
        Binding("q", "quit", "Quit"),
        Binding("f2", "show('load')", "Load"),
        Binding("ctrl+o", "show('load')", "Open file", show=False),
        Binding("f3", "show('settings')", "Settings"),
        Binding("f4", "show('run')", "Run"),
        Binding("f5", "show('results')", "Results"),
        Binding("f6", "show('review')", "Review"),
        Binding("f7", "show('export')", "Export"),
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False),
    ]

    def __init__(
        self,
        path: Path | None = None,
        config_path: Path | None = None,
        embeddings_path: Path | None = None,
        overrides: list[str] = (),
    ) -> None:
        super().__init__()
        from engine.core.errors import ConfigError
        from engine.input.config import build_config, load_defaults

        self.initial_path = Path(path) if path is not None else None
        self.embeddings_path = Path(embeddings_path) if embeddings_path is not None else None
        self.startup_error: Exception | None = None
        try:
            self.config = build_config(config_path, overrides)
        except ConfigError as exc:
            self.startup_error = exc
            self.config = load_defaults()
        self.items = None
        self.responses = None
        self.on_scale = None
        self.source_path: Path | None = None
        self.source_digest: str | None = None
        self.result = None
        self.store = None
        self.session = None
        self.settings_problem: str | None = None
        self.declined_sessions: set[str] = set()
        self.audit_worker: Worker | None = None
        self.audit_threads: set[threading.Thread] = set()
        self.cancel_token = None

    def notify(self, message: str, *, markup: bool = True, **kwargs) -> None:
        """Every notification, the screens' too (Widget.notify passes markup=True), shows its
        message as plain text: messages quote answers, column names and paths, so markup is
        always off and control characters are replaced (engine.core.text.safe_text)."""
        from engine.core.text import safe_text

        super().notify(safe_text(message), markup=False, **kwargs)

    def on_mount(self) -> None:
        self.install_screen(LoadScreen(self.initial_path), "load")
        self.install_screen(SettingsScreen(), "settings")
        self.install_screen(RunScreen(), "run")
        self.push_screen("load")
        if self.startup_error is not None:
            self.show_error(self.startup_error)
        if not self.is_headless:
            self.exit_on_sigterm()

    def exit_on_sigterm(self) -> None:
        """SIGTERM closes the app as `q` does, with exit code 143: the terminal is restored and
        a running audit stopped (run_async), instead of the process dying in raw mode."""
        import asyncio
        import signal

        try:
            asyncio.get_running_loop().add_signal_handler(
                signal.SIGTERM, lambda: self.exit(return_code=143)
            )
        except (NotImplementedError, RuntimeError, AttributeError, ValueError):
            pass  # no SIGTERM or no signal handlers on this platform: the default applies

    # -- navigation -----------------------------------------------------------------------------
    async def screen_for(self, name: str) -> Screen | None:
        """The screen for a name; the result screens are built once per result."""
        if name not in RESULT_SCREENS:
            return self.get_screen(name) if self.is_screen_installed(name) else None
        if self.result is None:
            return None
        if self.is_screen_installed(name):
            screen = self.get_screen(name)
            current = screen.parm_result is self.result and self.has_current_store(screen)
            if current or screen in self.screen_stack:
                return screen
            # Built for an earlier result or decision store: forget it and build a fresh one.
            self.uninstall_screen(name)
            await screen.remove()
        screen = self.build_result_screen(name)
        if screen is not None:
            screen.parm_result = self.result
            self.install_screen(screen, name)
        return screen

    def has_current_store(self, screen: Screen) -> bool:
        """Whether a Review/Export screen writes to the open decision store (the others have
        no store)."""
        return not hasattr(screen, "store") or screen.store is self.store

    def build_result_screen(self, name: str) -> Screen | None:
        if name == "results":
            from parm_tui.screens.results import ResultsScreen

            return ResultsScreen(self.result)
        try:
            if name == "review":
                from parm_tui.screens.review import ReviewScreen as Wanted
            else:
                from parm_tui.screens.export import ExportScreen as Wanted
        except ImportError as exc:
            self.notify(f"The {name} screen is not available: {exc}", severity="error")
            return None
        if name == "export":
            return Wanted(self.result, self.store)
        from parm_tui.screens.resume import review_context

        return Wanted(self.result.review, self.store, *review_context(self, self.result))

    async def action_show(self, name: str) -> None:
        """Switch to a main screen (not while a dialog is open; result screens need a result)."""
        if isinstance(self.screen, ModalScreen):
            return
        if name in RESULT_SCREENS and self.result is None:
            self.notify("Run an audit first (F4).", severity="warning")
            return
        screen = await self.screen_for(name)
        if screen is not None and self.screen is not screen:
            await self.switch_screen(screen)

    # -- data and settings, called by the screens ------------------------------------------------
    def accept_items(self, items, path: Path, config, digest: str | None = None) -> None:
        """A file validated on the Load screen (its items' responses): remember it, record it,
        open its decision store. digest: the SHA-256 of the bytes read (the key of the file's
        saved session)."""
        from engine.audit.combined import pool_responses

        responses, _, on_scale = pool_responses(items.audited)
        self.items, self.on_scale = items, on_scale if items.by_item else None
        changed = (
            self.responses is None
            or path != self.source_path
            or not self.responses.same_as(responses)
        )
        if path != self.source_path:
            add_recent(path)
        self.responses, self.source_path, self.config = responses, path, config
        self.source_digest = digest
        if self.result is not None and not self.result.review.responses.same_as(responses):
            self.result = None
            self.notify("New data loaded: the previous results were closed.")
        if changed or self.store is None:
            self.open_store()
        # While the user checks the columns: load the model a run will need, in the background.
        from engine.embedding.loading import preload_for

        preload_for(items, config, precomputed=self.embeddings_path is not None)

    def open_store(self) -> None:
        from engine.core.errors import ParmError

        old, self.store = self.store, None
        if old is not None and hasattr(old, "close"):
            old.close()
        try:
            from engine.audit.decisions import open_store
        except ImportError:
            return
        try:
            self.store = open_store(self.source_path, self.responses, on_scale=self.on_scale)
        except (ParmError, OSError) as exc:
            self.notify(f"Review decisions cannot be saved: {exc}", severity="warning")
        # The old store is closed: a result screen on show now writes to the new one; the
        # others are rebuilt with it when next shown (screen_for).
        for name in ("review", "export"):
            if self.is_screen_installed(name):
                screen = self.get_screen(name)
                if screen in self.screen_stack:
                    screen.store = self.store

    async def action_quit(self) -> None:
        if isinstance(self.screen, Screen) and hasattr(self.screen, "remember_position"):
            self.screen.remember_position()  # the Review screen: where to continue next time
        await super().action_quit()

    def clear_responses(self) -> None:
        self.items = self.responses = None

    def set_config(self, config) -> None:
        """New settings; the Load screen re-checks the data (on_bad_rows may have changed)."""
        self.config = config
        if self.is_screen_installed("load"):
            load = self.get_screen("load")
            if load.is_mounted and load.frame is not None:
                load.validate()

    async def run_async(self, **kwargs):
        """Run the app; on the way out, stop a running audit (see stop_audit_threads)."""
        try:
            return await super().run_async(**kwargs)
        finally:
            if not kwargs.get("headless"):
                stop_audit_threads(self)

    # -- the audit worker -----------------------------------------------------------------------
    @property
    def audit_running(self) -> bool:
        return self.audit_worker is not None and self.audit_worker.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    async def start_audit(self) -> None:
        from engine.core.progress import CancelToken

        problem = run_problem(self)
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
        feed = run.begin(self.config, self.config.late_interaction)
        self.cancel_token = CancelToken()
        source = (self.source_digest, self.source_path)
        self.audit_worker = self.audit(
            self.items, self.config, feed, self.cancel_token, self.embeddings_path, source
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="audit")
    def audit(self, items, config, feed, token, embeddings_path, source):
        """Runs in a thread: the engine appends progress events to `feed` (a deque). Returns
        the SessionResult, its saved session (None when not saved) and why it was not saved."""
        from engine.session import run_session

        thread = threading.current_thread()
        self.audit_threads.add(thread)
        try:
            embeddings = None
            if embeddings_path is not None:
                from engine.embedding.precomputed import load_for_items

                embeddings = load_for_items(embeddings_path, items)
            result = run_session(
                items, config, progress=feed.append, cancel=token, embeddings=embeddings
            )
            from parm_tui.screens.resume import keep_session

            return (result, *keep_session(result, config, *source))
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

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self.audit_worker or event.worker.group != "audit":
            return
        if event.state == WorkerState.SUCCESS:
            await self.audit_finished(event.worker.result)
        elif event.state == WorkerState.ERROR:
            self.audit_failed(event.worker.error)

    async def audit_finished(self, outcome) -> None:
        result, session, problem = outcome
        self.audit_worker = None
        self.result = result
        if session is not None:
            self.session = session
        if problem is not None:
            self.notify(problem, severity="warning", timeout=10)
        total = result.timings.get("total", 0.0)
        run = self.get_screen("run")
        run.finish(f"Finished in {total:.1f} s. F5 shows the results.", result)
        if isinstance(self.screen, ModalScreen):
            self.notify("Audit finished: F5 shows the results.")
            return
        if self.screen is not run:
            # Leave any screen of the previous result, so none of them is shown stale.
            await self.switch_screen(run)
        await self.action_show("results")

    def audit_failed(self, error: BaseException) -> None:
        from engine.core.errors import Cancelled

        self.audit_worker = None
        run = self.get_screen("run")
        if isinstance(error, Cancelled):
            run.finish("Cancelled. Nothing was written.")
            return
        run.finish("The audit stopped: see the message.")
        self.show_error(error)

    # -- errors ---------------------------------------------------------------------------------
    def show_error(self, error: BaseException) -> None:
        """Every error ends here: engine errors by message, others by type (traceback logged)."""
        from engine.core.errors import ParmError

        log_path = None if isinstance(error, ParmError) else log_exception(error)
        title, message = describe_error(error, log_path)
        if isinstance(self.screen, ErrorModal):
            self.screen.add_message(title, message)
        else:
            self.push_screen(ErrorModal(title, message))

    # -- command palette ------------------------------------------------------------------------
    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        commands = [
            ("file: open", "Choose a CSV/TSV file to audit", self.command_open),
            ("settings: show", "Edit the audit settings", lambda: self.action_show("settings")),
            ("settings: save", "Save the settings as a JSON file", self.command_save_settings),
            ("run: start audit", "Run the PARM audit on the loaded file", self.start_audit),
            ("run: cancel", "Cancel the running audit", self.cancel_audit),
            ("run: show progress", "Show the Run screen", lambda: self.action_show("run")),
            (
                "results: show",
                "Metrics, confusion matrix, tuning",
                lambda: self.action_show("results"),
            ),
            (
                "results: copy metrics summary",
                "Copy the metrics as text",
                self.command_copy_summary,
            ),
            ("review: open", "Review the flagged responses", lambda: self.action_show("review")),
            (
                "export: write outputs",
                "Write predictions, tuning and reports",
                lambda: self.action_show("export"),
            ),
        ]
        for title, help_text, callback in commands:
            yield SystemCommand(title, help_text, callback)

    async def command_open(self) -> None:
        await self.action_show("load")
        self.get_screen("load").query_one("#path").focus()

    async def command_save_settings(self) -> None:
        await self.action_show("settings")
        self.get_screen("settings").save_settings()

    def command_copy_summary(self) -> None:
        from parm_tui.widgets.metrics import session_summary

        if self.result is None:
            self.notify("Run an audit first (F4).", severity="warning")
            return
        self.copy_to_clipboard(session_summary(self.result))
        self.notify("Metrics summary copied to the clipboard.")


def run_app(path=None, config_path=None, embeddings_path=None, overrides=()) -> None:
    """Open the app (from `parm`, `parm FILE` or `parm open`); exits with the app's return code
    when it is not 0 (143 after SIGTERM)."""
    app = ParmApp(path, config_path, embeddings_path, overrides)
    app.run()
    if app.return_code:
        sys.exit(app.return_code)


def stop_audit_threads(app: ParmApp, grace_seconds: float = 1.5) -> None:
    """Python joins worker threads at exit, and loading a model cannot be interrupted: cancel
    the audit, give it a moment to stop at its next check, then leave without it."""
    import os
    import time

    if app.cancel_token is not None:
        app.cancel_token.cancel()
    deadline = time.monotonic() + grace_seconds
    for thread in list(app.audit_threads):
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(thread.is_alive() for thread in app.audit_threads):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
