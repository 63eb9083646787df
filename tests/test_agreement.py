"""The agreement of a multi-read session (engine/audit/reads/agreement.py, alpha.py, resample.py):
Krippendorff's alpha against the `krippendorff` package, the pair figures against
scikit-learn, the session's pooling, the marks, and the intervals' coverage in simulation."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from helpers import read_design, simulated_reads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, cohen_kappa_score

from engine.audit.reads.agreement import ALL, TOO_FEW, agreement
from engine.audit.reads.item_reads import ItemReads

PRIOR4 = np.array([0.2, 0.3, 0.3, 0.2])


def random_design(seed: int, ordered: bool = True) -> ItemReads:
    """Answers read 0 to 4 times by 2-6 raters, 2-7 codes, uneven values in points."""
    rng = np.random.default_rng(seed)
    raters, classes = int(rng.integers(2, 7)), int(rng.integers(2, 8))
    n = int(rng.integers(5, 120))
    answer, rater = [], []
    for u in range(n):
        count = int(rng.integers(0, min(raters, 4) + 1))
        answer += [u] * count
        rater += rng.choice(raters, count, replace=False).tolist()
    score = rng.integers(0, classes, len(answer))
    if len(answer) > 3:  # agreement above chance: half the reads copy the answer's first
        first = {}
        for j, u in enumerate(answer):
            first.setdefault(u, score[j])
            score[j] = first[u] if rng.random() < 0.5 else score[j]
    values = np.sort(rng.choice(np.arange(0, 40) / 4, classes, replace=False))
    return ItemReads(answer, rater, score, n, classes, ordered, values, f"design {seed}")


def reliability_data(reads: ItemReads) -> np.ndarray:
    """The package's raters x units matrix of values, NaN where a rater did not read a unit."""
    data = np.full((int(reads.rater.max()) + 1, reads.n_answers), np.nan)
    data[reads.rater, reads.answer] = reads.points[reads.score]
    return data


@pytest.mark.parametrize("seed", range(40))
def test_alpha_equals_the_krippendorff_package_at_every_level(seed):
    reads = random_design(seed)
    found = agreement([reads], samples=0).alpha[0].levels
    data = reliability_data(reads)
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(data, level_of_measurement=level)
        assert found[level].estimate == pytest.approx(expected, abs=1e-9)


def test_nominal_labels_have_nominal_alpha_only():
    reads = random_design(3, ordered=False)
    result = agreement([reads], samples=0)
    assert set(result.alpha[0].levels) == {"nominal"}
    assert result.alpha[0].levels["nominal"].estimate == pytest.approx(
        krippendorff.alpha(reliability_data(reads), level_of_measurement="nominal"), abs=1e-9
    )
    assert all(set(p.figures) == {"exact", "kappa"} for p in result.pairs)


