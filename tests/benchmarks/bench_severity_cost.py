"""What the review queue's severity costs in a whole default run, with given embeddings: one item
of about 1,500 answers (ASAP-SAS prompt 3, 1,447), a file of 135 small items (SciEntsBank, about
37 answers each, `--item-col question_id`), or with --large instead one item of 10,765 answers
(the eight ASAP-SAS prompts' train files as one file, written to a temporary folder).

    PARM_DATA_ROOT=../shared/data python tests/benchmarks/bench_severity_cost.py
    python tests/benchmarks/bench_severity_cost.py --code /tmp/parm-before . --repeat 3
    python tests/benchmarks/bench_severity_cost.py --code /tmp/parm-before . --repeat 1 --large

Each run is a whole `parm audit ... --embeddings X.npy --out DIR --force --quiet` process under
/usr/bin/time (process start and imports included), default settings. With `--code`, the same
runs are made with each source tree first on PYTHONPATH (for example an older commit extracted
with `git archive <commit> | tar -x -C /tmp/parm-before`), alternating between them so both see
the same machine; the table gives the best and the median wall clock, CPU seconds, and the
severity stage's own seconds from report.json (summed over items). Embeddings are written once
from parm's cached embed_texts (set PARM_CACHE_DIR to the shared cache).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_line, timed  # noqa: E402
from severity_data import ASAP_PROMPTS, DATA, file_vectors  # noqa: E402

FILES = {
    "one item, 1,447 answers (ASAP-SAS prompt 3)": (
        "asap-sas/prompt3-train.csv",
        ["--text-col", "EssayText", "--score-col", "Score1", "--id-col", "Id"],
        "EssayText",
    ),
    "135 items of ~37 answers (SciEntsBank)": (
        "scientsbank/train.csv",
        ["--item-col", "question_id", "--text-col", "answer", "--score-col", "label"],
        "answer",
    ),
}
LARGE = "one item, 10,765 answers (the eight ASAP-SAS prompts as one file)"
LAUNCH = "import sys; from parm_tui.launch import main; sys.argv[0] = 'parm'; main()"


def asap_as_one_file(folder: Path) -> Path:
    """The eight ASAP-SAS prompts' train files stacked into one CSV (an absolute path, so
    DATA / path is the path itself)."""
    frames = [
        pd.read_csv(DATA / f"asap-sas/prompt{p}-train.csv", dtype=str, keep_default_na=False)
        for p in ASAP_PROMPTS
    ]
    path = (folder / "asap-all.csv").resolve()
    pd.concat(frames).to_csv(path, index=False)
    return path


def run(code: Path, table: Path, array: Path, flags: list[str], out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code.resolve()))
    command = [sys.executable, "-c", LAUNCH, "audit", str(table)]
    command += flags + ["--embeddings", str(array), "--out", str(out), "--force", "--quiet"]
    # From the output folder's parent, so the working folder's own sources are not imported.
    measured = timed(command, env=env, cwd=out.parent)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    items = report.get("items", [report])
    severity = sum(item["timings_seconds"].get("severity", 0.0) for item in items)
    return {"wall": measured["wall"], "cpu": measured["cpu"], "severity": severity}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, nargs="+", default=[Path(".")])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--large", action="store_true", help="only the 10,765-answer item")
    args = parser.parse_args()
    print(machine_line())
    print("| file | code | wall s best / median | CPU s median | severity s median |")
    print("| --- | --- | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        files = dict(FILES)
        if args.large:
            files = {}
            files[LARGE] = (
                str(asap_as_one_file(Path(tmp))),
                FILES[next(iter(FILES))][1],
                "EssayText",
            )
        for label, (relative, flags, text) in files.items():
            array = Path(tmp) / "vectors.npy"
            np.save(array, file_vectors(DATA / relative, text))
            found: dict[Path, list[dict]] = {code: [] for code in args.code}
            for _ in range(args.repeat):
                for code in args.code:
                    found[code].append(run(code, DATA / relative, array, flags, Path(tmp) / "out"))
            for code, runs in found.items():
                walls = sorted(r["wall"] for r in runs)
                cpu = float(np.median([r["cpu"] for r in runs]))
                severity = float(np.median([r["severity"] for r in runs]))
                print(
                    f"| {label} | {code} | {walls[0]:.1f} / {np.median(walls):.1f} | "
                    f"{cpu:.1f} | {severity:.2f} |"
                )


if __name__ == "__main__":
    main()
