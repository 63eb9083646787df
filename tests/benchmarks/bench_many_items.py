"""The fixed costs of a session of many small items: a synthetic file shaped like SciEntsBank
(135 items of 30 answers, 3 labels, d = 384, given embeddings), `parm audit` with the default
settings as a whole process, and the stages inside it (report.json's timings_seconds: each
item's search, tuning, checks and severity summed, the session model, and what the process
spends outside the run: imports, reading, writing the outputs and reports).

`--code DIR ...` runs the same file under each DIR as PYTHONPATH (say, this tree and an export
of the code before a change), alternating, `--runs` times each, so before and after meet the
same load. Prints wall and CPU seconds and the load average for every run. `--parts` instead
times, in one thread and CPU seconds, the two pieces issue 39 cut, under each DIR in turn: the
session model's `summarise_session` on the items' own top-K graphs, and every item's bootstrap
(200 samples), with a digest of their results (equal digests: equal results).

    python tests/benchmarks/bench_many_items.py [--items 135] [--answers 30] [--runs 2]
        [--code . /tmp/base] [--set key=value ...] [--parts]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_line, options, timed  # noqa: E402


def synthetic_session(items: int, answers: int, dim: int = 384, labels: int = 3, seed: int = 0):
    """Per item, answers clustered around a few of the item's own centres; a label follows
    the cluster with 20% noise."""
    rng = np.random.default_rng(seed)
    rows, vectors = [], []
    for item in range(items):
        centres = rng.normal(size=(4, dim))
        cluster = rng.integers(0, 4, size=answers)
        v = centres[cluster] + 1.5 * rng.normal(size=(answers, dim))
        noise = (rng.random(answers) < 0.2) * rng.integers(0, labels, answers)
        score = (cluster % labels + noise) % labels
        vectors.append(v / np.linalg.norm(v, axis=1, keepdims=True))
        rows += [(f"q{item}-{a}", f"q{item}", f"answer {a} to q{item}", int(s))
                 for a, s in enumerate(score)]  # fmt: skip
    return rows, np.vstack(vectors).astype(np.float32)


def write(folder: Path, rows, vectors) -> tuple[Path, Path]:
    table, array = folder / "session.csv", folder / "session.npy"
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "item", "answer", "score"])
        writer.writerows(rows)
    np.save(array, vectors)
    return table, array


def run_once(code: Path, table: Path, array: Path, out: Path, settings: list[str]) -> dict:
    command = [sys.executable, "-m", "parm_tui.launch", "audit", str(table)]
    command += ["--item-col", "item", "--text-col", "answer", "--score-col", "score"]
    command += ["--id-col", "id", "--embeddings", str(array), "--out", str(out)]
    command += ["--force", "--quiet"]
    for setting in settings:
        command += ["--set", setting]
    env = dict(os.environ, PYTHONPATH=str(code))
    measured = timed(command, env=env, cwd=str(code))
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    measured["timings"] = report.get("timings_seconds", {})
    measured["items"] = item_stages(out)
    measured["load"] = os.getloadavg()[0]
    return measured


def item_stages(out: Path) -> dict[str, float]:
    """Each item's stage seconds summed over the items (items.csv has none: report.json's
    per-item timings when it lists them)."""
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    totals: dict[str, float] = {}
    for item in report.get("items", []):
        for stage, seconds in (item.get("timings_seconds") or {}).items():
            totals[stage] = totals.get(stage, 0.0) + float(seconds)
    return {k: round(v, 2) for k, v in totals.items()}


def parts(items: int, answers: int) -> str:
    """CPU seconds of summarise_session and of the items' bootstraps (run under one tree)."""
    import hashlib
    import time

    from engine.audit.intervals import bootstrap_agreement
    from engine.graph.search import build_graph
    from engine.model.session.cross_fit import SessionOptions
    from engine.model.session.features import SessionItem
    from engine.model.session.summary import summarise_session

    rows, vectors = synthetic_session(items, answers)
    scores = np.array([row[3] for row in rows]).reshape(items, answers)
    session = [
        SessionItem(np.arange(answers), np.full(answers, -1), scores[g], 3,
                    build_graph(vectors[g * answers:(g + 1) * answers], answers - 1))
        for g in range(items)
    ]  # fmt: skip
    options = SessionOptions(top_k_values=(5, 10, 15, 20, 25), folds=5, seed=0)
    started = time.process_time()
    summary = summarise_session(session, options)
    model = time.process_time() - started
    digest = hashlib.sha256()
    for found in summary.items:
        digest.update(found.cross_predicted.tobytes() + found.cross_proba.tobytes())
    started = time.process_time()
    for g, found in enumerate(summary.items):
        intervals = bootstrap_agreement(scores[g], found.predicted, 3, 200, seed=g)
        digest.update(repr(sorted(intervals.items())).encode())
    boot = time.process_time() - started
    return (
        f"summarise_session {model:.2f} CPU s, bootstraps {boot:.2f} CPU s, "
        f"results {digest.hexdigest()[:12]}"
    )


def main() -> None:
    parser = options(__doc__, items=135, answers=30, runs=2)
    parser.add_argument("--code", nargs="+", default=[str(Path(__file__).resolve().parents[2])])
    parser.add_argument("--set", dest="settings", action="append", default=[])
    parser.add_argument("--parts", action="store_true", help="time the pieces cut, per tree")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(parts(args.items, args.answers), flush=True)
        return
    print(machine_line(), flush=True)
    if args.parts:
        for run in range(args.runs):
            for code in args.code:
                env = dict(os.environ, PYTHONPATH=str(Path(code).resolve()), OMP_NUM_THREADS="1")
                command = [sys.executable, __file__, "--child", "--items", str(args.items)]
                command += ["--answers", str(args.answers)]
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
                print(f"run {run + 1}, {code}: {done.stdout.strip()}", flush=True)
        return
    rows, vectors = synthetic_session(args.items, args.answers)
    with tempfile.TemporaryDirectory(prefix="parm-items-") as tmp:
        table, array = write(Path(tmp), rows, vectors)
        for run in range(args.runs):
            for code in args.code:
                m = run_once(Path(code).resolve(), table, array, Path(tmp) / "out", args.settings)
                in_run = m["timings"].get("total", float("nan"))
                print(
                    f"run {run + 1}, {code}: whole process {m['wall']:.1f} s wall, "
                    f"{m['cpu']:.1f} CPU s; in the run {in_run:.1f} s; outside it "
                    f"{m['wall'] - in_run:.1f} s; load {m['load']:.1f}\n"
                    f"  session timings: {m['timings']}\n  items summed: {m['items']}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
