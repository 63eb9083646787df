"""engine.live.intake.session_reads and engine.live.alerts.figures: kinds guessed as documented; each item's, rater's
and the session's figures per period equal scikit-learn's on the same double reads; the kappa
variance matches a simulation's; the cache reuses exactly the periods whose reads are unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import live_config, live_reads
from sklearn.metrics import cohen_kappa_score

from engine.live.alerts import figures as figures_module
from engine.live.alerts.figures import double_reads, kappa_variance, session_cells
from engine.live.intake.reading import read_file_reads
from engine.live.intake.session_reads import from_rows, load_reads
from engine.live.intake.store import open_store
from engine.live.outputs import cell_row
from engine.model.metrics import cohen_kappa, confusion, quadratic_kappa


def session(tmp_path, frames):
    store = open_store(tmp_path / "s")
    for k, frame in enumerate(frames):
        reads = read_file_reads(frame, live_config(), f"d{k}", ("2026-05-01", ""))
        store.add(reads, f"d{k}", str(k), "run")
    return store


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    frames = live_reads(days=4, answers_per_day=20, seeds_per_rater=2, seed=5)
    with session(tmp_path_factory.mktemp("w"), frames) as store:
        reads = load_reads(store)
    return reads, double_reads(reads), session_cells(reads)[0]


def test_kinds_are_guessed_expert_scored_validity_then_earliest_first():
    rows = [("q", "a", "R1", "1", "", "2026-05-01", "am", 10.0, ""),
            ("q", "a", "R2", "2", "", "2026-05-01", "am", 20.0, ""),
            ("q", "a", "R3", "2", "backread", "2026-05-02", "", 30.0, ""),
            ("q", "b", "R1", "0", "", "2026-05-01", "", None, "0"),
            ("q", "c", "R1", "1", "first", "2026-05-01", "", 5.0, ""),
            ("q", "c", "R2", "1", "", "2026-05-01", "", 1.0, "")]  # fmt: skip
    reads = from_rows(rows)
    assert list(reads.kind) == ["first", "second", "backread", "validity", "first", "second"]
    assert reads.scales[0].labels == ("0", "1", "2") and reads.scales[0].size == 3


def test_a_double_read_is_in_its_later_reads_period(week):
    reads, pairs, _ = week
    assert len(pairs) and np.all(reads.answer[pairs.first] == reads.answer[pairs.second])
    assert np.all(reads.day[pairs.first] <= reads.day[pairs.second])
    assert np.all(np.isin(reads.kind[pairs.first], ("first", "second")))


def test_each_items_day_equals_scikit_learn_on_its_double_reads(week):
    reads, pairs, cells = week
    found = {c.key: c for c in cells}
    for k, item in enumerate(reads.items):
        for day in reads.days:
            mine = (reads.item[pairs.second] == k) & (reads.day[pairs.second] == day)
            a, b = reads.score[pairs.first[mine]], reads.score[pairs.second[mine]]
            cell = found[(item, "", day)]
            assert cell.pairs == a.size and cell.exact == int(np.sum(a == b))
            assert cell.kappa == pytest.approx(cohen_kappa_score(a, b))
            labels = range(len(reads.scales[k].labels))
            assert cell.qwk == pytest.approx(cohen_kappa_score(a, b, labels=labels,
                                                               weights="quadratic"))  # fmt: skip


def test_rater_and_session_rows_pool_the_item_rows(week):
    reads, _, cells = week
    for day in reads.days:
        items = [c for c in cells if c.item and not c.rater and c.period == day]
        raters = [c for c in cells if c.item and c.rater and c.period == day]
        whole = next(c for c in cells if not c.item and not c.rater and c.period == day)
        assert whole.pairs == sum(c.pairs for c in items)
        assert sum(c.pairs for c in raters) == 2 * whole.pairs  # each pair has two raters
        weights = np.array([c.pairs for c in items], dtype=float)
        assert whole.kappa == pytest.approx(np.average([c.kappa for c in items], weights=weights))


def test_every_row_is_a_share_within_its_interval(week):
    _, _, cells = week
    for cell in cells:
        row = cell_row(cell, 0.8)
        for name in ("exact", "adjacent", "validity_exact", "kappa", "qwk"):
            if row[name] is None or row[f"{name}_low"] is None:
                continue
            assert row[f"{name}_low"] <= row[name] <= row[f"{name}_high"]
            low_bound = -1.0 if name in ("kappa", "qwk") else 0.0
            assert low_bound <= row[f"{name}_low"] and row[f"{name}_high"] <= 1.0


@pytest.mark.parametrize("weighted", [False, True])
def test_the_kappa_variance_matches_a_simulation(weighted):
    """Oracle: the spread of kappa (QWK) over 3,000 samples of 150 pairs from one joint
    distribution, against the mean of the large-sample variance."""
    rng = np.random.default_rng(7)
    joint = np.array([[0.25, 0.05, 0.01], [0.06, 0.3, 0.05], [0.01, 0.04, 0.23]])
    grid = np.arange(3)
    weights = 1 - (grid[:, None] - grid[None, :]) ** 2 / 4 if weighted else np.eye(3)
    figure = quadratic_kappa if weighted else cohen_kappa
    values, variances = [], []
    for _ in range(3000):
        cells = rng.choice(9, size=150, p=joint.ravel())
        matrix = confusion(cells // 3, cells % 3, 3)
        values.append(figure(matrix))
        variances.append(kappa_variance(matrix, weights))
    assert np.mean(variances) == pytest.approx(np.var(values), rel=0.12)


def test_the_cache_recomputes_only_the_periods_whose_reads_changed(tmp_path, monkeypatch):
    frames = live_reads(days=3, answers_per_day=10, seed=2)
    with session(tmp_path, frames[:2]) as store:
        before, cache = session_cells(load_reads(store))
        store.add(read_file_reads(frames[2], live_config(), "d2", ("", "")), "d2", "2", "run")
        reads = load_reads(store)
    computed = []
    real = figures_module._item_period

    def counted(reads, pairs, k, period, block):
        computed.append(period)
        return real(reads, pairs, k, period, block)

    monkeypatch.setattr(figures_module, "_item_period", counted)
    after, _ = session_cells(reads, cache)
    assert computed and {p[:10] for p in computed} == {reads.days[-1]}
    fresh, _ = session_cells(reads)
    assert sorted(map(shown, after)) == sorted(map(shown, fresh))
    old = {c.key: shown(c) for c in before if not c.period.startswith(reads.days[-1])}
    assert all(old[c.key] == shown(c) for c in after if c.key in old)


def shown(cell) -> str:
    """A cell as comparable text (NaN equal to NaN)."""
    return json.dumps(vars(cell), sort_keys=True, default=float)
