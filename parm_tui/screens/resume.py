"""Resuming a saved session: the question asked when a file with one is opened (resume that
audit, its settings and results, straight to Results or Review; or start fresh, which deletes
nothing). Opening it is the app's `resume` transition (parm_tui.state)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Label

from engine.core.errors import ResumeError
from parm_tui import keymap
from parm_tui.widgets.confirm import ConfirmModal
from parm_tui.widgets.plain import plain
from parm_tui.widgets.runs import saved_when
from parm_tui.widgets.settings_summary import columns_text, settings_text


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


class ResumeModal(ConfirmModal):
    """Resume (r, enter) or start fresh (n, escape)."""

    BINDINGS = keymap.RESUME
    YES = ("Resume (r)", "primary")
    NO = ("Start fresh (n)", "default")

    def __init__(self, session, config, decided: int | None) -> None:
        super().__init__()
        self.session = session
        self.config = config
        self.decided = decided

    def lines(self) -> list[Widget]:
        name = Path(self.session.source).name
        summary = session_summary(self.session, self.config, self.decided)
        return [
            Label(plain(f"Resume the audit of {name}?", style="bold")),
            Label(summary, classes="session-summary"),
        ]


async def offer_resume(app, saved, problem: str | None, then=None) -> None:
    """After a file is read: ask whether to resume its saved session (`problem`: why the
    session could not be read). Not asked again for a session declined or already open.
    then(): called once the question is answered, or at once where none is asked (the file's
    reading notes: a note's toast over the question hid its buttons at 80x24)."""
    then = then or (lambda: None)
    asked = _question(app, saved, problem)
    if asked is None:
        then()
        return
    config, decided = asked

    async def answer(resume: bool) -> None:
        if resume:
            await app.resume(saved)
        else:
            app.decline_session(saved.file_digest)
        then()

    app.push_screen(ResumeModal(saved, config, decided), answer)


def _question(app, saved, problem: str | None):
    """(the saved session's settings, its decisions so far) to ask about; None where nothing
    is asked, saying why where the session cannot be used."""
    if problem is not None:
        message = f"The saved session of this file cannot be used: {problem}"
        app.notify(message, severity="warning", timeout=10)
        return None
    state = app.state
    if saved is None or saved.file_digest in state.declined:
        return None
    if state.result is not None and state.result.run_id in saved.run_ids:
        return None
    try:
        config = saved.config()
    except ResumeError as exc:
        app.notify(str(exc), severity="warning", timeout=10)
        return None
    return config, len(state.store.all()) if state.store is not None else None
