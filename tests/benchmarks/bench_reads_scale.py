"""Issue 34, point 5: a whole `parm audit` of a session whose answers are read several times
against the same answers read once. A synthetic session of 40,000 answers in 20 items (scores
0-3, 8 raters of accuracy 0.55-0.95, a wrong read one step off), written twice: (a) each answer
with its first read only (`--score-col score1 --rater-col rater1`); (b) the same answers with
every read, a wide file (`--score-cols score1,score2,score3 --rater-cols rater1,rater2,rater3`):
a quarter read once, a twentieth twice, the rest three times (98,000 reads at 40,000 answers).
Both runs get the same precomputed vectors (`--embeddings`, clustered unit vectors, d = 384),
so the embedding stage is equal and excluded; the answers' texts are real ASAP-SAS answers
from `$PARM_DATA_ROOT/asap-sas` (default ../shared/data beside the repository) when the folder
is there, else generated words (the severity's lexical features read them).

Each run is `parm audit ... --embeddings X.npy --force -q` with the default settings, in a
fresh process under /usr/bin/time -v, (a) and (b) alternating, `--runs` times each. Prints
every run's wall and CPU seconds (user + system: on a shared, busy machine the steadier
figure) and peak memory, the stages from report.json (each item's
stages summed over the items, the session model, and what the run spends after them: the
figures of several reads, consensus and agreement, and the rater table), best and median per
file and the ratios (b)/(a) of the best and of the medians, wall and CPU; the load average
beside each run.

    nice -n 5 python tests/benchmarks/bench_reads_scale.py --answers 10000 --runs 1
    nice -n 5 python tests/benchmarks/bench_reads_scale.py             # 40,000 answers, 2 runs
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_line, options, timed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCALE = 4  # scores 0..3
RATERS = 8
# Shares of the answers read once, twice and three times.
READS_SHARE = (0.25, 0.05, 0.70)


def texts(count: int, seed: int) -> tuple[list[str], str]:
    """`count` answers: ASAP-SAS's, cycled, when the data are there; else generated words."""
    root = Path(os.environ.get("PARM_DATA_ROOT", ROOT.parent / "shared" / "data")) / "asap-sas"
    found: list[str] = []
    for path in sorted(root.glob("prompt*-train.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            found += [row["EssayText"] for row in csv.DictReader(handle) if row["EssayText"]]
    rng = np.random.default_rng(seed)
    if found:
        return [found[i] for i in rng.permutation(count) % len(found)], f"ASAP-SAS ({root})"
    words = [f"w{k}" for k in range(3000)]
    made = [" ".join(rng.choice(words, rng.integers(8, 60))) for _ in range(count)]
    return made, "generated words"


def session(answers: int, items: int, dim: int = 384, seed: int = 0):
    """Rows (id, item, answer, rater1, score1, ..., rater3, score3) and their unit vectors:
    per item, answers clustered around a few centres; the true score follows the cluster with
    20% noise; each read by a distinct rater, right with the rater's accuracy, else one step
    off (up or down at random, the only way possible at the ends)."""
    rng = np.random.default_rng(seed)
    accuracy = rng.uniform(0.55, 0.95, RATERS)
    per_item = answers // items
    answer_texts, source = texts(per_item * items, seed)
    rows, vectors = [], []
    for item in range(items):
        centres = rng.normal(size=(6, dim))
        cluster = rng.integers(0, 6, per_item)
        v = centres[cluster] + 1.5 * rng.normal(size=(per_item, dim))
        vectors.append(v / np.linalg.norm(v, axis=1, keepdims=True))
        truth = np.where(
            rng.random(per_item) < 0.8, cluster % SCALE, rng.integers(0, SCALE, per_item)
        )
        count = rng.choice([1, 2, 3], per_item, p=READS_SHARE)
        for a in range(per_item):
            row = [f"q{item}-{a}", f"q{item}", answer_texts[item * per_item + a]]
            for rater in rng.choice(RATERS, count[a], replace=False):
                score = truth[a]
                if rng.random() > accuracy[rater]:
                    step = (
                        rng.choice([-1, 1]) if 0 < score < SCALE - 1 else (1 if score == 0 else -1)
                    )
                    score += step
                row += [f"r{rater}", int(score)]
            rows.append(row + [""] * (2 * (3 - count[a])))
    return rows, np.vstack(vectors).astype(np.float32), source


def write(folder: Path, rows, vectors) -> tuple[Path, Path, Path]:
    """once.csv (first reads), reads.csv (every read, wide) and vectors.npy (one per answer)."""
    head = ["id", "item", "answer", "rater1", "score1", "rater2", "score2", "rater3", "score3"]
    once, every, array = folder / "once.csv", folder / "reads.csv", folder / "vectors.npy"
    for path, width in ((once, 5), (every, len(head))):
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(head[:width])
            writer.writerows(row[:width] for row in rows)
    np.save(array, vectors)
    return once, every, array


def command(table: Path, array: Path, out: Path, several: bool) -> list[str]:
    run = [sys.executable, "-m", "parm_tui.launch", "audit", str(table), "--item-col", "item"]
    run += ["--text-col", "answer", "--id-col", "id", "--embeddings", str(array)]
    if several:
        run += ["--score-cols", "score1,score2,score3", "--rater-cols", "rater1,rater2,rater3"]
    else:
        run += ["--score-col", "score1", "--rater-col", "rater1"]
    return run + ["--out", str(out), "--force", "-q"]


def stages(out: Path) -> dict[str, float]:
    """report.json's session timings, each item's stages summed over the items, and "after":
    what the session spends after the items and the session model (the figures of several
    reads, the rater table)."""
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    session = {k: float(v) for k, v in (report.get("timings_seconds") or {}).items()}
    summed: dict[str, float] = {}
    for item in report.get("items", []):
        for stage, seconds in (item.get("timings_seconds") or {}).items():
            if stage != "total":
                summed[stage] = summed.get(stage, 0.0) + float(seconds)
    found = {f"items: {k}": v for k, v in summed.items()}
    items_total = sum(float((i.get("timings_seconds") or {}).get("total", 0.0))
                      for i in report.get("items", []))  # fmt: skip
    found["items: total"] = items_total
    if "session_model" in session:
        found["session model"] = session["session_model"]
    if "total" in session:
        found["run total"] = session["total"]
        found["after"] = session["total"] - items_total - session.get("session_model", 0.0)
    return found


def shown(found: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in found.items())


def main() -> None:
    parser = options(__doc__, answers=40_000, items=20, runs=2, seed=0)
    args = parser.parse_args()
    print(machine_line(), flush=True)
    rows, vectors, source = session(args.answers, args.items, seed=args.seed)
    reads = sum(1 for row in rows for score in row[4::2] if score != "")
    print(f"{len(rows):,} answers in {args.items} items, {reads:,} reads; texts: {source}",
          flush=True)  # fmt: skip
    walls: dict[bool, list[float]] = {False: [], True: []}
    cpus: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="parm-reads-") as tmp:
        once, every, array = write(Path(tmp), rows, vectors)
        for run in range(args.runs):
            for several, table in ((False, once), (True, every)):
                out = Path(tmp) / ("out-reads" if several else "out-once")
                load = os.getloadavg()[0]
                m = timed(command(table, array, out, several), cwd=str(ROOT),
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))  # fmt: skip
                walls[several].append(m["wall"])
                cpus[several].append(m["cpu"])
                name = "(b) every read" if several else "(a) read once "
                print(
                    f"run {run + 1} {name}: {m['wall']:.1f} s wall, {m['cpu']:.1f} CPU s, "
                    f"peak {m['peak_gb']:.2f} GB; load {load:.1f} -> {os.getloadavg()[0]:.1f}\n"
                    f"  stages (s): {shown(stages(out))}",
                    flush=True,
                )
    for several, name in ((False, "(a) read once"), (True, "(b) every read")):
        w, c = walls[several], cpus[several]
        print(f"{name}: wall best {min(w):.1f} s, median {np.median(w):.1f} s; "
              f"CPU best {min(c):.1f} s, median {np.median(c):.1f} s")  # fmt: skip
    for name, seconds in (("wall", walls), ("CPU", cpus)):
        best = min(seconds[True]) / min(seconds[False])
        median = np.median(seconds[True]) / np.median(seconds[False])
        print(f"ratio (b)/(a), {name}: best {best:.2f}, median {median:.2f} (goal: at most 1.5)")
    print(re.sub(r"load average", "at the end: load average", machine_line()))


if __name__ == "__main__":
    main()
