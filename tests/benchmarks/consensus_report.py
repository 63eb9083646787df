"""bench_consensus.py's report: every method's accuracy per dataset and design, the held-out
choice of the consensus's evidence (leave one dataset out) against the best peer, whether a
consensus allowed outside the reads' range does better held out (nested: the choice among both
kinds made on the other datasets), the shipped candidate's variants, its calibration, its
reliabilities and cost."""

from __future__ import annotations

import numpy as np
from consensus_peers import PEERS

from engine.audit.reads.consensus_fit import PRIOR_SHARE

SHIPPED = "lr-reads+nb10"
GOAL_GAIN = 0.01
GOAL_SPEARMAN = 0.9
OUTSIDE = " outside"
BIN_NAMES = ("< .5", ".5-.6", ".6-.7", ".7-.8", ".8-.9", ".9-.95", ".95-1", "1")


def _methods(rows: list[dict]) -> list[str]:
    return [k for k, v in rows[0].items() if isinstance(v, dict) and k not in PEERS]


def _candidates(rows) -> list[str]:
    """The evidence candidates: the consensus within the reads, no variant."""
    return [m for m in _methods(rows) if " " not in m]


def _mean(rows, method, figure="accuracy") -> float:
    values = [r[method][figure] for r in rows if r[method].get(figure) is not None]
    return float(np.mean(values)) if values else float("nan")


def _units(rows) -> dict[tuple[str, int], list[dict]]:
    units: dict[tuple[str, int], list[dict]] = {}
    for row in rows:
        units.setdefault((row["dataset"], row["reads"]), []).append(row)
    return units


