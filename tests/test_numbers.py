"""Signed figures (engine/core/numbers.py): the sign always, never a negative zero (ASAP-SAS's
two raters printed 'Score2 (-0.00 points)' beside 'Score1 (+0.00 points)')."""

from __future__ import annotations

import pytest

from engine.core.numbers import signed
from engine.outputs.columns import POINTS, shown


@pytest.mark.parametrize(
    "value, digits, text",
    [(0.28, 2, "+0.28"), (-0.28, 2, "-0.28"), (-0.004, 2, "0.00"), (0.004, 2, "0.00"),
     (0.0, 2, "0.00"), (-0.0, 2, "0.00"), (-1.46, 1, "-1.5"), (-0.04, 1, "0.0"),
     (0.0005, 3, "+0.001"), (-101.625, 1, "-101.6")],
)  # fmt: skip
def test_signed_keeps_the_sign_and_drops_a_negative_zero(value, digits, text):
    assert signed(value, digits) == text


def test_points_in_tables_have_no_negative_zero():
    assert shown(-0.001, POINTS) == "0.00" and shown(-0.3, POINTS) == "-0.30"
