"""Writes sessions.csv: a fictional scoring session of three items, six raters, a double-scored
subset, one planted lenient rater and one planted noisy rater (see README.md).

Every answer is put together from pieces of a student answer, and its reference score follows
from which ideas it holds (the rubric in README.md). Run from the repository root:
python sample_data/make_sessions.py
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

SEED = 2026
RATERS = ["R1", "R2", "R3", "R4", "R5", "R6"]
LENIENT, NOISY = "R4", "R6"
# A rater who helped out briefly: too few scores to judge.
STAND_IN, STAND_IN_SCORES = "R7", 8
DOUBLE_SCORED = 0.25

# Per item: the question, its scale, the ideas that earn credit (each a list of phrasings),
# wrong ideas and filler. The reference score is the number of distinct ideas, capped at the top.
ITEMS = {
    "volcano": {
        "top": 2,
        "ideas": [
            [
                "magma under the ground is molten rock",
                "there is hot melted rock called magma deep down",
                "rock melts in the mantle and makes magma",
                "underneath there is liquid rock (magma)",
            ],
            [
                "gas and pressure build up until it bursts out",
                "the pressure of the gases gets too big so it explodes",
                "gas bubbles in the magma push it up like a shaken fizzy drink",
                "pressure builds and the rock on top cracks",
            ],
            [
                "they are at the edges of tectonic plates",
                "plates move apart or one goes under another and rock melts",
                "most volcanoes are where plates meet",
                "when a plate sinks into the mantle it melts and rises",
            ],
            [
                "magma is less dense than the rock round it so it rises",
                "hot magma is lighter so it floats up through cracks",
                "the melted rock rises because it is less dense",
            ],
        ],
        "wrong": [
            "the sun heats the mountain until it explodes",
            "volcanoes erupt because the earth is angry",
            "lava comes from the sea",
            "the core is made of lava and it leaks out the top",
            "earthquakes make fire inside mountains",
        ],
        "filler": [
            "i think",
            "basically",
            "in geography we learned that",
            "this is why",
            "so yeah",
            "it is really dangerous",
            "like in pompeii",
        ],
    },
    "recycling": {
        "top": 2,
        "ideas": [
            [
                "less plastic goes to landfill",
                "it stops rubbish piling up in landfill sites",
                "landfills fill up slower",
                "less waste is buried in the ground",
            ],
            [
                "it saves oil because new plastic is made from oil",
                "we use fewer raw materials like crude oil",
                "you dont need to drill for as much oil",
                "it saves the resources used to make new plastic",
            ],
            [
                "less plastic ends up in the sea and hurts animals",
                "turtles and fish dont eat the plastic",
                "it keeps plastic out of rivers and oceans",
                "sea birds get tangled in plastic less",
            ],
            [
                "making new plastic uses more energy and makes co2",
                "recycling uses less energy so less greenhouse gas",
                "fewer carbon emissions than making it from scratch",
                "less burning so less air pollution",
            ],
        ],
        "wrong": [
            "plastic is good for plants",
            "recycling makes the plastic biodegradable straight away",
            "because the bin men need jobs",
            "it makes plastic stronger",
            "plastic turns into paper",
        ],
        "filler": [
            "first of all",
            "also",
            "my mum says",
            "it is better for the planet",
            "we should all do it",
            "another reason is",
        ],
    },
    "fractions": {
        "top": 3,
        "ideas": [
            [
                "3/4 is 9/12 and 2/3 is 8/12",
                "with a common denominator of 12 its 9 twelfths against 8 twelfths",
                "change them both to twelfths: 9/12 and 8/12",
            ],
            [
                "so 9/12 is bigger than 8/12",
                "9 is more than 8 so three quarters is bigger",
                "nine twelfths beats eight twelfths",
            ],
            [
                "3/4 is 0.75 and 2/3 is 0.666",
                "as decimals 0.75 is more than 0.67",
                "3 divided by 4 is 0.75 and 2 divided by 3 is about 0.67",
            ],
            [
                "3/4 is only 1/4 away from a whole but 2/3 is 1/3 away",
                "the gap to 1 is smaller for 3/4",
                "a quarter missing is less than a third missing",
            ],
        ],
        "wrong": [
            "because 3 and 4 are bigger numbers than 2 and 3",
            "3/4 has a bigger bottom number so its bigger",
            "they are the same because you add one to each",
            "2/3 is bigger because thirds are bigger than quarters",
            "4 is more than 3",
        ],
        "filler": [
            "i worked it out",
            "you can draw a pizza",
            "easy",
            "my answer is",
            "it is because",
            "proof:",
        ],
    },
}


def answer(rng: random.Random, item: dict) -> tuple[str, int]:
    """An answer and its reference score: how many distinct ideas it holds, capped at the top."""
    top = item["top"]
    wanted = rng.choices(range(top + 1), [0.3] + [0.7 / top] * top)[0]
    wanted += wanted == top and rng.random() < 0.3  # some answers say more than is needed
    ideas = rng.sample(item["ideas"], min(wanted, len(item["ideas"])))
    parts = [rng.choice(phrasings) for phrasings in ideas]
    if not parts or rng.random() < 0.35:
        parts.append(rng.choice(item["wrong"]))
    rng.shuffle(parts)
    if rng.random() < 0.5:
        parts.insert(0, rng.choice(item["filler"]))
    text = rng.choice([", ", ". ", " and ", " because "]).join(parts)
    text = _typos(rng, text)
    return text[0].upper() + text[1:] if rng.random() < 0.6 else text, min(len(ideas), top)


def _typos(rng: random.Random, text: str) -> str:
    swaps = {
        "because": "becuase",
        "pressure": "presure",
        "environment": "enviroment",
        "denominator": "denominater",
        "really": "realy",
        "less": "les",
        "their": "there",
    }
    for right, wrong in swaps.items():
        if right in text and rng.random() < 0.3:
            text = text.replace(right, wrong, 1)
    return text


def rated(rng: random.Random, rater: str, score: int, top: int) -> int:
    """The score a rater gives: the reference, except the planted lenient and noisy raters."""
    if rater == LENIENT and rng.random() < 1 / 3:
        return min(top, score + 1)
    if rater == NOISY and rng.random() < 1 / 3:
        return rng.choice([s for s in range(top + 1) if s != score])
    if rng.random() < 0.04:  # everyone slips now and then
        return max(0, min(top, score + rng.choice([-1, 1])))
    return score


def main() -> None:
    rng = random.Random(SEED)
    rows = []
    changed: dict[str, int] = {}  # scores that differ from the reference, by rater
    for name, item in ITEMS.items():
        for n in range(200):
            text, reference = answer(rng, item)
            first, second = rng.sample(RATERS, 2)
            row = {
                "id": f"{name[:3].upper()}{n + 1:03d}",
                "item": name,
                "answer": text,
                "rater": first,
                "score": rated(rng, first, reference, item["top"]),
                "rater2": "",
                "score2": "",
            }
            if rng.random() < DOUBLE_SCORED:
                row["rater2"], row["score2"] = second, rated(rng, second, reference, item["top"])
            rows.append(row)
            changed[first] = changed.get(first, 0) + (row["score"] != reference)
    for row in rng.sample([r for r in rows if r["rater"] not in (LENIENT, NOISY)], STAND_IN_SCORES):
        row["rater"] = STAND_IN
    rng.shuffle(rows)
    out = Path(__file__).resolve().parent / "sessions.csv"
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(
        f"{len(rows)} answers; scores off the reference by rater: {dict(sorted(changed.items()))}"
    )


if __name__ == "__main__":
    main()
