"""Saving and resuming a session at scale: one AuditResult of N responses (default 15,000)
written as a saved session (engine.saved.store.save_session) and read back
(find_session + load_results), as the app does after a run and when a file is reopened.

    python tests/benchmarks/bench_sessions.py
    python tests/benchmarks/bench_sessions.py --n 5000 15000 50000 --repeat 5

Data: clustered unit vectors (d = 384, 4 score levels, as bench_scale.py) audited with two K
values and the default checks (200 bootstrap samples, 5 cross-fitting folds, so every part of a
result is saved). Prints the best and median of `--repeat` saves and loads, and the size on disk.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import pandas as pd
from bench_scale import synthetic
from machine import machine_line, repeated

from engine.embedding.vectors import Embedded
from engine.input.items import Items
from engine.input.responses import responses_from_frame
from engine.input.settings.config import load_defaults
from engine.pipeline import run_audit
from engine.results.session import session_result
from engine.saved.store import find_session, load_results, save_session


def audit(n: int):
    vectors, scores = synthetic(n)
    frame = pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(n)],
            "answer": [f"synthetic answer {i} about roots, light and water" for i in range(n)],
            "score": [str(int(s)) for s in scores],
        }
    )
    config = load_defaults().updated(similarity_top_k=[10, 20])
    responses = responses_from_frame(frame, config, "synthetic.csv")
    return run_audit(responses, config, embedded=Embedded.precomputed(vectors))


def measure(n: int, repeat: int) -> None:
    result = audit(n)
    responses = result.responses
    items = Items(responses.source, [responses], [], responses.file_rows, responses.warnings)
    session = session_result(items, [result], result.config)
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)

        def save():
            save_session("bench", "synthetic.csv", session, base=base)

        def load():
            load_results(find_session("bench", base=base), [result.responses])

        saves, loads = repeated(save, repeat), repeated(load, repeat)
        size = sum(p.stat().st_size for p in base.rglob("*") if p.is_file())
    print(
        f"| {n:,} | {min(saves):.3f} | {statistics.median(saves):.3f} | {min(loads):.3f} | "
        f"{statistics.median(loads):.3f} | {size / 2**20:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[15_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(machine_line())
    print("| N | save best (s) | save median (s) | load best (s) | load median (s) | MiB |")
    print("|---|---|---|---|---|---|")
    for n in args.n:
        measure(n, args.repeat)


if __name__ == "__main__":
    main()
