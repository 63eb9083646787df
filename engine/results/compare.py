"""Every sentence that sets one figure beside another: produced here, from the two figures, the
rule that compares them and its limit, so that no report or screen can call a difference above
its limit "within" it.

A comparison is decided on the figures as they are shown: both are rounded to the digits
written, the difference is that of the rounded figures, and the verdict is that difference
against the limit. A reader who subtracts the two numbers of a sentence gets the difference it
states, and the verdict follows from the numbers on the page.

Three rules, each a limit on `figure - other`:

- SHORTFALL: the figure may fall below the other by at most the limit (the model's agreement
  with a rater against the raters' own: the field's degradation limit of 0.10; a figure against
  a minimum: limit 0);
- EXCESS: the figure may rise above the other by at most the limit (an in-sample figure against
  its cross-fitted twin: more than 0.05 above is memorised);
- MARGIN: the figure must exceed the other by more than the limit (a share against another,
  the limit being the 95% margin of their difference).

With no limit the comparison states the change and no verdict (a figure in two runs).

Only the standard library (read before numpy loads).
"""

from __future__ import annotations

from dataclasses import dataclass

SHORTFALL, EXCESS, MARGIN = "shortfall", "excess", "margin"
# Differences within this of the limit count as on it: figures rounded to 3 digits differ
# from a 2-digit limit by whole thousandths, never by float noise.
_EPSILON = 1e-9


@dataclass(frozen=True)
class Limit:
    """A rule on `figure - other`. value: the limit (in the figures' unit: points for
    percentages); side: SHORTFALL, EXCESS or MARGIN; name: what the limit is ("the field's
    limit on degradation"); beyond: what passing it means ("memorised"); inside: what keeping
    to it means ("" says nothing more)."""

    value: float
    side: str
    name: str
    beyond: str
    inside: str = ""

    def __post_init__(self) -> None:
        if self.side not in (SHORTFALL, EXCESS, MARGIN):
            raise ValueError(f"unknown side of a limit: {self.side!r}")
        if not self.value >= 0:
            raise ValueError(f"a limit is not negative: {self.value!r}")


@dataclass(frozen=True)
class Comparison:
    """Two figures and the rule between them. value, other_value: as shown (rounded; None where
    a figure is unknown); difference: value - other_value (None where either is unknown);
    within: whether the difference keeps to the limit (None without a limit or a figure);
    sentence: the comparison in words, with its verdict."""

    figure: str
    value: float | None
    other: str
    other_value: float | None
    limit: Limit | None
    difference: float | None
    within: bool | None
    sentence: str
    digits: int = 3
    unit: str = ""

    def shown(self, value: float) -> str:
        """A figure as the sentence writes it: '0.793', '61.0%'."""
        return f"{value:.{self.digits}f}{self.unit}"

    def gap(self) -> str:
        """'0.554 above', '23.0 points below', 'the same'."""
        if self.difference is None:
            return ""
        if abs(self.difference) < _EPSILON:
            return "the same"
        size = f"{abs(self.difference):.{self.digits}f}" + (" points" if self.unit else "")
        return f"{size} {'above' if self.difference > 0 else 'below'}"

    def tag(self) -> str:
        """A badge for a figure under its minimum: 'QWK 0.563 < 0.70' ('' where it is not)."""
        if self.within is not False or self.limit is None or self.limit.value:
            return ""
        assert self.value is not None  # a verdict is given only on both figures
        return f"{self.figure} {self.shown(self.value)} < {self.other_value:.2f}"

    def change(self) -> str:
        """'0.675 → 0.668 (−0.007)': the other figure (before) to this one (now)."""
        if self.value is None or self.other_value is None:
            before = "—" if self.other_value is None else self.shown(self.other_value)
            now = "—" if self.value is None else self.shown(self.value)
            return f"{before} → {now}"
        assert self.difference is not None  # both figures are known
        if abs(self.difference) < _EPSILON:
            return f"{self.shown(self.value)} (same)"
        signed = f"{self.difference:+.{self.digits}f}".replace("-", "−")
        return f"{self.shown(self.other_value)} → {self.shown(self.value)} ({signed})"

    def verdict(self) -> str:
        """What the limit says of the difference: 'within the field's limit on degradation of
        0.10', 'more than parm's memorisation limit of 0.05: memorised'; '' without a limit or
        a figure."""
        if self.limit is None or self.within is None:
            return ""
        return _verdict(self)

    def brief(self) -> str:
        """For a headline, only where the limit is passed: '0.554 above, more than 0.05:
        memorised'; '' where it is kept or cannot be judged."""
        if self.limit is None or self.within is not False:
            return ""
        said = _limit_text(self.limit, self.digits, self.unit).removeprefix(self.limit.name)
        return f"{self.gap()}, more than{said.removeprefix(' of')}: {self.limit.beyond}"


