"""The sessions bench_consensus.py scores: real answers of every kind of shared data, read again
by simulated raters.

Each dataset is one session; its items are those of the file(s) (a file without an item column
is one item). Gold is the first human score; an item's scale is its gold labels in order
(numbers, half points included) or, for SciEntsBank, its text labels without an order. Vectors
are the whole files embedded by parm's cached `embed_texts` (severity_data.file_vectors).

A simulated session (`simulate`): 5-8 raters, each with an accuracy drawn uniformly from
0.55-0.95 and a lean (a third lean up, a third down, a third neither); every answer is read by
`reads` distinct raters drawn at random. Two kinds of error:

- random: a read is gold with the rater's accuracy; otherwise on an ordered scale it is a near
  miss, up with probability 0.8 for a rater leaning up (0.2 leaning down, 0.5 neither; the only
  way possible at the ends), NEAR_MISS steps away: one step three times in four, two steps one
  time in five, further rarely (a geometric distance, cut at the scale's end); on nominal labels
  another label of the item, uniformly;
- consistent: on every item each rater scores a cluster of similar answers (a random answer
  and its nearest CLUSTER share by cosine similarity of the embeddings) one step off in one
  direction (their lean's, at random for a rater with none; inward at the ends), on nominal
  labels one other label fixed per rater and item: the blind spot of a rater who misreads one
  kind of answer, which text evidence from similar answers can echo.

A rater's true accuracy is the share of their reads equal to gold (the blind spot included).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from severity_data import DATA, file_vectors

from engine.audit.reads.item_reads import ItemReads

# name: (files, text column, gold column, item column or None, ordered)
SOURCES = {
    "asap-sas": ([f"asap-sas/prompt{p}-train.csv" for p in (1, 2, 3, 4, 7, 8, 9, 10)],
                 "EssayText", "Score1", None, True),
    "scientsbank": (["scientsbank/train.csv"], "answer", "label", "question_id", False),
    "asap-aes": ([f"asap-aes/set{s}.csv" for s in (1, 2, 7, 8)], "essay", "rater1_domain1", None,
                 True),
    "mohler": (["mohler/answers.csv"], "answer", "score_grader1", "question_id", True),
    "powergrading": (["powergrading/answers.csv"], "answer", "G1", "question_id", True),
}  # fmt: skip
# The file's second human score, for the design whose raters are as good as the file's.
SECOND = {"asap-sas": "Score2", "asap-aes": "rater2_domain1", "mohler": "score_grader2",
          "powergrading": "G2"}  # fmt: skip
LEAN_UP = {-1: 0.2, 0: 0.5, 1: 0.8}
# A random error's distance in steps is geometric: each step further NEAR_MISS times as likely.
NEAR_MISS = 0.25
# The share of an item's answers in each rater's blind spot.
CLUSTER = 0.1


@dataclass
class Item:
    """One item: gold codes (N,), its scale's labels, values (points; None for nominal) and
    the answers' vectors (N, d)."""

    name: str
    gold: np.ndarray
    labels: list[str]
    values: np.ndarray | None
    vectors: np.ndarray
    agreement: float | None = None

    @property
    def n_classes(self) -> int:
        return len(self.labels)


@dataclass
class ItemRows:
    """One item as its file holds it: the file, the item's name, rows, raw texts, gold labels
    (stripped), its scale (the labels in order where ordered) and the answers' vectors."""

    file: str
    name: str
    rows: np.ndarray
    texts: np.ndarray
    labels: np.ndarray
    scale: list[str]
    ordered: bool
    vectors: np.ndarray


def item_rows(dataset: str, limit: int | None = None):
    """Each item of a dataset with at least two gold labels (the first `limit` per file), and its
    file's frame."""
    files, text, gold, item_column, ordered = SOURCES[dataset]
    for file in files:
        frame = pd.read_csv(DATA / file, dtype=str, keep_default_na=False)
        vectors = file_vectors(DATA / file, text)
        labels = frame[gold].str.strip().to_numpy()
        groups = [(Path(file).stem, np.arange(len(frame)))]
        if item_column is not None:
            keys = frame[item_column].to_numpy()
            groups = [(str(k), np.flatnonzero(keys == k)) for k in dict.fromkeys(keys)]
        for name, rows in groups[:limit]:
            scale = sorted(set(labels[rows]), key=float) if ordered else sorted(set(labels[rows]))
            if len(scale) >= 2:
                texts = frame[text].to_numpy()[rows]
                found = ItemRows(
                    file, name, rows, texts, labels[rows], scale, ordered, vectors[rows]
                )
                yield found, frame