def _table(header: list[str], lines: list[list[str]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---" for _ in header) + " |")
    for line in lines:
        print("| " + " | ".join(line) + " |")
    print()


def held_out(rows, methods) -> dict[tuple[str, int], str]:
    """For each dataset, the method of `methods` with the best mean accuracy over the other
    datasets' sessions (both designs)."""
    units = _units(rows)
    chosen = {}
    for dataset in sorted({d for d, _ in units}):
        others = [(d, r) for d, r in units if d != dataset]
        score = {m: np.mean([_mean(units[u], m) for u in others]) for m in methods}
        pick = max(methods, key=lambda m: (score[m], m == SHIPPED))
        for design in sorted({r for d, r in units if d == dataset}):
            chosen[(dataset, design)] = pick
    return chosen


def _against_peers(rows) -> None:
    units = _units(rows)
    chosen = held_out(rows, _candidates(rows))
    print("## Held out: the candidate chosen on the other datasets, against the best peer\n")
    lines, gains, spearman = [], [], []
    for (dataset, design), pick in chosen.items():
        unit = units[(dataset, design)]
        peer = max(PEERS, key=lambda m: _mean(unit, m))
        ours, theirs = _mean(unit, pick), _mean(unit, peer)
        gains.append(ours - theirs)
        spearman.append(_mean(unit, pick, "spearman"))
        lines.append([dataset, str(design), pick, f"{ours:.3f}", peer, f"{theirs:.3f}",
                      f"{ours - theirs:+.3f}", f"{spearman[-1]:.3f}",
                      "yes" if ours >= theirs else "NO"])  # fmt: skip
    _table(["dataset", "reads", "chosen held out", "accuracy", "best peer", "its accuracy",
            "gain", "Spearman", ">= best peer"], lines)  # fmt: skip
    print(
        f"Goal: >= best peer everywhere: {'met' if min(gains) >= 0 else 'NOT met'} "
        f"(smallest gain {min(gains):+.3f}); mean gain {np.mean(gains):+.3f} "
        f"({'met' if np.mean(gains) >= GOAL_GAIN else 'NOT met'}, goal {GOAL_GAIN}); "
        f"mean Spearman {np.mean(spearman):.3f} "
        f"({'met' if np.mean(spearman) >= GOAL_SPEARMAN else 'NOT met'}, goal {GOAL_SPEARMAN})\n"
    )


def _outside(rows) -> None:
    """Nested leave-one-dataset-out: the choice among the candidates within the reads, against
    the choice among those and the same candidates allowed outside."""
    units, candidates = _units(rows), _candidates(rows)
    within = held_out(rows, candidates)
    either = held_out(rows, candidates + [m + OUTSIDE for m in candidates])
    print("## Held out: within the reads' range, or allowed outside it\n")
    lines, gains = [], []
    for key, pick in within.items():
        unit = units[key]
        ours, theirs = _mean(unit, pick), _mean(unit, either[key])
        gains.append(theirs - ours)
        lines.append([key[0], str(key[1]), pick, f"{ours:.3f}", either[key], f"{theirs:.3f}",
                      f"{theirs - ours:+.3f}"])  # fmt: skip
    _table(["dataset", "reads", "chosen within", "accuracy", "chosen among both",
            "accuracy", "gain of going outside"], lines)  # fmt: skip
    print(
        f"Going outside the reads, chosen held out: mean gain {np.mean(gains):+.4f}, "
        f"smallest {min(gains):+.4f}, largest {max(gains):+.4f}\n"
    )


def _variants(rows) -> None:
    units = _units(rows)
    names = [m for m in _methods(rows) if m.startswith(SHIPPED + " ")]
    print(f"## The shipped evidence ({SHIPPED}) and its variants\n")
    _table(["dataset", "reads", SHIPPED, *names],
           [[d, str(r), *(f"{_mean(units[(d, r)], m):.3f}" for m in (SHIPPED, *names))]
            for d, r in units])  # fmt: skip
    shares = [SHIPPED] + [m for m in names if " share" in m]
    chosen = held_out(rows, shares)
    print("Prior's share of a read chosen held out: "
          + ", ".join(f"{d} {r}: {m.split(' ')[-1] if ' ' in m else f'share{PRIOR_SHARE:g}'}"
                      for (d, r), m in chosen.items()) + "\n")  # fmt: skip


def _calibration(rows) -> None:
    print(f"## Calibration of p ({SHIPPED}): share of consensuses that are gold, by p\n")
    lines = []
    for which in ("disagree", "all"):
        counts = np.sum([r[SHIPPED]["calibration"][which] for r in rows], axis=0)
        lines.append([which] + [f"{c[1] / c[0]:.3f} ({c[0]})" if c[0] else "-" for c in counts])
    _table(["answers", *BIN_NAMES], lines)
    adjacent = np.sum([r[SHIPPED]["adjacent_sure"] for r in rows], axis=0)
    within = np.mean([r[SHIPPED]["truth_within_reads"] for r in rows])
    print(
        f"Two reads one step apart: {adjacent[0]}, sure {adjacent[1]} "
        f"({adjacent[1] / max(adjacent[0], 1):.3f}); gold within the reads' range: "
        f"{within:.3f} of answers\n"
    )


def report(rows: list[dict]) -> None:
    if not rows:
        return
    methods, units = _candidates(rows), _units(rows)
    print(f"\n## Accuracy against gold (mean over seeds; {len(rows)} sessions)\n")
    _table(["dataset", "reads", *methods, *PEERS],
           [[d, str(r), *(f"{_mean(units[(d, r)], m):.3f}" for m in (*methods, *PEERS))]
            for d, r in units])  # fmt: skip
    print("Allowed outside the reads' range:\n")
    _table(["dataset", "reads", *methods],
           [[d, str(r), *(f"{_mean(units[(d, r)], m + OUTSIDE):.3f}" for m in methods)]
            for d, r in units])  # fmt: skip
    _against_peers(rows)
    _outside(rows)
    _variants(rows)
    _calibration(rows)
    print(f"## The shipped evidence ({SHIPPED}): reliabilities, cost\n")
    _table(["dataset", "reads", "sure share", "accuracy when sure", "interval coverage",
            "Spearman", "lambda (classifier, neighbours)", "iterations", "seconds"],
           [[d, str(r), f"{_mean(units[(d, r)], SHIPPED, 'sure'):.3f}",
             f"{_mean(units[(d, r)], SHIPPED, 'sure_accuracy'):.3f}",
             f"{_mean(units[(d, r)], SHIPPED, 'coverage'):.3f}",
             f"{_mean(units[(d, r)], SHIPPED, 'spearman'):.3f}",
             ", ".join(f"{w:.2f}" for w in np.mean([x[SHIPPED]['weights'] for x in units[(d, r)]], 0)),
             f"{_mean(units[(d, r)], SHIPPED, 'iterations'):.0f}",
             f"{_mean(units[(d, r)], SHIPPED, 'seconds'):.2f}"] for d, r in units])  # fmt: skip
