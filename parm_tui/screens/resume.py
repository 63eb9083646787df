"""Resuming a saved session: the question asked when a file with one is opened (resume that
audit, its settings and results, straight to Results or Review; or start fresh, which deletes
nothing), opening it, and remembering where the review stopped."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from engine.core.errors import ResumeError
from parm_tui.widgets.plain import plain
from parm_tui.widgets.settings_summary import columns_text, settings_text


def saved_when(saved_at: str) -> str:
    """'2026-11-23T14:02:11+00:00' -> '2026-11-23 14:02 UTC'."""
    return saved_at[:16].replace("T", " ") + " UTC"


def session_summary(session, config, decided: int | None) -> Text:
    """Date, counts and settings of a saved session, as the question shows them."""
    responses = sum(entry.responses for entry in session.results)
    flagged = sum(entry.flagged for entry in session.results)
    text = Text(f"Last run saved {saved_when(session.saved_at)}\n")
    text.append(f"{responses:,} responses · {flagged:,} flagged", style="bold")
    if decided is not None:
        text.append(f" · {decided:,} decided", style="bold")
    text.append_text(plain(f"\n{columns_text(config)}\n{settings_text(config)}", style="dim"))
    return text


class ResumeModal(ModalScreen[bool]):
    """Resume (r, enter) or start fresh (n, escape)."""

    BINDINGS = [
        Binding("r", "answer(True)", "Resume"),
        Binding("n,escape", "answer(False)", "Start fresh"),
    ]

    def __init__(self, session, config, decided: int | None) -> None:
        super().__init__()
        self.session = session
        self.config = config
        self.decided = decided

    def compose(self) -> ComposeResult:
        name = Path(self.session.source).name
        with Vertical(id="resume-box"):
            yield Label(plain(f"Resume the audit of {name}?", style="bold"))
            yield Label(
                session_summary(self.session, self.config, self.decided), classes="session-summary"
            )
            with Horizontal():
                yield Button("Resume (r)", variant="primary", id="resume-yes")
                yield Button("Start fresh (n)", id="resume-no")

    def on_mount(self) -> None:
        self.query_one("#resume-yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "resume-yes")

    def action_answer(self, resume: bool) -> None:
        self.dismiss(resume)


async def offer_resume(app, session, problem: str | None) -> None:
    """After a file is read: ask whether to resume its saved session (`problem`: why the
    session could not be read). Not asked again for a session declined or already open."""
    if problem is not None:
        message = f"The saved session of this file cannot be used: {problem}"
        app.notify(message, severity="warning", timeout=10)
        return
    if session is None or session.file_digest in app.declined_sessions:
        return
    if app.result is not None and app.result.run_id in session.run_ids:
        return
    try:
        config = session.config()
    except ResumeError as exc:
        app.notify(str(exc), severity="warning", timeout=10)
        return
    decided = len(app.store.all()) if app.store is not None else None

    async def answer(resume: bool) -> None:
        if resume:
            await resume_session(app, session)
        else:
            app.declined_sessions.add(session.file_digest)

    app.push_screen(ResumeModal(session, config, decided), answer)


async def resume_session(app, session) -> None:
    """Open a saved session: its settings and columns, its results, then Review when there
    are decisions to continue from, else Results. Nothing runs again."""
    from engine.results.session import session_result
    from engine.saved.store import load_results

    load = app.get_screen("load")
    try:
        app.config = session.config()
        # The Load screen takes the session's columns (named in the settings) and validates.
        load.show_frame(load.frame_path, load.frame)
        if app.items is None:
            raise ResumeError(
                "The saved session's columns no longer give usable responses; run the audit again."
            )
        by_item = {responses.item: responses for responses in app.items.audited}
        if sorted(by_item, key=str) != sorted((e.item for e in session.results), key=str):
            raise ResumeError("The saved session's items are not the file's items now.")
        loaded = load_results(session, [by_item[entry.item] for entry in session.results])
    except ResumeError as exc:
        app.notify(str(exc), severity="error", timeout=10)
        return
    # The results in the file's order of items, as a run gives them.
    order = {entry.item: k for k, entry in enumerate(session.results)}
    results = [loaded[order[responses.item]] for responses in app.items.audited]
    app.result = session_result(app.items, results, app.config)
    app.session = session
    if app.is_screen_installed("settings") and app.get_screen("settings").is_mounted:
        app.get_screen("settings").fill(app.config)
    decided = app.store is not None and bool(app.store.all())
    await app.action_show("review" if decided else "results")


def remember_review_row(app, result, row: int) -> None:
    """Keep where the review of `result` stopped, when its session is saved."""
    from engine.saved.store import save_review_row

    session = session_of(app, result)
    if session is None or session.review_row == row:
        return
    try:
        app.session = save_review_row(session, row)
    except ResumeError:
        pass  # only where to continue is lost; every decision is already saved


def session_of(app, result):
    """The app's saved session when it holds `result`, else None (not saved, or another's)."""
    session = getattr(app, "session", None)
    return session if session is not None and result.run_id in session.run_ids else None


def review_context(app, result) -> tuple:
    """What the Review screen of `result` (a SessionResult) takes from its saved session (when
    there is one): the rows the previous run flagged (of every item; None when there was no
    previous run), and where the review stopped."""
    session = session_of(app, result)
    if session is None:
        return None, None
    previous = [entry.previous_flagged_rows for entry in session.results]
    if all(rows is None for rows in previous):
        return None, session.review_row
    return tuple(row for rows in previous for row in rows or ()), session.review_row


def keep_session(result, config, digest, path) -> tuple:
    """Save a finished run (a SessionResult: every item's result) as the session of its file (in the audit thread); returns the
    session and None, or None and why it could not be saved (the run itself stands)."""
    from engine.core.errors import ParmError
    from engine.saved.store import save_session

    if digest is None:
        return None, None
    try:
        items = [r.responses.item for r in result.results]
        return save_session(digest, path, config, result.results, items), None
    except (ParmError, OSError) as exc:
        return None, f"The results could not be kept for resuming: {exc}"
