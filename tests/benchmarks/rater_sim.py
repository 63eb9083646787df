"""Simulated scoring sessions with planted rater effects, built from real answers of the shared
data (used by bench_raters.py).

A session: 6-10 raters with 150-300 scores each; answers of several items of one dataset dealt
to the raters at random; a scoring order (the time column) in which each rater's answers come
in random order. The data's own first score of each answer is the "true" score a neutral rater
gives. Planted, each on its own rater (shares drawn per rater):

  lenient / harsh  one point up / down on 30-50% of the rater's scores (kept on the item's scale)
  noisy            30-50% of the rater's scores replaced by another score of the item's scale
  central          each of the rater's extreme scores (the item's lowest or highest) pulled one
                   point inwards with probability 50-80%
  drifting         one point up with a probability growing linearly over the rater's own order,
                   from 0 at their first score to 60-100% at their last (30-50% on average)
  bias cell        one rater x item cell: one point up or down on 50-70% of its scores

Ordered data (ASAP short answers, ASAP essays, Mohler) get three of the five rater effects and a
bias cell on a fourth rater; SciEntsBank (nominal labels) gets one or two noisy raters. Every
other rater is neutral.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from engine.core.text import safe_text
from engine.embedding.sentence import embed_texts

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("PARM_DATA_ROOT", ROOT.parent / "shared" / "data"))
EFFECTS = ("lenient", "harsh", "noisy", "central", "drifting")
ORDERED = ("asap-sas", "asap-aes", "mohler")
# dataset: (files, text column, score column, item column or None: one item per file)
SOURCES = {
    "asap-sas": (
        [f"asap-sas/prompt{p}-train.csv" for p in (1, 2, 3, 4, 7, 8, 9, 10)],
        "EssayText", "Score1", None,
    ),
    "asap-aes": (["asap-aes/set1.csv", "asap-aes/set2.csv", "asap-aes/set7.csv"],
                 "essay", "rater1_domain1", None),
    "mohler": (["mohler/answers.csv"], "answer", "score_grader1", "question_id"),
    "scientsbank": (["scientsbank/train.csv"], "answer", "label", "question_id"),
}  # fmt: skip


@dataclass
class Item:
    """One item of a dataset: answers, true score labels, their values (None: nominal), vectors."""

    name: str
    texts: list[str]
    labels: np.ndarray
    values: np.ndarray | None
    vectors: np.ndarray

    @property
    def scale(self) -> np.ndarray:
        return np.unique(self.values) if self.values is not None else np.unique(self.labels)


def load_dataset(name: str) -> list[Item]:
    """Every item of a dataset, each file embedded whole with parm's cached embed_texts."""
    files, text_col, score_col, item_col = SOURCES[name]
    items = []
    for file in files:
        frame = pd.read_csv(DATA / file, dtype=str, keep_default_na=False)
        texts = [safe_text(t) for t in frame[text_col]]
        vectors, _ = embed_texts(texts)
        labels = frame[score_col].str.strip().to_numpy()
        groups = [(Path(file).stem, np.arange(len(frame)))]
        if item_col is not None:
            groups = [(str(k), np.flatnonzero(frame[item_col].to_numpy() == k))
                      for k in dict.fromkeys(frame[item_col])]  # fmt: skip
        for item_name, rows in groups:
            values = None if name == "scientsbank" else labels[rows].astype(float)
            if np.unique(labels[rows]).size < 2:
                continue  # a single score: nothing to audit
            items.append(
                Item(item_name, [texts[i] for i in rows], labels[rows], values, vectors[rows])
            )
    return items


@dataclass
class Session:
    """A simulated session: one row per score (item index into `items`, answer index within
    it, rater, given score label, time), the planted roles and the planted bias cell."""

    dataset: str
    items: list[Item]
    item: np.ndarray
    answer: np.ndarray
    rater: np.ndarray
    label: np.ndarray
    time: np.ndarray
    roles: dict[str, str]
    true_label: np.ndarray | None = None
    bias_cell: tuple[str, str] | None = None
    shares: dict[str, float] = field(default_factory=dict)

    def frame(self) -> tuple[pd.DataFrame, np.ndarray]:
        """The session as parm reads it (item, answer, score, rater, time) and its vectors."""
        frame = pd.DataFrame({
            "item": [self.items[k].name for k in self.item],
            "answer": [self.items[k].texts[a] for k, a in zip(self.item, self.answer)],
            "score": self.label,
            "rater": self.rater,
            "time": self.time.astype(str),
        })  # fmt: skip
        vectors = np.stack([self.items[k].vectors[a] for k, a in zip(self.item, self.answer)])
        return frame.astype(str), vectors

    def shift(self, name: str) -> float:
        """The mean change in points a rater's planted effect made to their scores."""
        if self.dataset == "scientsbank":
            return 0.0
        mine = self.rater == name
        given = self.label[mine].astype(float)
        return float(np.mean(given - self.true_label[mine].astype(float)))


