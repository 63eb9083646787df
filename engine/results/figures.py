"""The figures a run is known by: how many responses, how many flagged, kappa and QWK, and each
item's selected K and p. Saved runs keep them (engine.saved), so a list of a file's runs and
the comparison of a re-run with the run before it need no result loaded again.

For a session of several items, kappa and QWK are over every audited response at once, with
the items' scores pooled on one scale (`ReviewSet`): the human scores against the model's
predicted scores, as engine.model.metrics computes them. For a file of one item they are that
item's own figures. Each has its cross-fitted twin (`cross_kappa`, `cross_qwk`: every item's
cross-fitted predictions, pooled the same way), the figure a headline leads with
(engine.results.lead), and the session model's pooled QWK (kappa for unordered labels) where the
run fitted it.

Only the standard library at import time: a saved run's figures are read with session.json,
before numpy is loaded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.results.item import AuditResult
    from engine.results.session import SessionResult


@dataclass(frozen=True)
class ItemFigures:
    """One item's figures. item: None for a file audited as a whole; top_k: the selected K
    (None: the dense graph); qwk: None for scores without an order; cross_kappa, cross_qwk:
    the cross-fitted twins (None without cross-fitting, and in runs saved before them)."""

    item: str | None
    responses: int
    flagged: int
    kappa: float
    qwk: float | None
    top_k: int | None
    power: float
    cross_kappa: float | None = None
    cross_qwk: float | None = None


@dataclass(frozen=True)
class RunFigures:
    """A run's figures over all its items (kappa and QWK pooled, see the module docstring) and
    each item's own, in the run's order of items."""

    responses: int
    flagged: int
    kappa: float
    qwk: float | None
    items: tuple[ItemFigures, ...]
    cross_kappa: float | None = None
    cross_qwk: float | None = None
    session_model: float | None = None
    session_model_in_sample: float | None = None
    session_model_given_reads: bool = False

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
                cross_kappa=_maybe_float(entry.get("cross_kappa")),
                cross_qwk=_maybe_float(entry.get("cross_qwk")),
            )
            for entry in values["items"]
        )
        return cls(
            responses=int(values["responses"]),
            flagged=int(values["flagged"]),
            kappa=float(values["kappa"]),
            qwk=_maybe_float(values["qwk"]),
            items=items,
            # Absent from runs saved before the cross-fitted headline.
            cross_kappa=_maybe_float(values.get("cross_kappa")),
            cross_qwk=_maybe_float(values.get("cross_qwk")),
            session_model=_maybe_float(values.get("session_model")),
            session_model_in_sample=_maybe_float(values.get("session_model_in_sample")),
            session_model_given_reads=bool(values.get("session_model_given_reads", False)),
        )


@dataclass(frozen=True)
class FigureChange:
    """One figure of a run beside the run before it. name: kappa, qwk, flagged, top_k or power;
    how: for kappa and QWK, "cross-fitted" where both runs have that figure (the one a headline
    leads with), else "in-sample"; difference: now - before (None where either is missing, or
    for K: the dense graph)."""

    name: str
    before: float | int | None
    now: float | int | None
    difference: float | int | None
    how: str = ""

    def comparison(self):
        """kappa and QWK as engine.results.compare states them (no limit: a change)."""
        from engine.results.compare import compare

        label = f"{self.name} {self.how}".strip()
        return compare(f"{label} now", self.now, "the run before", self.before)


# Each agreement figure's cross-fitted twin, the one a re-run is judged by where both runs have it.
CROSS_TWIN = {"kappa": "cross_kappa", "qwk": "cross_qwk"}


def figure_changes(
    now: RunFigures | ItemFigures, before: RunFigures | ItemFigures
) -> tuple[FigureChange, ...]:
    """Kappa, QWK (cross-fitted where both runs have it) and flagged of two runs (or of one
    item in two runs), and for one item its selected K and p: what a re-run changed. A figure
    neither run has (QWK of nominal scores) is left out, not written as "— → —"."""
    names = ["kappa", "qwk", "flagged"]
    if isinstance(now, ItemFigures) and isinstance(before, ItemFigures):
        names += ["top_k", "power"]
    elif (
        isinstance(now, RunFigures) and isinstance(before, RunFigures)
        and now.selected is not None and before.selected is not None
    ):  # fmt: skip
        names += ["top_k", "power"]
    found = []
    for name in names:
        how, field = "", name
        if name in CROSS_TWIN:
            crossed = CROSS_TWIN[name]
            both = all(getattr(run, crossed, None) is not None for run in (now, before))
            how, field = ("cross-fitted", crossed) if both else ("in-sample", name)
        a, b = _value(before, field), _value(now, field)
        if a is None and b is None:
            continue
        difference = None if a is None or b is None else b - a
        found.append(FigureChange(name, a, b, difference, how))
    return tuple(found)


def _value(figures: RunFigures | ItemFigures, name: str):
    """A figure of a run or item; K and p of a run of one item are its item's."""
    if isinstance(figures, RunFigures) and name in ("top_k", "power"):
        return getattr(figures.items[0], name)
    return getattr(figures, name)


