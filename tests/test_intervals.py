"""Intervals of the model's agreement figures (engine/audit/intervals.py): they contain the
estimate and lie in the figure's range on any design, shrink with more responses, follow the
seed, report progress and stop when cancelled."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.audit.intervals import bootstrap_agreement
from engine.core.errors import Cancelled
from engine.core.progress import CancelToken, Reporter


def noisy_codes(n: int, agree: float, seed: int, classes: int = 3):
    rng = np.random.default_rng(seed)
    human = rng.integers(0, classes, size=n)
    predicted = np.where(rng.random(n) < agree, human, rng.integers(0, classes, size=n))
    return human, predicted


def test_bootstrap_intervals_contain_the_point_estimate():
    human, predicted = noisy_codes(300, 0.7, seed=1)
    intervals = bootstrap_agreement(human, predicted, 3, samples=200, seed=0)
    assert set(intervals) == {"accuracy", "kappa", "qwk"}
    for interval in intervals.values():
        assert interval.low < interval.estimate < interval.high
    assert intervals["accuracy"].estimate == pytest.approx(np.mean(human == predicted))


def test_bootstrap_intervals_shrink_with_more_responses():
    widths = []
    for n in (150, 2400):
        human, predicted = noisy_codes(n, 0.7, seed=2)
        intervals = bootstrap_agreement(human, predicted, 3, samples=200, seed=0)
        widths.append({m: iv.high - iv.low for m, iv in intervals.items()})
    for metric in widths[0]:
        # Width goes as 1/sqrt(N): 16 times the responses, about a quarter of the width.
        assert widths[1][metric] < 0.5 * widths[0][metric]


def test_bootstrap_is_reproducible_with_the_seed():
    human, predicted = noisy_codes(200, 0.6, seed=3)
    first = bootstrap_agreement(human, predicted, 3, samples=50, seed=4)
    again = bootstrap_agreement(human, predicted, 3, samples=50, seed=4)
    other = bootstrap_agreement(human, predicted, 3, samples=50, seed=5)
    assert first == again
    assert first != other


def test_bootstrap_reports_progress_and_stops_when_cancelled():
    human, predicted = noisy_codes(100, 0.6, seed=3)
    events = []
    bootstrap_agreement(human, predicted, 3, 30, reporter=Reporter(events.append))
    assert events[-1].stage == "audit" and events[-1].done == events[-1].total == 30
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        bootstrap_agreement(human, predicted, 3, 30, reporter=Reporter(None, token))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31), st.integers(2, 200), st.integers(2, 11), st.floats(0.0, 1.0),
       st.booleans())  # fmt: skip
def test_intervals_lie_in_the_figures_range_and_contain_their_estimate(seed, n, classes, agree,
                                                                        ordered):  # fmt: skip
    # Skewed scales (one code for most answers) and tiny samples included.
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.full(classes, 0.3))
    human = rng.choice(classes, n, p=prior)
    predicted = np.where(rng.random(n) < agree, human, rng.choice(classes, n, p=prior))
    found = bootstrap_agreement(human, predicted, classes, 30, seed=seed, ordered=ordered)
    for metric, interval in found.items():
        floor = 0.0 if metric == "accuracy" else -1.0
        assert floor <= interval.low <= interval.estimate <= interval.high <= 1.0, metric
