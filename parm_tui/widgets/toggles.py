"""A checkbox and a switch whose state reads without colour: the checkbox shows X only when
checked (the stock one always shows X and changes its colour), the switch says on or off."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Checkbox, Switch


class MarkedCheckbox(Checkbox):
    """A Checkbox that shows X when checked and a blank when not."""

    def render(self):
        # The stock button draws BUTTON_INNER whatever the value; this instance draws its state.
        self.BUTTON_INNER = "X" if self.value else " "
        return super().render()


class MarkedSwitch(Switch):
    """A Switch drawn as `[x] on` / `[ ] off`; focus shows in reverse (parm.tcss)."""

    def render(self) -> Text:
        return Text("[x] on" if self.value else "[ ] off")
