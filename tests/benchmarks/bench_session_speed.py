"""How long the session model takes on a session of many small items and on one of a few large
ones, against today's per-item fits of the same items (issue 35: 80 items x 30 answers and
8 items x 1,500 answers).

Sessions are simulated (tests/session_sim.py: clustered vectors, parm's top-K graphs, six
raters, 30% of the answers read twice). For each, in alternation, `--runs` times: today's
per-item tuning over parm's K grid (`engine.model.tuning.tune`, balanced, kappa) plus its
cross-fitting (`engine.model.cross_fit.cross_fit`) on every item's first reads, one after
another; and the session model: one fit at K = 10, the fit with K chosen over the same grid
(`select_fit`), and the whole `summarise_session` (K chosen, standard errors, cross-fitting).
Prints the best and the median of the runs and the load average.

    python tests/benchmarks/bench_session_speed.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_line  # noqa: E402
from session_sim import TRUTH, session_design, simulate  # noqa: E402

from engine.input.settings.config import fit_top_k, load_defaults  # noqa: E402
from engine.model.cross_fit import cross_fit  # noqa: E402
from engine.model.session.cross_fit import SessionOptions, select_fit  # noqa: E402
from engine.model.session.features import read_features  # noqa: E402
from engine.model.session.fit import fit_session  # noqa: E402
from engine.model.session.summary import summarise_session  # noqa: E402
from engine.model.tuning import tune  # noqa: E402

SHAPES = ((80, 30), (8, 1500))


def per_item_today(items) -> None:
    for item in items:
        first = item.audited_reads()
        scores = item.score[first]
        config, _ = fit_top_k(load_defaults().updated(bootstrap_samples=0), scores.size)
        tune(item.graph, scores, item.n_classes, config)
        cross_fit(item.graph, scores, item.n_classes, config)


def timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(machine_line())
    options = SessionOptions()
    for n_items, answers in SHAPES:
        plan = session_design(n_items, answers, 6, 0.3, 50, seed=1)
        items, _, _ = simulate(plan, TRUTH, sweeps=30, seed=2)
        reads = sum(i.n_reads for i in items)
        work = {
            "today: per-item tune + cross-fit": lambda i=items: per_item_today(i),
            "session: one fit, K = 10": lambda i=items: fit_session(read_features(i, 10), None),
            "session: K over the grid": lambda i=items: select_fit(i, options),
            "session: summarise (K, SEs, cross-fit)": lambda i=items: summarise_session(i, options),
        }
        times = {name: [] for name in work}
        loads = []
        for _ in range(args.runs):
            for name, job in work.items():
                times[name].append(timed(job))
            loads.append(os.getloadavg()[0])
        print(
            f"\n{n_items} items x {answers} answers ({reads:,} reads, 4 categories, 6 raters); "
            f"load average {min(loads):.1f}-{max(loads):.1f}"
        )
        for name, found in times.items():
            print(f"  {name:40s} best {min(found):6.1f} s   median {np.median(found):6.1f} s")


if __name__ == "__main__":
    main()
