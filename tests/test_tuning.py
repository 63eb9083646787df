"""engine.model.tuning: the Cartesian grid, Brent per K on a power interval, and selection."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import clustered_embeddings, tune_on

import engine.model.tuning
from engine.core.errors import Cancelled
from engine.core.metric_names import METRIC_NAMES as METRICS
from engine.core.progress import CancelToken, Reporter
from engine.graph.search import build_graph
from engine.input.settings.config import config_from_dict
from engine.model.metrics import evaluate
from engine.model.pseudo_likelihood import fit
from engine.model.standard_errors import NEIGHBOUR_SANDWICH
from engine.model.tuning import TuningRow

N_CLASSES = 3


@pytest.fixture(scope="module")
def data():
    return clustered_embeddings(150, N_CLASSES, dim=16, noise=2.0, seed=2)


@pytest.fixture(scope="module")
def graph(data):
    return build_graph(data[0], 12)


def config(**values):
    return config_from_dict(values)


def selected_rows(result):
    return [r for r in result.rows if r.selected]


def test_grid_evaluates_the_whole_cartesian_product(data, graph):
    scores = data[1]
    ks, powers = [3, 6, 10], [0.5, 1.0, 2.0]
    result = tune_on(graph, scores, N_CLASSES, config(similarity_top_k=ks, similarity_power=powers))
    assert [(r.top_k, r.power) for r in result.rows] == list(itertools.product(ks, powers))
    assert len(selected_rows(result)) == 1
    for row in result.rows:
        t, s = graph.features(scores, N_CLASSES, row.top_k, row.power)
        fresh = evaluate(scores, fit(t, s, scores).proba)
        # warm starts change where L-BFGS-B stops by far less than these tolerances
        assert row.metrics["nll"] == pytest.approx(fresh["nll"], abs=1e-5)
        assert row.metrics["accuracy"] == pytest.approx(fresh["accuracy"], abs=1.5 / len(scores))


@pytest.mark.parametrize("metric", METRICS)
def test_selects_the_best_configuration_for_each_metric(data, graph, metric):
    scores = data[1]
    settings = config(
        similarity_top_k=[2, 5, 10], similarity_power=[1.0, 3.0], selection_metric=metric
    )
    result = tune_on(graph, scores, N_CLASSES, settings)
    values = [r.metrics[metric] for r in result.rows]
    best_value = min(values) if metric == "nll" else max(values)
    first_best = values.index(best_value)
    assert selected_rows(result) == [result.rows[first_best]]
    assert result.best is result.rows[first_best]
    # the returned fit and features are those of the selected configuration
    t, s = graph.features(scores, N_CLASSES, result.best.top_k, result.best.power)
    np.testing.assert_allclose(result.features[0], t)
    np.testing.assert_allclose(result.features[1], s)
    assert evaluate(scores, result.fitted.proba)[metric] == pytest.approx(best_value, abs=1e-4)
    # Standard errors from the selected graph (on 150 responses a very sparse graph may leave
    # some unavailable, with a warning; engine.model.standard_errors).
    assert result.fitted.se_method == NEIGHBOUR_SANDWICH
    assert np.all(np.isfinite(result.fitted.se)) or any(
        "Standard errors could not be computed" in w for w in result.warnings
    )


@pytest.mark.parametrize("metric", METRICS)
def test_ties_go_to_the_first_configuration(data, graph, metric, monkeypatch):
    """Metric values are scripted so the best value occurs twice (rows 1 and 3)."""
    scores = data[1]
    scripted = [0.3, 0.6, 0.2, 0.6] if metric != "nll" else [0.9, 0.4, 0.7, 0.4]
    calls = iter(scripted)

    def fake_evaluate(human, proba, ordered=True):
        value = next(calls)
        return {m: value for m in METRICS}

    monkeypatch.setattr(engine.model.tuning, "evaluate", fake_evaluate)
    settings = config(similarity_top_k=[3, 6], similarity_power=[1.0, 2.0], selection_metric=metric)
    result = tune_on(graph, scores, N_CLASSES, settings)
    assert [r.selected for r in result.rows] == [False, True, False, False]
    assert (result.best.top_k, result.best.power) == (3, 2.0)


def test_all_metrics_equal_selects_the_first_configuration(data, graph, monkeypatch):
    monkeypatch.setattr(
        engine.model.tuning, "evaluate", lambda human, proba, ordered: dict.fromkeys(METRICS, 0.5)
    )
    result = tune_on(graph, data[1], N_CLASSES, config(similarity_top_k=[3, 6, 9]))
    assert [r.selected for r in result.rows] == [True, False, False]


class PeakedGraph:
    """A stand-in graph whose signal is strongest at power PEAKS[top_k]: T is the one-hot human
    score scaled by that signal plus fixed noise, so the fit's NLL is lowest at the peak (the
    signal is weak enough that the scores never separate)."""

    PEAKS = {2: 1.5, 3: 3.0, 4: 5.0}

    def __init__(self, scores):
        rng = np.random.default_rng(0)
        self.onehot = np.eye(N_CLASSES)[scores]
        self.noise = rng.uniform(0, 1, size=self.onehot.shape)
        self.requested: list[tuple[int, float]] = []

    def weights(self, top_k, power, symmetric=True):
        """No edges: these features are not built from neighbours' scores."""
        return sp.csr_matrix((self.onehot.shape[0],) * 2)

    def features(self, scores, n_classes, top_k, power, symmetric=True, reporter=None):
        self.requested.append((top_k, power))
        signal = 0.3 * np.exp(-(((power - self.PEAKS[top_k]) / 1.5) ** 2))
        t = signal * self.onehot + self.noise
        return t, t.sum(axis=1)


