"""engine.results.headline: one item's headline, the same parts in the CLI's line, the Results
screen and report.html, on items read once and twice, with and without a PRMSE, with ordered
scores and unordered text labels, large enough and too small."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import run_frame, session_config, session_frame

from engine.outputs.report.html_items import _headline
from engine.outputs.report.reads_outputs import agreement_dict
from engine.results.headline import NOMINAL_NOTE, SMALL_MARK, item_headline
from engine.results.lead import item_lead
from parm_tui.widgets.metrics import item_lead as screen_lead

WORDS = ("wrong", "partial", "right")


@pytest.fixture(scope="module")
def mixed():
    """Items A (60 answers, 3 scores) and B (12) read twice, C (60) read once, cross-fitted;
    and the same answers, read once, scored with words of no stated order (2-3 s)."""
    frame, vectors = session_frame(items=(("A", 60, 3), ("B", 12, 3), ("C", 60, 3)), seed=3)
    rng = np.random.default_rng(4)
    second = [
        "" if item == "C" else str((int(s) + (rng.random() < 0.2)) % 3)
        for item, s in zip(frame["item"], frame["score"])
    ]
    frame["score2"] = second
    read = run_frame(
        frame, vectors, session_config(second_score_column="score2", cross_fit_folds=3)
    )
    words = frame.drop(columns="score2").assign(score=[WORDS[int(s)] for s in frame["score"]])
    nominal = run_frame(words, vectors, session_config(cross_fit_folds=3))
    return read, nominal


def _by_item(session):
    return {r.responses.item: item_headline(session, k) for k, r in enumerate(session.results)}


def test_the_figures_are_the_leads_and_the_flagged_count_the_results(mixed):
    for session in mixed:
        for k, result in enumerate(session.results):
            headline = item_headline(session, k)
            parts = item_lead(session.overview[k])
            assert list(headline.figures) == [p for p in parts if not p.startswith(SMALL_MARK)]
            flagged = int(result.flagged.sum())
            assert headline.flagged.startswith(f"{flagged:,} of {len(result.responses):,} ")
            assert headline.item == result.responses.item


def test_an_item_read_twice_leads_with_its_prmse_and_says_why_when_it_has_none(mixed):
    read, _ = mixed
    found = _by_item(read)
    fits = {p["item"]: p for p in agreement_dict(read)["prmse"]}
    figure = re.fullmatch(
        r"PRMSE (-?\d\.\d{3}) \((-?\d\.\d{3}) to (-?\d\.\d{3})\).*", found["A"].reads
    )
    estimate, low, high = (float(g) for g in figure.groups())
    assert low <= estimate <= high <= 1.0
    assert estimate == pytest.approx(fits["A"]["prmse"]["estimate"], abs=5e-4)
    assert found["B"].reads == f"PRMSE not estimable: {fits['B']['reason']}"
    assert "20 needed" in found["B"].reads
    assert found["C"].reads == f"PRMSE not estimable: {fits['C']['reason']}"  # read once


def test_a_session_read_once_has_no_prmse_and_word_labels_say_why_qwk_is_missing(mixed):
    read, nominal = mixed
    for headline in _by_item(nominal).values():
        assert headline.reads is None
        assert headline.nominal == NOMINAL_NOTE
        assert not any(part.startswith("QWK") for part in headline.figures)
        assert NOMINAL_NOTE in headline.line()
    assert all(h.nominal is None for h in _by_item(read).values())


def test_a_too_small_item_carries_its_label_apart_from_its_figures(mixed):
    read, _ = mixed
    found = _by_item(read)
    assert read.overview[1].small and found["B"].small.startswith("too small to judge: 12 ")
    assert found["A"].small is None
    assert found["B"].line().count(SMALL_MARK + found["B"].small) == 1


def test_the_cli_the_screen_and_the_report_show_the_same_parts(mixed):
    for session in mixed:
        for k, result in enumerate(session.results):
            headline = item_headline(session, k)
            line = headline.line()
            assert line.startswith(f"Item {result.responses.item}: Selected: {headline.selected}. ")
            assert line.endswith(headline.flagged + ".")
            shown = screen_lead(headline).plain
            page = _headline(result, headline)
            for part in headline.findings():
                assert part in line and part in page["text"]
            for part in (*headline.figures, *filter(None, [headline.reads])):
                assert part in shown
            if headline.small:
                assert headline.small in shown and page["below"] == [headline.small]
