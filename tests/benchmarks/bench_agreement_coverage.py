"""Coverage of the agreement figures' 95% intervals (engine.audit.reads.agreement, engine.audit.reads.prmse)
in simulated sessions with known population values.

    python tests/benchmarks/bench_agreement_coverage.py                 # 1,000 sessions a design
    python tests/benchmarks/bench_agreement_coverage.py --runs 300

Designs: answers read 2-3 times by 4 raters (accuracy 0.9, 0.8, 0.7, 0.6; a wrong read one step
off on ordered scales, another label on nominal ones) on a 0-3 scale with 100, 300 and 1,000
answers; five nominal labels with 300 answers; a binary scale with accurate raters (0.97, 0.95,
0.93, 0.9) and 300 answers, where agreement is near its ceiling. The population value of each
figure is its estimate on 300,000 answers (its own error is a small fraction of the intervals'
half-width). The figures: rater pair (0, 1)'s exact and adjacent agreement, kappa and QWK,
alpha at each level, and PRMSE of a system score (true score + N(0, 0.7)). PRMSE's coverage is
over the sessions where it is estimable; the column "PRMSE estimable" gives their share.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers import simulated_reads  # noqa: E402

from engine.audit.reads.agreement import agreement  # noqa: E402
from engine.audit.reads.prmse import true_score_fit  # noqa: E402

DESIGNS = {
    "ordinal, 30 answers": (30, np.array([0.2, 0.3, 0.3, 0.2]), True, (0.9, 0.8, 0.7, 0.6)),
    "ordinal, 100 answers": (100, np.array([0.2, 0.3, 0.3, 0.2]), True, (0.9, 0.8, 0.7, 0.6)),
    "ordinal, 300 answers": (300, np.array([0.2, 0.3, 0.3, 0.2]), True, (0.9, 0.8, 0.7, 0.6)),
    "ordinal, 1,000 answers": (1000, np.array([0.2, 0.3, 0.3, 0.2]), True, (0.9, 0.8, 0.7, 0.6)),
    "nominal, 300 answers": (300, np.full(5, 0.2), False, (0.9, 0.8, 0.7, 0.6)),
    "binary near the ceiling, 300": (300, np.array([0.3, 0.7]), True, (0.97, 0.95, 0.93, 0.9)),
}


def figures(reads, truth, rng, samples: int) -> dict:
    seed = int(rng.integers(1 << 30))
    result = agreement([reads], samples, seed)
    pair = next(p for p in result.pairs if (p.rater_a, p.rater_b, p.item) == (0, 1, ""))
    found = {**pair.figures, **{f"alpha {k}": v for k, v in result.alpha[0].levels.items()}}
    found["shared"] = pair.n
    if reads.ordered:
        system = truth + rng.normal(0, 0.7, truth.size)
        found["PRMSE"] = true_score_fit(reads, system, samples, seed).prmse
    return found


def _tally(found: dict, truth: dict, hits: dict, counts: dict) -> None:
    for figure, interval in found.items():
        if interval is None:  # PRMSE not estimable in this session
            continue
        counts[figure] += 1
        hits[figure] += interval.low <= truth[figure] <= interval.high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.runs} sessions a design\n")
    rows = {}
    for number, (name, (n, prior, ordered, accuracy)) in enumerate(DESIGNS.items()):
        rng = np.random.default_rng(number)
        accuracy = np.array(accuracy)
        big, big_truth = simulated_reads(rng, 300_000, accuracy, prior, ordered=ordered)
        population = figures(big, big_truth, rng, 0)
        population.pop("shared")
        truth = {k: v.estimate for k, v in population.items()}
        hits, counts = dict.fromkeys(truth, 0), dict.fromkeys(truth, 0)
        shared = []
        for _ in range(args.runs):
            reads, true_codes = simulated_reads(rng, n, accuracy, prior, ordered=ordered)
            found = figures(reads, true_codes, rng, args.samples)
            shared.append(found.pop("shared"))
            _tally(found, truth, hits, counts)
        cover = {k: v / max(counts[k], 1) for k, v in hits.items()}
        if "PRMSE" in counts:
            cover["PRMSE estimable"] = counts["PRMSE"] / args.runs
            truth["PRMSE estimable"] = float("nan")
        rows[name] = (cover, truth, float(np.mean(shared)))
    names = list(dict.fromkeys(f for cover, _, _ in rows.values() for f in cover))
    print("| design | pair's shared answers | " + " | ".join(names) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in names) + " |")
    for name, (cover, truth, shared) in rows.items():
        cells = [
            "" if f not in cover else f"{cover[f]:.3f}" if np.isnan(truth[f])
            else f"{cover[f]:.3f} ({truth[f]:.2f})"
            for f in names
        ]  # fmt: skip
        print(f"| {name} | {shared:.0f} | " + " | ".join(cells) + " |")
    print(
        "\ncells: coverage (population value); Monte Carlo SE about "
        f"{np.sqrt(0.95 * 0.05 / args.runs):.3f}"
    )


if __name__ == "__main__":
    main()
