"""The figures a run is known by: how many responses, how many flagged, kappa and QWK, and each
item's selected K and p. Saved runs keep them (engine.saved), so a list of a file's runs and
the comparison of a re-run with the run before it need no result loaded again.

For a session of several items, kappa and QWK are over every audited response at once, with
the items' scores pooled on one scale (`ReviewSet`): the human scores against the model's
predicted scores, as engine.model.metrics computes them. For a file of one item they are that
item's own figures.

Only the standard library at import time: a saved run's figures are read with session.json,
before numpy is loaded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.results.item import AuditResult
    from engine.results.session import SessionResult


@dataclass(frozen=True)
class ItemFigures:
    """One item's figures. item: None for a file audited as a whole; top_k: the selected K
    (None: the dense graph); qwk: None for scores without an order."""

    item: str | None
    responses: int
    flagged: int
    kappa: float
    qwk: float | None
    top_k: int | None
    power: float


@dataclass(frozen=True)
class RunFigures:
    """A run's figures over all its items (kappa and QWK pooled, see the module docstring) and
    each item's own, in the run's order of items."""

    responses: int
    flagged: int
    kappa: float
    qwk: float | None
    items: tuple[ItemFigures, ...]

    def item(self, name: str | None) -> ItemFigures | None:
        """The figures of the item with this name (None when the run had no such item)."""
        return next((figures for figures in self.items if figures.item == name), None)

    @property
    def selected(self) -> tuple[int | None, float] | None:
        """The selected (K, p) of a file of one item; None for several items (each selects
        its own)."""
        if len(self.items) != 1:
            return None
        return self.items[0].top_k, self.items[0].power

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> RunFigures:
        """Read back what to_dict wrote (KeyError, TypeError or ValueError when damaged)."""
        items = tuple(
            ItemFigures(
                item=None if entry["item"] is None else str(entry["item"]),
                responses=int(entry["responses"]),
                flagged=int(entry["flagged"]),
                kappa=float(entry["kappa"]),
                qwk=_maybe_float(entry["qwk"]),
                top_k=None if entry["top_k"] is None else int(entry["top_k"]),
                power=float(entry["power"]),
            )
            for entry in values["items"]
        )
        return cls(
            responses=int(values["responses"]),
            flagged=int(values["flagged"]),
            kappa=float(values["kappa"]),
            qwk=_maybe_float(values["qwk"]),
            items=items,
        )


def _maybe_float(value) -> float | None:
    return None if value is None else float(value)


def item_figures(result: AuditResult) -> ItemFigures:
    metrics = result.metrics
    qwk = metrics.get("qwk")  # absent for unordered text labels
    return ItemFigures(
        item=result.responses.item,
        responses=len(result.responses),
        flagged=int(result.flagged.sum()),
        kappa=float(metrics["kappa"]),
        qwk=None if qwk is None else float(qwk),
        top_k=result.selected.top_k,
        power=float(result.selected.power),
    )


def run_figures(session: SessionResult) -> RunFigures:
    """The figures of a run (see the module docstring)."""
    from engine.model.metrics import agreement

    items = tuple(item_figures(result) for result in session.results)
    if len(items) == 1:
        only = items[0]
        return RunFigures(only.responses, only.flagged, only.kappa, only.qwk, items)
    review = session.review
    responses = review.responses
    pooled = agreement(responses.scores, review.predicted, len(responses.labels), responses.ordered)
    qwk = pooled.get("qwk")
    return RunFigures(
        responses=len(responses),
        flagged=int(review.flagged.sum()),
        kappa=float(pooled["kappa"]),
        qwk=None if qwk is None else float(qwk),
        items=items,
    )