def file_agreement(dataset: str, frame: pd.DataFrame) -> float | None:
    """The exact agreement of the file's first and second human scores (None without a second)."""
    if dataset not in SECOND:
        return None
    gold = SOURCES[dataset][2]
    other = frame[SECOND[dataset]].str.strip()
    both = (other != "") & (frame[gold].str.strip() != "")
    first = pd.to_numeric(frame[gold][both]).to_numpy()
    return float(np.mean(first == pd.to_numeric(other[both]).to_numpy()))


def load(dataset: str, limit: int | None = None) -> list[Item]:
    """Every item of a dataset with at least two gold labels (the first `limit` per file)."""
    items, agreements = [], {}
    for found, frame in item_rows(dataset, limit):
        if found.file not in agreements:
            agreements[found.file] = file_agreement(dataset, frame)
        codes = np.array([found.scale.index(v) for v in found.labels])
        values = np.array(found.scale, dtype=float) if found.ordered else None
        items.append(
            Item(found.name, codes, found.scale, values, found.vectors, agreements[found.file])
        )
    return items


@dataclass
class Session:
    """A simulated session: each item's reads and gold codes, the raters' drawn accuracies
    (their true accuracy is the share of their reads equal to gold) and leans."""

    reads: list[ItemReads]
    gold: list[np.ndarray]
    accuracy: np.ndarray
    lean: np.ndarray


def _near_miss(rng, gold, up, n_classes) -> np.ndarray:
    """Reads a geometric number of steps from gold, up where `up` (down at the top end, up at
    the bottom), cut at the scale's end."""
    up = np.where(gold == 0, True, np.where(gold == n_classes - 1, False, up))
    room = np.where(up, n_classes - 1 - gold, gold)
    steps = np.minimum(rng.geometric(1 - NEAR_MISS, gold.size), room)
    return gold + np.where(up, steps, -steps)


def _read(rng, gold, rater, accuracy, lean, n_classes, ordered) -> np.ndarray:
    right = rng.random(gold.size) < accuracy[rater]
    if ordered:
        up = rng.random(gold.size) < np.vectorize(LEAN_UP.get)(lean[rater])
        wrong = _near_miss(rng, gold, up, n_classes)
    else:
        wrong = (gold + rng.integers(1, n_classes, gold.size)) % n_classes
    return np.where(right, gold, wrong)


def blind_spots(rng, item: Item, lean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M, N) bool: each rater's cluster of the item's answers; (M, N) their reads there."""
    unit = item.vectors / np.maximum(np.linalg.norm(item.vectors, axis=1, keepdims=True), 1e-12)
    n, size = item.gold.size, max(1, int(round(CLUSTER * item.gold.size)))
    inside = np.zeros((lean.size, n), dtype=bool)
    reads = np.tile(item.gold, (lean.size, 1))
    for r in range(lean.size):
        centre = rng.integers(n)
        near = np.argsort(-(unit @ unit[centre]), kind="stable")[:size]
        inside[r, near] = True
        if item.values is None:
            reads[r] = (item.gold + rng.integers(1, item.n_classes)) % item.n_classes
            continue
        up = lean[r] > 0 if lean[r] else rng.random() < 0.5
        step = np.where(item.gold == 0, 1, np.where(item.gold == item.n_classes - 1, -1,
                                                    1 if up else -1))  # fmt: skip
        reads[r] = item.gold + step
    return inside, reads


def simulate(items: list[Item], reads: int, seed: int, as_file: bool = False) -> Session:
    """One session (module docstring) of `reads` reads per answer; as_file: raters as good as
    the file's own (each rater's accuracy on an item is the square root of the file's exact
    agreement between its two human scores, plus the rater's offset drawn from -0.2..0.2, kept
    in 0.35..0.99; the drawn 0.55-0.95 where the file has one human score)."""
    rng = np.random.default_rng([seed, reads])
    raters = int(rng.integers(5, 9))
    accuracy = rng.uniform(0.55, 0.95, raters)
    lean = rng.choice([-1, 0, 1], raters)
    offset = rng.uniform(-0.2, 0.2, raters)
    drawn = accuracy
    found = []
    for item in items:
        if as_file and item.agreement is not None:
            accuracy = np.clip(np.sqrt(item.agreement) + offset, 0.35, 0.99)
        else:
            accuracy = drawn
        n = item.gold.size
        chosen = np.argsort(rng.random((n, raters)), axis=1)[:, :reads]
        answer = np.repeat(np.arange(n), reads)
        rater = chosen.ravel()
        ordered = item.values is not None
        score = _read(rng, item.gold[answer], rater, accuracy, lean, item.n_classes, ordered)
        inside, spot = blind_spots(rng, item, lean)
        score = np.where(inside[rater, answer], spot[rater, answer], score)
        found.append(ItemReads(answer, rater, score, n, item.n_classes, ordered, item.values,
                               item.name))  # fmt: skip
    return Session(found, [item.gold for item in items], drawn, lean)
