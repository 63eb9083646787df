"""bench_consensus.py's report: every method's accuracy per dataset and design, the held-out
choice of the consensus's evidence (leave one dataset out), the goal of issue 34, and the
shipped candidate's reliabilities, calibration and cost."""

from __future__ import annotations

import numpy as np
from consensus_peers import PEERS

SHIPPED = "lr-reads+nb10"
GOAL_GAIN = 0.01
GOAL_SPEARMAN = 0.9


def _methods(rows: list[dict]) -> list[str]:
    return [k for k, v in rows[0].items() if isinstance(v, dict) and k not in PEERS]


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


def held_out(rows) -> dict[tuple[str, int], str]:
    """For each dataset, the candidate with the best mean accuracy over the other datasets'
    sessions (both designs)."""
    methods, units = _methods(rows), _units(rows)
    datasets = sorted({d for d, _ in units})
    chosen = {}
    for dataset in datasets:
        others = [(d, r) for d, r in units if d != dataset]
        score = {m: np.mean([_mean(units[u], m) for u in others]) for m in methods}
        pick = max(methods, key=lambda m: (score[m], m == SHIPPED))
        for design in sorted({r for d, r in units if d == dataset}):
            chosen[(dataset, design)] = pick
    return chosen


def report(rows: list[dict]) -> None:
    if not rows:
        return
    methods, units = _methods(rows), _units(rows)
    print(f"\n## Accuracy against gold (mean over seeds; {len(rows)} sessions)\n")
    _table(["dataset", "reads", *methods, *PEERS],
           [[d, str(r), *(f"{_mean(units[(d, r)], m):.3f}" for m in (*methods, *PEERS))]
            for d, r in units])  # fmt: skip
    chosen = held_out(rows)
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
    print(f"## The shipped evidence ({SHIPPED}): calibration, reliabilities, cost\n")
    _table(["dataset", "reads", "sure share", "accuracy when sure", "interval coverage",
            "Spearman", "lambda (classifier, neighbours)", "iterations", "seconds"],
           [[d, str(r), f"{_mean(units[(d, r)], SHIPPED, 'sure'):.3f}",
             f"{_mean(units[(d, r)], SHIPPED, 'sure_accuracy'):.3f}",
             f"{_mean(units[(d, r)], SHIPPED, 'coverage'):.3f}",
             f"{_mean(units[(d, r)], SHIPPED, 'spearman'):.3f}",
             ", ".join(f"{w:.2f}" for w in np.mean([x[SHIPPED]['weights'] for x in units[(d, r)]], 0)),
             f"{_mean(units[(d, r)], SHIPPED, 'iterations'):.0f}",
             f"{_mean(units[(d, r)], SHIPPED, 'seconds'):.2f}"] for d, r in units])  # fmt: skip
