"""engine.results.lead: the cross-fitted figure leads, the in-sample one stands beside it, and
the warnings (memorised: in-sample more than .05 above; too small: under ten answers per score
value used) appear exactly where their rules say."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.results.figures import ItemFigures, RunFigures
from engine.results.lead import (
    item_lead,
    lead_text,
    lead_warnings,
    memorised,
    run_lead,
    session_model_lead,
    too_small,
)


@pytest.mark.parametrize(
    ("in_sample", "cross_fitted", "warned"),
    [(0.80, 0.74, True), (0.80, 0.76, False), (0.80, 0.75, False), (0.79, 0.06, True),
     (0.50, 0.60, False), (0.80, None, False), (float("nan"), 0.1, False)],
)  # fmt: skip
def test_memorised_only_when_in_sample_exceeds_cross_fitted_by_more_than_the_gap(
    in_sample, cross_fitted, warned
):
    assert memorised(in_sample, cross_fitted) is warned
    text = lead_text("kappa", cross_fitted, in_sample)
    assert ("⚠" in text) is warned


@pytest.mark.parametrize(
    ("counts", "small"),
    [([5, 5, 6, 6, 6], True), ([10, 10, 10, 10, 19], False), ([12, 12, 12, 12, 12], False),
     ([60, 60, 60, 20], False), ([1, 26], True), ([0, 2, 0, 27], True), ([10, 10], False),
     ([9, 200], True), ([5], False), ([], False), ([1, 4, 9, 2, 12], True)],
)  # fmt: skip
def test_an_item_is_too_small_under_ten_answers_per_score_value_beyond_the_most_common(
    counts, small
):
    """Mohler's 9.2 (26 fives and one 2) and 1.4 (27 fives, two 0s) are too small; so is every
    item under ten answers per score value used, the rule's looser form; a large item with one
    rare score is not (200 and 9: 9 answers for the one value beyond the most common)."""
    assert too_small(counts) is small
    used = [c for c in counts if c]
    if len(used) >= 2 and sum(used) < 10 * len(used):  # the looser rule never marks more
        assert too_small(counts)


def test_the_lead_text_puts_the_cross_fitted_figure_first_and_labels_both():
    text = lead_text("kappa", 0.061, 0.793)
    assert text.startswith("kappa 0.061 cross-fitted (in-sample 0.793")
    assert "⚠ 0.732 above, more than 0.05: memorised" in text
    assert lead_text("kappa", None, 0.5) == "kappa 0.500 in-sample (no cross-fitting)"
    # The session model's in-sample decision of a read is given the answer's other reads where
    # it has any: information, not memorisation, so no warning.
    given = lead_text("QWK", 0.658, 0.877, given_reads=True)
    assert given == "QWK 0.658 cross-fitted (0.877 given each answer's other reads)"


def test_a_runs_headline_leads_with_the_pooled_cross_fitted_figures():
    item = ItemFigures("A", 28, 3, 1.0, 1.0, 5, 1.0)
    figures = RunFigures(28, 3, 0.79, 0.86, (item,), 0.35, 0.83, 0.55, 0.70)
    kappa, qwk = run_lead(figures)
    assert kappa.startswith("kappa 0.350 cross-fitted (in-sample 0.790 ⚠")
    assert qwk.startswith("QWK 0.830 cross-fitted (in-sample 0.860)")  # .03: no warning
    assert session_model_lead(figures).startswith("session model QWK 0.550 cross-fitted")
    assert "⚠ 0.150 above, more than 0.05: memorised" in session_model_lead(figures)
    plain = RunFigures(28, 3, 0.79, 0.86, (item,))
    assert session_model_lead(plain) is None
    assert run_lead(plain)[0] == "kappa 0.790 in-sample (no cross-fitting)"


def test_run_figures_saved_before_the_cross_fitted_headline_read_back_without_it():
    item = ItemFigures("A", 28, 3, 1.0, 1.0, 5, 1.0)
    values = RunFigures(28, 3, 0.79, 0.86, (item,)).to_dict()
    for key in ("cross_kappa", "cross_qwk", "session_model", "session_model_in_sample"):
        del values[key]
    figures = RunFigures.from_dict(values)
    assert figures.cross_kappa is None and figures.session_model is None
    full = RunFigures(28, 3, 0.79, 0.86, (item,), 0.35, 0.83, 0.55, 0.7)
    assert RunFigures.from_dict(full.to_dict()) == full


def test_lead_warnings_name_the_items_once_per_kind():
    rows = [("q1", [5, 5, 6, 6, 6], 1.0, 0.06), ("q2", [50] * 4, 0.70, 0.68),
            ("q3", [6] * 5, 0.9, None), ("q4", [20, 20], 0.5, 0.3), ("q5", [1, 24], 0.8, 0.7),
            ("q6", [6, 6, 7, 7], 0.8, 0.8)]  # fmt: skip
    small, learnt = lead_warnings(rows)
    assert small.startswith("4 of 6 item(s) ('q1', 'q3', 'q5' and 1 more) have fewer than 10")
    assert learnt.startswith("3 of 6 item(s) ('q1', 'q4', 'q5') show an in-sample kappa")
    assert lead_warnings([("q2", [50] * 4, 0.70, 0.68)]) == []


def test_an_items_headline_shows_no_in_sample_figure_where_the_item_is_too_small():
    """Mohler item 6.4: 26 answers on 6 score values, in-sample kappa 1.000 (interval 1.000 to
    1.000) beside a cross-fitted -0.266: the in-sample figure is not shown, the item is labelled
    too small with the minimum it misses."""
    from engine.results.overview import ItemSummary

    counts = {"0": 3, "1": 2, "2": 6, "3": 5, "4": 4, "5": 6}
    tiny = ItemSummary("6.4", 26, counts, kappa=1.0, qwk=1.0, cross_fit_kappa=-0.266,
                       cross_fit_qwk=-0.378, cross_fit_accuracy=0.385, values_used=6)  # fmt: skip
    parts = item_lead(tiny)
    assert parts[0] == "kappa -0.266 cross-fitted (in-sample: too small)"
    assert parts[1] == "QWK -0.378 cross-fitted (in-sample: too small)"
    assert parts[2] == "exact agreement 38.5% cross-fitted"
    assert parts[-1] == ("⚠ too small to judge: 26 answers, 20 of them outside the most common "
                         "score, for 5 other score values, under the 50 a fit needs (10 per "
                         "value: 3 parameters each)")  # fmt: skip
    assert not any("1.000" in part for part in parts)
    assert tiny.warning == parts[-1].removeprefix("⚠ ")  # items.csv and report.json say the same
    big = replace(tiny, n=600, score_counts={k: 100 for k in counts})
    assert item_lead(big)[0] == ("kappa -0.266 cross-fitted (in-sample 1.000 ⚠ 1.266 above, "
                                 "more than 0.05: memorised)")  # fmt: skip
    assert big.warning == "in-sample 1.266 above cross-fitted, more than 0.05: memorised (kappa)"


def test_a_rerun_is_compared_on_the_cross_fitted_figures_where_both_runs_have_them():
    from engine.results.figures import figure_changes

    before = ItemFigures("A", 28, 3, 0.90, 0.95, 5, 1.0, cross_kappa=0.30, cross_qwk=0.40)
    now = ItemFigures("A", 28, 2, 0.99, 0.99, 10, 1.0, cross_kappa=0.25, cross_qwk=0.45)
    changes = {c.name: c for c in figure_changes(now, before)}
    assert changes["kappa"].how == "cross-fitted" and changes["kappa"].before == 0.30
    assert changes["kappa"].comparison().change() == "0.300 → 0.250 (−0.050)"
    assert changes["qwk"].comparison().change() == "0.400 → 0.450 (+0.050)"
    old = replace(before, cross_kappa=None, cross_qwk=None)  # a run saved before them
    changes = {c.name: c for c in figure_changes(now, old)}
    assert changes["kappa"].how == "in-sample" and changes["kappa"].before == 0.90
    runs = [RunFigures(28, 3, 0.9, 0.95, (item,), 0.3, 0.4) for item in (before, now)]
    pooled = {c.name: c for c in figure_changes(runs[1], runs[0])}
    assert pooled["kappa"].how == "cross-fitted" and pooled["top_k"].now == 10
    assert ItemFigures.__dataclass_fields__["cross_kappa"].default is None
    saved = RunFigures(28, 2, 0.9, 0.95, (now,), 0.3, 0.4).to_dict()
    assert RunFigures.from_dict(saved).items[0] == now


def test_a_file_without_items_is_named_as_the_file_not_as_an_empty_item():
    small, learnt = lead_warnings([(None, [30, 6, 2, 1, 1], 0.79, 0.24)])
    assert small.startswith("The file has fewer than 10 answers per score value it uses beyond "
                            "its most common one: the fit memorises them")  # fmt: skip
    assert learnt.startswith("The file shows an in-sample kappa more than 0.05 above")
    assert "('')" not in small + learnt
