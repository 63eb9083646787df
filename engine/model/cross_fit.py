"""Cross-fitting: agreement of the whole tune-and-fit procedure on responses whose own scores it
never saw. Reports progress with stage "audit" and checks the cancel token every evaluation.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.core.progress import CHECKS, Reporter
from engine.input.settings.config import AuditConfig
from engine.model.features import ItemFeatures
from engine.model.joint_fits import fit_many
from engine.model.metrics import agreement, better, evaluate, headline_metrics
from engine.model.pseudo_likelihood import fit, proba
from engine.model.tuning import brent_search


@dataclass(frozen=True)
class FoldFit:
    """What one cross-fitting fold selected and fitted.

    held_out: positions of the held-out responses; top_k, power: the configuration chosen on the
    training responses; theta: its parameters; training_digest: SHA-256 over every (features,
    scores) array the fold fitted, in order, so a test can check that held-out labels never
    entered them.
    """

    fold: int
    held_out: np.ndarray
    top_k: int | None
    power: float
    theta: np.ndarray
    training_digest: str


@dataclass(frozen=True)
class CrossFit:
    """Cross-fitted agreement: every response predicted by a model tuned without its label.

    proba: (N, C+1) held-out probabilities (each row from its fold's model, whose features held
    none of that fold's scores); predicted: (N,) their argmax; metrics: accuracy, kappa, qwk
    over all of them.
    """

    folds: list[FoldFit]
    proba: np.ndarray
    predicted: np.ndarray
    metrics: dict[str, float]


@dataclass
class _FoldState:
    held_out: np.ndarray
    train: np.ndarray
    digest: Any = field(default_factory=hashlib.sha256)  # hashlib's object, untyped there
    best: tuple | None = None  # (metric value, top_k, power, theta, held-out proba)
    start: np.ndarray | None = None


def fold_assignment(n: int, folds: int, seed: int) -> list[np.ndarray]:
    """Random folds from the seed and N only, never from the scores (so permuting labels leaves
    the folds unchanged)."""
    order = np.random.default_rng(seed).permutation(n)
    return [np.sort(part) for part in np.array_split(order, folds)]


def masked_features(graph, scores, train, n_classes, top_k, power, symmetric):
    """T (N, C+1), S (N,) from training labels only (engine.model.features.ItemFeatures.masked)."""
    return ItemFeatures(graph, scores, n_classes, symmetric).masked(train, top_k, power)


def _consider(state: _FoldState, scores, config, ordered, top_k, power, t, s, fitted=None):
    """Fit the fold's training responses (unless `fitted` already is that fit) and keep the
    configuration when it is the fold's best so far; returns its selection metric."""
    train, held = state.train, state.held_out
    for array in (t[train], s[train], scores[train]):
        state.digest.update(np.ascontiguousarray(array).tobytes())
    if fitted is None:
        fitted = fit(t[train], s[train], scores[train], config.class_weight, state.start)
    state.start = fitted.theta
    metric = config.selection_metric
    value = evaluate(scores[train], fitted.proba, ordered)[metric]
    if state.best is None or better(metric, value, state.best[0]):
        held_proba = proba(fitted.theta, t[held], s[held])
        state.best = (value, top_k, float(power), fitted.theta, held_proba)
    return value


def cross_fit(
    features: ItemFeatures, config: AuditConfig, reporter: Reporter | None = None, ordered=True
) -> CrossFit | None:
    """Cross-fitted accuracy, kappa and (ordered scores) QWK of the whole tune-and-fit procedure.

    For each of config.cross_fit_folds folds, K and p are selected and the parameters fitted on
    the other folds' responses, with features built from their labels only (held-out one-hot
    rows zeroed); the held-out responses are then predicted from their training neighbours. The
    neighbour graph is reused: only labels change. Returns None when folds < 2.
    """
    scores, n_classes = features.scores, features.n_classes
    reporter = reporter or Reporter()
    n = scores.shape[0]
    folds = min(config.cross_fit_folds, n)
    if folds < 2:
        return None
    states = []
    for part in fold_assignment(n, folds, config.seed):
        train = np.ones(n, dtype=bool)
        train[part] = False
        states.append(_FoldState(part, np.flatnonzero(train)))
    powers = config.power_values
    total = len(config.top_k_values) * (len(powers) if powers else 1) * folds
    done = 0

    def evaluate_all(state, top_k, power):
        # Brent evaluates several powers per fold: report from inside each evaluation too.
        reporter.tick(CHECKS, done, total, f"cross-fitting {done} of {total}")
        t, s = features.masked(state.train, top_k, power)
        return _consider(state, scores, config, ordered, top_k, power, t, s)

    for top_k in config.top_k_values:
        if powers is not None:
            for power in powers:
                reporter.tick("audit", done, total, f"cross-fitting {done} of {total}")
                masked = [features.masked(st.train, top_k, power) for st in states]
                # The folds' fits side by side: the same results as one by one, sooner.
                fits = fit_many(
                    [
                        (t[st.train], s[st.train], scores[st.train], config.class_weight, st.start)
                        for st, (t, s) in zip(states, masked)
                    ]
                )
                for state, (t, s), fitted in zip(states, masked, fits):
                    _consider(state, scores, config, ordered, top_k, power, t, s, fitted)
                    done += 1
                    reporter.tick(CHECKS, done, total, f"cross-fitting {done} of {total}")
        else:
            for state in states:
                brent_search(
                    lambda p, st=state, k=top_k: evaluate_all(st, k, p),
                    config.power_interval,
                    config.selection_metric,
                )
                done += 1
                reporter.tick(CHECKS, done, total, f"cross-fitting {done} of {total}")
    return _collect(states, scores, n_classes, ordered)


def _collect(states: list[_FoldState], scores: np.ndarray, n_classes: int, ordered) -> CrossFit:
    held_proba = np.empty((scores.shape[0], n_classes))
    fold_fits = []
    for number, state in enumerate(states):
        assert state.best is not None  # every fold evaluated at least one configuration
        _, top_k, power, theta, fold_proba = state.best
        held_proba[state.held_out] = fold_proba
        fold_fits.append(
            FoldFit(number, state.held_out, top_k, power, theta, state.digest.hexdigest())
        )
    predicted = np.argmax(held_proba, axis=1)
    metrics = agreement(scores, predicted, n_classes, ordered)
    return CrossFit(
        fold_fits, held_proba, predicted, {m: metrics[m] for m in headline_metrics(ordered)}
    )