def _maybe_float(value) -> float | None:
    return None if value is None else float(value)


def item_figures(result: AuditResult) -> ItemFigures:
    metrics = result.metrics
    qwk = metrics.get("qwk")  # absent for unordered text labels
    crossed = {} if result.cross_fit is None else result.cross_fit.metrics
    return ItemFigures(
        item=result.responses.item,
        responses=len(result.responses),
        flagged=int(result.flagged.sum()),
        kappa=float(metrics["kappa"]),
        qwk=None if qwk is None else float(qwk),
        top_k=result.selected.top_k,
        power=float(result.selected.power),
        cross_kappa=_maybe_float(crossed.get("kappa")),
        cross_qwk=_maybe_float(crossed.get("qwk")),
    )


def run_figures(session: SessionResult) -> RunFigures:
    """The figures of a run (see the module docstring)."""
    from engine.model.metrics import agreement

    items = tuple(item_figures(result) for result in session.results)
    modelled = session.session_model
    extra: dict[str, Any] = {
        "session_model": None if modelled is None else _maybe_float(modelled.pooled.cross_fitted),
        "session_model_in_sample": None if modelled is None else modelled.pooled.in_sample,
        "session_model_given_reads": modelled is not None and modelled.pooled.given_reads,
    }
    if len(items) == 1:
        only = items[0]
        crossed = session.results[0].cross_fit
        figures = {} if crossed is None else crossed.metrics
        return RunFigures(
            only.responses, only.flagged, only.kappa, only.qwk, items,
            _maybe_float(figures.get("kappa")), _maybe_float(figures.get("qwk")), **extra,
        )  # fmt: skip
    review = session.review
    responses = review.responses
    n, ordered = len(responses.labels), responses.ordered
    pooled = agreement(responses.scores, review.predicted, n, ordered)
    crossed = _pooled_cross_fit(session)
    cross = {} if crossed is None else agreement(responses.scores, crossed, n, ordered)
    return RunFigures(
        responses=len(responses),
        flagged=int(review.flagged.sum()),
        kappa=float(pooled["kappa"]),
        qwk=_maybe_float(pooled.get("qwk")),
        items=items,
        cross_kappa=_maybe_float(cross.get("kappa")),
        cross_qwk=_maybe_float(cross.get("qwk")),
        **extra,
    )


def _pooled_cross_fit(session: SessionResult):
    """(N,) every item's cross-fitted predictions on the review's pooled scale, in its order;
    None when an item was not cross-fitted."""
    import numpy as np

    from engine.input.scale import recode

    labels = session.review.responses.labels
    parts = []
    for result in session.results:
        if result.cross_fit is None:
            return None
        code = recode(result.responses.labels, labels)
        parts.append(code[np.asarray(result.cross_fit.predicted)])
    return np.concatenate(parts)
