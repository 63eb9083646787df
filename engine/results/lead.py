"""Which figure a screen or report leads with, and when it warns beside it.

Every agreement figure parm leads with is the cross-fitted one (each score predicted by a model
that never saw it); the in-sample figure stands beside it, labelled "in-sample". Two warnings:

- **memorised**: the in-sample figure exceeds the cross-fitted one by more than GAP (.05): the
  fit has learnt the scores it is judged on (on Mohler's items of ~28 answers the per-item
  kappa is 1.000 in-sample on 23 of 80 items, .06 cross-fitted at the median).
- **too small**: an item with fewer than ANSWERS_PER_SCORE (10) answers per score value it
  uses. The per-item fit estimates three parameters (beta_c, gamma_c, mu_c) per score value
  beyond the first, so at 10 answers per value each parameter rests on about three answers,
  already well under the ten events per parameter that logistic models are usually held to;
  below it, scores used by two or three answers decide whole parameters and cross-fitting has
  folds without them. The rule is cheap to state and to check by hand from items.csv's
  `scores` column, and on Mohler it marks the items whose in-sample and cross-fitted kappas
  part most.

Only the standard library (it is read before numpy loads); a run's figures come in as anything
with RunFigures' fields (engine.results.figures, which imports this module).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engine.audit.flagging import WrongEstimate, combined


class RunFigures(Protocol):
    """The fields of engine.results.figures.RunFigures the headline reads."""

    kappa: float | None
    cross_kappa: float | None
    qwk: float | None
    cross_qwk: float | None
    session_model: float | None
    session_model_in_sample: float | None


GAP = 0.05
ANSWERS_PER_SCORE = 10
IN_SAMPLE = "in-sample"
CROSS_FITTED = "cross-fitted"
SHOWN_ITEMS = 3


def _known(value) -> bool:
    return value is not None and value == value  # NaN is not known


def memorised(in_sample: float | None, cross_fitted: float | None) -> bool:
    """Whether the in-sample figure exceeds its cross-fitted twin by more than GAP (to 1e-9, so
    that .80 against .75 is not warned for the last bit of a float)."""
    if not (_known(in_sample) and _known(cross_fitted)):
        return False
    return round(in_sample - cross_fitted, 9) > GAP


def too_small(answers: int, values_used: int) -> bool:
    """Whether an item has fewer than ANSWERS_PER_SCORE answers per score value it uses."""
    return values_used >= 2 and answers < ANSWERS_PER_SCORE * values_used


def small_note(answers: int, values_used: int) -> str:
    return (
        f"too small: {answers} answers for {values_used} score values "
        f"(fewer than {ANSWERS_PER_SCORE} per value)"
    )


def gap_note(in_sample: float, cross_fitted: float) -> str:
    return f"in-sample {in_sample - cross_fitted:.2f} above cross-fitted: memorised"


def _fixed(value, digits: int) -> str:
    return "—" if not _known(value) else f"{value:.{digits}f}"


def lead_text(label: str, cross_fitted, in_sample, digits: int = 3) -> str:
    """'kappa 0.061 cross-fitted (in-sample 0.793 ⚠ 0.73 above: memorised)'; without a
    cross-fitted figure, the in-sample one labelled as such."""
    if not _known(cross_fitted):
        return f"{label} {_fixed(in_sample, digits)} {IN_SAMPLE} (no cross-fitting)"
    text = f"{label} {_fixed(cross_fitted, digits)} {CROSS_FITTED} ({IN_SAMPLE} "
    text += _fixed(in_sample, digits)
    if memorised(in_sample, cross_fitted):
        text += f" ⚠ {in_sample - cross_fitted:.2f} above: memorised"
    return text + ")"


def run_lead(figures: RunFigures, digits: int = 3) -> list[str]:
    """A run's headline figures, each cross-fitted first: kappa, QWK (ordered scores)."""
    parts = [lead_text("kappa", figures.cross_kappa, figures.kappa, digits)]
    if figures.qwk is not None:
        parts.append(lead_text("QWK", figures.cross_qwk, figures.qwk, digits))
    return parts


def session_model_lead(figures: RunFigures, digits: int = 3) -> str | None:
    """'session model QWK 0.553 cross-fitted (in-sample ...)'; None where it was not fitted."""
    if figures.session_model is None and figures.session_model_in_sample is None:
        return None
    label = "QWK" if figures.qwk is not None else "kappa"
    return "session model " + lead_text(
        label, figures.session_model, figures.session_model_in_sample, digits
    )


def _named(items: Sequence[str], total: int) -> str:
    shown = ", ".join(f"'{item}'" for item in items[:SHOWN_ITEMS])
    more = f" and {len(items) - SHOWN_ITEMS} more" if len(items) > SHOWN_ITEMS else ""
    return f"{len(items)} of {total} item(s) ({shown}{more})"


def lead_warnings(rows: Sequence[tuple[str, int, int, float | None, float | None]]) -> list[str]:
    """The headline's warnings over a run's items, at most one line per kind. rows: per item
    (name, answers, score values used, in-sample kappa, cross-fitted kappa or None)."""
    small = [name for name, n, used, _, _ in rows if too_small(n, used)]
    learnt = [name for name, _, _, inside, crossed in rows if memorised(inside, crossed)]
    notes = []
    if small:
        notes.append(
            f"{_named(small, len(rows))} have fewer than {ANSWERS_PER_SCORE} answers per score "
            "value they use: a per-item fit memorises them; read their cross-fitted figures."
        )
    if learnt:
        notes.append(
            f"{_named(learnt, len(rows))} show an in-sample kappa more than {GAP:.2f} above the "
            "cross-fitted one: lead with the cross-fitted figure."
        )
    return notes


def wrong_phrase(estimate: WrongEstimate) -> str:
    """How a line beside the flagged count says the estimate of wrong scores: 'about 61 likely
    wrong (95% 40-85, from the severities)'."""
    return (
        f"about {estimate.count:,.0f} likely wrong (95% {estimate.low:,.0f}-"
        f"{estimate.high:,.0f}, from the {estimate.source})"
    )


def session_wrong(results) -> WrongEstimate:
    """The session's estimate of wrong scores over its items' (engine.audit.flagging)."""
    return combined([result.wrong_estimate for result in results])
