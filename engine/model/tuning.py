"""Tuning K and p: the Cartesian grid, or bounded Brent on p separately for each K.

Every configuration tried becomes one `TuningRow`; the best by the selection metric (lowest for
nll; ties go to the configuration tried first) gets standard errors from its graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize_scalar

from engine.core.metric_names import METRIC
from engine.core.progress import TUNING, Reporter
from engine.graph.neighbour_graph import NeighbourGraph, dense_warning
from engine.input.settings.config import AuditConfig, PowerInterval
from engine.model.features import ItemFeatures
from engine.model.metrics import better, evaluate
from engine.model.pseudo_likelihood import FittedPARM, fit
from engine.model.standard_errors import NO_STANDARD_ERRORS, with_standard_errors


@dataclass(frozen=True)
class TuningRow:
    """One configuration: top_k (None = dense graph), power, and its six metrics."""

    top_k: int | None
    power: float
    metrics: dict[str, float]
    converged: bool = True
    selected: bool = False

    def as_dict(self) -> dict:
        return {"top_k": self.top_k, "power": self.power, **self.metrics, "selected": self.selected}


@dataclass
class TuningResult:
    rows: list[TuningRow]
    best: TuningRow
    fitted: FittedPARM
    features: tuple[np.ndarray, np.ndarray]
    warnings: list[str] = field(default_factory=list)
    # The item's features (engine.model.features), holding the selected graph's weights.
    item_features: ItemFeatures | None = None


class _Search:
    """Evaluates configurations, keeps every row and the best fit so far."""

    def __init__(self, features: ItemFeatures, config: AuditConfig, reporter, total, ordered):
        self.features, self.scores = features, features.scores
        self.ordered = ordered
        self.config, self.reporter, self.total = config, reporter, total
        self.rows: list[TuningRow] = []
        self.best: tuple[TuningRow, FittedPARM, tuple] | None = None
        self.start: np.ndarray | None = None

    def evaluate(self, top_k: int | None, power: float) -> TuningRow:
        self.reporter.check()
        # Only the dense path takes the per-block progress callback.
        progress = self._dense_progress(power) if top_k is None else None
        t, s = self.features.at(top_k, power, self.reporter, progress)
        # The objective is convex in theta, so warm starts change speed, not the optimum.
        fitted = fit(t, s, self.scores, self.config.class_weight, self.start)
        self.start = fitted.theta
        metrics = evaluate(self.scores, fitted.proba, self.ordered)
        row = TuningRow(top_k, float(power), metrics, fitted.converged)
        self.rows.append(row)
        metric = self.config.selection_metric
        if self.best is None or better(metric, row.metrics[metric], self.best[0].metrics[metric]):
            self.best = (row, fitted, (t, s))
        self.reporter(TUNING, len(self.rows), self.total, _describe(row, metric), payload=row)
        return row

    def _dense_progress(self, power):
        """Progress within one dense configuration, which takes seconds per block pass."""
        done = len(self.rows)

        def report(rows: int, n: int) -> None:
            message = f"dense, p={power:.3g}: {rows:,} of {n:,} rows"
            self.reporter(TUNING, done, self.total, message)

        return report


def _describe(row: TuningRow, metric: str) -> str:
    k = "dense" if row.top_k is None else f"K={row.top_k}"
    return f"{k}, p={row.power:.3g}: {metric}={row.metrics[metric]:.3f}"


def brent_search(metric_at, interval: PowerInterval, metric: str) -> float:
    """Bounded Brent on p in [min, max], best `metric` wins; `metric_at(p)` evaluates one power.

    Returns the p it settles on. Used by tuning and, on each fold, by cross-fitting.
    """
    sign = -1.0 if METRIC[metric].higher_is_better else 1.0

    def objective(power: float) -> float:
        value = metric_at(power)
        return sign * value if np.isfinite(value) else np.inf

    result = minimize_scalar(
        objective,
        bounds=(interval.min, interval.max),
        method="bounded",
        options={"xatol": interval.tol},
    )
    return float(result.x)


def brent_power(search: _Search, top_k: int | None, interval: PowerInterval) -> float:
    """Bounded Brent on p for one K; every power it tries becomes a tuning row."""
    metric = search.config.selection_metric
    return brent_search(
        lambda power: search.evaluate(top_k, power).metrics[metric], interval, metric
    )


def tune(
    features: ItemFeatures, config: AuditConfig, reporter: Reporter | None = None, ordered=True
) -> TuningResult:
    """Evaluate every configuration the config asks for on the item's features (its graph and
    scores) and select the best.

    ordered: whether the score codes are ordered (else QWK and near agreement are left out, and
    cannot be the selection metric)."""
    reporter = reporter or Reporter()
    ks = config.top_k_values
    powers = config.power_values
    total = len(ks) * len(powers) if powers is not None else 0
    scores = features.scores
    search = _Search(features, config, reporter, total, ordered)
    notes = _dense_cost(features.graph, ks, powers)
    for note in notes:
        reporter(TUNING, 0, total, note)
    for top_k in ks:
        if powers is None:
            brent_power(search, top_k, config.power_interval)
        else:
            for power in powers:
                search.evaluate(top_k, power)
    assert search.best is not None  # the grid or Brent evaluated at least one configuration
    row, tuned, (t, s) = search.best
    graph_weights = features.weights(row.top_k, row.power)
    fitted = with_standard_errors(tuned, t, s, scores, config.class_weight, graph_weights)
    rows = [TuningRow(r.top_k, r.power, r.metrics, r.converged, r is row) for r in search.rows]
    best = next(r for r in rows if r.selected)
    warnings = notes + _fit_warnings(fitted, scores)
    return TuningResult(rows, best, fitted, (t, s), warnings, features)


# Bounded Brent on a power interval typically evaluates 10-15 powers.
BRENT_EVALUATIONS = 12


def _dense_cost(graph: NeighbourGraph, ks, powers) -> list[str]:
    """A warning when the dense graph is in the grid and N makes it slow."""
    if None not in ks or graph.embeddings is None:
        return []
    evaluations = len(powers) if powers is not None else BRENT_EVALUATIONS
    note = dense_warning(graph.n, graph.embeddings.shape[1], evaluations)
    return [note] if note else []


def _fit_warnings(fitted: FittedPARM, scores: np.ndarray | None = None) -> list[str]:
    notes = []
    if scores is not None and np.array_equal(fitted.predicted, scores):
        # Argmax equal to the score everywhere means scaling theta up always raises the
        # pseudo-likelihood: it has no finite maximum, and the optimiser stopped somewhere.
        notes.append(
            "Every response's predicted score equals its human score: the categories are "
            "perfectly separated by the similarity features, so the parameters have no finite "
            "estimate; their values and standard errors are unreliable."
        )
    if not fitted.converged:
        notes.append(f"The optimiser did not converge: {fitted.message}.")
    if fitted.at_bounds:
        notes.append(
            "Some parameters reached the bound of +/-1000: the categories are (nearly) separable "
            "by the similarity features, so estimates and standard errors are unreliable."
        )
    if fitted.se_method == NO_STANDARD_ERRORS:
        notes.append(
            "No standard errors on the dense graph: every response's score enters every other's "
            "features, so there are no neighbourhoods to estimate their dependence from; a "
            "top-K graph has them."
        )
    elif np.any(~np.isfinite(fitted.se)):
        notes.append(
            "Standard errors could not be computed for some parameters (singular "
            "information matrix, or a negative variance estimate)."
        )
    return notes
