"""Which figure a screen or report leads with, and when it warns beside it.

Every agreement figure parm leads with is the cross-fitted one (each score predicted by a model
that never saw it); the in-sample figure stands beside it, labelled "in-sample". Two warnings:

- **memorised**: the in-sample figure exceeds the cross-fitted one by more than GAP (.05): the
  fit has learnt the scores it is judged on (on Mohler's items of ~28 answers the per-item
  kappa is 1.000 in-sample on 23 of 80 items, .06 cross-fitted at the median).
- **too small**: an item with fewer than ANSWERS_PER_SCORE (10) answers per score value it
  uses beyond its most common one, counting the answers not given its most common score. The
  per-item fit estimates three parameters (beta_c, gamma_c, mu_c) per score value beyond the
  first, and what informs them is the answers of the rarer values: the events of the usual
  rule of ten events per parameter (counted in the less frequent outcome), which 10 answers per
  value already leave at about three. Below it, scores used by one to three answers decide
  whole parameters, cross-fitting has folds without them, and the in-sample kappa is decided
  by a handful of answers (Mohler's item 9.2: 26 answers scored 5 and one scored 2, in-sample
  kappa 1.000, cross-fitted -0.038). It is never looser than "10 answers per score value
  used" (n - most common < 10 (values - 1) whenever n < 10 values), is cheap to check by hand
  from items.csv's `scores` column, and leaves large items with one rare score alone.

Every comparison of the two is engine.results.compare's, decided on the figures as shown. An
item too small for its scores shows no in-sample figure at all (on Mohler's items of 29 answers
it is 1.000, with a bootstrap interval of 1.000 to 1.000, beside a cross-fitted -0.266): its
cross-fitted figures and the label "too small" with the minimum instead. `item_lead` is every
item's headline, in the CLI, the app and the reports.

Only the standard library (it is read before numpy loads); a run's figures are
engine.results.figures.RunFigures (that module imports this one; the type only for the checker).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.results.compare import EXCESS, Comparison, Limit, compare

if TYPE_CHECKING:
    from engine.results.figures import RunFigures
    from engine.results.overview import ItemSummary

from engine.audit.queue.flagging import SECOND_READS, WrongEstimate, combined

GAP = 0.05
ANSWERS_PER_SCORE = 10
# The too-small rule in words, for every sentence that states it.
SMALL_RULE = (
    f"fewer than {ANSWERS_PER_SCORE} answers per score value used beyond the most common one"
)
IN_SAMPLE = "in-sample"
GIVEN_READS = "given each answer's other reads"
CROSS_FITTED = "cross-fitted"
SHOWN_ITEMS = 3


# In-sample more than GAP above cross-fitted: the fit learnt the scores it is judged on.
MEMORISED = Limit(GAP, EXCESS, "parm's limit on in-sample optimism", "memorised")


def _known(value) -> bool:
    return value is not None and value == value  # NaN is not known


def optimism(in_sample: float | None, cross_fitted: float | None, label: str = "kappa"):
    """The in-sample figure against its cross-fitted twin, under MEMORISED."""
    return compare(f"the in-sample {label}", in_sample, "the cross-fitted", cross_fitted, MEMORISED)


def memorised(in_sample: float | None, cross_fitted: float | None) -> bool:
    """Whether the in-sample figure exceeds its cross-fitted twin by more than GAP, as the
    figures are shown (3 digits: .800 against .750 is not warned)."""
    return optimism(in_sample, cross_fitted).within is False


def _counts(counts: Sequence[int]) -> tuple[int, int, int]:
    """(answers, score values used, answers outside the most common score)."""
    used = [int(c) for c in counts if c > 0]
    answers = sum(used)
    return answers, len(used), answers - (max(used) if used else 0)


def too_small(counts: Sequence[int]) -> bool:
    """Whether an item (its answers per score value, zeros allowed) has fewer than
    ANSWERS_PER_SCORE answers per score value it uses beyond its most common one."""
    _, used, others = _counts(counts)
    return used >= 2 and others < ANSWERS_PER_SCORE * (used - 1)


def small_note(counts: Sequence[int]) -> str:
    """'too small to judge: 29 answers, 12 of them outside the most common score, for 4 other
    score values, under the 40 a fit needs (10 per value: 3 parameters each)'."""
    answers, used, others = _counts(counts)
    return (
        f"too small to judge: {answers} answers, {others} of them outside the most common "
        f"score, for {used - 1} other score value{'' if used == 2 else 's'}, under the "
        f"{ANSWERS_PER_SCORE * (used - 1)} a fit needs ({ANSWERS_PER_SCORE} per value: 3 "
        "parameters each)"
    )


def gap_note(in_sample: float | None, cross_fitted: float | None) -> str:
    """'in-sample 0.554 above cross-fitted, more than 0.05: memorised'."""
    return "in-sample " + optimism(in_sample, cross_fitted).brief().replace(
        ",", " cross-fitted,", 1
    )


def _fixed(value, digits: int) -> str:
    return "—" if not _known(value) else f"{value:.{digits}f}"


