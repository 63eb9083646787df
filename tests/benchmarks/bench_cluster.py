"""A large session on one process, on `--jobs 2` and on a local Dask cluster: 200 items of
1,500 answers (300,000 rows) with given (synthetic, seeded) embeddings, end to end through
`parm audit --item-col item --rater-col rater`, with --jobs 1, --jobs 2 and --scheduler local:2.

    nice -n 10 python tests/benchmarks/bench_cluster.py
    nice -n 10 python tests/benchmarks/bench_cluster.py --items 40 --runs jobs1 local2

Needs the dask extra (`pip install -e '.[dask]'`) for the local:2 run. Data: as
bench_items.py (per item its own clustered unit vectors, d = 384, 3 or 4 score levels, 12
raters over all items, one CSV with items interleaved plus an .npy). Each run is a process of
its own (this script with --child) so that the parent's own peak memory (getrusage SELF) is
told apart from its worker processes' (getrusage CHILDREN: the largest child's peak); CPU
seconds are the parent's and all its children's together. Default settings (200 bootstrap
samples, 5 cross-fitting folds, the review queue's severity).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

# Which runs, as the settings they add to the session's.
RUNS = {
    "jobs1": {"jobs": "1"},
    "jobs2": {"jobs": "2"},
    "local2": {"scheduler": '"local:2"'},
}


def child(argv: list[str]) -> None:
    """`parm audit ARGV` in this process, then its rusage as one JSON line on stdout."""
    import typer

    from parm_tui.cli import app

    try:
        typer.main.get_command(app).main(args=argv, standalone_mode=False)
        code = 0
    except SystemExit as stop:
        code = stop.code or 0
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "code": code,
        "cpu": own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime,
        "parent_gb": own.ru_maxrss / 1024**2,  # Linux: kilobytes
        "child_gb": kids.ru_maxrss / 1024**2,
    }))  # fmt: skip


def measure(table: Path, array: Path, out: Path, settings: dict[str, str]) -> dict:
    argv = ["audit", str(table), "--embeddings", str(array), "--out", str(out), "--force", "-q"]
    for key, value in settings.items():
        argv += ["--set", f"{key}={value}"]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", *argv], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise SystemExit(f"parm audit failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    measured = json.loads(lines[-1])
    if measured["code"] != 0:
        raise SystemExit(f"parm audit exited {measured['code']}:\n{done.stderr[-3000:]}")
    return {**measured, "seconds": wall}


def main() -> None:
    from bench_items import written_session
    from machine import options

    parser = options(__doc__, items=200, per_item=1500)
    parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS))
    args = parser.parse_args()
    with written_session(args.items, args.per_item) as (folder, table, array):
        print("| run | wall s | CPU s | s per item (wall) | parent peak GB | largest child GB |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for name in args.runs:
            settings = {"item_column": '"item"', "rater_column": '"rater"', **RUNS[name]}
            m = measure(table, array, folder / f"out-{name}", settings)
            print(f"| {name} | {m['seconds']:.1f} | {m['cpu']:.1f} | "
                  f"{m['seconds'] / args.items:.2f} | {m['parent_gb']:.2f} | "
                  f"{m['child_gb']:.2f} |", flush=True)  # fmt: skip
            print(f"  (load average after: {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        main()
