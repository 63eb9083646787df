"""Strings from files, paths and error messages as Rich `Text` for widgets: never parsed as
markup, and with every control character a terminal would act on replaced (engine.core.text),
so a student's answer, a column name or a path quoted in a message cannot restyle the screen,
move the cursor or write the clipboard."""

from __future__ import annotations

from rich.text import Text

from engine.core.text import safe_text


def plain(value: object, style: str = "", **kwargs) -> Text:
    """`value` as inert Text (see the module docstring); kwargs go to Text (justify, ...)."""
    return Text(safe_text(value), style=style, **kwargs)
