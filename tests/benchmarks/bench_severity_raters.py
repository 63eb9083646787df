"""Where a file names its raters, should the review queue also ask a model that never saw the
rater's own scores? Issue 44's fourth round, held out as bench_severity_errors.py is.

    PARM_DATA_ROOT=../shared/data OMP_NUM_THREADS=1 nice python tests/benchmarks/bench_severity_raters.py
    python tests/benchmarks/bench_severity_raters.py --datasets mohler --seeds 1

The tasks of bench_severity_errors.py (the real second reads and the four planted kinds, 2 seeds)
on the same items and the same cached pieces, with one change: each answer's rater is known, as
in a session's file with a rater column. The answers are dealt at random to four raters; for
central tendency and drift the dealing is the one that chose the planted rater (the first draw
of the kind's generator, severity_errors._dealt), for the other kinds an independent one. The
errors themselves are bench_severity_errors.py's: random errors and clusters fall on every
rater's answers alike (a cluster is one wording misjudged wherever it occurs, not one rater's
answers), central tendency and drift on one rater's.

Rankings (raw severities, before engine.audit.queue.calibration's map):

  kNN vote, OOF LR    the peers (severity_peers.py), as in bench_severity_errors.py
  current             the severity parm shipped before issue 44 (for the tables' column)
  shipped             the severity parm ships (severity_error_candidates.py's "logit mean
                      current+groups20"), which does not read the raters
  rater left out      1 - p(score) from engine.audit.raters.expectation.rater_left_out_proba:
                      each rater's answers predicted by the embedding classifier fitted on the
                      other raters' answers only (the rater table's expectation)
  logit w shipped + (1 - w) rater left out    w = 2/3, 1/2, 1/3
  the expectation's weight 1/3 shrunk (times others / own where the answer's rater read more
  of the item than the others) or grown (times own / others there, up to 2/3): added after
  --dominant first printed (the fifth round; engine.audit.queue.severity.expectation_share is
  the grown one)

Added after the first run printed its tables (so not blind): **rater cluster**, the issue's "a
rater who misjudges one wording" with the rater known: the RATER_CLUSTER_SHARE of the answers
nearest a random answer of rater 0 (every answer as similar as the last one taken), of which
rater 0's move one step the same way (about 5% of the answers, as the cluster kind moves); the
other raters score that wording right. And the calibration: the expected calibration error of
engine.audit.queue.calibration's map on the real second reads, for shipped and for each blend.

`--dominant 0.7` runs every task a second time with 70% of the answers dealt to one rater and
10% to each other (the tasks named "..., one rater 70%"; the rule chooses on both dealings): how
the expectation does when one rater scored most of the file and the others' model learns from
few answers. The real, random and cluster tasks keep their scores; central tendency, drift and the
rater cluster are planted on the dominant rater (new scores, so new pieces: about five minutes
more the first time).

The pool the rule chooses from is shipped and the four rankings that read the raters (not
current); the rule
and the nested leave-one-dataset-out protocol are severity_error_report.py's, fixed before this
script printed anything.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_severity_errors import (  # noqa: E402
    NAMES,
    audit_datasets,
    dataset_items,
    rankings,
    tasks,
)
from machine import dataset_options, machine_line  # noqa: E402
from severity_data import item_seed  # noqa: E402
from severity_error_calibration import ece  # noqa: E402
from severity_error_candidates import _blend  # noqa: E402
from severity_error_pieces import GROUP_COUNTS, pieces  # noqa: E402
from severity_error_report import (  # noqa: E402
    CURRENT,
    KNN,
    OOF_LR,
    held_out,
    held_out_lines,
    item_lines,
    overview,
    table,
    units,
)
from severity_errors import GENERATORS, RATERS, TIE  # noqa: E402
from severity_metrics import Outcome  # noqa: E402

from engine.audit.queue.calibration import calibrated  # noqa: E402
from engine.audit.queue.severity import expectation_share  # noqa: E402
from engine.audit.raters.expectation import rater_left_out_proba  # noqa: E402

SHIPPED = "logit mean current+groups20"
RATER_CLUSTER = "rater cluster"
RATER_CLUSTER_SHARE = 0.2
WEIGHTS = (2 / 3, 1 / 2, 1 / 3)
SHIPPED_NAME = "shipped"
LEFT_OUT = "rater left out"
# A rater's own errors: under --dominant, planted on the dominant rater (dominant_errors).
OWN_ERRORS = ("central", "drift")
# Added after --dominant first printed (not blind): the expectation's weight shrinks where the
# answer's rater read more of the item than the others (their model learns from fewer answers),
# or grows there (the classifiers learned that rater's scores most), up to 2/3 (what parm ships).
SHRUNK = "logit shipped + rater left out at 1/3 x min(1, others / own)"
GROWN = "logit shipped + rater left out at min(2/3, 1/3 x max(1, own / others))"


# --dominant: the share of rater 0 where the dealing is the bench's own (real, random, cluster);
# None deals the four raters evenly.
DOMINANT: list[float | None] = [None]


def dealt(name: str, item, task: str, seed: int | None) -> np.ndarray:
    """Each answer's rater, 0..RATERS-1: for central and drift the kind's own first draw."""
    n = item.responses.scores.size
    if task in ("central", "drift"):
        return item_seed(name, f"{item.name}/{task}", seed or 0).integers(RATERS, size=n)
    rng = item_seed(name, f"{item.name}/{task}/raters", seed or 0)
    if DOMINANT[0] is None:
        return rng.integers(RATERS, size=n)
    return rng.choice(RATERS, size=n, p=shares())


def dominant_errors(name: str, item, seeds: int):
    """(task, seed, scores, moved, raters) of central tendency and drift on the dominant rater:
    rater 0, dealt DOMINANT of the answers, is the one who errs."""
    n = item.responses.scores.size
    for task in OWN_ERRORS:
        for seed in range(seeds):
            rng = item_seed(name, f"{item.name}/{task}/dominant", seed)
            raters = rng.choice(RATERS, size=n, p=shares())
            made = GENERATORS[task](item, rng, mine=np.flatnonzero(raters == 0))
            if made is not None and made[1].any():
                yield task, seed, made[0], made[1], raters


def shares() -> list[float]:
    rest = (1.0 - DOMINANT[0]) / (RATERS - 1)
    return [DOMINANT[0]] + [rest] * (RATERS - 1)


def rater_cluster(name: str, item, seed: int):
    """(raters, scores, moved) of the rater-cluster kind (module docstring); None when nothing
    moves (rater 0 read none of the wording, or every member sits at the scale's end)."""
    responses = item.responses
    scores, top, n = responses.scores, responses.n_classes - 1, responses.scores.size
    rng = item_seed(name, f"{item.name}/{RATER_CLUSTER}", seed)
    raters = (
        rng.integers(RATERS, size=n)
        if DOMINANT[0] is None
        else rng.choice(RATERS, size=n, p=shares())
    )
    mine = np.flatnonzero(raters == 0)
    if mine.size == 0:
        return None
    centre = int(rng.choice(mine))
    sims = item.vectors.astype(np.float64) @ item.vectors[centre].astype(np.float64)
    size = min(n - 1, max(3, round(RATER_CLUSTER_SHARE * n)))
    edge = np.sort(sims)[::-1][size - 1]
    members = np.flatnonzero((sims >= edge - TIE) & (raters == 0))
    new = scores.copy()
    if responses.ordered:
        step = (
            1 if scores[centre] == 0 else -1 if scores[centre] == top else int(rng.choice([-1, 1]))
        )
        new[members] = np.clip(scores[members] + step, 0, top)
    else:
        new[members] = (scores[centre] + int(rng.integers(1, top + 1))) % (top + 1)
    moved = new != scores
    return (raters, new, moved) if moved.any() else None


def with_raters(base: dict, item, scores: np.ndarray, raters: np.ndarray) -> dict:
    names = np.array([f"r{k}" for k in raters])
    proba = rater_left_out_proba(item.vectors, scores, item.responses.n_classes, names)
    shipped = base[SHIPPED]
    out = {KNN: base[KNN], OOF_LR: base[OOF_LR], CURRENT: base[CURRENT], SHIPPED_NAME: shipped}
    if proba is None:  # one rater dealt every answer (a tiny item): nothing to leave out
        left = shipped
    else:
        left = 1.0 - proba[np.arange(scores.size), scores]
    out[LEFT_OUT] = left
    for w in WEIGHTS:
        out[f"logit {w:.2f} shipped + {1 - w:.2f} rater left out"] = _blend(shipped, left, w)
    own = np.bincount(raters)[raters]
    ratio = (raters.size - own) / own  # the other raters' reads over the answer's rater's
    out[SHRUNK] = _blend(shipped, left, 1.0 - np.minimum(1.0, ratio) / 3)
    out[GROWN] = _blend(shipped, left, 1.0 - expectation_share(own, raters.size - own))
    return out


def audit(name: str, seeds: int, limit: int | None) -> list[Outcome]:
    outcomes = []
    for item, inputs, config in dataset_items(name, limit):
        planted = [
            (t, s, sc, p, dealt(name, item, t, s))
            for t, s, sc, p in tasks(name, item, seeds)
            if DOMINANT[0] is None or t not in OWN_ERRORS
        ]
        if DOMINANT[0] is not None:
            planted += list(dominant_errors(name, item, seeds))
        for seed in range(seeds):
            made = rater_cluster(name, item, seed)
            if made is not None:
                planted.append((RATER_CLUSTER, seed, made[1], made[2], made[0]))
        for task, seed, scores, positives, raters in planted:
            found = pieces(item, inputs, task, seed, scores, config, GROUP_COUNTS)
            base = rankings(found, scores, GROUP_COUNTS)
            ranked = with_raters(base, item, scores, raters)
            outcomes.append(Outcome(name, item.name, task, seed, positives, ranked, {}))
            if task == "real" and DOMINANT[0] is None:
                n_classes = item.responses.n_classes
                REAL.append((name, scores, n_classes, positives, ranked))
    return outcomes


REAL: list = []


def calibration_lines(names: list[str]) -> list[str]:
    """ECE of the calibrated severities on each kind's real second reads, per ranking."""
    kinds = list(dict.fromkeys(r[0] for r in REAL))
    lines = ["", "## Calibration on the real second reads (ECE, 10 bins; the shipped map)", ""]
    lines += ["| ranking | " + " | ".join(kinds) + " |", "|---" * (len(kinds) + 1) + "|"]
    for n in names:
        cells = []
        for kind in kinds:
            mine = [r for r in REAL if r[0] == kind]
            p = np.concatenate([calibrated(r[4][n], r[1], r[2]) for r in mine])
            y = np.concatenate([r[3] for r in mine])
            cells.append(f"{ece(p, y):.3f}")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = dataset_options(__doc__, NAMES, seeds=2)
    parser.add_argument("--scientsbank", type=int, default=60, help="SciEntsBank questions")
    parser.add_argument("--dominant", type=float, default=None,
                        help="rater 0's share of the real, random and cluster tasks' answers")  # fmt: skip
    args = parser.parse_args()
    started = time.perf_counter()
    print(machine_line(), file=sys.stderr)
    outcomes = audit_datasets(args, lambda name, limit: audit(name, args.seeds, limit))
    if args.dominant is not None:  # the same tasks again, one rater dealt args.dominant
        DOMINANT[0] = args.dominant
        label = f", one rater {args.dominant:.0%}"
        again = audit_datasets(args, lambda name, limit: audit(name, args.seeds, limit))
        outcomes += [dataclasses.replace(o, task=o.task + label) for o in again]
    np.seterr(all="ignore")
    grouped = units(outcomes)
    names = list(outcomes[0].rankings)
    figures = table(grouped, names)
    pool = [n for n in names if n not in (KNN, OOF_LR, CURRENT)]
    choices = held_out(figures, pool)
    lines = overview(grouped, figures, names) + held_out_lines(grouped, figures, choices)
    lines += item_lines(grouped, choices, "Held out")
    lines += item_lines(grouped, {d: SHIPPED_NAME for d in choices}, "Shipped")
    lines += calibration_lines([n for n in names if n not in (KNN, OOF_LR, CURRENT)])
    print("\n".join(lines))
    print(f"\nTotal {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
