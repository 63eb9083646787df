"""Choosing K for the session model, and its cross-fitted agreement: every read predicted by a
model that never saw it.

Folds are drawn over answers within each item (from the seed, the item's position and its
number of answers only, never from the scores), so every fold holds about 1/F of every item's
answers, and all reads of a held-out answer are held out together. For each fold the whole
procedure runs on the other answers' reads: features built from their reads only
(engine.model.session.features' `kept`), K chosen, variances estimated, parameters fitted. The
held-out answers' reads are then predicted from their training neighbours, their item's
parameters and their rater's intercepts, with none of their own reads known: each read's
marginal under the joint of its answer's (unknown) reads (SessionFit.predictive), not its
conditional with the other reads set to nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.model.metrics import agreement, headline_metrics
from engine.model.session.design import DEFAULT_ITEM_KINDS, layout_for
from engine.model.session.features import SessionItem, item_top_k, read_features
from engine.model.session.fit import SessionFit, fit_session

SELECTIONS = ("laplace", "kappa")


def decide(proba: np.ndarray, shares: np.ndarray, balance: float) -> np.ndarray:
    """Predicted scores: argmax_c log p_rc - balance * log pi_c, pi_c the categories' shares
    among the reads the model was fitted on (a category no such read has is never predicted).

    balance 0 is the plain argmax; 1 is what balanced class weights do to a fit (they shift
    each intercept by -log pi_c + a constant), without letting the weights into the estimates.
    shares: (C+1,), or (R, C+1) one row per read."""
    with np.errstate(divide="ignore"):
        log_shares = np.log(shares)
    adjusted = np.log(np.maximum(proba, 1e-300)) - balance * np.where(
        np.isfinite(log_shares), log_shares, 0.0
    )
    adjusted = np.where(np.isfinite(log_shares), adjusted, -np.inf)
    return np.argmax(adjusted, axis=-1)


@dataclass(frozen=True)
class SessionOptions:
    """How the session model is fitted and decides: the K grid, power p, class weights of the
    fit, the K selection ("laplace": the restricted Laplace marginal pseudo-likelihood;
    "kappa": in-sample kappa of the audited reads), the decision rule's `balance` (`decide`),
    which random parts are allowed (and which kinds of item effect,
    engine.model.session.design), and the cross-fitting folds and seed."""

    top_k_values: tuple[int, ...] = (5, 10, 15, 20, 25, 30, 35, 40, 45, 50)
    power: float = 1.0
    class_weight: str | None = None
    selection: str = "laplace"
    balance: float = 0.25
    item_effects: bool = True
    rater_effects: bool = True
    own_reads: bool = True
    item_kinds: tuple[str, ...] = DEFAULT_ITEM_KINDS
    symmetric: bool = True
    folds: int = 5
    seed: int = 0


@dataclass(frozen=True)
class Selected:
    """The fit chosen over the K grid, and each K's criterion value."""

    fit: SessionFit
    criteria: dict[int, float]


def distinct_top_k(items: list[SessionItem], values) -> list[int]:
    """The grid values that give a different graph for some item (K >= N - 1 are all alike)."""
    kept, seen = [], set()
    for k in sorted(values):
        key = tuple(item_top_k(item, k) for item in items)
        if key not in seen:
            seen.add(key)
            kept.append(int(k))
    return kept


def criterion(fit: SessionFit, items: list[SessionItem], options: SessionOptions) -> float:
    if options.selection == "laplace":
        return fit.laplace
    reads = audited_positions(items)
    reads = reads[fit.features.kept[reads]]
    predicted = decide(fit.proba(reads), fit.shares, options.balance)
    return agreement(fit.features.score[reads], predicted, fit.layout.n_classes)["kappa"]


def audited_positions(items: list[SessionItem]) -> np.ndarray:
    """Positions (in the session's read order) of every answer's audited read."""
    out, offset = [], 0
    for item in items:
        chosen = item.audited_reads()
        out.append(chosen[chosen >= 0] + offset)
        offset += item.n_reads
    return np.concatenate(out)


def select_fit(items, options: SessionOptions, kept=None, step=None) -> Selected:
    """Fit every K of the grid (each warm-started from the last) and keep the best; `step()`,
    when given, is called after each fit (a run's progress and its cancelling)."""
    best, criteria, start = None, {}, None
    for k in distinct_top_k(items, options.top_k_values):
        features = read_features(items, k, options.power, kept, options.symmetric)
        layout = layout_for(
            features,
            options.item_effects,
            options.rater_effects,
            options.own_reads,
            options.item_kinds,
        )
        fit = fit_session(
            features,
            options.class_weight,
            layout,
            start=None if start is None else start.w,
            log_var=None if start is None else start.log_var,
        )
        start = fit
        if step is not None:
            step()
        criteria[k] = criterion(fit, items, options)
        if best is None or criteria[k] > criteria[best.features.top_k]:
            best = fit
    if best is None:  # distinct_top_k gives at least one K for any grid: not reached
        raise ValueError("select_fit: an empty K grid")
    return Selected(best, criteria)


