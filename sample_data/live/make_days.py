"""Writes day1.csv ... day5.csv: five days of a fictional scoring session, for `parm monitor`
(README.md, "Follow a scoring session"). Run from the repository root:
python sample_data/live/make_days.py

The answers and their scores are the project's samples': the items volcano, recycling (scored
0-2) and fractions (0-3) of sample_data/sessions.csv and the item plants (0-2) of
sample_data/plant_growth.csv; each answer's score there is taken as its true score. Every day,
38 answers of each of the first three items and 60 of plants are read twice by two of six
raters, half in the morning and half in the afternoon, and each rater reads six validity papers
(seeds, with the lead's expert score) of each item. A rater reads the true score with
probability 0.93, else a neighbouring score. Two things go wrong, on purpose:

- Dev drifts: from day 4 on, half of Dev's reads below the top are one point too high;
- the item `plants` falls on the afternoon of day 5: every rater reads it right with
  probability 0.6 only.

One row per read (long form): id, item, answer, rater, score, kind (first, second or validity),
marked_at (ISO date and time), expert_score (on validity reads). The same seed (`SEED`) gives
the same files.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

SEED = 45
HERE = Path(__file__).resolve().parent
SOURCES = (HERE.parent / "sessions.csv", HERE.parent / "plant_growth.csv")
RATERS = ["Ana", "Ben", "Cleo", "Dev", "Eli", "Fay"]
DAYS = ["2026-05-04", "2026-05-05", "2026-05-06", "2026-05-07", "2026-05-08"]
PER_DAY = {"volcano": 38, "recycling": 38, "fractions": 38, "plants": 60}
SEEDS_PER_ITEM, SEED_READS = 10, 6
ACCURACY, FALLEN = 0.93, 0.6
DRIFTER, DRIFT_FROM, DRIFT_SHARE = "Dev", 3, 0.5  # day index 3 = day 4
FALLING, FALL_DAY = "plants", 4  # day 5, afternoon
COLUMNS = ["id", "item", "answer", "rater", "score", "kind", "marked_at", "expert_score"]


def answers() -> dict[str, list[dict]]:
    by_item: dict[str, list[dict]] = {}
    for source in SOURCES:
        with open(source, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                by_item.setdefault(row.get("item", "plants"), []).append(row)
    return by_item


def read(rng: random.Random, true: int, top: int, rater: str, day: int, item: str, pm: bool):
    accuracy = FALLEN if item == FALLING and day == FALL_DAY and pm else ACCURACY
    score = true
    if rng.random() > accuracy:
        score = min(max(true + rng.choice((-1, 1)), 0), top)
        score = score if score != true else (true - 1 if true == top else true + 1)
    if rater == DRIFTER and day >= DRIFT_FROM and score < top and rng.random() < DRIFT_SHARE:
        score += 1
    return score


def clock(rng: random.Random, day: str, pm: bool) -> str:
    hour = rng.randint(13, 16) if pm else rng.randint(8, 11)
    return f"{day}T{hour:02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


def day_rows(rng, k: int, pool: dict, seeds: dict, tops: dict) -> list[list]:
    rows = []
    for item, left in pool.items():
        for j in range(PER_DAY[item]):
            answer = left.pop()
            pm = j >= PER_DAY[item] // 2
            first, second = rng.sample(RATERS, 2)
            when = sorted([clock(rng, DAYS[k], pm), clock(rng, DAYS[k], pm)])
            for rater, kind, at in ((first, "first", when[0]), (second, "second", when[1])):
                score = read(rng, int(answer["score"]), tops[item], rater, k, item, pm)
                rows.append([answer["id"], item, answer["answer"], rater, score, kind, at, ""])
        for rater in RATERS:
            for paper in rng.sample(seeds[item], SEED_READS):
                pm = rng.random() < 0.5
                true = int(paper["score"])
                score = read(rng, true, tops[item], rater, k, item, pm)
                rows.append([f"SEED-{paper['id']}", item, paper["answer"], rater, score,
                             "validity", clock(rng, DAYS[k], pm), true])  # fmt: skip
    return sorted(rows, key=lambda row: row[6])


def main() -> None:
    rng = random.Random(SEED)
    by_item = answers()
    tops = {item: max(int(r["score"]) for r in rows) for item, rows in by_item.items()}
    seeds, pool = {}, {}
    for item, rows in by_item.items():
        rows = rows[:]
        rng.shuffle(rows)
        seeds[item], pool[item] = rows[:SEEDS_PER_ITEM], rows[SEEDS_PER_ITEM:]
    for k in range(len(DAYS)):
        path = HERE / f"day{k + 1}.csv"
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(COLUMNS)
            writer.writerows(day_rows(rng, k, pool, seeds, tops))
        print(f"wrote {path.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    main()
