"""Running a file again: `parm audit` cold, then the same file unchanged (the finished run
reused, engine.workspace.reuse), then with --rerun (computed again, the cache warm).

    python tests/benchmarks/bench_rerun.py                       # sample_data/plant_growth.csv
    PARM_DATA_ROOT=../shared/data python tests/benchmarks/bench_rerun.py --mohler

Each run is the real command in a fresh process under /usr/bin/time, with an empty embedding
cache and data folder made for the benchmark (the bundled model from its usual folder). In
order: (1) cold, into folder A; (2) the same file again into a new folder B (reused: the set
written from the kept run); (3) again into A (reused: the run's own set there is kept as it
is); (4) --rerun into C (everything computed again; the answers come from the cache); (5) the
file with 10 answers added (10 rows spread over the file copied with new ids and " again" after
their answers, so they must be embedded) into D: only the items they are in are audited again
(engine.saved.items). Printed: wall and CPU seconds of each, and the stages of (1), (4) and (5)
from report.json's timings_seconds with what they leave unnamed (total minus the named stages).
Goals: (2) and (3) under 3 s; (5) under 15 s on the Mohler file (2,273 answers, 80 items).
"""

from __future__ import annotations

import csv
import json
import os
import sys
import tempfile
from pathlib import Path

from machine import machine_line, options, timed

ROOT = Path(__file__).resolve().parents[2]
DATA_ROOT = Path(os.environ.get("PARM_DATA_ROOT", ROOT.parent / "shared" / "data"))
SAMPLE = (ROOT / "sample_data" / "plant_growth.csv", [])
MOHLER_COLUMNS = ["--item-col", "question_id", "--text-col", "answer", "--id-col", "id"]
MOHLER_COLUMNS += ["--score-col", "score_grader1", "--second-score-col", "score_grader2"]


def audit(path: Path, out: Path, columns: list[str], environment: dict, *extra: str) -> dict:
    command = [sys.executable, "-m", "parm_tui.cli", "audit", str(path), *columns]
    measured = timed([*command, "--out", str(out), "-q", *extra], env=environment)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return measured | {"run_id": report["run_id"], "timings": report["timings_seconds"]}


def stages_line(timings: dict) -> str:
    named = sum(seconds for stage, seconds in timings.items() if stage != "total")
    shown = ", ".join(f"{stage} {seconds:.2f}" for stage, seconds in timings.items())
    return f"{shown}; unnamed {timings['total'] - named:.2f}"


def with_new_answers(path: Path, folder: Path, count: int = 10) -> Path:
    """A copy of the file with `count` answers added: rows spread over it, new ids, answers
    that are not in the cache."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    text = "answer" if "answer" in rows[0] else next(iter(rows[0]))
    added = []
    for k in range(count):
        row = dict(rows[k * len(rows) // count])
        row["id"] = f"{row.get('id', k)}-new{k}"
        row[text] = f"{row[text]} again"
        added.append(row)
    copy = folder / f"added-{path.name}"
    with open(copy, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([*rows, *added])
    return copy


def bench(path: Path, columns: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-rerun-") as folder:
        base = Path(folder)
        environment = os.environ | {
            "PARM_DATA_DIR": str(base / "data"),
            "PARM_CACHE_DIR": str(base / "cache"),
            "PYTHONPATH": str(ROOT),
        }
        runs = {
            "cold (nothing cached)": audit(path, base / "A", columns, environment),
            "again, unchanged, new folder": audit(path, base / "B", columns, environment),
            "again, unchanged, its own folder": audit(path, base / "A", columns, environment),
            "--rerun (cache warm)": audit(path, base / "C", columns, environment, "--rerun"),
        }
        added = with_new_answers(path, base)
        runs["10 answers added"] = audit(added, base / "D", columns, environment)
    cold = runs["cold (nothing cached)"]
    print(f"\n{path.name}: {machine_line()}")
    print("| run | wall s | CPU s | run reused |")
    print("| --- | ---: | ---: | --- |")
    for name, measured in runs.items():
        reused = "yes" if measured["run_id"] == cold["run_id"] and measured is not cold else "no"
        print(f"| {name} | {measured['wall']:.2f} | {measured['cpu']:.2f} | {reused} |")
    print(f"stages, cold: {stages_line(cold['timings'])}")
    print(f"stages, --rerun: {stages_line(runs['--rerun (cache warm)']['timings'])}")
    print(f"stages, 10 answers added: {stages_line(runs['10 answers added']['timings'])}")


def main() -> None:
    parser = options(__doc__)
    parser.add_argument("--mohler", action="store_true", help="also the Mohler file")
    arguments = parser.parse_args()
    bench(*SAMPLE)
    if arguments.mohler:
        bench(DATA_ROOT / "mohler" / "answers.csv", MOHLER_COLUMNS)


if __name__ == "__main__":
    main()