def _rounded(value, digits: int, scale: float) -> float | None:
    if value is None or value != value:  # NaN is unknown
        return None
    return round(float(value) * scale, digits)


def _within(limit: Limit, difference: float) -> bool:
    if limit.side == SHORTFALL:
        return difference >= -limit.value - _EPSILON
    if limit.side == EXCESS:
        return difference <= limit.value + _EPSILON
    return difference > limit.value + _EPSILON


def _limit_text(limit: Limit, digits: int, unit: str) -> str:
    if not limit.value:
        return limit.name
    shown = f"{limit.value:.{digits if unit else 2}f}" + (" points" if unit else "")
    return f"{limit.name} of {shown}"


def _verdict(found: Comparison) -> str:
    limit, within = found.limit, found.within
    # Comparison.verdict asks only with a limit and a verdict, so with both figures.
    assert limit is not None and found.difference is not None
    said = _limit_text(limit, found.digits, found.unit)
    if limit.side == MARGIN:
        text = f"more than {said}" if within else f"not more than {said}"
    elif not within:
        text = f"more than {said}" if limit.value else f"under {said}"
    elif limit.value == 0:
        text = f"meets {said}"
    elif (found.difference >= 0) == (limit.side == SHORTFALL):  # the side the limit allows
        text = f"not {'below' if limit.side == SHORTFALL else 'above'}, so {said} is met"
    else:
        text = f"within {said}"
    meaning = limit.inside if within else limit.beyond
    return text + (f": {meaning}" if meaning else "")


def compare(
    figure: str,
    value: float | None,
    other: str,
    other_value: float | None,
    limit: Limit | None = None,
    digits: int = 3,
    percent: bool = False,
) -> Comparison:
    """The comparison of `figure` (its value) with `other` (its value) under `limit` (None: no
    rule, the change only). percent: the values are shares, written as percentages with the
    difference in points (the limit then in points too)."""
    scale, unit = (100.0, "%") if percent else (1.0, "")
    shown, against = _rounded(value, digits, scale), _rounded(other_value, digits, scale)
    difference = (
        round(shown - against, digits) if shown is not None and against is not None else None
    )
    within = None if limit is None or difference is None else _within(limit, difference)
    found = Comparison(figure, shown, other, against, limit, difference, within, "", digits, unit)
    return _with_sentence(found)


def _with_sentence(found: Comparison) -> Comparison:
    if found.value is None:
        sentence = f"{found.figure} is not known"
    elif found.other_value is None:
        sentence = f"{found.figure} is {found.shown(found.value)} ({found.other} is not known)"
    else:
        gap = found.gap()
        beside = f"{gap} {found.other}" if gap != "the same" else f"the same as {found.other}"
        standard = found.limit is not None and found.limit.value == 0
        sentence = f"{found.figure} is {found.shown(found.value)}, {beside} "
        sentence += ("of " if standard else "") + found.shown(found.other_value)
        if standard:  # a minimum: above or below it says the verdict; only its meaning is added
            assert found.limit is not None  # `standard` is a limit of 0
            meaning = found.limit.inside if found.within else found.limit.beyond
            sentence += f": {meaning}" if meaning else ""
        elif found.within is not None:
            sentence += f" ({found.verdict()})"
    return Comparison(
        found.figure, found.value, found.other, found.other_value, found.limit,
        found.difference, found.within, sentence, found.digits, found.unit,
    )  # fmt: skip


def minimum(
    figure: str, value: float | None, least: float, name: str, beyond: str = "", inside: str = ""
) -> Comparison:
    """A figure against a fixed minimum (the field's 0.70 for QWK): at or above it, or under
    it ("the raters' QWK is 0.612, 0.088 below the field's minimum of 0.700: ...")."""
    return compare(figure, value, name, least, Limit(0.0, SHORTFALL, name, beyond, inside))
