"""One item's reads (engine/audit/reads/item_reads.py): checked on construction, and every pair of reads
that share an answer."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.audit.reads.item_reads import ItemReads, read_counts, read_pairs
from engine.core.errors import DataError


def test_a_rater_reading_one_answer_twice_is_named():
    with pytest.raises(DataError, match="rater 1 reads answer 2 more than once"):
        ItemReads([0, 2, 2, 1], [0, 1, 1, 0], [0, 1, 0, 1], 3, 2, True)


@pytest.mark.parametrize(
    ("answer", "score", "message"),
    [([0, 3], [0, 1], "answer 3"), ([0, 1], [0, 2], "score 2"), ([0, -1], [0, 1], "answer -1")],
)
def test_codes_out_of_range_are_named(answer, score, message):
    with pytest.raises(DataError, match=message):
        ItemReads(answer, [0, 1], score, 3, 2, True)


def test_values_must_give_one_value_per_code():
    with pytest.raises(DataError, match="values"):
        ItemReads([0], [0], [1], 1, 3, True, values=[0.0, 1.0])


def test_read_pairs_are_every_pair_of_reads_of_an_answer():
    rng = np.random.default_rng(1)
    answer, rater = [], []
    for u in range(50):
        count = int(rng.integers(0, 5))
        answer += [u] * count
        rater += rng.choice(6, count, replace=False).tolist()
    score = rng.integers(0, 4, len(answer))
    reads = ItemReads(answer, rater, score, 50, 4, True)
    found = read_pairs(reads)
    got = sorted(zip(found.unit, found.rater_a, found.rater_b, found.code_a, found.code_b,
                     found.reads))  # fmt: skip
    expected = []
    for u in range(50):
        mine = [j for j in range(len(answer)) if answer[j] == u]
        for i, j in itertools.combinations(mine, 2):
            (ra, ca), (rb, cb) = sorted([(rater[i], score[i]), (rater[j], score[j])])
            expected.append((u, ra, rb, ca, cb, len(mine)))
    assert got == sorted(expected)
    for a, b, span in found.groups():
        assert (found.rater_a[span] == a).all() and (found.rater_b[span] == b).all()
        assert np.all(np.diff(found.unit[span]) > 0)


def test_read_counts_and_added_reads():
    reads = ItemReads([0, 0, 1], [0, 1, 0], [2, 1, 0], 3, 3, True)
    assert read_counts(reads).tolist() == [[0, 1, 1], [1, 0, 0], [0, 0, 0]]
    more = reads.with_reads([1, 2], [2, 1], [0, 2])
    assert more.reads_per_answer().tolist() == [2, 2, 1]
    with pytest.raises(DataError):
        reads.with_reads([0], [1], [0])
