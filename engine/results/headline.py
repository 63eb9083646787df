"""An item's headline, built once: what `parm audit` prints for the item, what the Results
screen shows above its tabs and what report.html leads the item's evidence with. Each front
end lays the same parts out in its own way (one line; styled lines; a sentence and tags); the
rules, which figures, in which order, and what stands beside them, are here.

The parts: the configuration chosen; the figures (engine.results.lead.item_lead: kappa and QWK
cross-fitted first, exact agreement, the session model's figure); where the answers were read
twice, the model's PRMSE against the true scores (or why it is not estimable); for unordered
text labels, why QWK is missing; for an item too small for its scores, that label; the
responses flagged and the estimate of wrong scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.results.lead import item_lead, wrong_phrase

if TYPE_CHECKING:
    from engine.results.item import AuditResult
    from engine.results.session import SessionResult

# Why an item of unordered text labels has no QWK: the headline and report.json's "reason".
NOMINAL_NOTE = (
    "QWK and near agreement are left out: the score labels are text with no stated order "
    "(set score_order to give them one)"
)
SMALL_MARK = "⚠ "


@dataclass(frozen=True)
class Headline:
    """One item's headline. item: None for a file without an item column; figures: the lead
    figures, each 'kappa 0.611 cross-fitted (in-sample 0.700 ⚠ ...)'; reads: the PRMSE phrase,
    None where no answer was read twice; nominal: NOMINAL_NOTE for unordered labels; small:
    the too-small label (engine.results.lead.small_note), None for an item large enough."""

    item: str | None
    selected: str
    figures: tuple[str, ...]
    reads: str | None
    nominal: str | None
    small: str | None
    flagged: str

    def findings(self) -> list[str]:
        """The figures, then the reads' PRMSE and the nominal note, where they apply."""
        return [*self.figures, *(p for p in (self.reads, self.nominal) if p is not None)]

    def line(self) -> str:
        """The CLI's line: 'Item 1: Selected: K=15, ... kappa 0.611 cross-fitted (...);
        PRMSE 0.702 (0.650 to 0.760). 12 of 300 responses flagged, about 9 likely wrong (...).'"""
        who = "" if self.item is None else f"Item {self.item}: "
        parts = self.findings() + ([] if self.small is None else [SMALL_MARK + self.small])
        return f"{who}Selected: {self.selected}. {'; '.join(parts)}. {self.flagged}."


def selected_text(result: AuditResult) -> str:
    """'K=15, p=1, chosen by kappa over 10 configurations'."""
    best = result.selected
    graph = "dense graph" if best.top_k is None else f"K={best.top_k}"
    tried = len(result.tuning.rows)
    if tried == 1:
        return f"{graph}, p={best.power:.3g}, the only configuration tried"
    return (
        f"{graph}, p={best.power:.3g}, chosen by {result.config.selection_metric} "
        f"over {tried} configurations"
    )


def _interval(interval) -> str:
    return f"{interval.estimate:.3f} ({interval.low:.3f} to {interval.high:.3f})"


def reads_phrase(session: SessionResult, result: AuditResult) -> str | None:
    """'PRMSE 0.702 (0.650 to 0.760)' for the item whose answers were read twice, or 'PRMSE
    not estimable: why'; None where the session has no reads of the item."""
    reads = session.reads
    if reads is None:
        return None
    name = result.responses.item if result.responses.item is not None else ""
    fits = [fit for item, fit in zip(reads.items, reads.prmse) if item.name == name]
    if not fits:
        return None
    fit = fits[0]
    if fit.prmse is None or fit.prmse.estimate != fit.prmse.estimate:
        return f"PRMSE not estimable: {fit.reason or 'no figure'}"
    below = (
        ", below 0: further from the true scores than their mean" if fit.prmse.estimate < 0 else ""
    )
    return f"PRMSE {_interval(fit.prmse)}{below}"


def item_headline(session: SessionResult, k: int) -> Headline:
    """The headline of the session's k-th audited item."""
    result, row = session.results[k], session.overview[k]
    parts = item_lead(row)
    small = [p.removeprefix(SMALL_MARK) for p in parts if p.startswith(SMALL_MARK)]
    flagged = int(result.flagged.sum())
    return Headline(
        item=result.responses.item if session.by_item else None,
        selected=selected_text(result),
        figures=tuple(p for p in parts if not p.startswith(SMALL_MARK)),
        reads=reads_phrase(session, result),
        nominal=None if result.responses.ordered else NOMINAL_NOTE,
        small=small[0] if small else None,
        flagged=(
            f"{flagged:,} of {len(result.responses):,} responses flagged, "
            f"{wrong_phrase(result.wrong_estimate)}"
        ),
    )
