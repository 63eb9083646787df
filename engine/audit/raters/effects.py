"""Each rater's effects against the reference raters: leniency, noise (infit or, for unordered
labels, disagreement), central tendency, drift, the rater x item bias cells and the verdicts.

Every effect is relative. The model's probabilities are fitted to the raters themselves and are
not equally well calibrated on every kind of data (in bench_raters.py the neutral raters' median
outfit is 0.98 on ASAP short answers but 1.34 on Mohler's items of 30 answers), so each rater is
compared with the typical rater: the median of the reference raters. The reference raters
(_reference_members) are the judged raters (at least MIN_RATER_SCORES scores) less those a
dragged reference cannot explain (central tendency or drifting against the median of all),
then the largest group of them whose leniencies agree (engine.audit.raters.pairs), then,
until it settles, those of the group with no verdict (at least three at each step). A median of
all raters is dragged when up to half of them push scores the same way, and calls the neutral
ones harsh (issue 35). With enough validity papers (the lead's expert scores of some answers,
engine.audit.raters.expert) leniency is measured against the expert instead, and the reference
raters are those it calls neither lenient nor harsh. A relative figure's standard error includes the reference's own: se^2 +
(pi / 2m) x the reference raters' mean se^2 (the large-sample variance of a median of m).

    leniency   b_r - median b (points; b from d = X - E = a_item + b_rater + e, least squares
               weighted by 1/sqrt(W_i): bench_raters.py found planted shifts more often at the
               same false alarms than with equal weights, as the answers the model cannot
               place add most of the noise), combined by inverse variance with the paired
               leniency from co-raters' reads of the same answers where the rater has at least
               rater_pairs.MIN_PAIRS of them (engine.audit.raters.pairs)
    noise      infit_r / median infit (infit and outfit around the main-effects expectation
               E_i + a_item + b_rater, as FACETS computes fit with the rater's severity in
               it, from the unweighted fit), tested on the log scale with the delta-method
               standard error of infit = sum r_i^2 / sum W_i: se^2 = sum (r_i^2 - infit W_i)^2 /
               (sum W_i)^2 (empirical, so it holds when the model's W is off);
               unordered labels: the disagreement ratio in its place (engine.audit.raters.fit)
    central    the middle categories' excess (observed share of scores strictly inside the
               item's scale minus the model's expected share) minus the reference's, with its
               binomial standard error sqrt(sum P(1 - P)) / n; the same for the item's lowest
               and its highest score (low_z, high_z: a harsh rater at a ceiling fills the
               middle but uses the lowest score more, a noisy rater both ends); and the slope
               of (X - E) on E within the rater minus the reference median slope (HC3)
    drift      engine.audit.raters.drift on u = d - a_item (the weighted fit's), weighted as leniency
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.audit.raters import expert as rater_expert
from engine.audit.raters import fit as rater_fit
from engine.audit.raters import pairs as rater_pairs
from engine.audit.raters.additive import floored, two_way
from engine.audit.raters.bias import BiasCell, Reads, bias_cells
from engine.audit.raters.drift import Drift, rater_drift
from engine.audit.raters.verdicts import LENIENCY_Z, Verdict, is_bias_listed, verdicts

# Verdicts a dragged reference cannot give: drift is measured within the rater, central
# tendency by the use of the scale's middle and ends. Not noisy: on a scale whose scores sit at
# its top (Mohler), raters pushing scores up have a lower infit, and a median of all then calls
# the neutral raters noisy (bench_raters.py --up-only, tuning seed 36: 32% of Mohler's neutral
# raters got a verdict with noisy here, none without).
SHIFT_FREE = {"central tendency", "drifting"}


@dataclass(frozen=True)
class RaterEffects:
    """One judged rater's effects. Figures that need ordered scores are None for unordered
    labels (disagreement is their fit); drift is None without a time column."""

    leniency: float | None
    leniency_se: float | None
    leniency_z: float | None
    # Leniency over the reads' residual standard deviation (the size a lenient or harsh
    # verdict needs, engine.audit.raters.verdicts.LENIENCY_SIZE)
    leniency_size: float | None
    infit: float | None
    infit_z: float | None
    outfit: float | None
    outfit_z: float | None
    noise: float
    noise_z: float
    spread: float | None
    central_z: float | None
    middle_share: float | None
    middle_expected: float | None
    middle_z: float | None
    fair_average: float | None
    observed_average: float | None
    disagreement: float
    disagreement_z: float
    drift: Drift | None
    verdicts: tuple[Verdict, ...]
    # Use of the item's lowest and highest score against the reference raters' (standard errors)
    low_z: float | None = None
    high_z: float | None = None
    # Pairs of the rater's reads with a co-rater's read of the same answer (rater_pairs), and
    # whether the rater is one of the reference raters the others are measured against
    co_reads: int = 0
    in_reference: bool = False
    # Leniency is against the expert's scores (validity papers, engine.audit.raters.expert)
    # rather than the reference raters' median.
    anchored: bool = False


def certainty_weights(variance: np.ndarray) -> np.ndarray:
    """1 / sqrt(W_i): a score weighs more where the model is sure of it (its W small), so the
    noise of answers the model cannot place does not drown a rater's shift. W is floored at
    1/100 of its median (weights at most 10x the typical one), so an over-sure model cannot
    let a few scores decide."""
    return 1.0 / np.sqrt(floored(variance))


def reference(values: np.ndarray, errors: np.ndarray, members: np.ndarray) -> tuple[float, float]:
    """The median of the members' values and its standard error, sqrt(min(1, pi / 2m) x their
    mean squared standard error); a median of one or two is the value(s) themselves."""
    chosen = np.sort(values[members])
    m = chosen.size
    centre = float(chosen[(m - 1) // 2 : m // 2 + 1].mean())
    return centre, float(np.sqrt(min(1.0, np.pi / (2 * m)) * np.mean(errors[members] ** 2)))


@dataclass
class _Raw:
    """Per rater (arrays over the raters), before comparison with the reference."""

    b: np.ndarray
    b_se: np.ndarray
    log_noise: np.ndarray
    log_noise_se: np.ndarray
    slope: np.ndarray
    slope_se: np.ndarray
    spread: np.ndarray
    middle: np.ndarray  # share of scores inside the scale minus the model's expected share
    middle_se: np.ndarray
    low: np.ndarray  # share of scores at the item's lowest minus the model's expected share
    low_se: np.ndarray
    high: np.ndarray  # the same at the item's highest
    high_se: np.ndarray
    fits: list
    spreads: list
    disagreements: list
    anchored: bool = False  # b is against the expert (origin fixed), not the reference median


def assess(scores, judged: np.ndarray, names: np.ndarray, rater_of: np.ndarray):
    """Effects of every judged rater and the bias cells (see the module docstring).

    scores: the pooled scores (engine.audit.raters.table._Scores); names: (R,) raters; rater_of: (N,)
    each score's rater index; judged: (R,) bool. Returns ({name: RaterEffects}, [BiasCell]);
    no effects when no rater is judged."""
    items, item_of = np.unique(scores.item, return_inverse=True)
    d = scores.value - scores.expected
    a, b, e = two_way(d, item_of, rater_of)
    # Fit is judged around the main-effects expectation E + a_item + b_rater, as FACETS does
    # (its expectation includes the rater's severity), so a lenient rater is not also "noisy"
    # merely for being lenient.
    main = scores.expected + a[item_of] + b[rater_of]
    # Leniency and drift weigh each score by the model's certainty (see certainty_weights).
    w = certainty_weights(scores.variance)
    a_w, b_w, e_w = two_way(d, item_of, rater_of, w)
    raw = _raw(scores, main, b_w, e_w, w, rater_of, names.size)
    co = getattr(scores, "co", None)
    co_n = np.zeros(names.size, dtype=int)
    if scores.ordered and co is not None and len(co):
        # Leniency from co-raters' reads of the same answers, combined with the model's (whose
        # reads they share: their covariance counts in the combination's standard error).
        c, c_se, co_n, moves = rater_pairs.paired_leniency(co, names, influence=True)
        shared = _shared(scores, e_w, w, rater_of, names.size, moves)
        raw.b, raw.b_se = rater_pairs.combine(raw.b, raw.b_se, c, c_se, shared)
    origin = _anchor(raw, scores, names, judged)
    drifts = [_drift(scores, d - a_w[item_of], w, rater_of == r) for r in range(names.size)]
    members = np.flatnonzero(judged)
    if members.size == 0:
        return {}, []
    members = _reference_members(raw, members, drifts, scores.ordered)
    relative = _relative(raw, members, scores.ordered, residual_sd(e))
    centre_b = origin if raw.anchored else reference(raw.b, raw.b_se, members)[0]
    effects = {}
    for r in np.flatnonzero(judged).tolist():
        drift = _centred(drifts[r], centre_b)
        effects[str(names[r])] = _effects(raw, r, relative[r], drift, scores.ordered,
                                          int(co_n[r]), bool(np.isin(r, members)))  # fmt: skip
    cells = []
    if scores.ordered:
        reads = Reads(scores.value, scores.expected, scores.variance, scores.lowest,
                      scores.highest, scores.rater, item_of,
                      [scores.item_names[k] for k in items])  # fmt: skip
        cells = bias_cells(reads, is_bias_listed)
    return effects, cells


def _shared(scores, e, w, rater_of, count: int, moves) -> np.ndarray | None:
    """(R,) the covariance of each rater's model figure b (the weighted mean of their residuals
    e) with their paired figure, summed over the answers both are computed from: b moves by
    w_i (e_i - mean) / sum w for each of the rater's reads. None without answers to match
    (scores without their answers' cluster ids)."""
    cluster = getattr(scores, "cluster", None)
    if moves is None or cluster is None:
        return None
    index = {int(g): k for k, g in enumerate(moves.answers)}
    shared = np.zeros(count)
    for r in range(count):
        mine = np.flatnonzero(rater_of == r)
        if mine.size < 2:
            continue
        mean = np.average(e[mine], weights=w[mine])
        own = w[mine] * (e[mine] - mean) / w[mine].sum()
        rows = np.array([index.get(int(g), -1) for g in cluster[mine]])
        hit = rows >= 0
        shared[r] = float(np.sum(own[hit] * moves.by_answer[rows[hit], r]))
    return shared


def _anchor(raw: _Raw, scores, names: np.ndarray, judged: np.ndarray) -> float:
    """With enough expert-scored reads (rater_expert.MIN_EXPERT_READS, pooled over the judged
    raters), raw.b becomes each rater's leniency against the expert and raw.anchored True; the
    origin the model's figures are measured from (0 otherwise)."""
    reads = getattr(scores, "expert", None)
    if not scores.ordered or reads is None or not len(reads):
        return 0.0
    g, g_se, n = rater_expert.differences(reads, names)
    if int(n[judged].sum()) < rater_expert.MIN_EXPERT_READS:
        return 0.0
    found = rater_expert.anchor(raw.b, raw.b_se, g, g_se)
    if found is None:
        return 0.0
    raw.b, raw.b_se, origin, _ = found
    raw.anchored = True
    return origin


def _reference_members(raw, judged: np.ndarray, drifts, ordered: bool) -> np.ndarray:
    """The reference raters (see the module docstring): the judged raters without a verdict that
    no reference can drag (SHIFT_FREE, judged against the median of all), the largest group of
    them whose leniencies agree (rater_pairs.robust_members; ties to the group least unusual in
    its middle use and drift), then,
    until it settles, those of the group with no verdict at all. At least three, else the
    previous step's."""
    # The reference is chosen without the size rule (NO_SIZE): a rater shifted by little but
    # surely stays out of it, as before the rule.
    relative = _relative(raw, judged, ordered, NO_SIZE)
    steady = [r for r in judged if drifts_fine(drifts[r])
              and not {v.name for v in verdicts(relative[r], None)} & SHIFT_FREE]  # fmt: skip
    members = np.array(steady) if len(steady) >= 3 else judged
    if raw.anchored:
        # Against the expert, leniency needs no agreeing group: the raters it calls neither
        # lenient nor harsh are the typical ones (a group that agrees may be the half that
        # pushes, whose lower infit on a ceiling scale then calls the neutral half noisy).
        level = np.array([r for r in members if abs(relative[r]["leniency_z"]) < LENIENCY_Z])
        if level.size < 3:  # too few once the drifting are out: level raters, drifting or not
            level = np.array([r for r in judged if abs(relative[r]["leniency_z"]) < LENIENCY_Z])
        members = level if level.size >= 3 else members
    elif ordered:
        unusual = np.array([_unusual(relative[r], drifts[r]) for r in range(raw.b.size)])
        group = rater_pairs.robust_members(raw.b, raw.b_se, members, unusual)
        members = group if group.size >= 3 else members
    for _ in range(5):
        relative = _relative(raw, members, ordered, NO_SIZE)
        fine = np.array([r for r in members if not verdicts(relative[r], None)
                         and drifts_fine(drifts[r])], dtype=int)  # fmt: skip
        if fine.size < 3 or fine.size == members.size:
            break
        members = fine
    return members


def _unusual(relative: dict, drift: Drift | None) -> float:
    """How unusual a rater is apart from leniency: the sum of their squared middle and drift z
    (against the median of all raters; not noise, which leniency at a ceiling lowers)."""
    parts = [relative.get("middle_z"),
             None if drift is None else drift.t]  # fmt: skip
    return float(sum(z * z for z in parts if z is not None and np.isfinite(z)))


def drifts_fine(drift: Drift | None) -> bool:
    return not (drift is not None and verdicts({}, drift))


def _raw(scores, main, b, e, w, rater_of, count) -> _Raw:
    keys = ("b_se", "log_noise", "log_noise_se", "slope", "slope_se", "spread", "middle",
            "middle_se", "low", "low_se", "high", "high_se")  # fmt: skip
    out = {key: np.full(count, np.nan) for key in keys}
    fits: list[rater_fit.Fit | None] = [None] * count
    spreads: list[rater_fit.Spread | None] = [None] * count
    disagreements: list[rater_fit.Disagreement | None] = [None] * count
    for r in range(count):
        mine = rater_of == r
        n = int(mine.sum())
        out["b_se"][r] = rater_fit.weighted_mean_se(e[mine], w[mine])[1]
        m = rater_fit.Moments(scores.expected[mine], scores.variance[mine],
                              scores.kurtosis[mine], scores.middle[mine])  # fmt: skip
        around = rater_fit.Moments(main[mine], m.variance, m.kurtosis, m.middle)
        dis = rater_fit.disagreement_parts(scores.own[mine], scores.square[mine],
                                           scores.cube[mine])  # fmt: skip
        disagreements[r] = dis
        if scores.ordered:
            fits[r] = fit = rater_fit.mean_squares(scores.value[mine], around)
            spreads[r] = spread = rater_fit.spread(scores.value[mine], m, scores.inside[mine])
            noise, noise_se = fit.infit, rater_fit.infit_se(scores.value[mine], around)
            out["slope"][r], out["slope_se"][r] = spread.slope, spread.slope_se
            out["spread"][r] = spread.spread
            # Observed share minus the model's expected share, with its binomial SE, for the
            # middle categories and for each end of the scale.
            for part, observed, chance in (("middle", scores.inside, scores.middle),
                                           ("low", scores.at_low, scores.low),
                                           ("high", scores.at_high, scores.high)):  # fmt: skip
                p = chance[mine]
                out[part][r] = np.mean(observed[mine]) - np.mean(p)
                out[part + "_se"][r] = np.sqrt(np.sum(p * (1 - p))) / n
        else:
            noise, noise_se = dis.ratio, dis.se
        out["log_noise"][r] = np.log(max(noise, 1e-12))
        out["log_noise_se"][r] = noise_se / max(noise, 1e-12)
    # `out` holds the array fields only (`keys`), which mypy cannot tell from a dict.
    return _Raw(b, **out, fits=fits, spreads=spreads, disagreements=disagreements)  # type: ignore[arg-type]


NO_SIZE = float("nan")


def residual_sd(e: np.ndarray) -> float:
    """The reads' residual standard deviation (score minus expectation, item and rater effects
    removed): the unit of a leniency's size."""
    return float(np.sqrt(np.mean(np.square(e)))) if e.size else float("nan")


def _size(leniency: float, sd: float) -> float | None:
    return float(leniency / sd) if np.isfinite(sd) and sd > 0 else None


def _relative(raw: _Raw, members: np.ndarray, ordered: bool, sd: float) -> list[dict]:
    """Each rater's figures against the reference members (see the module docstring); sd: the
    reads' residual standard deviation, the unit of leniency_size."""
    noise0, noise_se0 = reference(raw.log_noise, raw.log_noise_se, members)
    out = []
    if ordered:
        b0, b_se0 = (0.0, 0.0) if raw.anchored else reference(raw.b, raw.b_se, members)
        slope0, slope_se0 = reference(raw.slope, raw.slope_se, members)
        middle0, middle_se0 = reference(raw.middle, raw.middle_se, members)
        ends = {end: reference(getattr(raw, end), getattr(raw, end + "_se"), members)
                for end in ("low", "high")}  # fmt: skip
        spread0 = float(np.median(raw.spread[members]))
    for r in range(raw.b.size):
        figures: dict[str, float | None] = {
            "ordered": ordered,
            "noise": float(np.exp(raw.log_noise[r] - noise0)),
            "noise_z": _z(raw.log_noise[r] - noise0, raw.log_noise_se[r], noise_se0),
            # The two figures the ratio compares, so a verdict can show them (an infit below 1
            # is still noisy when the typical rater's is lower still).
            "noise_own": float(np.exp(raw.log_noise[r])),
            "noise_reference": float(np.exp(noise0)),
        }
        if ordered:
            se = float(np.hypot(raw.b_se[r], b_se0))
            figures.update(
                leniency=float(raw.b[r] - b0), leniency_se=se,
                leniency_z=_z(raw.b[r] - b0, raw.b_se[r], b_se0),
                leniency_size=_size(float(raw.b[r] - b0), sd),
                central_z=_z(raw.slope[r] - slope0, raw.slope_se[r], slope_se0),
                middle_z=_z(raw.middle[r] - middle0, raw.middle_se[r], middle_se0),
                **{end + "_z": _z(getattr(raw, end)[r] - centre, getattr(raw, end + "_se")[r], se0)
                   for end, (centre, se0) in ends.items()},
                spread=float(raw.spread[r] / spread0) if spread0 > 0 else None,
            )  # fmt: skip
        out.append(figures)
    return out


def _z(difference: float, se: float, se_reference: float) -> float:
    total = float(np.hypot(se, se_reference))
    return float(difference / total) if total > 0 and np.isfinite(total) else 0.0


def _drift(scores, u: np.ndarray, w: np.ndarray, mine: np.ndarray) -> Drift | None:
    if not scores.ordered or not np.isfinite(scores.time[mine]).any():
        return None
    return rater_drift(u[mine], scores.time[mine], weights=w[mine])


def _centred(drift: Drift | None, centre: float) -> Drift | None:
    """The drift with its periods' leniency against the reference (u is not centred)."""
    if drift is None:
        return None
    periods = [type(p)(p.start, p.end, p.n, p.leniency - centre, p.se) for p in drift.periods]
    return Drift(drift.n, drift.change, drift.se, drift.t, drift.p, periods, drift.untimed)


def _effects(raw: _Raw, r: int, relative: dict, drift, ordered: bool, co_n: int,
             in_reference: bool) -> RaterEffects:  # fmt: skip
    fit, spread, dis = raw.fits[r], raw.spreads[r], raw.disagreements[r]
    return RaterEffects(
        leniency=relative.get("leniency"), leniency_se=relative.get("leniency_se"),
        leniency_z=relative.get("leniency_z"), leniency_size=relative.get("leniency_size"),
        infit=fit.infit if fit else None, infit_z=fit.infit_z if fit else None,
        outfit=fit.outfit if fit else None, outfit_z=fit.outfit_z if fit else None,
        noise=relative["noise"], noise_z=relative["noise_z"],
        spread=relative.get("spread"), central_z=relative.get("central_z"),
        middle_share=spread.middle_share if spread else None,
        middle_expected=spread.middle_expected if spread else None,
        middle_z=spread.middle_z if spread else None,
        fair_average=spread.fair_average if spread else None,
        observed_average=spread.observed_average if spread else None,
        disagreement=dis.ratio, disagreement_z=dis.z, drift=drift,
        verdicts=verdicts(relative, drift if ordered else None),
        low_z=relative.get("low_z"), high_z=relative.get("high_z"),
        co_reads=co_n, in_reference=in_reference, anchored=raw.anchored,
    )  # fmt: skip


__all__ = ["BiasCell", "RaterEffects", "assess", "reference", "two_way"]
