"""Agreement with a second, independent rater: rater against rater, and the model against each."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.model.metrics import agreement


@dataclass(frozen=True)
class SecondRater:
    """Agreement between the two human raters and between the model and each rater.

    Each agreement dict holds exact, kappa and, for ordered scores, adjacent (|a - b| <= 1) and
    qwk; human_human and
    model_vs_second use only the rows where both scores exist (None when there are none).
    disagree: (N,) bool, True where both raters scored the response and differ.
    """

    rows_with_both: int
    human_human: dict[str, float] | None
    model_vs_first: dict[str, float]
    model_vs_second: dict[str, float] | None
    disagree: np.ndarray

    def as_dict(self) -> dict:
        return {
            "rows_with_both_scores": self.rows_with_both,
            "rater1_vs_rater2": self.human_human,
            "model_vs_rater1": self.model_vs_first,
            "model_vs_rater2": self.model_vs_second,
            "raters_disagree": int(self.disagree.sum()),
        }


# The second-rater table's names for the agreement figures.
NAMES = {"exact": "accuracy", "adjacent": "near", "kappa": "kappa", "qwk": "qwk"}


def _agreement(a: np.ndarray, b: np.ndarray, n_classes: int, ordered) -> dict[str, float] | None:
    """`_figures`, or None with no pair to compare."""
    return None if a.size == 0 else _figures(a, b, n_classes, ordered)


def _figures(a: np.ndarray, b: np.ndarray, n_classes: int, ordered) -> dict[str, float]:
    m = agreement(a, b, n_classes, ordered)
    return {name: m[metric] for name, metric in NAMES.items() if metric in m}


def second_rater(
    scores: np.ndarray,
    second: np.ndarray | None,
    predicted: np.ndarray,
    n_classes: int,
    ordered: bool = True,
) -> SecondRater | None:
    """Agreement figures for a second rater's codes `second` (N,), -1 where missing."""
    if second is None:
        return None
    both = second >= 0
    return SecondRater(
        rows_with_both=int(both.sum()),
        human_human=_agreement(scores[both], second[both], n_classes, ordered),
        model_vs_first=_figures(scores, predicted, n_classes, ordered),
        model_vs_second=_agreement(second[both], predicted[both], n_classes, ordered),
        disagree=both & (second != scores),
    )


def cross_fitted_vs_first(
    scores: np.ndarray,
    second: np.ndarray | None,
    cross_predicted: np.ndarray | None,
    n_classes: int,
    ordered: bool = True,
) -> dict[str, float] | None:
    """The cross-fitted model against rater 1 on the rows both raters scored: the figure the
    raters' agreement with each other is set beside (a model fitted on rater 1's scores is only
    judged on them where it never saw them). None without a second rater, cross-fitting or
    rows with both scores."""
    if second is None or cross_predicted is None:
        return None
    both = second >= 0
    return _agreement(scores[both], np.asarray(cross_predicted)[both], n_classes, ordered)
