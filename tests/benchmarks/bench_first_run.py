"""A newcomer's first run: from a CSV of 15,000 answers with nothing cached to the review queue,
with the bundled model and with the fast path (`--model static`), on this machine.

    PARM_ASAP_DIR=/path/to/shared/data/asap-sas python tests/benchmarks/bench_first_run.py
    python tests/benchmarks/bench_first_run.py --skip-bundled      # the fast path only
    python tests/benchmarks/bench_first_run.py --n 5000

Data: every ASAP-SAS file in $PARM_ASAP_DIR (default ../shared/data/asap-sas beside the
repository; train, val and test: 12,337 real answers to 8 prompts), concatenated and topped
up to N by drawing further rows (seed 0; a drawn row gets a new id), written as one CSV with
the prompt as the item column: a scoring session of 8 items.

Each run is the real command, `parm audit FILE --item-col EssaySet ...` with the default
settings, in a fresh process under /usr/bin/time, with a fresh, empty embedding cache
($PARM_CACHE_DIR) and data folder. The fast path is run twice: first with an empty model folder
($PARM_MODEL_DIR), so that it includes the one-time distillation of the static model, then
again with a fresh embedding cache but the model made, which is every later first run of a
file on this machine. Printed: wall and CPU seconds, peak memory, and the stages from
report.json (loading the model, embedding, and the items' audits).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from machine import options, timed

ROOT = Path(__file__).resolve().parents[2]
ASAP_DIR = Path(os.environ.get("PARM_ASAP_DIR", ROOT.parent / "shared" / "data" / "asap-sas"))
COLUMNS = ["--item-col", "EssaySet", "--text-col", "EssayText", "--score-col", "Score1"]
COLUMNS += ["--id-col", "Id", "--second-score-col", "Score2"]


def session_file(folder: Path, n: int) -> Path:
    """All ASAP-SAS answers, topped up to n with drawn rows, as one CSV."""
    frames = [
        pd.read_csv(path, dtype=str, keep_default_na=False)
        for path in sorted(ASAP_DIR.glob("prompt*-*.csv"))
    ]
    frame = pd.concat(frames, ignore_index=True)[
        ["Id", "EssaySet", "Score1", "Score2", "EssayText"]
    ]
    if n > len(frame):
        rng = np.random.default_rng(0)
        extra = frame.iloc[rng.integers(0, len(frame), n - len(frame))].copy()
        extra["Id"] = [f"{i}-drawn{k}" for k, i in enumerate(extra["Id"])]
        frame = pd.concat([frame, extra], ignore_index=True)
    else:
        frame = frame.sample(n=n, random_state=0).reset_index(drop=True)
    path = folder / f"asap-session-{n}.csv"
    frame.to_csv(path, index=False)
    return path


def run(table: Path, out: Path, env: dict, extra: list[str]) -> dict:
    parm = Path(sys.executable).with_name("parm")
    command = [str(parm), "audit", str(table), *COLUMNS, *extra]
    measured = timed(command + ["--out", str(out), "--force", "--quiet"], env=env)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    stages = report.get("timings_seconds", {})
    audits = [item.get("timings_seconds", {}) for item in report.get("items", [])]
    for name in ("neighbours", "tuning", "checks", "severity"):
        stages[f"items: {name}"] = round(sum(a.get(name, 0.0) for a in audits), 1)
    return {**measured, "stages": stages}


def fresh_env(base: Path, name: str, models: Path) -> dict:
    env = dict(os.environ)
    env["PARM_CACHE_DIR"] = str(base / f"cache-{name}")
    env["PARM_DATA_DIR"] = str(base / f"data-{name}")
    env["PARM_MODEL_DIR"] = str(models)
    env["HF_HUB_OFFLINE"] = "1"
    return env


def row(label: str, result: dict) -> str:
    stages = ", ".join(f"{k} {v}" for k, v in result["stages"].items())
    return (
        f"| {label} | {result['wall']:.1f} | {result['cpu']:.0f} | {result['peak_gb']:.2f} | "
        f"{stages} |"
    )


def main() -> None:
    parser = options(__doc__, n=15_000)
    parser.add_argument("--skip-bundled", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} cores, load average {load:.1f} at start", flush=True)
    with tempfile.TemporaryDirectory(prefix="parm-first-run-") as tmp:
        base = Path(tmp)
        table = session_file(base, args.n)
        models = base / "models"
        lines = [
            f"## First run of {args.n:,} answers (8 items), nothing cached",
            "",
            "| run | wall s | CPU s | peak GB | stages (report.json, s) |",
            "| --- | ---: | ---: | ---: | --- |",
        ]
        first = run(
            table, base / "out-static-1", fresh_env(base, "s1", models), ["--model", "static"]
        )
        lines.append(row("fast path, first time on this machine (distils the static model)", first))
        print(lines[-1], flush=True)
        again = run(
            table, base / "out-static-2", fresh_env(base, "s2", models), ["--model", "static"]
        )
        lines.append(row("fast path, static model already made", again))
        print(lines[-1], flush=True)
        if not args.skip_bundled:
            bundled = run(table, base / "out-bundled", fresh_env(base, "b", models), [])
            lines.append(row("bundled all-MiniLM-L6-v2", bundled))
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        lines += [
            "",
            f"Goal: the fast path under 60 s, not counting the distillation "
            f"({again['wall']:.1f} s). Load average {load:.1f} at the end.",
        ]
        print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
