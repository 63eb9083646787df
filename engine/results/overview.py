"""The items overview: one row per item of a scoring session, so a rater-lead sees at a glance
which questions are scored inconsistently (low kappa, many flags, raters disagreeing)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.input.items import SkippedItem
from engine.results.item import AuditResult


@dataclass(frozen=True)
class ItemSummary:
    """One item. Figures are None for a skipped item (`skipped` holds why) and where they do
    not apply (no cross-fitting, no second rater)."""

    item: str
    n: int
    score_counts: dict[str, int]
    top_k: int | None = None
    power: float | None = None
    kappa: float | None = None
    qwk: float | None = None
    cross_fit_kappa: float | None = None
    flagged: int | None = None
    human_exact: float | None = None
    human_kappa: float | None = None
    skipped: str | None = None


def item_overview(results: list[AuditResult], skipped: list[SkippedItem]) -> list[ItemSummary]:
    """Summaries of the audited items (in file order) followed by the skipped ones."""
    rows = [_summary(result) for result in results]
    rows += [ItemSummary(s.item, s.rows, {}, skipped=s.reason) for s in skipped]
    return rows


def _summary(result: AuditResult) -> ItemSummary:
    responses = result.responses
    counts = dict(zip(responses.labels, responses.score_counts.tolist()))
    human = result.second_rater.human_human if result.second_rater is not None else None
    crossed = result.cross_fit.metrics["kappa"] if result.cross_fit is not None else None
    return ItemSummary(
        item=responses.item if responses.item is not None else "",
        n=len(responses),
        score_counts=counts,
        top_k=result.selected.top_k,
        power=result.selected.power,
        kappa=result.metrics["kappa"],
        qwk=result.metrics.get("qwk"),  # None for unordered text labels
        cross_fit_kappa=crossed,
        flagged=int(result.flagged.sum()),
        human_exact=None if human is None else human["exact"],
        human_kappa=None if human is None else human["kappa"],
    )
