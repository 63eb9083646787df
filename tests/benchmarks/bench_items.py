"""A whole scoring session at scale: 20 items of 1,500 answers (30,000 rows) with given
embeddings, end to end through `parm audit --item-col item --rater-col rater`, with --jobs 1 and
--jobs 2.

    python tests/benchmarks/bench_items.py
    python tests/benchmarks/bench_items.py --items 5 --per-item 1000 --jobs 1 2

Data: for each item its own clustered unit vectors (d = 384, 12 clusters, 3 or 4 score levels,
20 % of scores re-drawn), 12 raters spread over all items, written as one CSV (items
interleaved) plus an .npy. Timed as whole processes (process start, reading, embedding lookup,
every item's graph, tuning, checks, the rater table and writing the outputs) with /usr/bin/time
for wall clock and peak memory; the default settings (10 K values, 200 bootstrap samples, 5
cross-fitting folds).
"""

from __future__ import annotations

import contextlib
import csv
import tempfile
from pathlib import Path

import numpy as np
from bench_scale import run_cli, synthetic
from machine import machine_line, options


def write_session(folder: Path, items: int, per_item: int, seed: int = 0) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    rows, vectors = [], []
    for item in range(items):
        levels = 3 + item % 2
        emb, scores = synthetic(per_item, n_classes=levels, seed=seed + item)
        raters = rng.integers(0, 12, size=per_item)
        for i in range(per_item):
            rows.append([f"Q{item + 1:02d}", f"Q{item + 1:02d} answer {i}", int(scores[i]),
                         f"rater{raters[i]:02d}"])  # fmt: skip
        vectors.append(emb)
    order = rng.permutation(len(rows))
    table, array = folder / "session.csv", folder / "session.npy"
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item", "answer", "score", "rater"])
        writer.writerows(rows[k] for k in order)
    np.save(array, np.concatenate(vectors)[order])
    return table, array


@contextlib.contextmanager
def written_session(items: int, per_item: int):
    """A temporary folder holding write_session's files, after the lines a session benchmark
    starts with (the machine, how large the session is): (folder, table, array)."""
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        table, array = write_session(folder, items, per_item)
        print(f"{items} items x {per_item:,} answers = {items * per_item:,} rows, d = 384")
        yield folder, table, array


def main() -> None:
    parser = options(__doc__, items=20, per_item=1500)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    with written_session(args.items, args.per_item) as (folder, table, array):
        print("| jobs | wall s | CPU s | peak GB |\n| ---: | ---: | ---: | ---: |")
        for jobs in args.jobs:
            extra = {"item_column": '"item"', "rater_column": '"rater"', "jobs": str(jobs)}
            measured = run_cli(table, array, folder / f"out-{jobs}", extra)
            print(f"| {jobs} | {measured['seconds']:.1f} | {measured['cpu']:.1f} | "
                  f"{measured['peak_gb']:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