def _pick_answers(rng, items: list[Item], total: int, dataset: str):
    """(item index, answer index) pairs: for files of many small items, whole items at random
    until `total` answers; else 3-4 items (2-3 essay sets) sharing `total` answers."""
    if dataset in ("mohler", "scientsbank"):
        chosen, count = [], 0
        for k in rng.permutation(len(items)):
            chosen.append(k)
            count += len(items[k].texts)
            if count >= total:
                break
        return [(k, a) for k in chosen for a in range(len(items[k].texts))]
    n_items = int(rng.integers(2, 4)) if dataset == "asap-aes" else int(rng.integers(3, 5))
    chosen = rng.choice(len(items), size=n_items, replace=False)
    per = int(np.ceil(total / n_items))
    pairs = []
    for k in chosen:
        take = rng.choice(len(items[k].texts), size=min(per, len(items[k].texts)), replace=False)
        pairs += [(int(k), int(a)) for a in take]
    return pairs


def build_session(
    rng: np.random.Generator, dataset: str, items: list[Item], plant: bool = True
) -> Session:
    """One simulated session of `dataset` with planted effects (see the module docstring);
    `plant` False: every rater neutral (for checking the rules' calibration)."""
    n_raters = int(rng.integers(6, 11))
    counts = rng.integers(150, 301, size=n_raters)
    pairs = _pick_answers(rng, items, int(counts.sum()), dataset)
    order = rng.permutation(len(pairs))
    pairs = [pairs[i] for i in order]
    # Deal the answers to the raters in proportion to their counts, at random.
    shares = counts / counts.sum()
    who = rng.choice(n_raters, size=len(pairs), p=shares)
    names = np.array([f"R{j + 1:02d}" for j in range(n_raters)])
    item = np.array([k for k, _ in pairs])
    answer = np.array([a for _, a in pairs])
    rater = names[who]
    time = rng.permutation(len(pairs)) + 1
    labels = np.array([items[k].labels[a] for k, a in pairs], dtype=object)
    roles = dict.fromkeys(names.tolist(), "neutral")
    session = Session(dataset, items, item, answer, rater, labels, time, roles, labels.copy())
    if plant:
        _plant(rng, session, names)
    return session


def _plant(rng, session: Session, names: np.ndarray) -> None:
    planted = rng.permutation(names)
    if session.dataset == "scientsbank":
        for name in planted[: int(rng.integers(1, 3))]:
            _apply(rng, session, name, "noisy")
        return
    effects = rng.choice(EFFECTS, size=3, replace=False)
    for name, effect in zip(planted, effects):
        _apply(rng, session, name, str(effect))
    biased = planted[3]
    mine = np.flatnonzero(session.rater == biased)
    cells, sizes = np.unique(session.item[mine], return_counts=True)
    k = int(cells[np.argmax(sizes)])  # the rater's largest item
    cell = mine[session.item[mine] == k]
    share, sign = rng.uniform(0.5, 0.7), rng.choice([-1.0, 1.0])
    _shift(rng, session, cell, sign, np.full(cell.size, share))
    session.roles[biased] = "bias cell"
    session.bias_cell = (str(biased), session.items[k].name)
    session.shares[biased] = share * sign


def _apply(rng, session: Session, name: str, effect: str) -> None:
    mine = np.flatnonzero(session.rater == name)
    session.roles[name] = effect
    if effect in ("lenient", "harsh"):
        share = rng.uniform(0.3, 0.5)
        _shift(rng, session, mine, 1.0 if effect == "lenient" else -1.0, np.full(mine.size, share))
    elif effect == "drifting":
        share = rng.uniform(0.6, 1.0)
        position = np.argsort(np.argsort(session.time[mine])) / max(mine.size - 1, 1)
        _shift(rng, session, mine, 1.0, share * position)
    elif effect == "noisy":
        share = rng.uniform(0.3, 0.5)
        for i in mine[rng.random(mine.size) < share]:
            scale = session.items[session.item[i]].scale
            others = [s for s in scale if s != _value(session, i)]
            session.label[i] = _label(session, i, others[int(rng.integers(len(others)))])
    else:  # central
        share = rng.uniform(0.5, 0.8)
        for i in mine[rng.random(mine.size) < share]:
            scale = session.items[session.item[i]].scale
            value = _value(session, i)
            if value == scale.min():
                session.label[i] = _label(session, i, min(value + 1, scale.max()))
            elif value == scale.max():
                session.label[i] = _label(session, i, max(value - 1, scale.min()))
    session.shares[name] = share


def _shift(rng, session: Session, where: np.ndarray, sign: float, chance: np.ndarray) -> None:
    for i, p in zip(where, chance):
        if rng.random() < p:
            scale = session.items[session.item[i]].scale
            value = np.clip(_value(session, i) + sign, scale.min(), scale.max())
            session.label[i] = _label(session, i, value)


def _value(session: Session, i: int):
    label = session.label[i]
    return float(label) if session.dataset != "scientsbank" else label


def _label(session: Session, i: int, value) -> str:
    """A value written as the item's labels are (2 -> '2', 2.5 -> '2.5', '4.0' style kept)."""
    if isinstance(value, str):
        return value
    item = session.items[session.item[i]]
    for label in item.labels:
        if float(label) == value:
            return str(label)
    return f"{value:.1f}" if "." in str(item.labels[0]) else f"{value:g}"
