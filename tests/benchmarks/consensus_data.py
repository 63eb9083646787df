"""The sessions bench_consensus.py scores: real answers of every kind of shared data, read again
by simulated raters.

Each dataset is one session; its items are those of the file(s) (a file without an item column
is one item). Gold is the first human score; an item's scale is its gold labels in order
(numbers, half points included) or, for SciEntsBank, its text labels without an order. Vectors
are the whole files embedded by parm's cached `embed_texts` (severity_data.file_vectors).

A simulated session (`simulate`): 5-8 raters, each with an accuracy drawn uniformly from
0.55-0.95 and a lean (a third lean up, a third down, a third neither); every answer is read by
`reads` distinct raters drawn at random. A read is gold with the rater's accuracy; otherwise on
an ordered scale it moves one step, up with probability 0.8 for a rater leaning up (0.2 leaning
down, 0.5 neither), the only way possible at the ends; on nominal labels it is another label of
the item, uniformly.
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
LEAN_UP = {-1: 0.2, 0: 0.5, 1: 0.8}


@dataclass
class Item:
    """One item: gold codes (N,), its scale's labels, values (points; None for nominal) and
    the answers' vectors (N, d)."""

    name: str
    gold: np.ndarray
    labels: list[str]
    values: np.ndarray | None
    vectors: np.ndarray

    @property
    def n_classes(self) -> int:
        return len(self.labels)


def load(dataset: str, limit: int | None = None) -> list[Item]:
    """Every item of a dataset with at least two gold labels (the first `limit` per file)."""
    files, text, gold, item_column, ordered = SOURCES[dataset]
    items = []
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
            if len(scale) < 2:
                continue
            codes = np.array([scale.index(v) for v in labels[rows]])
            values = np.array(scale, dtype=float) if ordered else None
            items.append(Item(name, codes, scale, values, vectors[rows]))
    return items


@dataclass
class Session:
    """A simulated session: each item's reads and gold codes, the raters' true accuracies and
    leans."""

    reads: list[ItemReads]
    gold: list[np.ndarray]
    accuracy: np.ndarray
    lean: np.ndarray


def _read(rng, gold, rater, accuracy, lean, n_classes, ordered) -> np.ndarray:
    right = rng.random(gold.size) < accuracy[rater]
    if ordered:
        up = rng.random(gold.size) < np.vectorize(LEAN_UP.get)(lean[rater])
        step = np.where(up, 1, -1)
        step = np.where(gold == 0, 1, np.where(gold == n_classes - 1, -1, step))
        wrong = gold + step
    else:
        wrong = (gold + rng.integers(1, n_classes, gold.size)) % n_classes
    return np.where(right, gold, wrong)


def simulate(items: list[Item], reads: int, seed: int) -> Session:
    """One session (module docstring) of `reads` reads per answer."""
    rng = np.random.default_rng([seed, reads])
    raters = int(rng.integers(5, 9))
    accuracy = rng.uniform(0.55, 0.95, raters)
    lean = rng.choice([-1, 0, 1], raters)
    found = []
    for item in items:
        n = item.gold.size
        chosen = np.argsort(rng.random((n, raters)), axis=1)[:, :reads]
        answer = np.repeat(np.arange(n), reads)
        rater = chosen.ravel()
        ordered = item.values is not None
        score = _read(rng, item.gold[answer], rater, accuracy, lean, item.n_classes, ordered)
        found.append(ItemReads(answer, rater, score, n, item.n_classes, ordered, item.values,
                               item.name))  # fmt: skip
    return Session(found, [item.gold for item in items], accuracy, lean)
