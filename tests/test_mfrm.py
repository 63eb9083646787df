"""The many-facet Rasch baseline of bench_raters.py (tests/benchmarks/mfrm.py, not shipped) on
simulations with known severities."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "benchmarks"))

from mfrm import fit_mfrm, leniency_z  # noqa: E402


def simulate(seed: int, raters: int, answers: int, reads: int, severity, tau):
    """A rating scale session: each answer read by `reads` raters chosen at random."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.5, answers)
    rows = []
    for n in range(answers):
        for r in rng.choice(raters, reads, replace=False):
            logits = np.r_[0, np.cumsum(theta[n] - severity[r] - tau)]
            p = np.exp(logits - logits.max())
            rows.append((n, f"R{r}", rng.choice(tau.size + 1, p=p / p.sum())))
    answer, rater, score = map(np.array, zip(*rows))
    return answer, rater, score


def test_severities_are_recovered_within_their_standard_errors():
    """Eight raters, 400 answers read by 6 of them each: the fitted severities (centred) are
    within 3 standard errors of the truth (JMLE's bias, a factor of about L / (L - 1), is small
    at 6 reads), in the right order at the ends, and single reads change nothing."""
    severity = np.array([-0.8, -0.3, 0.0, 0.0, 0.1, 0.2, 0.3, 0.5])
    severity = severity - severity.mean()
    tau = np.array([-1.0, 0.0, 1.0])
    answer, rater, score = simulate(1, 8, 400, 6, severity, tau)
    fitted = fit_mfrm(answer, np.zeros(answer.size, int), rater, score, np.array([4]))
    assert fitted.raters == [f"R{r}" for r in range(8)]
    assert np.all(np.abs(fitted.severity - severity) < 3 * fitted.se)
    assert np.argmin(fitted.severity) == 0 and np.argmax(fitted.severity) == 7
    assert 0.05 < fitted.se.mean() < 0.12
    z = leniency_z(fitted)
    assert z["R0"] > 3 and abs(z["R3"]) < 3
    # Answers read once carry nothing about severity: adding some leaves the fit as it was.
    extra = np.arange(400, 450)
    more = fit_mfrm(np.r_[answer, extra], np.zeros(answer.size + 50, int),
                    np.r_[rater, np.full(50, "R0")], np.r_[score, np.zeros(50, int)],
                    np.array([4]))  # fmt: skip
    np.testing.assert_allclose(more.severity, fitted.severity, atol=1e-6)


def test_items_with_their_own_scales():
    """Two items with 3 and 5 categories: a harsh rater found on both together."""
    severity = np.array([0.0, 0.0, 0.0, 0.0, 0.8])
    parts = []
    for k, tau in enumerate((np.array([-0.5, 0.5]), np.array([-1.5, -0.5, 0.5, 1.5]))):
        answer, rater, score = simulate(10 + k, 5, 300, 3, severity, tau)
        parts.append((answer + 1000 * k, np.full(answer.size, k), rater, score))
    answer, item, rater, score = (np.concatenate(p) for p in zip(*parts))
    fitted = fit_mfrm(answer, item, rater, score, np.array([3, 5]))
    assert [t.size for t in fitted.thresholds] == [2, 4]
    z = leniency_z(fitted)
    assert z["R4"] < -3 and all(abs(z[f"R{r}"]) < 3 for r in range(4))
