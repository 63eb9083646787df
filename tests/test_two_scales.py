"""Reads on two scales (engine.input.labels.two_scales): a sum or resolved score beside one
rater's is found, two raters of one rubric never are, however harsh, central or noisy one of
them; the guess pairs two raters' columns instead of a sum and a rater's (ASAP essays), and a
second score named on another scale is warned about."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.input.guess import guess_columns
from engine.input.labels import two_scales
from engine.input.responses import responses_from_frame
from engine.input.settings.config import config_from_dict


def raters(seed: int, top: int, n: int = 400):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, top + 1, n)
    first = np.clip(truth + rng.integers(-1, 2, n) * (rng.random(n) < 0.3), 0, top)
    second = np.clip(truth + rng.integers(-1, 2, n) * (rng.random(n) < 0.3), 0, top)
    return rng, truth, first.astype(float), second.astype(float)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1, 2, 3, 4, 5, 6, 12, 25]))
def test_two_raters_of_one_rubric_are_never_two_scales(seed, top):
    rng, truth, first, second = raters(seed, top)
    harsh = np.clip(second - (rng.random(truth.size) < 0.6), 0, top)
    central = np.clip(np.round((second + top / 2) / 2), 0, top)
    never_top = np.minimum(second, top - 1) if top > 1 else second
    for other in (second, harsh, central, never_top):
        assert not two_scales(list(first), list(other)), (seed, top)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([4, 5, 6, 12, 25]))
def test_a_sum_of_two_raters_beside_one_of_them_is_two_scales(seed, top):
    _, _, first, second = raters(seed, top)
    first, second = first + 1, second + 1  # ASAP essays' raters start at 1
    assert two_scales(list(first + second), list(first))
    assert two_scales(list(first), list(first + second))


def essays(n: int = 60) -> pd.DataFrame:
    """ASAP essays' layout: two raters on 1-6 and domain1_score, their sum (2-12)."""
    rng = np.random.default_rng(3)
    truth = rng.integers(1, 7, n)
    one = np.clip(truth + (rng.random(n) < 0.2), 1, 6)
    two = np.clip(truth - (rng.random(n) < 0.2), 1, 6)
    return pd.DataFrame({
        "essay_id": [str(i) for i in range(n)],
        "essay": [f"an essay about the summer {i}" for i in range(n)],
        "rater1_domain1": one.astype(str), "rater2_domain1": two.astype(str),
        "domain1_score": (one + two).astype(str),
    })  # fmt: skip


def test_the_guess_pairs_two_raters_not_their_sum_and_one_of_them():
    guessed = guess_columns(essays())
    assert (guessed["score"], guessed["second"]) == ("rater1_domain1", "rater2_domain1")
    same = essays().assign(domain1_score=lambda f: f["rater1_domain1"])  # resolved on one scale
    guessed = guess_columns(same)
    assert (guessed["score"], guessed["second"]) == ("domain1_score", "rater1_domain1")


def test_a_second_score_on_another_scale_is_warned_about():
    config = config_from_dict(
        {"text_column": "essay", "score_column": "domain1_score",
         "second_score_column": "rater1_domain1", "id_column": "essay_id"}
    )  # fmt: skip
    note = next(w for w in responses_from_frame(essays(), config).warnings if "two scales" in w)
    assert "'domain1_score' (2 to 12" in note and "'rater1_domain1' (1 to 6" in note
    assert "of the 60 answers both score" in note
    config = config.updated(score_column="rater1_domain1", second_score_column="rater2_domain1")
    assert not any("two scales" in w for w in responses_from_frame(essays(), config).warnings)


DATA = Path(
    os.environ.get("PARM_DATA_ROOT", Path(__file__).resolve().parents[2] / "shared" / "data")
)


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is not beside the clone")
def test_on_the_real_files_the_guessed_reads_share_a_scale_and_the_essays_sums_do_not():
    files = sorted(DATA.glob("*/*.csv"))
    assert len(files) >= 15
    for path in files:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
        guessed = guess_columns(table)
        reads = [guessed["score"], guessed["second"], *(guessed["reads"] or [])]
        reads = list(dict.fromkeys(c for c in reads if c))
        for other in reads[1:]:
            a, b = (pd.to_numeric(table[c], errors="coerce") for c in (reads[0], other))
            both = a.notna() & b.notna()
            assert not two_scales(list(a[both]), list(b[both])), (path.name, other)
        if path.parent.name == "asap-aes" and path.name != "set2.csv":  # set 2: resolved, 1-6
            assert reads[:2] == ["rater1_domain1", "rater2_domain1"], path.name