def answer_folds(items: list[SessionItem], folds: int, seed: int) -> list[np.ndarray]:
    """(N_g,) fold of each answer, per item: a random split of the item's answers into `folds`
    near-equal parts, from the seed and the item's position only."""
    out = []
    for g, item in enumerate(items):
        order = np.random.default_rng([seed, g]).permutation(item.n_answers)
        fold = np.empty(item.n_answers, int)
        fold[order] = np.arange(item.n_answers) % folds
        out.append(fold)
    return out


@dataclass(frozen=True)
class SessionCrossFit:
    """proba: (R, C+1) every read's held-out probabilities; shares: (R, C+1) the category shares
    of the reads that predicted each read was fitted on; fold_top_k: the K each fold chose;
    audited: positions of the audited reads; metrics: accuracy, kappa (and qwk when ordered) of
    the audited reads' decisions (`decide` with the options' balance) against their scores."""

    proba: np.ndarray
    shares: np.ndarray
    fold_top_k: list[int]
    audited: np.ndarray
    metrics: dict[str, float]

    def predicted(self, balance: float) -> np.ndarray:
        """The audited reads' cross-fitted decisions with another balance."""
        return decide(self.proba[self.audited], self.shares[self.audited], balance)


def fold_predictions(items: list[SessionItem], options: SessionOptions, folds, numbers, step=None):
    """Each fold of `numbers` (`folds`: answer_folds'): the positions of its held-out reads,
    their probabilities from the procedure fitted on the other answers' reads, the category
    shares of those reads and the K chosen."""
    out = []
    for fold in numbers:
        kept = [folds[g][item.answer] != fold for g, item in enumerate(items)]
        selected = select_fit(items, options, kept, step)
        held = np.flatnonzero(~np.concatenate(kept))
        fit = selected.fit
        out.append((held, fit.predictive(held), fit.shares, fit.features.top_k))
    return out


class CrossFitting:
    """A session model's cross-fitting, begun: with a helper process (engine.core.machine.helper)
    the later half of the folds is sent to it at once, so that it fits them while this process
    fits the rest (and, before them, whatever the caller fits meanwhile); `finish()` fits this
    process's folds, waits for the helper's (calling `check()` while it waits) and assembles the
    result, the same bits either way. A helper that died leaves its folds to this process."""

    def __init__(self, items, options: SessionOptions, step=None, helper=None, check=None):
        self.items, self.options, self.step, self.check = items, options, step, check
        self.folds = answer_folds(items, options.folds, options.seed)
        numbers = list(range(options.folds))
        split = options.folds // 2 if helper is not None else options.folds
        self.here, self.there = numbers[:split], numbers[split:]
        self.helper = helper
        self.pending = (
            helper.submit(fold_predictions, items, options, self.folds, self.there)
            if self.there
            else None
        )

    def finish(self) -> SessionCrossFit:
        items, options = self.items, self.options
        found = dict(
            zip(self.here, fold_predictions(items, options, self.folds, self.here, self.step))
        )
        found.update(zip(self.there, self._theirs()))
        n_reads = sum(item.n_reads for item in items)
        proba = np.full((n_reads, items[0].n_classes), np.nan)
        shares = np.full_like(proba, np.nan)
        chosen = []
        for fold in range(options.folds):
            held, predicted, fitted_shares, top_k = found[fold]
            proba[held] = predicted
            shares[held] = fitted_shares
            chosen.append(top_k)
        audited = audited_positions(items)
        scores = np.concatenate([item.score for item in items])[audited]
        ordered = items[0].ordered
        predicted = decide(proba[audited], shares[audited], options.balance)
        figures = agreement(scores, predicted, items[0].n_classes, ordered)
        metrics = {m: figures[m] for m in headline_metrics(ordered)}
        return SessionCrossFit(proba, shares, chosen, audited, metrics)

    def _theirs(self) -> list:
        if self.pending is None:
            return []
        theirs, seconds = self.helper.result_or(
            self.pending,
            lambda: fold_predictions(self.items, self.options, self.folds, self.there, self.step),
            self.check,
        )
        if seconds is not None and self.step is not None:  # their fits, reported now
            for _ in range(
                len(self.there) * len(distinct_top_k(self.items, self.options.top_k_values))
            ):
                self.step()
        assert isinstance(theirs, list)  # what fold_predictions returns, there or here
        return theirs


def session_cross_fit(
    items: list[SessionItem], options: SessionOptions, step=None
) -> SessionCrossFit:
    """Cross-fitted probabilities of every read and agreement of the audited reads (`step`:
    select_fit's)."""
    return CrossFitting(items, options, step).finish()