def shared_codes(reads: ItemReads, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    data = np.full((int(reads.rater.max()) + 1, reads.n_answers), -1)
    data[reads.rater, reads.answer] = reads.score
    both = (data[a] >= 0) & (data[b] >= 0)
    return data[a][both], data[b][both]


def test_pair_figures_equal_scikit_learn():
    rng = np.random.default_rng(4)
    reads, _ = simulated_reads(rng, 400, np.array([0.9, 0.7, 0.6, 0.8]), PRIOR4)
    result = agreement([reads], samples=0)
    item_pairs = [p for p in result.pairs if p.item == ""]
    assert len(item_pairs) == 6
    labels = list(range(4))
    for pair in item_pairs:
        a, b = shared_codes(reads, pair.rater_a, pair.rater_b)
        assert pair.n == a.size
        figures = {name: interval.estimate for name, interval in pair.figures.items()}
        assert figures["exact"] == pytest.approx(accuracy_score(a, b), abs=1e-12)
        assert figures["adjacent"] == pytest.approx(np.mean(np.abs(a - b) <= 1), abs=1e-12)
        assert figures["kappa"] == pytest.approx(cohen_kappa_score(a, b, labels=labels), 1e-12)
        qwk = cohen_kappa_score(a, b, labels=labels, weights="quadratic")
        assert figures["qwk"] == pytest.approx(qwk, abs=1e-12)


def test_qwk_measures_distance_over_the_whole_scale():
    # Code 1 is never used: 0 and 2 are still two steps apart, as labels=range(C+1) says.
    answer, rater = np.repeat(np.arange(30), 2), np.tile([0, 1], 30)
    score = np.where(np.arange(60) % 4 == 3, 0, 2) * (np.arange(60) % 3 > 0)
    reads = ItemReads(answer, rater, score, 30, 3, True)
    a, b = shared_codes(reads, 0, 1)
    qwk = agreement([reads], samples=0).pairs[0].figures["qwk"].estimate
    expected = cohen_kappa_score(a, b, labels=[0, 1, 2], weights="quadratic")
    assert qwk == pytest.approx(expected, abs=1e-12)


def test_pairs_under_twenty_shared_answers_are_too_few():
    rng = np.random.default_rng(5)
    reads, _ = simulated_reads(rng, 60, np.array([0.9, 0.8, 0.7, 0.6, 0.9, 0.8]), PRIOR4, (2,))
    pairs = [p for p in agreement([reads], samples=0).pairs if p.item == ""]
    assert all(p.too_few == (p.n < TOO_FEW) for p in pairs)
    assert any(p.too_few for p in pairs)


def test_figures_under_rsmtool_thresholds_are_marked():
    # Rater 1 copies rater 0 on 45% of answers and is two steps off on the rest.
    n = 200
    first = np.arange(n) % 5
    second = np.where(np.arange(n) % 20 < 9, first, (first + 2) % 5)
    reads = ItemReads(np.repeat(np.arange(n), 2), np.tile([0, 1], n),
                      np.column_stack([first, second]).ravel(), n, 5, True)  # fmt: skip
    pair = agreement([reads], samples=0).pairs[0]
    assert pair.figures["exact"].estimate == pytest.approx(0.45)
    assert set(pair.below) == {"exact", "adjacent", "qwk"}
    close = reads.with_reads([], [], [])
    agree = ItemReads(close.answer, close.rater, np.repeat(first, 2), n, 5, True)
    assert agreement([agree], samples=0).pairs[0].below == ()


def test_session_pair_is_its_items_weighted_by_shared_answers():
    rng = np.random.default_rng(6)
    accuracy = np.array([0.9, 0.6, 0.75])
    one, _ = simulated_reads(rng, 150, accuracy, PRIOR4, name="one")
    two, _ = simulated_reads(rng, 90, accuracy, np.array([0.5, 0.3, 0.2]), name="two")
    result = agreement([one, two], samples=0)
    for a, b in ((0, 1), (0, 2), (1, 2)):
        rows = {p.item: p for p in result.pairs if (p.rater_a, p.rater_b) == (a, b)}
        n = np.array([rows["one"].n, rows["two"].n])
        assert rows[ALL].n == n.sum()
        for name in ("exact", "adjacent", "kappa", "qwk"):
            items = np.array(
                [rows["one"].figures[name].estimate, rows["two"].figures[name].estimate]
            )
            assert rows[ALL].figures[name].estimate == pytest.approx(np.sum(n * items) / n.sum())
        exact = [shared_codes(r, a, b) for r in (one, two)]
        pooled = np.mean(np.concatenate([x == y for x, y in exact]))
        assert rows[ALL].figures["exact"].estimate == pytest.approx(pooled)


def session_data(items: list[ItemReads], keys: list[np.ndarray]) -> np.ndarray:
    """The package's raters x units matrix of every item's answers side by side, each read's
    value its code's key (its points, or its label's number on the pooled scale)."""
    raters = max(int(r.rater.max()) for r in items) + 1
    parts = []
    for reads, key in zip(items, keys):
        data = np.full((raters, reads.n_answers), np.nan)
        data[reads.rater, reads.answer] = key[reads.score]
        parts.append(data)
    return np.concatenate(parts, axis=1)


def test_session_alpha_is_krippendorffs_alpha_over_every_unit():
    rng = np.random.default_rng(7)
    accuracy = np.array([0.9, 0.6, 0.75, 0.8])
    one, _ = simulated_reads(rng, 150, accuracy, PRIOR4, name="one",
                             values=np.array([0.0, 0.5, 1.0, 1.5]))  # fmt: skip
    two, _ = simulated_reads(rng, 90, accuracy, np.array([0.5, 0.3, 0.2]), name="two",
                             values=np.array([0.0, 1.0, 1.5]))  # fmt: skip
    alpha = agreement([one, two], samples=0).alpha
    assert [a.item for a in alpha] == ["one", "two", ALL]
    assert alpha[2].values == alpha[0].values + alpha[1].values
    data = session_data([one, two], [one.points, two.points])
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(data, level_of_measurement=level)
        assert alpha[2].levels[level].estimate == pytest.approx(expected, abs=1e-9)


def test_session_alpha_pools_text_labels_by_label():
    rng = np.random.default_rng(17)
    accuracy = np.array([0.9, 0.6, 0.75])
    one, _ = simulated_reads(rng, 80, accuracy, np.full(3, 1 / 3), ordered=False, name="one")
    two, _ = simulated_reads(rng, 70, accuracy, np.full(3, 1 / 3), ordered=False, name="two")
    labels = [("correct", "incorrect", "partial"), ("contradictory", "correct", "incorrect")]
    found = agreement([one, two], samples=0, labels=labels).alpha[2].levels["nominal"]
    number = {"contradictory": 0, "correct": 1, "incorrect": 2, "partial": 3}
    keys = [np.array([number[x] for x in item], dtype=float) for item in labels]
    expected = krippendorff.alpha(session_data([one, two], keys), level_of_measurement="nominal")
    assert found.estimate == pytest.approx(expected, abs=1e-9)


def test_a_session_of_nominal_and_ordered_items_reports_what_every_item_allows():
    rng = np.random.default_rng(8)
    accuracy = np.array([0.9, 0.6, 0.75])
    ordered, _ = simulated_reads(rng, 100, accuracy, PRIOR4, name="ordered")
    nominal, _ = simulated_reads(rng, 100, accuracy, PRIOR4, ordered=False, name="nominal")
    result = agreement([ordered, nominal], samples=0)
    assert set(result.alpha[-1].levels) == {"nominal"}
    assert all(set(p.figures) == {"exact", "kappa"} for p in result.pairs if p.item == ALL)


def test_intervals_repeat_with_the_seed_and_change_with_another():
    rng = np.random.default_rng(9)
    reads, _ = simulated_reads(rng, 200, np.array([0.9, 0.6, 0.75]), PRIOR4)
    first, again, other = (agreement([reads], 100, seed) for seed in (3, 3, 4))
    assert first == again
    assert first.alpha[0].levels["ordinal"] != other.alpha[0].levels["ordinal"]
    for pair in first.pairs:
        for interval in pair.figures.values():
            assert interval.low <= interval.estimate <= interval.high


@pytest.mark.slow
def test_intervals_cover_95_percent_in_simulation():
    """Every figure's interval, on 300 answers read 2-3 times by 4 raters (a pair shares about
    100), covers the population value (the figure on 300,000 answers) 95 +- 3% of 600 times."""
    rng = np.random.default_rng(10)
    accuracy = np.array([0.9, 0.8, 0.7, 0.6])
    values = np.array([0.0, 1.0, 2.5, 3.0])

    def figures(reads):
        result = agreement([reads], samples=200, seed=int(rng.integers(1 << 30)))
        pair = next(p for p in result.pairs if (p.rater_a, p.rater_b, p.item) == (0, 1, ""))
        alpha = {f"alpha {k}": v for k, v in result.alpha[0].levels.items()}
        return {**pair.figures, **alpha}

    population = simulated_reads(rng, 300_000, accuracy, PRIOR4, values=values)[0]
    truth = {k: v.estimate for k, v in figures(population).items()}
    hits = dict.fromkeys(truth, 0)
    runs = 600
    for _ in range(runs):
        found = figures(simulated_reads(rng, 300, accuracy, PRIOR4, values=values)[0])
        for name, interval in found.items():
            hits[name] += interval.low <= truth[name] <= interval.high
    coverage = {name: count / runs for name, count in hits.items()}
    assert all(abs(c - 0.95) <= 0.03 for c in coverage.values()), coverage


def test_shares_of_one_have_an_upper_bound_of_exactly_one():
    # On two codes every pair of reads is adjacent: the share is 1 and so is its upper bound
    # (the Wilson formula itself rounds to 1 - 1e-16 at some n, 34 for one).
    for n in range(20, 120):
        answer, rater = np.repeat(np.arange(n), 2), np.tile([0, 1], n)
        reads = ItemReads(answer, rater, np.arange(2 * n) % 3 % 2, n, 2, True)
        adjacent = agreement([reads], samples=0).pairs[0].figures["adjacent"]
        assert adjacent.estimate == 1.0 and adjacent.high == 1.0 and adjacent.low < 1.0


# Random designs: 1-3 items of 2-200 answers, 1-4 reads, half points, 0-3, binary, nominal.
DESIGNS = st.tuples(st.integers(0, 2**31), st.integers(2, 200), st.integers(1, 4),
                    st.sampled_from(["half points", "0-3", "binary", "nominal"]))  # fmt: skip
PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SHARE_NAMES = ("exact", "adjacent")


def _in_range(name: str, interval) -> None:
    low, high = (0.0, 1.0) if name in SHARE_NAMES else (-1.0, 1.0)
    if not np.isfinite(interval.estimate):
        return
    assert low <= interval.estimate <= high, (name, interval)
    if np.isfinite(interval.low) or np.isfinite(interval.high):
        assert low <= interval.low <= interval.estimate <= interval.high <= high, (name, interval)


@PROPERTY
@given(st.lists(DESIGNS, min_size=1, max_size=3))
def test_every_figure_and_interval_is_in_range_and_contains_its_estimate(designs):
    items, labels = [], []
    for j, (seed, n, reads, scale) in enumerate(designs):
        item, item_labels = read_design(seed, n, reads, scale, name=f"item {j}")
        items.append(item)
        labels.append(item_labels)
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # no overflow, no 0 / 0
        result = agreement(items, samples=20, seed=2, labels=labels)
    for pair in result.pairs:
        for name, interval in pair.figures.items():
            _in_range(name, interval)
    for alpha in result.alpha:
        for interval in alpha.levels.values():
            _in_range("alpha", interval)


def test_the_weighted_mean_leaves_out_infinite_figures_without_a_numpy_warning():
    """An infinite figure is left out as a NaN is (it once overflowed the product and printed
    numpy's RuntimeWarning in `parm audit`'s output on Mohler's file)."""
    import warnings

    from engine.audit.resample import weighted_mean

    figures = np.array([[1.0, np.inf], [3.0, np.nan], [np.inf, 2.0]])
    weights = np.array([[1.0, 1e10], [3.0, 2.0], [1e300, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mean = weighted_mean(figures, weights, axis=0)
    np.testing.assert_allclose(mean, [(1.0 + 9.0) / 4.0, 2.0])
