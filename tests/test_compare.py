"""engine.results.compare: every sentence that sets two figures side by side states both, their
difference and the rule, and its verdict follows from the numbers it writes; the cases that
broke (a difference above its limit called within, a perfect in-sample figure beside a poor
cross-fitted one) are stated right; the flags' check against second reads holds its 5% level
on simulated shares with no difference and finds a real one."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.results.compare import EXCESS, MARGIN, SHORTFALL, Limit, compare, minimum
from engine.results.lead import MEMORISED, memorised

DEGRADATION = Limit(0.10, SHORTFALL, "the field's limit on degradation", "falls short")


def test_a_model_far_above_the_raters_is_not_called_within_a_limit_it_passed():
    """The sentence that broke: "The model's QWK against rater 1 is 1.000, 0.904 above the
    raters' (within the field's limit of 0.10)"."""
    found = compare("the model's QWK", 1.0, "the raters'", 0.096, DEGRADATION)
    assert found.sentence == (
        "the model's QWK is 1.000, 0.904 above the raters' 0.096 (not below, so the field's "
        "limit on degradation of 0.10 is met)"
    )
    assert "within" not in found.sentence
    short = compare("the model's QWK", 0.30, "the raters'", 0.523, DEGRADATION)
    assert short.within is False and short.difference == pytest.approx(-0.223)
    assert short.sentence.endswith(
        "(more than the field's limit on degradation of 0.10: falls short)"
    )
    near = compare("the model's QWK", 0.45, "the raters'", 0.523, DEGRADATION)
    assert near.within and "(within the field's limit on degradation of 0.10)" in near.sentence


def test_a_perfect_in_sample_figure_beside_a_poor_cross_fitted_one_is_memorised():
    found = compare("the in-sample kappa", 1.0, "the cross-fitted", -0.266, MEMORISED)
    assert found.within is False and found.gap() == "1.266 above"
    assert found.brief() == "1.266 above, more than 0.05: memorised"
    assert memorised(1.0, -0.266) and not memorised(0.80, 0.75) and memorised(0.80, 0.749)


def test_the_verdict_is_taken_on_the_figures_as_shown():
    """.8004 against .7502 shows 0.800 and 0.750: a difference of 0.050, on the limit, within;
    the raw difference .0502 would have said memorised beside numbers that say it is not."""
    found = compare("in-sample", 0.8004, "cross-fitted", 0.7502, MEMORISED)
    assert (found.value, found.other_value, found.difference) == (0.8, 0.75, 0.05)
    assert found.within and found.brief() == ""


def test_a_minimum_says_above_or_below_it_and_a_change_has_no_verdict():
    low = minimum("the raters' QWK", 0.612, 0.70, "the field's minimum", beyond="uncertain")
    assert (
        low.sentence
        == "the raters' QWK is 0.612, 0.088 below the field's minimum of 0.700: uncertain"
    )
    assert low.tag() == "the raters' QWK 0.612 < 0.70"
    high = minimum("the raters' QWK", 0.70, 0.70, "the field's minimum")
    assert high.within and high.tag() == "" and "the same as the field's minimum" in high.sentence
    change = compare("kappa now", 0.668, "the run before", 0.675)
    assert change.within is None and "(" not in change.sentence
    assert change.change() == "0.675 → 0.668 (−0.007)"
    assert compare("kappa now", 0.5, "before", 0.5).change() == "0.500 (same)"
    assert compare("kappa", None, "x", 0.5).sentence == "kappa is not known"
    assert compare("kappa", float("nan"), "x", 0.5, MEMORISED).within is None


def test_shares_are_written_as_percentages_with_the_difference_in_points():
    limit = Limit(5.9, MARGIN, "its 95% margin", "no better", "they find disputes")
    found = compare("flagged", 0.543, "others", 0.435, limit, digits=1, percent=True)
    assert found.sentence == (
        "flagged is 54.3%, 10.8 points above others 43.5% (more than its 95% margin of 5.9 "
        "points: they find disputes)"
    )
    weak = compare("flagged", 0.255, "others", 0.253, limit, digits=1, percent=True)
    assert (
        weak.within is False
        and "(not more than its 95% margin of 5.9 points: no better)" in weak.sentence
    )


def test_a_limit_is_a_side_and_a_size_not_below_zero():
    with pytest.raises(ValueError):
        Limit(0.1, "sideways", "x", "y")
    with pytest.raises(ValueError):
        Limit(-0.1, SHORTFALL, "x", "y")


_NUMBER = r"(-?\d+\.\d+)"


@given(
    value=st.floats(-1, 1, allow_nan=False),
    other=st.floats(-1, 1, allow_nan=False),
    size=st.sampled_from([0.0, 0.05, 0.1, 0.25]),
    side=st.sampled_from([SHORTFALL, EXCESS, MARGIN]),
)
def test_every_sentence_agrees_with_its_own_numbers(value, other, size, side):
    """Read back from the sentence: the two figures, the difference and its direction, the
    limit; the difference is that of the two figures written, and the verdict's words follow
    the rule applied to it."""
    limit = Limit(size, side, "the limit", "beyond", "inside")
    found = compare("a", value, "b", other, limit)
    shown = re.fullmatch(rf"a is {_NUMBER}, (?:(\d+\.\d+) (above|below)|the same as) b "
                         rf"(?:of )?{_NUMBER}(.*)", found.sentence)  # fmt: skip
    assert shown, found.sentence
    a, gap, direction, b, verdict = shown.groups()
    signed = 0.0 if gap is None else float(gap) * (1 if direction == "above" else -1)
    assert round(float(a) - float(b), 3) == pytest.approx(signed, abs=1e-9)
    # A difference on the limit is within it, except for a margin, which must be passed.
    on = 1e-9
    rule = {SHORTFALL: signed >= -size - on, EXCESS: signed <= size + on,
            MARGIN: signed > size + on}[side]  # fmt: skip
    assert found.within is rule
    assert ("inside" in verdict) == found.within and ("beyond" in verdict) == (not found.within)
    if size and side != MARGIN:
        words = "within" in verdict or "is met" in verdict
        assert words == found.within and ("more than" in verdict) == (not found.within)


def test_the_flags_check_holds_its_level_where_flags_find_nothing_and_finds_a_real_difference():
    """Simulated second reads with known truth: where the flagged and the other scores are
    disputed equally often, the check says the flags pick out disputes in about 5% of files;
    where flagged scores are disputed 15 points more often, nearly always."""
    from engine.outputs.report.flag_check import share_margin

    rng = np.random.default_rng(0)

    def found(shift: float, files: int = 2000) -> float:
        hits = 0
        for _ in range(files):
            flags = np.zeros(1000, dtype=bool)
            flags[:150] = True
            disputes = rng.random(1000) < np.where(flags, 0.4 + shift, 0.4)
            p1, p2, margin = share_margin(flags, disputes)
            hits += p1 - p2 > margin
        return hits / files

    assert 0.03 < found(0.0) < 0.07  # a one-sided 5% level: the binomial sd is .005
    assert found(0.15) > 0.95
