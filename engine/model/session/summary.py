"""What the rest of parm reads from a session model: per item, per answer and per rater.

`summarise_session` is the one call: it groups a session's items by scale, fits each group
(K chosen over the grid, engine.model.session.cross_fit.select_fit), cross-fits it, and returns
a `SessionSummary`. `summarise_group` does the same for a fit already made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from engine.model.metrics import agreement, headline_metrics
from engine.model.session.cross_fit import (
    CrossFitting,
    SessionCrossFit,
    SessionOptions,
    decide,
    select_fit,
)
from engine.model.session.features import SessionItem
from engine.model.session.fit import SessionFit
from engine.model.session.inference import Z95, SessionErrors, standard_errors


@dataclass(frozen=True)
class ItemSummary:
    """One item.

    proba: (N, C+1) each answer's probabilities over the scores for its audited read, given
    every other read of the session (its neighbours' and its own other reads: the figure a
    review of that read starts from); predicted: (N,) the decision (`decide` with the
    options' balance); cross_proba: (N, C+1) the same read predicted by models that never saw
    any read of the answer, and cross_predicted, or None without cross-fitting; in_sample,
    cross_fitted: accuracy, kappa (qwk when ordered) of the audited reads against predicted
    and cross_predicted. Answers without a read have NaN rows and predicted -1.
    """

    name: str
    proba: np.ndarray
    predicted: np.ndarray
    cross_proba: np.ndarray | None
    cross_predicted: np.ndarray | None
    in_sample: dict[str, float]
    cross_fitted: dict[str, float] | None


@dataclass(frozen=True)
class RaterIntercepts:
    """The raters' intercepts rho_mc (c = 1..C, against score 0) in one scale group.

    estimate, se, low, high: (M, C), the 95% interval estimate +/- 1.96 se (`method`: the
    sandwich over answers of engine.model.session.inference; the error of the prediction of
    a random effect); reads: (M,) each rater's reads in the group; all NaN for a rater with no
    read there, and without rater effects (fewer than two raters), where estimate is 0.
    """

    estimate: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    reads: np.ndarray
    method: str


@dataclass(frozen=True)
class GroupSummary:
    """One scale group: which items (positions in the session), the fit, its errors, the
    raters' intercepts, the variances with their 95% intervals, the K chosen."""

    items: list[int]
    fit: SessionFit
    errors: SessionErrors
    raters: RaterIntercepts
    variances: dict[str, tuple[float, float, float]]
    top_k: int


@dataclass(frozen=True)
class SessionSummary:
    """items: one ItemSummary per item of the session, in its order; groups: the scale groups."""

    items: list[ItemSummary]
    groups: list[GroupSummary]


def scale_groups(items: list[SessionItem]) -> list[list[int]]:
    """Positions of the items that share a scale (n_classes and order), in order of first
    appearance; the caller codes every item of one scale group on the same labels."""
    groups: dict[tuple, list[int]] = {}
    for position, item in enumerate(items):
        groups.setdefault((item.n_classes, item.ordered), []).append(position)
    return list(groups.values())


def _figures(scores, predicted, n_classes, ordered):
    if scores.size == 0:
        return {m: float("nan") for m in headline_metrics(ordered)}
    values = agreement(scores, predicted, n_classes, ordered)
    return {m: values[m] for m in headline_metrics(ordered)}


def _rater_intercepts(fit: SessionFit, errors: SessionErrors) -> RaterIntercepts:
    lay = fit.layout
    raters = fit.features.rater[fit.features.kept]
    reads = np.bincount(raters[raters >= 0], minlength=lay.n_raters)[: lay.n_raters]
    estimate = fit.rater_intercepts.copy()
    se = errors.rater_se.copy()
    unseen = reads == 0
    estimate[unseen], se[unseen] = np.nan, np.nan
    return RaterIntercepts(
        estimate, se, estimate - Z95 * se, estimate + Z95 * se, reads, errors.method
    )


def _item_summaries(items, fit, cross: SessionCrossFit | None, balance: float):
    out, offset = [], 0
    in_sample = fit.proba(np.arange(fit.features.n_reads))
    for item in items:
        audited = item.audited_reads()
        has = audited >= 0
        n, k = item.n_answers, item.n_classes
        proba = np.full((n, k), np.nan)
        proba[has] = in_sample[offset + audited[has]]
        predicted = np.full(n, -1)
        predicted[has] = decide(proba[has], fit.shares, balance)
        scores = item.score[audited[has]]
        cross_proba = cross_predicted = cross_figures = None
        if cross is not None:
            cross_proba = np.full((n, k), np.nan)
            cross_proba[has] = cross.proba[offset + audited[has]]
            cross_predicted = np.full(n, -1)
            cross_predicted[has] = decide(
                cross_proba[has], cross.shares[offset + audited[has]], balance
            )
            cross_figures = _figures(scores, cross_predicted[has], k, item.ordered)
        out.append(
            ItemSummary(
                item.name,
                proba,
                predicted,
                cross_proba,
                cross_predicted,
                _figures(scores, predicted[has], k, item.ordered),
                cross_figures,
            )
        )
        offset += item.n_reads
    return out


def summarise_group(items, positions, fit, cross, options) -> tuple[list, GroupSummary]:
    """The ItemSummaries and the GroupSummary of one fitted scale group."""
    errors = standard_errors(fit)
    variances = {
        name: (float(np.exp(fit.log_var[k])), *errors.variance_intervals[name])
        for k, name in enumerate(fit.layout.components)
    }
    group = GroupSummary(
        positions,
        fit,
        errors,
        _rater_intercepts(fit, errors),
        variances,
        fit.features.top_k,
    )
    return _item_summaries(items, fit, cross, options.balance), group


def summarise_session(
    items: list[SessionItem],
    options: SessionOptions | None = None,
    cross_fit: bool = True,
    step=None,
    helper=None,
    check=None,
) -> SessionSummary:
    """Fit the session model on every scale group and summarise it for the rest of parm.

    Contract.

    items: the session's items, in the session's order. Each item's `score` is coded on its
    scale group's labels (items with the same n_classes and order form one group and must
    share the labels: code them on the group's union of labels, as the review pools them);
    `rater` numbers raters across the whole session (-1: not recorded); `audited` marks the
    read parm audits for each answer (default: each answer's first read); `graph` is the
    item's top-K graph with at least the largest K of `options.top_k_values` it can hold
    (K >= N - 1 is the whole item). Every item needs at least `options.folds` answers when
    cross-fitting.

    Returns a SessionSummary whose `items[i]` belongs to `items[i]`:
    - proba (N, C+1): the audited read's probabilities over the scores given every other read
      of the session, its answer's other reads included (lambda) and its rater's intercepts;
      the in-sample figure. predicted (N,): `decide(proba, pi, options.balance)`, pi the
      group's score shares. in_sample: accuracy, kappa (qwk when ordered) of predicted against
      the audited reads.
    - cross_proba, cross_predicted, cross_fitted: the same for models that saw no read of the
      answer (5-fold by answers within items; the answer's unknown reads marginalised); the
      honest figure to lead with, in_sample beside it. None with cross_fit=False.
    - answers without a read: NaN rows, predicted -1.
    `groups[j]` per scale group: its items' positions, the SessionFit, the SessionErrors,
    `raters` (RaterIntercepts: rho_mc on the log-odds scale of score c against score 0, with
    95% intervals of their prediction error by the sandwich over answers; NaN for raters
    without a read in the group; all NaN/0 with fewer than two raters), `variances`
    (component -> (estimate, low, high), 95% Wald intervals on log tau^2) and the K chosen.
    Deterministic for given inputs and options (folds from options.seed), up to BLAS rounding.
    Costs about (folds + 1) x len(top_k grid) fits of the session model with cross_fit;
    `step()`, when given, is called after each of them (progress, and a place to cancel).
    helper: a helper process (engine.core.machine.helper) that fits half the folds meanwhile
    (the same figures, bit for bit), `check()` called while waiting for it.
    """
    options = options or SessionOptions()
    summaries: list[ItemSummary | None] = [None] * len(items)
    groups = []
    for positions in scale_groups(items):
        members = [items[p] for p in positions]
        # Begun first: with a helper process, its folds are fitted there meanwhile.
        crossing = CrossFitting(members, options, step, helper, check) if cross_fit else None
        fit = select_fit(members, options, step=step).fit
        cross = crossing.finish() if crossing is not None else None
        found, group = summarise_group(members, positions, fit, cross, options)
        for position, summary in zip(positions, found):
            summaries[position] = summary
        groups.append(group)
    # scale_groups puts every item in one group: every place is filled.
    return SessionSummary(cast("list[ItemSummary]", summaries), groups)
