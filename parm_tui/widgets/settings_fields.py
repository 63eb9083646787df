"""The Settings form's fields: the layout of one field (a box holding its row: the setting's label
and widgets; its help, shown while the box has the focus: `show_help`, `.field-box.-focused` in
parm.tcss; and the engine's message about it), a choice's dropdown, and the modes of the power
and the top-K. Labels, help, sections and choices are the settings table's
(engine.input.settings.declared)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, Static

from engine.workspace.settings import BY_NAME, Setting

POWER_MODES = [("fixed", "fixed"), ("list (grid)", "list"), ("interval (Brent)", "interval")]
TOP_K_MODES = [("off: dense graph", "off"), ("fixed", "fixed"), ("list (grid)", "list")]


def options(setting: Setting) -> list[tuple[str, str]]:
    """A choice setting's dropdown: (label, value), null shown as "none"."""
    return [(label, "none" if value is None else value) for value, label in setting.rule.choices]


def show_help(screen, focused) -> None:
    """Mark the field box holding the focused widget (its help line shows), and no other."""
    box = next((node for node in focused.ancestors if "field-box" in node.classes), None)
    for other in screen.query(".field-box.-focused"):
        if other is not box:
            other.remove_class("-focused")
    if box is not None:
        box.add_class("-focused")


def error_line(key: str) -> Static:
    """Where the engine's message about `key` appears (hidden while there is none)."""
    return Static("", id=f"error-{key}", classes="field-error")


def help_line(key: str) -> Static:
    return Static(BY_NAME[key].help, id=f"help-{key}", classes="field-help")


def field_row(key: str, *widgets) -> ComposeResult:
    """A field's row: its label and widgets."""
    with Horizontal(classes="field", id=f"field-{key}"):
        yield Label(BY_NAME[key].label, classes="field-label")
        yield from widgets


def field(key: str, *widgets) -> ComposeResult:
    """One field: its row, its help (while focused) and the engine's message about it."""
    with Vertical(classes="field-box", id=f"box-{key}"):
        yield from field_row(key, *widgets)
        yield help_line(key)
        yield error_line(key)


def sub_row(label: str, *widgets, row_id: str | None = None) -> ComposeResult:
    """A row under a field (the values of a mode)."""
    with Horizontal(classes="field sub", id=row_id):
        yield Label(f"  {label}", classes="field-label")
        yield from widgets
