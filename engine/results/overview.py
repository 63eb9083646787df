"""The items overview: one row per item of a scoring session, so a rater-lead sees at a glance
which questions are scored inconsistently (low kappa, many flags, raters disagreeing)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.input.items import SkippedItem
from engine.model.session.figures import SessionModelFigures
from engine.results.item import AuditResult
from engine.results.lead import gap_note, memorised, small_note, too_small


@dataclass(frozen=True)
class ItemSummary:
    """One item. Figures are None for a skipped item (`skipped` holds why) and where they do
    not apply (no cross-fitting, no second rater, no session model). kappa, qwk: in-sample;
    cross_fit_kappa, cross_fit_qwk: cross-fitted, the figures to lead with; session_model and
    session_model_in_sample: the session model's cross-fitted and in-sample QWK (kappa for
    unordered labels); cross_fit_accuracy: exact agreement, cross-fitted; values_used: how many
    score values the item's answers have."""

    item: str
    n: int
    score_counts: dict[str, int]
    top_k: int | None = None
    power: float | None = None
    kappa: float | None = None
    qwk: float | None = None
    cross_fit_kappa: float | None = None
    cross_fit_qwk: float | None = None
    cross_fit_accuracy: float | None = None
    session_model: float | None = None
    session_model_in_sample: float | None = None
    session_model_given_reads: bool = False
    values_used: int = 0
    flagged: int | None = None
    # The estimated wrong scores (engine.audit.queue.flagging.WrongEstimate) and its 95% interval.
    estimated_wrong: float | None = None
    estimated_wrong_low: float | None = None
    estimated_wrong_high: float | None = None
    estimated_from: str | None = None
    human_exact: float | None = None
    human_kappa: float | None = None
    skipped: str | None = None

    @property
    def small(self) -> bool:
        """Fewer than ten answers per score value used beyond the most common one
        (engine.results.lead)."""
        return self.skipped is None and too_small(list(self.score_counts.values()))

    @property
    def memorised(self) -> bool:
        """The in-sample kappa or QWK more than .05 above its cross-fitted twin."""
        return memorised(self.kappa, self.cross_fit_kappa) or memorised(
            self.qwk, self.cross_fit_qwk
        )

    @property
    def warning(self) -> str:
        """What to say beside the item's figures: too small (its in-sample figures are not
        shown, so not called memorised either), else memorised; "" when neither."""
        if self.small:
            return small_note(list(self.score_counts.values()))
        if memorised(self.kappa, self.cross_fit_kappa):
            return gap_note(self.kappa, self.cross_fit_kappa) + " (kappa)"
        if memorised(self.qwk, self.cross_fit_qwk):
            return gap_note(self.qwk, self.cross_fit_qwk) + " (QWK)"
        return ""


def is_small(result: AuditResult) -> bool:
    """Whether an audited item is too small for its scores (ItemSummary.small)."""
    return too_small(result.responses.score_counts.tolist())


def item_overview(
    results: list[AuditResult],
    skipped: list[SkippedItem],
    session_model: SessionModelFigures | None = None,
) -> list[ItemSummary]:
    """Summaries of the audited items (in file order), with the session model's figures where
    it was fitted, followed by the skipped ones."""
    rows = [_summary(result, session_model) for result in results]
    rows += [ItemSummary(s.item, s.rows, {}, skipped=s.reason) for s in skipped]
    return rows


def _summary(result: AuditResult, session_model: SessionModelFigures | None) -> ItemSummary:
    responses = result.responses
    counts = dict(zip(responses.labels, responses.score_counts.tolist()))
    human = result.second_rater.human_human if result.second_rater is not None else None
    crossed = result.cross_fit.metrics if result.cross_fit is not None else {}
    modelled = None if session_model is None else session_model.item(responses.item)
    wrong = result.wrong_estimate
    return ItemSummary(
        item=responses.item if responses.item is not None else "",
        n=len(responses),
        score_counts=counts,
        top_k=result.selected.top_k,
        power=result.selected.power,
        kappa=result.metrics["kappa"],
        qwk=result.metrics.get("qwk"),  # None for unordered text labels
        cross_fit_kappa=crossed.get("kappa"),
        cross_fit_qwk=crossed.get("qwk"),
        cross_fit_accuracy=crossed.get("accuracy"),
        session_model=None if modelled is None else modelled.cross_fitted,
        session_model_in_sample=None if modelled is None else modelled.in_sample,
        session_model_given_reads=modelled is not None and modelled.given_reads,
        values_used=int((responses.score_counts > 0).sum()),
        flagged=int(result.flagged.sum()),
        estimated_wrong=wrong.count,
        estimated_wrong_low=wrong.low,
        estimated_wrong_high=wrong.high,
        estimated_from=wrong.source,
        human_exact=None if human is None else human["exact"],
        human_kappa=None if human is None else human["kappa"],
    )
