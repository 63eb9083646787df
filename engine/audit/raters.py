"""Which raters need a word: for each rater of the audited scores, agreement with the model, the
share of their scores flagged, and their leniency (positive) or harshness (negative) in score
points, each with a 95% interval.

Leniency compares a rater's scores with the model's expected score E_i = sum_c p_ic v_c (v_c the
score's value in points, p_ic the fitted probabilities), within items: the residuals
d_i = v_{x_i} - E_i are decomposed as d_i = a_item + b_rater + e_i by least squares (alternating
means), so an item the model finds harder or easier is its own a_item and does not count
against the raters who happened to score it. The b's are then centred on the median rater
(among those with enough scores): the model is fitted to every rater's scores, so a lenient
rater lifts the model's expectations a little for everyone, and centring on the mean would make
every other rater look harsh; the median rater is the typical one. b_rater is the leniency;
its interval is b +/- t(0.975, n-1) sqrt(se_r^2 + se_ref^2), se_r = s_r / sqrt(n) with s_r the
standard deviation of that rater's residuals e_i, and se_ref the standard error of the median
itself (pi / (2m) times the raters' mean se^2, for m raters). Leniency is relative to the other raters of the same items: a rater who scored
an item alone cannot be compared on it. Leniency and QWK need ordered scores: for unordered text
labels (no score_order) they are None and raters are ranked by their flagged share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.audit.scale import pooled_labels, recode, score_values
from engine.model.metrics import agreement

# Below this many scores a rater's figures are listed but not judged.
MIN_RATER_SCORES = 20
LEVEL = 0.95
METHOD = (
    "leniency: rater effect b_r in d_i = a_item + b_r + e_i, d_i = score - model's expected "
    "score (points), least squares, centred on the median rater; 95% interval b_r +/- "
    "t * sqrt(se_r^2 + se_median^2), se_r = sd(e)/sqrt(n). Flagged share: Wilson 95% interval."
)


@dataclass(frozen=True)
class RaterRow:
    """One rater. Shares and agreement are over their n scores; leniency in score points.

    Intervals are None when the rater has too few scores to judge (`judged` False).
    distance: how far the rater is from the rest, max(|leniency| / its standard error,
    (flagged share - the others' share) / its standard error); the table is sorted by it.
    """

    rater: str
    n: int
    items: int
    exact: float
    kappa: float
    qwk: float | None
    flagged: int
    flagged_share: float
    flagged_low: float | None
    flagged_high: float | None
    leniency: float | None
    leniency_low: float | None
    leniency_high: float | None
    second_n: int
    second_exact: float | None
    second_kappa: float | None
    judged: bool
    distance: float


@dataclass(frozen=True)
class RaterPair:
    """Agreement between the first and the second rater of the responses both scored."""

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


@dataclass
class _Scores:
    """All audited responses with a rater, pooled over items (one entry per response)."""

    item: np.ndarray  # item index
    rater: np.ndarray  # rater names
    value: np.ndarray  # the human score in points
    expected: np.ndarray  # the model's expected score in points
    human: np.ndarray  # codes on the pooled scale (for kappa)
    model: np.ndarray
    flagged: np.ndarray
    second: np.ndarray  # pooled codes of the second score, -1 where none
    second_rater: np.ndarray
    scale: int  # categories on the pooled scale
    ordered: bool = True  # whether the scores have an order (else no leniency, no QWK)


def rater_report(results: list) -> RaterReport | None:
    """The rater table over every audited item's result; None when no rater is recorded."""
    if not results or results[0].responses.raters is None:
        return None
    scores, unassigned = _pool(results)
    if scores.rater.size == 0:
        return RaterReport([], [], unassigned)
    effects, errors = _leniency(scores) if scores.ordered else ({}, {})
    rows = [
        _row(scores, name, effects.get(name), errors.get(name)) for name in np.unique(scores.rater)
    ]
    rows.sort(key=lambda r: (not r.judged, -r.distance, r.rater))
    return RaterReport(rows, _pairs(scores), unassigned)


def _pool(results: list) -> tuple[_Scores, int]:
    order = results[0].config.score_order
    pooled = pooled_labels([result.responses.labels for result in results], order)
    parts: dict[str, list] = {
        key: [] for key in _Scores.__dataclass_fields__ if key not in ("scale", "ordered")
    }
    unassigned = 0
    for k, result in enumerate(results):
        responses = result.responses
        values = score_values(responses.labels, order)
        to_pooled = recode(responses.labels, pooled)
        raters = np.array(responses.raters, dtype=object)
        keep = raters != ""
        unassigned += int((~keep).sum())
        second = _second_codes(responses, to_pooled)
        second_raters = responses.second_raters or ("",) * len(responses)
        parts["item"].append(np.full(keep.sum(), k))
        parts["rater"].append(raters[keep])
        parts["value"].append(values[responses.scores][keep])
        parts["expected"].append((result.fitted.proba @ values)[keep])
        parts["human"].append(to_pooled[responses.scores][keep])
        parts["model"].append(to_pooled[result.predicted][keep])
        parts["flagged"].append(np.asarray(result.flagged)[keep])
        parts["second"].append(second[keep])
        parts["second_rater"].append(np.array(second_raters, dtype=object)[keep])
    joined = {key: np.concatenate(value) for key, value in parts.items()}
    ordered = all(result.responses.ordered for result in results)
    return _Scores(**joined, scale=len(pooled), ordered=ordered), unassigned


def _second_codes(responses, to_pooled: np.ndarray) -> np.ndarray:
    if responses.second_scores is None:
        return np.full(len(responses), -1)
    second = responses.second_scores
    return np.where(second >= 0, to_pooled[np.maximum(second, 0)], -1)


def _leniency(scores: _Scores, sweeps: int = 200) -> tuple[dict, dict]:
    """Rater effects b_r of d = a_item + b_r + e by alternating means, centred on the median
    judged rater, and their standard errors, which include the reference's own: se_r^2 +
    se_ref^2, se_r = sd(e over r's scores) / sqrt(n_r), se_ref^2 = pi / (2m) x the mean se^2
    of the m judged raters (the large-sample variance of a median)."""
    d = scores.value - scores.expected
    raters, rater_of = np.unique(scores.rater, return_inverse=True)
    items, item_of = np.unique(scores.item, return_inverse=True)
    n_rater = np.bincount(rater_of).astype(float)
    n_item = np.bincount(item_of).astype(float)
    b = np.zeros(raters.size)
    for _ in range(sweeps):
        a = np.bincount(item_of, d - b[rater_of]) / n_item
        new_b = np.bincount(rater_of, d - a[item_of]) / n_rater
        change = np.max(np.abs(new_b - b))
        b = new_b
        if change < 1e-12:
            break
    a = np.bincount(item_of, d - b[rater_of]) / n_item
    residuals = d - a[item_of] - b[rater_of]
    squares = (
        np.bincount(rater_of, residuals**2)
        - n_rater * (np.bincount(rater_of, residuals) / n_rater) ** 2
    )
    se = np.sqrt(np.maximum(squares, 0.0) / np.maximum(n_rater - 1, 1) / n_rater)
    # Centre on the median rater with enough scores to judge (the typical rater; see above).
    judged = np.flatnonzero(n_rater >= MIN_RATER_SCORES)
    pool = judged if judged.size else np.arange(raters.size)
    middle = pool[np.argsort(b[pool], kind="stable")]
    middle = middle[(middle.size - 1) // 2 : middle.size // 2 + 1]  # one or two raters
    b -= b[middle].mean()
    # The median of m raters' effects varies about pi / (2m) times as much as one effect
    # (at most as much as one: with a single rater the reference is that rater).
    se_ref = np.sqrt(min(1.0, np.pi / (2 * pool.size)) * np.mean(se[pool] ** 2))
    total = np.sqrt(se**2 + se_ref**2)
    return dict(zip(raters.tolist(), b.tolist())), dict(zip(raters.tolist(), total.tolist()))


def wilson(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval for a proportion."""
    # Imported here: scipy.stats takes about a second to import, and most runs have no raters.
    from scipy.stats import norm

    z = norm.ppf(0.5 + level / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def _row(scores: _Scores, name: str, effect: float | None, spread: float | None) -> RaterRow:
    mine = scores.rater == name
    n = int(mine.sum())
    figures = agreement(scores.human[mine], scores.model[mine], scores.scale, scores.ordered)
    flagged = int(scores.flagged[mine].sum())
    share = flagged / n
    judged = n >= MIN_RATER_SCORES
    second = mine & (scores.second >= 0)
    second_figures = (
        agreement(scores.human[second], scores.second[second], scores.scale)
        if second.any()
        else None
    )
    row = dict(
        rater=name, n=n, items=int(np.unique(scores.item[mine]).size),
        exact=figures["accuracy"], kappa=figures["kappa"], qwk=figures.get("qwk"),
        flagged=flagged, flagged_share=share, flagged_low=None, flagged_high=None,
        leniency=effect, leniency_low=None, leniency_high=None,
        second_n=int(second.sum()),
        second_exact=None if second_figures is None else second_figures["accuracy"],
        second_kappa=None if second_figures is None else second_figures["kappa"],
        judged=judged, distance=0.0,
    )  # fmt: skip
    if not judged:
        return RaterRow(**{**row, "leniency": None})
    low, high = wilson(flagged, n)
    others = ~mine
    rest = scores.flagged[others].mean() if others.any() else share
    flag_spread = np.sqrt(max(rest * (1 - rest), 1e-12) / n)
    distance = (share - rest) / flag_spread
    judged_row = {**row, "flagged_low": low, "flagged_high": high}
    if effect is None:  # unordered labels: no leniency
        return RaterRow(**{**judged_row, "distance": float(distance)})
    from scipy.stats import t as student

    half = float(student.ppf(0.5 + LEVEL / 2, n - 1)) * spread
    distance = max(abs(effect) / max(spread, 1e-12), distance)
    return RaterRow(
        **{
            **judged_row,
            "leniency_low": effect - half,
            "leniency_high": effect + half,
            "distance": float(distance),
        }
    )


def _pairs(scores: _Scores) -> list[RaterPair]:
    """First rater x second rater, over the responses both scored (when second raters are
    recorded), most responses first."""
    both = (scores.second >= 0) & (scores.second_rater != "")
    pairs = []
    keys = sorted({(a, b) for a, b in zip(scores.rater[both], scores.second_rater[both])})
    for first, second in keys:
        mine = both & (scores.rater == first) & (scores.second_rater == second)
        figures = agreement(scores.human[mine], scores.second[mine], scores.scale, scores.ordered)
        pairs.append(
            RaterPair(
                first,
                second,
                int(mine.sum()),
                figures["accuracy"],
                figures["kappa"],
                figures.get("qwk"),
            )  # fmt: skip
        )
    pairs.sort(key=lambda p: (-p.n, p.first, p.second))
    return pairs
