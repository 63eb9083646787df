"""What the multi-read figures cost at scale: the consensus (engine.audit.reads.consensus) and the
agreement with its bootstrap (engine.audit.reads.agreement) on a synthetic session of 100,000 reads
over 40,000 answers (20 items of 2,000 answers on a 0-3 scale, 8 raters, a quarter of the
answers read once, the rest two or three times), with text evidence as the pipeline would hand
it (one out-of-fold classifier's probabilities, 10 neighbours per answer).

    python tests/benchmarks/bench_consensus_scale.py            # best and median of 3
    python tests/benchmarks/bench_consensus_scale.py --answers 10000 --repeat 5

The text evidence itself is not timed: the classifier is the severity's (already fitted on
every item) and the neighbours are PARM's graph.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers import simulated_reads  # noqa: E402

from engine.audit.reads.agreement import agreement  # noqa: E402
from engine.audit.reads.consensus import TextEvidence, consensus  # noqa: E402

PRIOR = np.array([0.2, 0.3, 0.3, 0.2])


def session(answers: int, items: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    accuracy = rng.uniform(0.55, 0.95, 8)
    per_item = answers // items
    found, evidence = [], []
    for j in range(items):
        reads, truth = simulated_reads(rng, per_item, accuracy, PRIOR, (2, 3), name=str(j),
                                       missing=0.0)  # fmt: skip
        guess = np.where(rng.random(per_item) < 0.7, truth, rng.integers(0, 4, per_item))
        proba = np.full((per_item, 4), 0.1)
        proba[np.arange(per_item), guess] = 0.7
        near = rng.integers(0, per_item, (per_item, 10))
        found.append(reads)
        evidence.append(TextEvidence((proba,), near, rng.random((per_item, 10))))
    return found, evidence


def timed(run, repeat: int) -> tuple[float, float]:
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return min(seconds), float(np.median(seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=40_000)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", type=int, default=200, help="bootstrap draws")
    args = parser.parse_args()
    items, evidence = session(args.answers, args.items)
    reads = sum(r.answer.size for r in items)
    print(f"{reads:,} reads over {args.answers:,} answers in {args.items} items; "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    result = consensus(items, evidence, 8)
    print(f"consensus: {result.iterations} EM steps")
    for name, run in (
        ("consensus, reads alone", lambda: consensus(items, None, 8)),
        ("consensus with text evidence", lambda: consensus(items, evidence, 8)),
        (f"agreement, {args.samples} bootstrap draws", lambda: agreement(items, args.samples)),
    ):
        best, median = timed(run, args.repeat)
        print(f"{name}: best {best:.2f} s, median {median:.2f} s")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
