"""Writes reads.csv: a fictional scoring session whose answers are read once, twice or three
times by four named raters of known accuracy (see README.md, "Several reads per answer").

The answers are made as make_sessions.py makes them (pieces of student answers; the reference
score follows from the ideas an answer holds). Each answer is read by distinct raters drawn at
random: once (50%), twice (42%) or three times (8%). A rater gives the reference score with
their accuracy (Ana 0.95, Ben 0.85, Cleo 0.75, Dev 0.6), else a score one step up or down
(Cleo leans up). The lead's (expert's) score, the reference score, is in `expert_score` on a
fifth of the answers (validity papers, drawn from a stream of their own so the reads are those
of the file without it). `truth(rows)` gives the reference scores back for the tests. Run from the repository root:
python sample_data/make_reads.py
"""

from __future__ import annotations

import csv
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_sessions import ITEMS, answer  # noqa: E402

SEED = 34
ANSWERS = 150
CHOSEN_ITEMS = ("volcano", "fractions")
# Each rater's accuracy (the chance a read is the reference score) and lean (the chance an
# error is one step up rather than down).
RATERS = {"Ana": (0.95, 0.5), "Ben": (0.85, 0.5), "Cleo": (0.75, 0.9), "Dev": (0.6, 0.5)}
READS = ((1, 0.5), (2, 0.42), (3, 0.08))
# The share of answers the lead scored (validity papers: about 100 reads of them, past the 50
# from which leniency is measured against the expert).
EXPERT_SHARE = 0.2
COLUMNS = ["id", "item", "answer", "rater1", "score1", "rater2", "score2", "rater3", "score3",
           "expert_score"]  # fmt: skip
OUT = Path(__file__).resolve().parent / "reads.csv"


def read(rng: random.Random, rater: str, reference: int, top: int) -> int:
    accuracy, up = RATERS[rater]
    if rng.random() < accuracy:
        return reference
    step = 1 if rng.random() < up else -1
    if not 0 <= reference + step <= top:
        step = -step
    return reference + step


def session() -> tuple[list[dict], dict[str, int]]:
    """The rows of reads.csv and each answer's reference score by id."""
    rng = random.Random(SEED)
    rows, reference = [], {}
    for name in CHOSEN_ITEMS:
        item = ITEMS[name]
        for n in range(ANSWERS):
            text, score = answer(rng, item)
            key = f"{name[:3].upper()}{n + 1:03d}"
            count = rng.choices([k for k, _ in READS], [p for _, p in READS])[0]
            row = {"id": key, "item": name, "answer": text}
            for k, rater in enumerate(rng.sample(list(RATERS), 3)):
                given = k < count
                row[f"rater{k + 1}"] = rater if given else ""
                row[f"score{k + 1}"] = read(rng, rater, score, item["top"]) if given else ""
            rows.append(row)
            reference[key] = score
    rng.shuffle(rows)
    lead = random.Random(SEED + 1)
    for row in rows:
        row["expert_score"] = reference[row["id"]] if lead.random() < EXPERT_SHARE else ""
    return rows, reference


def main() -> None:
    rows, reference = session()
    with OUT.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    counts = [sum(bool(row[f"score{k}"] != "") for k in (1, 2, 3)) for row in rows]
    print(f"{len(rows)} answers; read once {counts.count(1)}, twice {counts.count(2)}, "
          f"three times {counts.count(3)}; {len(reference)} reference scores")  # fmt: skip


if __name__ == "__main__":
    main()
