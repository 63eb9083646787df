"""The settings form's text <-> settings values (parm_tui/screens/settings_form.py)."""

from __future__ import annotations

from helpers import engine_error

from parm_tui.screens import settings_form as form


def test_form_numbers_leave_non_numbers_for_the_engine_to_name():
    assert form.number("12", integer=True) == 12
    assert form.number("2.5", integer=True) == 2.5
    assert form.number("abc") == "abc"
    assert form.number("") is None
    assert form.number_list("5, 10 20", integer=True) == [5, 10, 20]
    assert form.field_of(engine_error(seed=-1)) == "seed"
