"""`ParmApp`: the screens, the global bindings and command palette, and the app's state with
its transitions (parm_tui.state); the audit itself runs in parm_tui.audit_worker. Heavy modules
(torch, sentence-transformers, the pipeline) are imported inside the worker, so the first screen
appears at once."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from pathlib import Path

from textual.app import App, SystemCommand
from textual.reactive import var
from textual.screen import ModalScreen, Screen
from textual.worker import Worker

from engine import workspace
from engine.core.crash_log import write_crash_log
from engine.core.errors import ConfigError, ParmError, ResumeError
from engine.core.signals import wait_for_switch
from engine.core.text import safe_text
from engine.workspace import OpenedFile
from engine.workspace.settings import build_config, load_defaults
from parm_tui import keymap
from parm_tui.audit_worker import AuditWorker
from parm_tui.recent import add_recent
from parm_tui.screens.error import ErrorModal, ErrorRaised, describe_error
from parm_tui.screens.keys import KeysModal, key_rows
from parm_tui.screens.load import LoadScreen
from parm_tui.screens.run import RunScreen
from parm_tui.screens.settings import SettingsScreen
from parm_tui.state import AppState
from parm_tui.widgets.metrics import session_summary
from parm_tui.widgets.runs import read_only_note

RESULT_SCREENS = ("results", "review", "export")


class ParmApp(AuditWorker, App):
    """parm's interactive app. `state` (parm_tui.state.AppState) is everything the screens
    share; the methods under "the app's state" are the only ways it changes."""

    CSS_PATH = "parm.tcss"
    TITLE = "parm"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = keymap.APP
    state: var[AppState] = var(None, init=False)

    def __init__(
        self,
        path: Path | None = None,
        config_path: Path | None = None,
        embeddings_path: Path | None = None,
        overrides: list[str] = (),
    ) -> None:
        super().__init__()

        self.initial_path = Path(path) if path is not None else None
        self.embeddings_path = Path(embeddings_path) if embeddings_path is not None else None
        self.startup_error: Exception | None = None
        try:
            config = build_config(config_path, overrides)
        except ConfigError as exc:
            self.startup_error = exc
            config = load_defaults()
        self.set_reactive(ParmApp.state, AppState(config))
        self.audit_worker: Worker | None = None
        self.audit_threads: set[threading.Thread] = set()
        self.cancel_token = None

    def notify(self, message: str, *, markup: bool = True, **kwargs) -> None:
        """Every notification, the screens' too (Widget.notify passes markup=True), shows its
        message as plain text: messages quote answers, column names and paths, so markup is
        always off and control characters are replaced (engine.core.text.safe_text)."""
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
        if self.state.result is None:
            return None
        if self.is_screen_installed(name):
            screen = self.get_screen(name)
            # A Review or Export screen follows the decision store itself (it observes state).
            if screen.parm_result is self.state.result or screen in self.screen_stack:
                return screen
            # Built for an earlier result: forget it and build a fresh one.
            self.uninstall_screen(name)
            await screen.remove()
        screen = self.build_result_screen(name)
        if screen is not None:
            screen.parm_result = self.state.result
            self.install_screen(screen, name)
        return screen

    def waiting_screen(self, name: str) -> Screen:
        """What a result screen will hold, before there is a result (one per screen)."""
        from parm_tui.screens.waiting import WaitingScreen

        key = f"waiting-{name}"
        if not self.is_screen_installed(key):
            self.install_screen(WaitingScreen(name), key)
        return self.get_screen(key)

    def build_result_screen(self, name: str) -> Screen | None:
        state = self.state
        if name == "results":
            from parm_tui.screens.results import ResultsScreen

            return ResultsScreen(state.result)
        try:
            if name == "review":
                from parm_tui.screens.review import ReviewScreen as Wanted
            else:
                from parm_tui.screens.export import ExportScreen as Wanted
        except ImportError as exc:
            self.notify(f"The {name} screen is not available: {exc}", severity="error")
            return None
        if name == "export":
            saved = state.saved_result()
            return Wanted(
                state.result, state.store, None if state.file is None else state.file.frame,
                folder=None if saved is None else saved.out_folder,
            )  # fmt: skip
        earlier = state.earlier_run()
        read_only = None if earlier is None else read_only_note(earlier)
        lists = workspace.todays_lists(state.result, state.store)
        return Wanted(state.result.review, state.store, *state.review_context(), read_only,
                      backreads=workspace.backread_rows(lists))  # fmt: skip

    async def open_session(self, folder: Path) -> None:
        """A live session's folder: its Monitor screen (parm_tui.screens.monitor), built anew."""
        from parm_tui.screens.monitor import MonitorScreen

        if self.is_screen_installed("monitor"):
            old = self.get_screen("monitor")
            if old in self.screen_stack:
                await self.switch_screen("load")
            self.uninstall_screen("monitor")
            await old.remove()
        self.install_screen(MonitorScreen(folder), "monitor")
        await self.switch_screen("monitor")

    def action_keys(self) -> None:
        """Every key of the screen on show (the footer has room for some)."""
        if isinstance(self.screen, KeysModal):
            return
        title = f"Keys: {self.screen.sub_title or self.title}"
        self.push_screen(KeysModal(title, key_rows(self.screen)))

    async def action_show(self, name: str) -> None:
        """Switch to a main screen (not while a dialog is open; result screens need a result)."""
        if isinstance(self.screen, ModalScreen):
            return
        if name in RESULT_SCREENS and self.state.result is None:
            screen = self.waiting_screen(name)
        else:
            screen = await self.screen_for(name)
        if screen is not None and self.screen is not screen:
            await self.switch_screen(screen)

    async def action_quit(self) -> None:
        # Where a Review screen on show stopped is kept (there is no Review screen while its
        # module was never loaded).
        review = sys.modules.get("parm_tui.screens.review")
        if review is not None and isinstance(self.screen, review.ReviewScreen):
            self.remember_review_row(self.screen.shown_row())
        await super().action_quit()

    async def on_open_review(self, message) -> None:
        """Results asked for the review of an item, a rater or a rater x item cell."""
        await self.action_show("review")
        review = sys.modules.get("parm_tui.screens.review")
        if review is not None and isinstance(self.screen, review.ReviewScreen):
            self.screen.filter_to(message.item, message.rater, message.whole)

    async def on_open_run(self, message) -> None:
        """The runs list: reopen a saved run of the file (an earlier one read-only)."""
        await self.reopen(message.run)

    def on_review_screen_stopped(self, message) -> None:
        """The review was left (another screen or a dialog over it): keep where it stopped."""
        self.remember_review_row(message.row)

    # -- the app's state: these are the only ways it changes (parm_tui.state) -------------------
    def watch_state(self, old: AppState | None, new: AppState) -> None:
        """A decision store no longer in the state is closed (screens on show have theirs
        from the state already: they observe it)."""
        if old is not None and old.store is not None and old.store is not new.store:
            old.store.close()
        # Items to audit, new or under another model: while the user checks the columns and
        # settings, the model a run will need loads in the background (engine.embedding.loading),
        # from the next refresh on: its imports hold the GIL, and the screen shows the file first.
        if new.items is not None and (
            old is None
            or old.items is not new.items
            or old.config.embedding_model != new.config.embedding_model
        ):
            precomputed = self.embeddings_path is not None
            self.call_after_refresh(workspace.preload, new.prepared, precomputed=precomputed)

    def open_file(self, file: OpenedFile) -> None:
        """A file was read, with its saved runs (the Load screen chooses its columns next)."""
        if file.path != self.state.source_path:
            add_recent(file.path)
        self.state = self.state.file_opened(file)

    def choose_columns(self, columns: dict[str, str | None]) -> None:
        """The Load screen's columns: the file's items under them, or why there are none."""
        self.state = self.state.columns_chosen(columns)
        self.change(self.state.items_reloaded())

    def apply_settings(self, config) -> None:
        """Valid settings (the Settings form's, or a settings file's); the file's items are
        read again under new ones (on_bad_rows or score_order may have changed)."""
        old = self.state
        self.state = old.settings_applied(config)
        if old.columns is not None and config != old.config:
            self.change(self.state.items_reloaded())

    def refuse_settings(self, problem: str) -> None:
        """The Settings form shows an error: no run starts until it is fixed."""
        self.state = self.state.settings_refused(problem)

    async def resume(self, saved) -> None:
        """Open a saved session of the loaded file, then Review when there are decisions to
        continue from, else Results."""
        try:
            self.change(self.state.resumed(saved))
        except ResumeError as exc:
            self.notify(str(exc), severity="error", timeout=10)
            return
        decided = self.state.store is not None and bool(self.state.store.all())
        await self.action_show("review" if decided else "results")

    async def reopen(self, saved) -> None:
        """Open a saved run of the loaded file from the runs list: its settings, columns and
        results (nothing runs again); the Results screen shows it."""
        if self.state.result is not None and saved.run_id == self.state.result.run_id:
            self.notify("That run is on show.")
            return
        try:
            self.change(self.state.resumed(saved))
        except ResumeError as exc:
            self.notify(str(exc), severity="error", timeout=10)
            return
        earlier = self.state.earlier_run()
        if earlier is not None:
            self.notify(read_only_note(earlier), severity="warning", timeout=8)
        await self.action_show("results")

    def change(self, outcome: tuple[AppState, list]) -> None:
        """Take a transition's new state, and tell the user what it says to."""
        self.state, notes = outcome
        for note in notes:
            self.notify(note.text, severity=note.severity)

    def finish_run(self, result, saved, runs=None) -> None:
        """A run's result (and its saved run and the file's saved runs, None when it was not
        kept) is the app's."""
        self.state = self.state.run_finished(result, saved, runs)

    def decline_session(self, digest: str) -> None:
        self.state = self.state.session_declined(digest)

    def remember_review_row(self, row: int | None) -> None:
        """Keep where the review stopped in the result's saved session (when it has one)."""
        saved = self.state.saved_result()
        if row is None or saved is None or saved.review_row == row:
            return
        try:
            self.state = self.state.saved_run_updated(workspace.remember_review_row(saved, row))
        except ResumeError:
            pass  # only where to continue is lost; every decision is already saved

    def on_export_screen_written(self, message) -> None:
        """An export was written: its folder is kept with the saved run (the next one's offer)."""
        saved = self.state.saved_result()
        if saved is None or saved.out_folder == str(message.folder):
            return
        try:
            self.state = self.state.saved_run_updated(
                workspace.remember_out_folder(saved, message.folder)
            )
        except (ResumeError, OSError):
            pass  # only the offer is lost; the files are written

    async def run_async(self, **kwargs):
        """Run the app; on the way out, stop a running audit (see stop_audit_threads)."""
        try:
            return await super().run_async(**kwargs)
        finally:
            if not kwargs.get("headless"):
                stop_audit_threads(self)

    # -- errors ---------------------------------------------------------------------------------
    def on_error_raised(self, message: ErrorRaised) -> None:
        self.show_error(message.error)

    def show_error(self, error: BaseException) -> None:
        """Every error ends here: engine errors by message, others by type (traceback logged)."""

        log_path = None if isinstance(error, ParmError) else write_crash_log(error)[0]
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
        if self.state.result is None:
            self.notify("Run an audit first (F4).", severity="warning")
            return
        self.copy_to_clipboard(session_summary(self.state.result))
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
    if app.cancel_token is not None:
        app.cancel_token.cancel()
    deadline = time.monotonic() + grace_seconds
    for thread in list(app.audit_threads):
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(thread.is_alive() for thread in app.audit_threads):
        wait_for_switch()  # an export switching its files into place finishes first
        sys.stdout.flush()
        sys.stderr.flush()
        # The app's own code: 143 after SIGTERM, as documented, not a success.
        os._exit(app.return_code or 0)