def lead_text(
    label: str,
    cross_fitted,
    in_sample,
    digits: int = 3,
    small: bool = False,
    given_reads: bool = False,
) -> str:
    """'kappa 0.061 cross-fitted (in-sample 0.793 ⚠ 0.732 above, more than 0.05: memorised)';
    without a cross-fitted figure, the in-sample one labelled as such; small: an item too small
    for its scores, whose in-sample figure is not shown; given_reads: the in-sample figure was
    given each answer's other reads (the session model where answers are read twice), which the
    cross-fitted one was not, so their gap is not called memorised:
    'QWK 0.658 cross-fitted (0.877 given each answer's other reads)'."""
    if given_reads and _known(cross_fitted):
        return (
            f"{label} {_fixed(cross_fitted, digits)} {CROSS_FITTED} "
            f"({_fixed(in_sample, digits)} {GIVEN_READS})"
        )
    if not _known(cross_fitted):
        if small:
            return f"{label}: no cross-fitted figure (in-sample: too small)"
        return f"{label} {_fixed(in_sample, digits)} {IN_SAMPLE} (no cross-fitting)"
    text = f"{label} {_fixed(cross_fitted, digits)} {CROSS_FITTED}"
    if small:
        return text + f" ({IN_SAMPLE}: too small)"
    found: Comparison = optimism(in_sample, cross_fitted, label)
    text += f" ({IN_SAMPLE} {_fixed(in_sample, digits)}"
    return text + (f" ⚠ {found.brief()}" if found.brief() else "") + ")"


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
        label,
        figures.session_model,
        figures.session_model_in_sample,
        digits,
        given_reads=figures.session_model_given_reads,
    )


def item_lead(row: ItemSummary, session_model: bool = True) -> list[str]:
    """An item's headline, the same in the CLI, the app and the reports: kappa and QWK
    cross-fitted first (in-sample beside them, or "too small"), exact agreement cross-fitted,
    the session model's figure (left out with `session_model` False: a file of one item says
    it once, on its own line); a too-small item's last part is its label (after ⚠)."""
    small = row.small
    parts = [lead_text("kappa", row.cross_fit_kappa, row.kappa, small=small)]
    if row.qwk is not None:
        parts.append(lead_text("QWK", row.cross_fit_qwk, row.qwk, small=small))
    if _known(row.cross_fit_accuracy):
        parts.append(f"exact agreement {row.cross_fit_accuracy:.1%} {CROSS_FITTED}")
    if session_model and (row.session_model is not None or row.session_model_in_sample is not None):
        label = "QWK" if row.qwk is not None else "kappa"
        parts.append("session model " + lead_text(
            label, row.session_model, row.session_model_in_sample,
            given_reads=row.session_model_given_reads,
        ))  # fmt: skip
    if small:
        parts.append("⚠ " + small_note(list(row.score_counts.values())))
    return parts


def _named(items: Sequence[str | None], total: int) -> str:
    if items == [None]:  # a file of one item, no item column: no name to quote
        return "The file"
    shown = ", ".join(f"'{item}'" for item in items[:SHOWN_ITEMS])
    more = f" and {len(items) - SHOWN_ITEMS} more" if len(items) > SHOWN_ITEMS else ""
    return f"{len(items)} of {total} item(s) ({shown}{more})"


def lead_warnings(
    rows: Sequence[tuple[str | None, Sequence[int], float | None, float | None]],
) -> list[str]:
    """The headline's warnings over a run's items, at most one line per kind. rows: per item
    (name, None for a file without an item column; answers per score value, in-sample kappa, cross-fitted kappa or None)."""
    small = [name for name, counts, _, _ in rows if too_small(counts)]
    learnt = [name for name, _, inside, crossed in rows if memorised(inside, crossed)]
    notes = []
    if small:
        one = small == [None]
        notes.append(
            f"{_named(small, len(rows))} {'has' if one else 'have'} fewer than "
            f"{ANSWERS_PER_SCORE} answers per score value {'it uses' if one else 'they use'} "
            f"beyond {'its' if one else 'their'} most common one: {'the' if one else 'a per-item'} "
            f"fit memorises them; read {'its' if one else 'their'} cross-fitted figures."
        )
    if learnt:
        notes.append(
            f"{_named(learnt, len(rows))} {'shows' if learnt == [None] else 'show'} an "
            f"in-sample kappa more than {GAP:.2f} above the cross-fitted one: lead with the "
            "cross-fitted figure."
        )
    return notes


def wrong_phrase(estimate: WrongEstimate) -> str:
    """How a line beside the flagged count says the estimate of wrong scores: 'about 61 likely
    wrong (95% 40-85, from the severities)'; where every answer was read twice the count is
    seen, not estimated: '1,010 whose reads differ (every answer read twice or more)'."""
    if estimate.low == estimate.high == estimate.count and estimate.source == SECOND_READS:
        return f"{estimate.count:,.0f} whose reads differ (every answer read twice or more)"
    return (
        f"about {estimate.count:,.0f} likely wrong (95% {estimate.low:,.0f}-"
        f"{estimate.high:,.0f}, from the {estimate.source})"
    )


def session_wrong(results) -> WrongEstimate:
    """The session's estimate of wrong scores over its items' (engine.audit.queue.flagging)."""
    return combined([result.wrong_estimate for result in results])
