"""The session model in a run: its agreement figures per item and over the session.

`session_model_figures` builds the session model's data from a run's items (every read of every
answer, coded on the session's pooled scale, raters numbered across items, each item's own
neighbour graph), calls engine.model.session.summary.summarise_session once, and keeps what the
outputs show: per item and pooled over the session, the QWK (kappa for unordered labels) of the
audited reads against the model's in-sample and cross-fitted decisions. The cross-fitted figure
is the one to lead with (docs/explanation/session-model.md).

`SessionModelFigures` is plain data (to_dict / from_dict), so a saved run keeps it and a
restored run shows it without the graphs it was computed from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.machine.helper import Helper
from engine.core.progress import SESSION_MODEL, Reporter
from engine.graph.neighbour_graph import NeighbourGraph
from engine.input.responses import Responses
from engine.input.scale import file_scale, pooled_labels, recode

METHOD = (
    "session model: one pseudo-likelihood over every read of every item, items and raters as "
    "random effects (empirical Bayes); cross-fitted over {folds} folds of answers within items"
)
AUTO, OFF = "auto", "off"
# Sessions of fewer reads fit their model in a few seconds: a helper process would cost about
# as much in imports as it saves (engine.core.machine.helper).
HELPER_READS = 2000


@dataclass(frozen=True)
class ModelFigures:
    """One item's (or the pooled session's) figures: `metric` (qwk, or kappa for unordered
    labels) of the audited reads against the in-sample and the cross-fitted decisions;
    given_reads: some answer has another read, which the in-sample decision of its audited read
    is given (a read of the answer itself, so the gap to the cross-fitted figure, whose models
    saw no read of the answer, is not all optimism)."""

    in_sample: float
    cross_fitted: float
    given_reads: bool = False


@dataclass(frozen=True)
class SessionModelFigures:
    """The session model's figures in a run. metric: "qwk" or "kappa"; items: item name (None
    for a file without items) -> ModelFigures, in the run's order; pooled: over every audited
    answer of the session on its pooled scale; method: how they were found; top_k: the K each
    scale group chose. (Its time is the run's timings' "session_model".)"""

    metric: str
    items: dict[str | None, ModelFigures]
    pooled: ModelFigures
    method: str
    top_k: tuple[int, ...]

    def item(self, name: str | None) -> ModelFigures | None:
        return self.items.get(name)

    def to_dict(self) -> dict:
        return {
            "metric": self.metric,
            "method": self.method,
            "top_k": list(self.top_k),
            "pooled": _figures_dict(self.pooled),
            "items": [{"item": k, **_figures_dict(v)} for k, v in self.items.items()],
        }

    @classmethod
    def from_dict(cls, values: dict) -> SessionModelFigures:
        """Read back what to_dict wrote (KeyError, TypeError or ValueError when damaged)."""
        items = {
            None if e["item"] is None else str(e["item"]): _read_figures(e) for e in values["items"]
        }
        return cls(
            str(values["metric"]),
            items,
            _read_figures(values["pooled"]),
            str(values["method"]),
            tuple(int(k) for k in values["top_k"]),
        )


def _figures_dict(figures: ModelFigures) -> dict:
    return {
        "in_sample": _clean(figures.in_sample),
        "cross_fitted": _clean(figures.cross_fitted),
        "given_reads": figures.given_reads,
    }


def _read_figures(values: dict) -> ModelFigures:
    # given_reads: absent from runs saved before 2026-11-29.
    return ModelFigures(
        _number(values["in_sample"]),
        _number(values["cross_fitted"]),
        bool(values.get("given_reads", False)),
    )


def _clean(value: float):
    return None if value is None or not np.isfinite(value) else float(value)


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def wanted(setting: str, responses: list[Responses], folds: int) -> bool:
    """Whether a run fits the session model: `session_model` "auto", cross-fitting on (its
    figure is the cross-fitted one), every item with at least `folds` answers, and either two or
    more items or some answer read more than once (one item read once is today's model)."""
    if setting != AUTO or folds < 2 or any(len(r) < folds for r in responses):
        return False
    return len(responses) > 1 or any(_read_twice(r) for r in responses)


def _read_twice(responses: Responses) -> bool:
    """Whether some answer of the item has two reads or more."""
    return responses.reads is not None and responses.reads.most(len(responses)) > 1


def check_session_memory(responses: list[Responses], setting: str, folds: int, order=None) -> int:
    """MemoryNeeded (engine.core.machine.memory) when the session model these items call for would not
    fit in memory: checked from their sizes before anything is embedded or fitted. Returns the
    bytes of its largest array (an upper bound: every read's rater counted), 0 without it."""
    from engine.model.session.design import Layout, check_fit_memory

    if not wanted(setting, responses, folds):
        return 0
    labels = pooled_labels([r.labels for r in responses], order)
    whole = file_scale(labels, order) if all(r.ordered for r in responses) else None
    raters, groups, n_reads = set(), 0, 0
    for r in responses:
        _, rater, _, _, column = _reads_of(r)
        own = {name or int(k) for name, k in zip(rater, column)}
        raters |= own
        groups += len(own)
        n_reads += len(rater)
    several = len(raters) >= 2
    layout = Layout(len(labels if whole is None else whole), len(responses), len(raters),
                    len(responses) >= 2, several, True, same_rater=several)  # fmt: skip
    return check_fit_memory(layout, n_reads, groups)


def session_items(
    responses: list[Responses], graphs: list[NeighbourGraph], order=None, wide: bool = True
):
    """The session model's items (engine.model.session.features.SessionItem): every read,
    coded on the session's pooled scale, raters numbered across the session; and that scale.

    wide: the file keeps one row per answer, a score column per read. There a read whose rater
    is not recorded counts as its column's rater (as `score_columns` without `rater_columns`
    already does): one grader per column is how such files are made, and the model's rater
    terms need it (on Mohler, two graders, the cross-fitted QWK is .553 with the columns as
    raters, .411 without). In a long file an unrecorded rater stays unknown."""
    from engine.model.session.features import SessionItem

    labels = pooled_labels([r.labels for r in responses], order)
    whole = file_scale(labels, order) if all(r.ordered for r in responses) else None
    scale = labels if whole is None else whole
    names: dict[tuple[str, str | int], int] = {}
    items = []
    for r, graph in zip(responses, graphs):
        answer, rater, score, audited, column = _reads_of(r)
        code = recode(r.labels, scale)
        keys = [("rater", x) if x else ("column", int(k)) if wide else None
                for x, k in zip(rater, column)]  # fmt: skip
        numbered = np.array([-1 if k is None else names.setdefault(k, len(names)) for k in keys])
        items.append(
            SessionItem(answer, numbered, code[score], len(scale), graph, r.ordered, audited,
                        "" if r.item is None else str(r.item))
        )  # fmt: skip
    return items, scale


def _reads_of(r: Responses):
    """(answer, rater names, score codes, audited, each read's place among its answer's reads)
    of an item's reads; one read per answer when the responses carry no reads."""
    if r.reads is not None and len(r.reads):
        reads = r.reads
        return reads.answer, reads.rater, reads.score, np.asarray(reads.first, bool), reads.rank()
    raters = r.raters or ("",) * len(r)
    n = len(r)
    return np.arange(n), tuple(raters), r.scores, np.ones(n, bool), np.zeros(n, np.int64)


def session_model_figures(
    responses: list[Responses],
    graphs: list[NeighbourGraph],
    top_k_values: tuple[int, ...],
    folds: int,
    seed: int,
    reporter: Reporter,
    order=None,
    wide: bool = True,
    helper: Helper | bool = False,
) -> SessionModelFigures:
    """Fit the session model once over the run's items and cross-fit it (`folds` folds from
    `seed`), reporting stage "session model" after each fit (which checks for cancelling).

    top_k_values: the K grid (the run's integer K values; each item uses at most N - 1); wide:
    the file's shape (`session_items`); helper: half the cross-fitting folds are fitted on a
    helper process meanwhile (engine.core.machine.helper; the same figures bit for bit): the
    run's own, or True for one started here.
    Deterministic for given inputs up to the fit's tolerance (docs/explanation/session-model.md).
    """
    from engine.model.metrics import agreement
    from engine.model.session.cross_fit import SessionOptions, distinct_top_k
    from engine.model.session.summary import scale_groups, summarise_session

    items, scale = session_items(responses, graphs, order, wide)
    options = SessionOptions(top_k_values=tuple(top_k_values), folds=folds, seed=seed)
    total = sum(
        (folds + 1) * len(distinct_top_k([items[p] for p in group], options.top_k_values))
        for group in scale_groups(items)
    )
    done = [0]

    def step() -> None:
        done[0] += 1
        reporter(SESSION_MODEL, min(done[0], total), total, "fit and cross-fit")

    reporter(SESSION_MODEL, 0, total, "session model")
    own = helper is True
    second = Helper((summarise_session.__module__,)) if own else helper or None
    try:
        summary = summarise_session(items, options, step=step, helper=second, check=reporter.check)
    finally:
        if own and isinstance(second, Helper):
            second.close()
    ordered = all(r.ordered for r in responses)
    metric = "qwk" if ordered else "kappa"
    per_item: dict[str | None, ModelFigures] = {}
    scores: list[np.ndarray] = []
    in_sample: list[np.ndarray] = []
    crossed: list[np.ndarray] = []
    for r, item, found in zip(responses, items, summary.items):
        # summarise_session cross-fits (its default): every item has cross-fitted figures.
        assert found.cross_fitted is not None and found.cross_predicted is not None
        has = found.predicted >= 0
        audited = item.score[item.audited_reads()[has]]
        per_item[r.item] = ModelFigures(
            found.in_sample[metric], found.cross_fitted[metric], _read_twice(r)
        )
        scores.append(audited)
        in_sample.append(found.predicted[has])
        crossed.append(found.cross_predicted[has])
    every = np.concatenate(scores)
    pooled = ModelFigures(
        agreement(every, np.concatenate(in_sample), len(scale), ordered)[metric],
        agreement(every, np.concatenate(crossed), len(scale), ordered)[metric],
        any(figures.given_reads for figures in per_item.values()),
    )
    return SessionModelFigures(
        metric,
        per_item,
        pooled,
        METHOD.format(folds=folds),
        tuple(group.top_k for group in summary.groups),
    )
