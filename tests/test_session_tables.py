"""The session's tables on the Results screen (parm_tui/widgets/session_tables.py): the ▲ and ▼
of leniency follow the verdict's rule, not the interval; each verdict's rule is written out;
a row knows what it opens."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import audit_planted, planted_session

from parm_tui.widgets.session_tables import leniency_cell, rater_rule


@pytest.fixture(scope="module")
def raters():
    frame, vectors = planted_session(seed=2, per_item=400)
    return {r.rater: r for r in audit_planted(frame, vectors).raters.rows}


def test_the_leniency_marker_follows_the_verdict_not_the_interval(raters):
    lenient, harsh, fine = raters["r4"], raters["r5"], raters["r1"]
    assert "lenient" in lenient.verdict and str(leniency_cell(lenient, False)).endswith("▲")
    assert "harsh" in harsh.verdict and str(leniency_cell(harsh, False)).endswith("▼")
    # An interval clear of zero without the verdict's rule (|z| >= 3) gets no marker.
    clear = replace(fine, leniency=0.2, leniency_low=0.05, leniency_high=0.35)
    assert str(leniency_cell(clear, True)) == "+0.20 (+0.05 to +0.35)"


def test_each_verdict_is_written_with_the_figures_that_gave_it(raters):
    rule = str(rater_rule(raters["r4"]))
    verdicts = raters["r4"].effects.verdicts
    assert rule == "r4: " + " · ".join(f"{v.name} ({v.because})" for v in verdicts)
    assert str(rater_rule(raters["r1"])) == "r1: fine, no rule holds"


def test_the_items_warning_cell_marks_a_small_item_or_a_memorised_fit():
    from engine.results.overview import ItemSummary
    from parm_tui.widgets.session_tables import warning_cell

    # Too small: its in-sample figures are not shown, so the note says small, not memorised.
    counts = {"0": 3, "1": 5, "2": 5, "3": 5, "4": 5, "5": 5}
    small = ItemSummary("q", 28, counts, kappa=0.9, cross_fit_kappa=0.1, values_used=6)
    assert str(warning_cell(small)) == "⚠ small"
    fine = replace(small, n=240, score_counts={k: 40 for k in counts}, kappa=0.62,
                   cross_fit_kappa=0.58)  # fmt: skip
    assert str(warning_cell(fine)) == ""
    assert str(warning_cell(replace(fine, qwk=0.9, cross_fit_qwk=0.8))) == "⚠ memorised"
    assert str(warning_cell(replace(fine, score_counts={"0": 9, "1": 200}))) == "⚠ small"
    assert small.warning.startswith("too small to judge: 28 answers, 23 of them outside the")
    memorised = replace(fine, kappa=0.9, cross_fit_kappa=0.1)
    assert (
        memorised.warning == "in-sample 0.800 above cross-fitted, more than 0.05: memorised (kappa)"
    )


def test_the_items_pair_column_says_whose_reads_it_compares():
    """Powergrading (three graders): the Items tab's raters' column gave G1 and G2's kappa
    unnamed while the summary named the least-agreeing pair, G1 and G3; the note under the
    table names the two reads and sends a lead to the Raters tab for the other pairs."""
    from types import SimpleNamespace as Namespace

    import numpy as np

    from parm_tui.widgets.session_tables import PAIR_HEADER, pair_note

    def session(names: list[str], raters: tuple[str, ...], kappa=0.7):
        reads = Namespace(rater=np.array(names * 4), rank=lambda: np.tile(range(len(names)), 4))
        return Namespace(
            overview=[Namespace(human_kappa=kappa)],
            second_reads=kappa is not None,  # SessionResult.second_reads of that overview
            results=[Namespace(responses=Namespace(reads=reads))],
            reads=Namespace(raters=raters),
        )

    three = pair_note(session(["G1", "G2", "G3"], ("G1", "G2", "G3")))
    assert three == (f"{PAIR_HEADER}: Cohen's kappa of G1's reads against G2's reads; "
                     "3 raters read: every pair's agreement is in the Raters tab.")  # fmt: skip
    two = pair_note(session(["Score1", "Score2"], ("Score1", "Score2")))
    assert two == f"{PAIR_HEADER}: Cohen's kappa of Score1's reads against Score2's reads."
    # Many raters sharing each place: the places, not a name.
    shared = session(["a", "b"], ("a", "b", "c"))
    shared.results[0].responses.reads.rater = np.array(["a", "b", "b", "c"] * 2)
    assert pair_note(shared).startswith(f"{PAIR_HEADER}: Cohen's kappa of the first reads against")
    assert pair_note(session(["G1", "G2"], ("G1", "G2"), kappa=None)) is None
