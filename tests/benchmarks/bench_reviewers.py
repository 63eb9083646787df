"""Ten reviewers on one review at once (issue 47, point 4): ten processes, each with its own
decision store on one database, 1,000 decisions each on a shared review of 4,000 responses (so
most responses are decided by two or more reviewers), then the check that every decision is held
exactly once with its reviewer (reviewers_load.problems). Prints the decisions a second and what
the check found.

Run: python tests/benchmarks/bench_reviewers.py [--reviewers 10 --decisions 1000 --responses 4000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from machine import machine_line
from reviewers_load import problems, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=10)
    parser.add_argument("--decisions", type=int, default=1000)
    parser.add_argument("--responses", type=int, default=4000)
    args = parser.parse_args()
    print(machine_line())
    with tempfile.TemporaryDirectory() as folder:
        found = run(Path(folder), args.reviewers, args.decisions, args.responses)
    total = sum(len(m) for m in found["made"].values())
    print(f"{args.reviewers} reviewers x {args.decisions} decisions on {args.responses} "
          f"responses: {total:,} decisions in {found['seconds']:.1f} s "
          f"({total / found['seconds']:.0f} a second); held {len(found['held']):,}")  # fmt: skip
    wrong = problems(found)
    print("check: " + ("every decision held once, with its reviewer" if not wrong else
                       f"{len(wrong)} problem(s): " + "; ".join(wrong[:5])))  # fmt: skip


if __name__ == "__main__":
    main()
