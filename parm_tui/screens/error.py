"""The one scrollable error modal: engine errors as their message, anything else as type and
message with the traceback logged to a file (never shown, never closing the app)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from parm_tui import keymap
from parm_tui.widgets.plain import plain


def describe_error(error: BaseException, log_path=None) -> tuple[str, str]:
    """(title, message) for an error: ParmErrors speak for themselves; others say what they are."""
    from engine.core.errors import ParmError

    if isinstance(error, ParmError):
        return "Cannot continue", str(error)
    message = f"{type(error).__name__}: {error}"
    if log_path is not None:
        message += f"\n\nThis is a bug in parm. The details were written to {log_path}."
    return "Unexpected error", message


class ErrorRaised(Message):
    """An unexpected error a screen met (in a worker): the app shows it in the error modal and
    logs its traceback (ParmApp.show_error)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class ErrorModal(ModalScreen[None]):
    """Shows one or more error messages in a scrollable box; Esc, Enter or Close dismisses."""

    BINDINGS = keymap.ERROR

    AUTO_FOCUS = "#error-close"

    def __init__(self, title: str, message: str) -> None:
        super().__init__(id="error-modal")
        self.title_text = title
        self.messages = [message]

    def compose(self) -> ComposeResult:
        with Vertical(id="error-box"):
            yield Label(plain(self.title_text), id="error-title")
            with VerticalScroll(id="error-scroll"):
                yield Static(plain(self.text), id="error-message")
            yield Button("Close", id="error-close", variant="error", compact=True)

    @property
    def text(self) -> str:
        return "\n\n".join(self.messages)

    def add_message(self, title: str, message: str) -> None:
        """A further error while the modal is open goes into the same box."""
        self.messages.append(f"{title}: {message}")
        if self.is_mounted:
            self.query_one("#error-message", Static).update(plain(self.text))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss()

    def action_dismiss_modal(self) -> None:
        self.dismiss()

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.text)
        self.app.notify("Error message copied to the clipboard.")
