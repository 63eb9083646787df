"""Signed figures as people read them."""

from __future__ import annotations


def signed(value: float, digits: int = 2) -> str:
    """The value with its sign ("+0.28", "-1.5"); one that rounds to zero is "0.00", not a
    negative zero ("-0.00" beside a rater read as harsh)."""
    text = f"{value:+.{digits}f}"
    return text[1:] if float(text) == 0 else text