def test_brent_stays_inside_interval_and_tunes_power_separately_per_k(data):
    scores = data[1]
    fake = PeakedGraph(scores)
    settings = config(
        similarity_top_k=[2, 3, 4],
        similarity_power={"min": 1.0, "max": 4.0, "tol": 0.01},
        selection_metric="nll",
    )
    result = tune_on(fake, scores, N_CLASSES, settings)
    assert all(1.0 <= p <= 4.0 for _, p in fake.requested)
    assert [r.top_k for r in result.rows] == sorted(r.top_k for r in result.rows)
    best_power = {}
    for k in (2, 3, 4):
        rows = [r for r in result.rows if r.top_k == k]
        assert len(rows) >= 4, "Brent ran for every K"
        best_power[k] = min(rows, key=lambda r: r.metrics["nll"]).power
    assert best_power[2] == pytest.approx(1.5, abs=0.05)
    assert best_power[3] == pytest.approx(3.0, abs=0.05)
    # the peak at 5 lies outside [1, 4]: Brent ends at the upper end, never beyond it
    assert 3.9 <= best_power[4] <= 4.0
    assert result.best.top_k in (2, 3)


def test_brent_on_a_real_graph_runs_once_per_k_with_the_interval(data, graph, monkeypatch):
    calls = []
    original = engine.model.tuning.minimize_scalar

    def spy(func, **kwargs):
        calls.append(kwargs)
        return original(func, **kwargs)

    monkeypatch.setattr(engine.model.tuning, "minimize_scalar", spy)
    settings = config(
        similarity_top_k=[4, 8],
        similarity_power={"min": 0.5, "max": 3.0, "tol": 0.05},
        selection_metric="nll",
    )
    result = tune_on(graph, data[1], N_CLASSES, settings)
    assert len(calls) == 2
    for kwargs in calls:
        assert kwargs["method"] == "bounded"
        assert kwargs["bounds"] == (0.5, 3.0)
        assert kwargs["options"]["xatol"] == 0.05
    assert {r.top_k for r in result.rows} == {4, 8}
    assert all(0.5 <= r.power <= 3.0 for r in result.rows)
    nll = [r.metrics["nll"] for r in result.rows]
    assert result.best is result.rows[nll.index(min(nll))]


def test_each_configuration_reports_progress_with_its_row(data, graph):
    events = []
    settings = config(similarity_top_k=[3, 6], similarity_power=[1.0, 2.0])
    tune_on(graph, data[1], N_CLASSES, settings, Reporter(events.append))
    tuning = [e for e in events if e.stage == "tuning"]
    assert [(e.done, e.total) for e in tuning] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert all(isinstance(e.payload, TuningRow) for e in tuning)
    assert [(e.payload.top_k, e.payload.power) for e in tuning] == [
        (3, 1.0),
        (3, 2.0),
        (6, 1.0),
        (6, 2.0),
    ]


def test_a_cancelled_token_stops_tuning(data, graph):
    token = CancelToken()

    def cancel_after_first(event):
        if event.stage == "tuning":
            token.cancel()

    settings = config(similarity_top_k=[3, 6, 9])
    with pytest.raises(Cancelled):
        tune_on(graph, data[1], N_CLASSES, settings, Reporter(cancel_after_first, token))
