"""Which raters need a word: for each rater, over every read they gave (the audited one or not:
engine.audit.raters.every_read, so a wide file and the same reads in long form count the same
raters), agreement with the model, the share of their scores the model would change, their
leniency (positive) or harshness (negative) in score points, each with a 95% interval, and
their effects and verdict (engine.audit.raters.effects).

Leniency compares a rater's scores with the expected score E_i = sum_c p_ic v_c (v_c the score's
value in points, p_ic the probabilities from a model fitted without that rater's scores,
engine.audit.raters.expectation; the fitted PARM probabilities for results saved before it),
within items: the residuals d_i = v_{x_i} - E_i are decomposed as d_i = a_item + b_rater + e_i
by least squares weighted by 1/sqrt(W_i) (alternating weighted means; see
engine.audit.raters.effects.certainty_weights), so an item the model finds harder or easier is
its own a_item and does not count against the raters who happened to score it. The b's are then
centred on the median of the reference raters (engine.audit.raters.effects: the largest group of
judged raters whose leniencies agree, with no verdict), and combined with the paired leniency
from co-raters' reads of the same answers (engine.audit.raters.pairs): the model is fitted to the raters' scores, so a lenient rater lifts
the model's expectations a little for the others, and centring on the mean would make every
other rater look harsh; the median rater is the typical one. Its interval is b +/- t(0.975, n-1)
sqrt(se_r^2 + se_ref^2), se_r the robust (sandwich) standard error of the rater's weighted mean
residual (s_r / sqrt(n) with equal weights), and se_ref the standard error of the median itself
(pi / (2m) times the reference raters' mean se^2, for m of them). Leniency is relative to the
other raters of the same items: a rater who scored an item alone cannot be compared on it.
With an expert score column each rater's accuracy on the expert-scored answers is reported,
and from rater_expert.MIN_EXPERT_READS of them leniency is against the expert
(engine.audit.raters.expert). Leniency and QWK need ordered scores: for unordered text labels (no score_order) they are None
and raters are ranked by that share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from engine.audit.queue.severity import flags
from engine.audit.raters import expert as rater_expert
from engine.audit.raters.bias import BiasCell
from engine.audit.raters.effects import RaterEffects, assess
from engine.audit.raters.every_read import EveryRead, ReadPairs, every_read, read_pairs, read_proba
from engine.audit.raters.expert import ExpertFigures, ExpertReads
from engine.audit.raters.fit import moments
from engine.audit.raters.pairs import CoReads, co_reads, join
from engine.audit.raters.verdicts import verdict_words
from engine.audit.resample import weighted_mean
from engine.input.responses import Responses
from engine.input.scale import pooled_labels, recode, score_values
from engine.input.settings.config import AuditConfig
from engine.model.metrics import agreement
from engine.model.pseudo_likelihood import FittedPARM

# Below this many scores a rater's figures are listed but not judged.
MIN_RATER_SCORES = 20
LEVEL = 0.95
METHOD = (
    "leniency: rater effect b_r in d_i = a_item + b_r + e_i, d_i = score - model's expected "
    "score (points; E without the rater's own scores), least squares weighted by 1/sqrt(W) "
    "(W the model's variance of the score), combined by inverse variance with the paired "
    "differences from co-raters' reads of the same answers where there are any, centred on "
    "the median of the reference raters (the largest group of raters that agree); "
    "95% interval b_r +/- t * sqrt(se_r^2 + se_median^2), se_r the weighted mean's sandwich "
    "standard error. Model-differs share: Wilson 95% interval."
)


# The verdict of a rater with too few scores to judge (the rater table, every report).
NOT_JUDGED = "too few to judge"


@dataclass(frozen=True)
class RaterRow:
    """One rater. Shares and agreement are over their n scores; leniency in score points.

    Intervals are None when the rater has too few scores to judge (`judged` False).
    distance: how far the rater is from the rest, max(|leniency| / its standard error,
    (model-differs share - the others' share) / its standard error); the table is sorted by it.
    """

    rater: str
    n: int
    items: int
    exact: float
    kappa: float
    qwk: float | None
    model_differs: int
    model_differs_share: float
    model_differs_low: float | None
    model_differs_high: float | None
    leniency: float | None
    leniency_low: float | None
    leniency_high: float | None
    second_n: int
    second_exact: float | None
    second_kappa: float | None
    judged: bool
    distance: float
    effects: RaterEffects | None = None

    @property
    def verdict(self) -> str:
        """'lenient, drifting', 'fine', or NOT_JUDGED for a rater too few to judge (every rater
        has a verdict in every output)."""
        return NOT_JUDGED if self.effects is None else verdict_words(self.effects.verdicts)


@dataclass(frozen=True)
class RaterPair:
    """Agreement between two raters over the answers both read."""

    first: str
    second: str
    n: int
    exact: float
    kappa: float
    qwk: float | None


@dataclass(frozen=True)
class RaterReport:
    rows: list[RaterRow]
    pairs: list[RaterPair]
    unassigned: int
    method: str = METHOD
    bias: list[BiasCell] = field(default_factory=list)
    rater_left_out: bool = True  # E from models without each rater's own scores
    timed: bool = False  # a time column was given (drift)
    # {rater: (accuracy, low, high)}: the consensus's reliability, where answers are read twice
    # or more (engine.audit.reads.reads_audit).
    reliability: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    # {rater: figures against the expert} of raters with an expert-scored read, None without an
    # expert column (engine.audit.raters.expert); anchored: leniency is against the expert.
    expert: dict[str, ExpertFigures] | None = None
    anchored: bool = False

    def listed_bias(self, rater: str | None = None) -> list[BiasCell]:
        """The rater x item cells beyond the rule (of one rater, when given)."""
        return [c for c in self.bias if c.listed and (rater is None or c.rater == rater)]


class ItemFit(Protocol):
    """What the rater table reads of one audited item: its responses (scores, raters, second
    scores), its settings (score_order), the fit's probabilities, its predictions and flags.
    engine.results.item.AuditResult is one."""

    @property
    def responses(self) -> Responses: ...

    @property
    def config(self) -> AuditConfig: ...

    @property
    def fitted(self) -> FittedPARM: ...

    @property
    def predicted(self) -> np.ndarray: ...

    @property
    def model_differs(self) -> np.ndarray: ...

    @property
    def rater_proba(self) -> np.ndarray | None: ...


@dataclass
class _Scores:
    """Every read with a rater, pooled over items (one entry per read)."""

    item: np.ndarray  # item index
    rater: np.ndarray  # rater names
    value: np.ndarray  # the human score in points
    expected: np.ndarray  # the model's expected score in points
    human: np.ndarray  # codes on the pooled scale (for kappa)
    model: np.ndarray  # the model's prediction of the read's answer, on the pooled scale
    flagged: np.ndarray  # the model prefers another score than the read's
    position: np.ndarray  # the read's answer's position in its item's result
    variance: np.ndarray  # W: the model's variance of the score (points^2)
    kurtosis: np.ndarray  # C: its fourth central moment
    middle: np.ndarray  # the model's P(a score strictly inside the item's scale)
    inside: np.ndarray  # whether the score is strictly inside the item's scale
    low: np.ndarray  # the model's P(the item's lowest score)
    high: np.ndarray  # the model's P(its highest score)
    lowest: np.ndarray  # the item's lowest score (points)
    highest: np.ndarray  # the item's highest score (points)
    own: np.ndarray  # the model's probability of the score given
    square: np.ndarray  # sum_k p_k^2
    cube: np.ndarray  # sum_k p_k^3
    time: np.ndarray  # when the score was given (NaN: not recorded)
    scale: int  # categories on the pooled scale
    ordered: bool = True  # whether the scores have an order (else no leniency, no QWK)
    item_names: tuple = ()  # each item index's name
    rater_left_out: bool = True  # whether E came from models without the rater's scores
    co: CoReads = field(default_factory=CoReads)  # pairs of reads of one answer (every read)
    expert: ExpertReads = field(default_factory=ExpertReads)  # reads of expert-scored answers
    pairs: ReadPairs = field(default_factory=ReadPairs)  # two raters' reads of one answer
    cluster: np.ndarray | None = None  # each read's answer, numbered over the session (co's)

    @property
    def at_low(self) -> np.ndarray:
        """Whether each score is its item's lowest."""
        return self.value == self.lowest

    @property
    def at_high(self) -> np.ndarray:
        """Whether each score is its item's highest."""
        return self.value == self.highest


def rater_report(results: Sequence[ItemFit]) -> RaterReport | None:
    """The rater table over every audited item's result; None when no rater is recorded."""
    if not results or results[0].responses.raters is None:
        return None
    scores, unassigned = _pool(results)
    if scores.rater.size == 0:
        return RaterReport([], [], unassigned)
    effects, cells = _assess(scores)
    names = np.unique(scores.rater)
    rows = [_row(scores, name, effects.get(name)) for name in names]
    rows.sort(key=lambda r: (not r.judged, -r.distance, r.rater))
    expert = None
    if any(result.responses.expert is not None for result in results):
        expert = rater_expert.figures(scores.expert, np.unique(np.r_[names, scores.expert.rater]),
                                      scores.ordered)  # fmt: skip
    anchored = any(e.anchored for e in effects.values())
    method = METHOD + (rater_expert.METHOD if anchored else "")
    return RaterReport(rows, _pairs(scores), unassigned, method=method, bias=cells,
                       rater_left_out=scores.rater_left_out, timed=_timed(scores),
                       expert=expert, anchored=anchored)  # fmt: skip


def _timed(scores: _Scores) -> bool:
    return bool(np.isfinite(scores.time).any())


def _pool(results: Sequence[ItemFit]) -> tuple[_Scores, int]:
    """Every item's reads with a rater, on the pooled scale, as one _Scores; and how many
    reads have no rater."""
    order = results[0].config.score_order
    pooled = pooled_labels([result.responses.labels for result in results], order)
    reads = [every_read(result.responses) for result in results]
    parts = [_item_scores(k, result, reads[k], pooled, order) for k, result in enumerate(results)]
    joined = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    unassigned = sum(len(r) for r in reads) - joined["rater"].size
    offsets = np.cumsum([0] + [len(result.responses) for result in results])
    answers = np.concatenate([offsets[k] + r.answer for k, r in enumerate(reads)])
    codes = np.concatenate([recode(result.responses.labels, pooled)[r.code]
                            for result, r in zip(results, reads)])  # fmt: skip
    raters = np.concatenate([r.rater for r in reads])
    items = np.concatenate([np.full(len(r), k) for k, r in enumerate(reads)])
    pooled_scores = _Scores(
        **joined,
        scale=len(pooled),
        ordered=all(result.responses.ordered for result in results),
        item_names=tuple(str(result.responses.item) for result in results),
        rater_left_out=all(result.rater_proba is not None for result in results),
        co=join(_item_pairs(results, reads, order)),
        expert=rater_expert.session_reads(results, order),
        pairs=read_pairs(answers, raters, codes, items),
        cluster=answers[raters != ""],
    )
    return pooled_scores, unassigned


def _item_pairs(results, reads, order) -> list[CoReads]:
    """Each item's pairs of reads of one answer (every read), answers numbered over the
    session."""
    parts, base = [], 0
    for result, r in zip(results, reads):
        values = score_values(result.responses.labels, order)
        parts.append(co_reads(r.answer, r.rater, values[r.code], base))
        base += len(result.responses)
    return parts


def _item_scores(k: int, result, reads: EveryRead, pooled, order) -> dict[str, np.ndarray]:
    """Item k's reads that have a rater: each _Scores array's part (in its fields' order)."""
    responses = result.responses
    values = score_values(responses.labels, order)
    to_pooled = recode(responses.labels, pooled)
    keep = reads.rater != ""
    proba = read_proba(result, reads)
    m = moments(proba, values)
    given = values[reads.code]
    predicted = np.asarray(result.predicted)[reads.answer]
    arrays = {
        "item": np.full(len(reads), k),
        "rater": reads.rater,
        "value": given,
        "position": reads.answer,
        "expected": m.expected,
        "variance": m.variance,
        "kurtosis": m.kurtosis,
        "middle": m.middle,
        "inside": (given > values.min()) & (given < values.max()),
        "low": m.low,
        "high": m.high,
        "lowest": np.full(len(reads), values.min()),
        "highest": np.full(len(reads), values.max()),
        "own": proba[np.arange(len(reads)), reads.code],
        "square": np.sum(proba**2, axis=1),
        "cube": np.sum(proba**3, axis=1),
        "time": reads.time,
        "human": to_pooled[reads.code],
        "model": to_pooled[predicted],
        "flagged": flags(predicted, reads.code),
    }
    return {key: array[keep] for key, array in arrays.items()}


def _assess(scores: _Scores):
    names, rater_of = np.unique(scores.rater, return_inverse=True)
    judged = np.bincount(rater_of) >= MIN_RATER_SCORES
    return assess(scores, judged, names, rater_of)


def wilson(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval for a proportion."""
    # Imported here: scipy.stats takes about a second to import, and most runs have no raters.
    from scipy.special import ndtri

    z = ndtri(0.5 + level / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def _row(scores: _Scores, name: str, effects: RaterEffects | None) -> RaterRow:
    mine = scores.rater == name
    n = int(mine.sum())
    figures = agreement(scores.human[mine], scores.model[mine], scores.scale, scores.ordered)
    flagged = int(scores.flagged[mine].sum())
    share = flagged / n
    judged = n >= MIN_RATER_SCORES
    effect = None if effects is None else effects.leniency
    spread = None if effects is None else effects.leniency_se
    own, others = scores.pairs.of(name)
    second_figures = agreement(own, others, scores.scale) if own.size else None
    row: dict[str, Any] = dict(  # a RaterRow's fields, of their several types
        rater=name, n=n, items=int(np.unique(scores.item[mine]).size),
        exact=figures["accuracy"], kappa=figures["kappa"], qwk=figures.get("qwk"),
        model_differs=flagged, model_differs_share=share, model_differs_low=None,
        model_differs_high=None,
        leniency=effect, leniency_low=None, leniency_high=None,
        second_n=_reread(scores, mine),
        second_exact=None if second_figures is None else second_figures["accuracy"],
        second_kappa=None if second_figures is None else second_figures["kappa"],
        judged=judged, distance=0.0, effects=effects,
    )  # fmt: skip
    if not judged:
        return RaterRow(**{**row, "leniency": None})
    low, high = wilson(flagged, n)
    others = ~mine
    rest = scores.flagged[others].mean() if others.any() else share
    flag_spread = np.sqrt(max(rest * (1 - rest), 1e-12) / n)
    distance = (share - rest) / flag_spread
    judged_row = {**row, "model_differs_low": low, "model_differs_high": high}
    if effect is None:  # unordered labels: no leniency
        return RaterRow(**{**judged_row, "distance": float(distance)})
    from scipy.special import stdtrit

    assert spread is not None  # the leniency's standard error, set with it (ordered scores)
    half = float(stdtrit(n - 1, 0.5 + LEVEL / 2)) * spread
    distance = max(abs(effect) / max(spread, 1e-12), distance)
    return RaterRow(
        **{
            **judged_row,
            "leniency_low": effect - half,
            "leniency_high": effect + half,
            "distance": float(distance),
        }
    )


def _reread(scores: _Scores, mine: np.ndarray) -> int:
    """How many of the rater's reads are of answers another rater read too."""
    _, answer, count = np.unique(np.stack([scores.item, scores.position]), axis=1,
                                 return_inverse=True, return_counts=True)  # fmt: skip
    return int(np.sum(count[answer.ravel()][mine] > 1))


def _by_item(a, b, item, scale: int, ordered: bool) -> dict[str, float]:
    """agreement() of each item's pairs, the items' figures averaged weighted by their pairs
    (figures that are not finite, e.g. kappa where both raters gave one score, left out)."""
    items, counts = np.unique(item, return_counts=True)
    each = [agreement(a[item == k], b[item == k], scale, ordered) for k in items]
    return {name: float(weighted_mean(np.array([f[name] for f in each], float), counts))
            for name in each[0]}  # fmt: skip


def _pairs(scores: _Scores) -> list[RaterPair]:
    """Each pair of raters once, over the answers both read (whichever read first: kappa and
    QWK do not change when the two raters swap places), most answers first. Over several items
    each figure is the mean of the pair's item figures weighted by the answers both read in each,
    as the session's agreement table has it (engine.audit.reads.agreement): one confusion table
    of every item's scores would credit the raters for telling the items apart (on Powergrading's
    binary scores, kappa .737 pooled against .784 per item, where QWK equals kappa)."""
    pairs = scores.pairs
    swap = pairs.a > pairs.b
    low = np.where(swap, pairs.b, pairs.a)
    high = np.where(swap, pairs.a, pairs.b)
    a = np.where(swap, pairs.code_b, pairs.code_a)
    b = np.where(swap, pairs.code_a, pairs.code_b)
    found = []
    for one, other in sorted(set(zip(low, high))):
        mine = (low == one) & (high == other)
        figures = _by_item(a[mine], b[mine], pairs.item[mine], scores.scale, scores.ordered)
        found.append(RaterPair(one, other, int(mine.sum()), figures["accuracy"],
                               figures["kappa"], figures.get("qwk")))  # fmt: skip
    found.sort(key=lambda p: (-p.n, p.first, p.second))
    return found
