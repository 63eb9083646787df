"""Start-up: how soon parm answers, and when the bundled model starts loading.

    python tests/benchmarks/bench_startup.py                 # 5 quick runs, 3 rounds of audits
    python tests/benchmarks/bench_startup.py --rows 60       # the audits on the sample's first 60

Part 1, the quick commands, each a fresh process, `--quick` times (best and median wall
seconds): `parm --help`, `parm --version`, and `parm audit` of the sample stopping at a missing
column (exit 2), which reads the file first.

Part 2, when the model starts loading (engine.embedding.loading), three ways, the same
`parm audit sample_data/plant_growth.csv` (its first --rows rows) in fresh processes, taken in
turn (A B C A B C ...) so that the machine's drift falls on each alike:
  parm:     parm's way: once the file is read and its items known, a background thread asks the
            embedding cache; only when answers are missing does the model start loading;
  at start: the model starts loading as the process starts, before the file is read (what
            could be done without knowing whether the model is needed);
  on need:  no background load: the embedding stage loads the model itself.
Each on a fresh embedding cache (every answer embedded) and on a run reused (the same file and
settings audited before: nothing embedded or loaded). Printed: median wall seconds; for the
fresh runs also the median of wall minus the embedding stage (embedding itself varies most with
the machine's load) and of report.json's loading_model (the seconds the run waited for the
model).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine_line, options

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "plant_growth.csv"
# The child: a strategy of part 2, then the command line as `parm` runs it.
CHILD = """
import sys
strategy = sys.argv[1]
if strategy == "at start":
    from engine.embedding.loading import preload_model
    preload_model("all-MiniLM-L6-v2")
elif strategy == "on need":
    import engine.embedding.loading as loading
    loading.preload_for = lambda *args, **kwargs: None
from parm_tui.launch import main
main(sys.argv[2:])
"""
STRATEGIES = ("parm", "at start", "on need")


def wall(command: list[str], env: dict, ok=(0,)) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in ok:
        raise SystemExit(f"{command} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds


def quick_commands(repeat: int, env: dict, folder: Path) -> list[str]:
    parm = [sys.executable, "-m", "parm_tui.launch"]
    commands = {
        "parm --help": (parm + ["--help"], (0,)),
        "parm --version": (parm + ["--version"], (0,)),
        "parm audit, a missing column (exit 2)": (
            parm + ["audit", str(SAMPLE), "--score-col", "nope", "--out", str(folder / "x")],
            (2,),
        ),
    }
    lines = ["| command | best s | median s |", "| --- | ---: | ---: |"]
    for label, (command, ok) in commands.items():
        wall(command, env, ok)  # warm the file system's cache
        seconds = [wall(command, env, ok) for _ in range(repeat)]
        lines.append(f"| {label} | {min(seconds):.2f} | {statistics.median(seconds):.2f} |")
    return lines


def audit(strategy: str, table: Path, base: Path, env: dict, cache: Path | None) -> dict:
    """One `parm audit` of `table`: a fresh cache and data folder (cache None), or the shared
    ones of the reused runs."""
    run_env = dict(env)
    if cache is None:
        fresh = Path(tempfile.mkdtemp(dir=base))
        run_env.update(PARM_CACHE_DIR=str(fresh / "cache"), PARM_DATA_DIR=str(fresh / "data"))
        extra = ["--rerun"]
    else:
        run_env.update(PARM_CACHE_DIR=str(cache / "cache"), PARM_DATA_DIR=str(cache / "data"))
        extra = []
    out = base / "out"
    command = [sys.executable, "-c", CHILD, strategy, "audit", str(table), "--out", str(out)]
    seconds = wall(command + ["--force", "-q", *extra], run_env)
    timings = json.loads((out / "report.json").read_text(encoding="utf-8"))["timings_seconds"]
    return {"wall": seconds, "timings": timings}


def audits(rounds: int, table: Path, base: Path, env: dict) -> list[str]:
    shared = base / "reused"
    audit("parm", table, base, env, shared)  # the run later runs reuse (cache and saved run)
    lines = [
        "| model load | cache | median wall s | median wall - embedding s | median loading_model s |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for cache, label in ((None, "fresh"), (shared, "reused run")):
        seen = {strategy: [] for strategy in STRATEGIES}
        for _ in range(rounds):
            for strategy in STRATEGIES:
                seen[strategy].append(audit(strategy, table, base, env, cache))
        for strategy, runs in seen.items():
            lines.append(f"| {strategy} | {label} | {_medians(runs, cache is None)} |")
            print(lines[-1], flush=True)
    return lines


def _medians(runs: list[dict], computed: bool) -> str:
    """Median wall; for computed runs also wall less embedding and the wait for the model (a
    reused run's report.json holds the timings of the run it reuses: not shown)."""
    walls = statistics.median(r["wall"] for r in runs)
    if not computed:
        return f"{walls:.2f} | - | -"
    rest = statistics.median(r["wall"] - r["timings"].get("embedding", 0.0) for r in runs)
    waits = statistics.median(r["timings"].get("loading_model", 0.0) for r in runs)
    return f"{walls:.2f} | {rest:.2f} | {waits:.2f}"


def main() -> None:
    parser = options(__doc__, quick=5, rounds=3, rows=0)
    args = parser.parse_args()
    print(machine_line(), flush=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    with tempfile.TemporaryDirectory(prefix="parm-startup-") as tmp:
        base = Path(tmp)
        env.update(PARM_CACHE_DIR=str(base / "quick-cache"), PARM_DATA_DIR=str(base / "quick"))
        lines = quick_commands(args.quick, env, base)
        print("\n".join(lines), flush=True)
        table = SAMPLE
        if args.rows:
            table = base / "sample.csv"
            rows = SAMPLE.read_text(encoding="utf-8").splitlines()[: args.rows + 1]
            table.write_text("\n".join(rows) + "\n", encoding="utf-8")
        print(f"\nparm audit of {args.rows or 'all'} rows of the sample", flush=True)
        lines += ["", *audits(args.rounds, table, base, env)]
    print("\n" + "\n".join(lines))
    print(machine_line())


if __name__ == "__main__":
    main()
