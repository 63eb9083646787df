"""The plain-words verdicts on a rater and the rules that give them: one list, one place.

Every rule compares the rater with the reference raters (see engine.audit.raters.effects) and
needs both a size and a significance, so that a large rater with a trivial difference is not
called out and a small one with a big but uncertain one is not either. A rater may get several
verdicts ("lenient" and "drifting"), strongest first; one with none is "fine". The thresholds
were set on simulated sessions (tests/benchmarks/bench_raters.py --seed 2024 and --seed 99
--sessions 200) so that at most 5% of neutral raters get any verdict while planted effects are
found (3.8%, 4.4% and 3.3% on ASAP short answers, essays and Mohler there); on other sessions
(docs/explanation/raters.md's table, seed 7) 1.1% of neutral raters got one.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.core.numbers import signed

# Leniency / harshness: |leniency| / its standard error, and a size: |leniency| over the reads'
# residual standard deviation (score minus the model's expectation, item and rater effects
# removed) at least LENIENCY_SIZE. 0.15 is RSMTool's threshold for a standardized mean
# difference worth reporting, not tuned here; without it a large session calls a rater harsh for
# a hundredth of a point (Powergrading's third grader: -0.013 points, 5.9 SE, 0.06 SD).
LENIENCY_Z = 3.0
LENIENCY_SIZE = 0.15
# Noisy: infit mean-square (ordered) at least NOISE_RATIO times the reference raters', or for
# unordered labels the disagreement ratio at least DISAGREEMENT_RATIO times theirs, and NOISE_Z
# standard errors above (on the log scale). A rater lenient on part of their scores is also less
# consistent (infit 1.1-1.4 x the others' in bench_raters.py), which is why the ordered ratio is
# higher.
NOISE_RATIO = 1.4
DISAGREEMENT_RATIO = 1.2
NOISE_Z = 2.5
# Central tendency: the excess use of middle categories at least MIDDLE_Z standard errors above
# the reference raters', neither end of the scale used more than END_Z standard errors above
# theirs, and the slope of the residual X - E on E below theirs (central_z <= -CENTRAL_Z). The
# middle alone is not enough: a harsh rater on a scale whose scores sit at the top (Mohler's)
# moves scores into the middle too, but uses the lowest score more, and a noisy rater uses both
# ends more; a central rater uses neither more. Requiring a slope 2.5 SE below (as before)
# missed central raters whose few extreme scores barely move it (essays).
MIDDLE_Z = 3.5
END_Z = 1.0
CENTRAL_Z = 0.0
# Drifting: |change from first to last score| / its robust standard error.
DRIFT_T = 2.5
# Rater x item bias cells listed: |t| and |bias| in points.
BIAS_T = 3.0
BIAS_POINTS = 0.2

VERDICTS = ("lenient", "harsh", "noisy", "central tendency", "drifting")
FINE = "fine"
RULES = {
    "lenient": f"leniency >= {LENIENCY_Z:g} standard errors and >= {LENIENCY_SIZE:g} residual SD "
    "above the reference raters",
    "harsh": f"leniency >= {LENIENCY_Z:g} standard errors and >= {LENIENCY_SIZE:g} residual SD "
    "below the reference raters",
    "noisy": f"infit >= {NOISE_RATIO:g} x the reference raters' (unordered labels: "
    f"disagreement >= {DISAGREEMENT_RATIO:g} x) and >= {NOISE_Z:g} standard errors above",
    "central tendency": f"excess use of middle categories >= {MIDDLE_Z:g} standard errors above "
    f"the reference raters', neither the lowest nor the highest score used > {END_Z:g} "
    "standard error above theirs, and the slope of (score - E) on E below theirs",
    "drifting": f"|change in leniency from first to last score| >= {DRIFT_T:g} robust "
    "standard errors",
    "bias cell": f"|t| >= {BIAS_T:g} and |Obs - Exp| >= {BIAS_POINTS:g} points",
}


@dataclass(frozen=True)
class Verdict:
    """One verdict, the figures that gave it in words, and its strength: the test statistic over
    its threshold (verdicts are listed strongest first, so the first is the primary one)."""

    name: str
    because: str
    strength: float = 1.0


def verdicts(relative: dict, drift=None) -> tuple[Verdict, ...]:
    """The verdicts of one rater from its relative figures: leniency, leniency_z,
    leniency_size (leniency over the residual SD; no size rule where it is absent), noise,
    noise_z, central_z, middle_z, low_z, high_z, spread (each None where it does not apply) and
    its drift."""
    found = []
    z, size = relative.get("leniency_z"), relative.get("leniency_size")
    if z is not None and abs(z) >= LENIENCY_Z and (size is None or abs(size) >= LENIENCY_SIZE):
        name = "lenient" if z > 0 else "harsh"
        sd = "" if size is None else f" ({signed(size)} SD)"
        found.append(Verdict(name, f"leniency {signed(relative['leniency'])} points{sd}, "
                                   f"{signed(z, 1)} SE from the reference raters",
                             abs(z) / LENIENCY_Z))  # fmt: skip
    ratio, z = relative.get("noise"), relative.get("noise_z")
    ordered = relative.get("ordered", True)
    if (
        ratio is not None
        and ratio >= (NOISE_RATIO if ordered else DISAGREEMENT_RATIO)
        and z is not None
        and z >= NOISE_Z
    ):
        what = "infit" if ordered else "disagreement"
        own, typical = relative.get("noise_own"), relative.get("noise_reference")
        figures = "" if own is None or typical is None else f"{own:.2f} against {typical:.2f}, "
        found.append(Verdict("noisy", f"{what} {ratio:.2f} x the reference raters' "
                                      f"({figures}{signed(z, 1)} SE)", z / NOISE_Z))  # fmt: skip
    z, middle = relative.get("central_z"), relative.get("middle_z")
    ends = max(relative.get("low_z", 0.0), relative.get("high_z", 0.0))
    if (z is not None and z <= -CENTRAL_Z and middle is not None and middle >= MIDDLE_Z
            and ends <= END_Z):  # fmt: skip
        found.append(Verdict("central tendency", f"middle categories {signed(middle, 1)} SE from the "
                                                 f"reference raters', ends at most {signed(ends, 1)} "
                                                 f"SE, residual slope {signed(z, 1)} SE",
                             middle / MIDDLE_Z))  # fmt: skip
    if drift is not None and abs(drift.t) >= DRIFT_T:
        found.append(Verdict("drifting", f"leniency changed {signed(drift.change)} points from "
                                         f"first to last score (t = {signed(drift.t, 1)})",
                             abs(drift.t) / DRIFT_T))  # fmt: skip
    return tuple(sorted(found, key=lambda v: -v.strength))


def below_size(leniency, z, size) -> str | None:
    """Why a leniency sure enough for a verdict got none: '-0.01 points, 7.0 SE from the
    reference raters, but -0.06 SD, under the 0.15 a verdict needs'; None otherwise."""
    if z is None or size is None or leniency is None:
        return None
    if abs(z) < LENIENCY_Z or abs(size) >= LENIENCY_SIZE:
        return None
    return (f"leniency {signed(leniency)} points, {signed(z, 1)} SE from the reference raters, but "
            f"{signed(size)} SD, under the {LENIENCY_SIZE:g} a verdict needs")  # fmt: skip


def is_bias_listed(bias: float, t: float) -> bool:
    return abs(t) >= BIAS_T and abs(bias) >= BIAS_POINTS


def verdict_words(found: tuple[Verdict, ...]) -> str:
    """'lenient, drifting' (strongest first) or 'fine'."""
    return ", ".join(v.name for v in found) or FINE
