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

Options of the Design (issue 35), each off by default so the default sessions are today's:

  double     a share of the answers read twice, the second read by another rater of the session
             (dealt as the first reads are, so a planted rater gives second reads too, with their
             effect). A double-read answer's two reads start from the data's two human scores in
             random order (Mohler's second grader rounded to the nearest score of the item's
             scale), so two neutral raters disagree as two real raters do; a single read starts
             from the first score. The nominal data has no second score and stays single.
  same_way   effects that do not cancel: up to half the raters (3-5 of 6-10) planted with
             lenient, drifting up, noisy and central tendency (the last two push up on a scale
             whose scores sit at the bottom), no harsh rater and no bias cell; with up_only,
             two lenient and two drifting-up raters (3-5 of them), which push up on any scale.
  sd         effects at a standardized size (the shift over the neutral raters' residual sd,
             `sd` points, measured by the bench on an unplanted session): lenient and harsh
             move each score by 0.5 sd in expectation (one step of the item's scale with the
             probability that gives it, more steps where it exceeds 1, scaled up for the scores
             at the scale's end that cannot move); drifting adds 0 at the rater's first score to
             1 sd at their last (0.5 sd between the halves); noisy replaces 30% of the scores;
             central pulls each extreme score one step inwards with probability 0.5.
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
SAME_WAY = ("lenient", "drifting", "noisy", "central")
UP_ONLY = ("lenient", "drifting", "lenient", "drifting")
ORDERED = ("asap-sas", "asap-aes", "mohler")
# dataset: (files, text column, score column, second score column, item column or None: one
# item per file)
SOURCES = {
    "asap-sas": (
        [f"asap-sas/prompt{p}-train.csv" for p in (1, 2, 3, 4, 7, 8, 9, 10)],
        "EssayText", "Score1", "Score2", None,
    ),
    "asap-aes": (["asap-aes/set1.csv", "asap-aes/set2.csv", "asap-aes/set7.csv"],
                 "essay", "rater1_domain1", "rater2_domain1", None),
    "mohler": (["mohler/answers.csv"], "answer", "score_grader1", "score_grader2",
               "question_id"),
    "scientsbank": (["scientsbank/train.csv"], "answer", "label", None, "question_id"),
}  # fmt: skip


@dataclass
class Item:
    """One item of a dataset: answers, true score labels, their values (None: nominal), vectors,
    and the data's second score of each answer as one of the item's labels (None: no second)."""

    name: str
    texts: list[str]
    labels: np.ndarray
    values: np.ndarray | None
    vectors: np.ndarray
    second: np.ndarray | None = None

    @property
    def scale(self) -> np.ndarray:
        return np.unique(self.values) if self.values is not None else np.unique(self.labels)


def load_dataset(name: str) -> list[Item]:
    """Every item of a dataset, each file embedded whole with parm's cached embed_texts."""
    files, text_col, score_col, second_col, item_col = SOURCES[name]
    items = []
    for file in files:
        frame = pd.read_csv(DATA / file, dtype=str, keep_default_na=False)
        texts = [safe_text(t) for t in frame[text_col]]
        vectors, _ = embed_texts(texts)
        labels = frame[score_col].str.strip().to_numpy()
        seconds = frame[second_col].str.strip().to_numpy() if second_col else None
        groups = [(Path(file).stem, np.arange(len(frame)))]
        if item_col is not None:
            groups = [(str(k), np.flatnonzero(frame[item_col].to_numpy() == k))
                      for k in dict.fromkeys(frame[item_col])]  # fmt: skip
        for item_name, rows in groups:
            values = None if name == "scientsbank" else labels[rows].astype(float)
            if np.unique(labels[rows]).size < 2:
                continue  # a single score: nothing to audit
            second = None if seconds is None else _on_scale(labels[rows], seconds[rows])
            items.append(Item(item_name, [texts[i] for i in rows], labels[rows], values,
                              vectors[rows], second))  # fmt: skip
    return items


def _on_scale(labels: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """Each second score as the item's nearest label (Mohler's second grader gives quarter
    points on some answers; the first's half points are the item's scale); a blank second
    score is the first."""
    scale = np.unique(labels)
    values = scale.astype(float)
    out = labels.copy()
    for i, given in enumerate(seconds):
        if given:
            out[i] = scale[int(np.argmin(np.abs(values - float(given))))]
    return out


@dataclass(frozen=True)
class Design:
    """How a session is built (see the module docstring): the share of answers read twice,
    effects that do not cancel, and the neutral raters' residual sd (points) for standardized
    effects (None: today's sizes)."""

    double: float = 0.0
    same_way: bool = False
    sd: float | None = None
    up_only: bool = False  # same_way with lenient and drifting-up raters only


@dataclass
class Session:
    """A simulated session: one entry per read (item index into `items`, answer index within
    it, rater, given score label, time, rank: 0 the audited read, 1 a second read), the planted
    roles and the planted bias cell."""

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
    rank: np.ndarray | None = None
    design: Design = field(default_factory=Design)

    @property
    def first(self) -> np.ndarray:
        return np.ones(self.item.size, bool) if self.rank is None else self.rank == 0

    def frame(self) -> tuple[pd.DataFrame, np.ndarray]:
        """The session as parm reads it (item, answer, score, rater, time, and score2, rater2
        when answers are read twice) and its vectors, one row per answer."""
        first = np.flatnonzero(self.first)
        frame = pd.DataFrame({
            "item": [self.items[self.item[i]].name for i in first],
            "answer": [self.items[self.item[i]].texts[self.answer[i]] for i in first],
            "score": self.label[first],
            "rater": self.rater[first],
            "time": self.time[first].astype(str),
        })  # fmt: skip
        if self.design.double > 0:
            row = {(self.item[i], self.answer[i]): k for k, i in enumerate(first)}
            score2, rater2 = [""] * first.size, [""] * first.size
            for i in np.flatnonzero(~self.first):
                k = row[(self.item[i], self.answer[i])]
                score2[k], rater2[k] = self.label[i], self.rater[i]
            frame["score2"], frame["rater2"] = score2, rater2
        vectors = np.stack([self.items[self.item[i]].vectors[self.answer[i]] for i in first])
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
    rng: np.random.Generator,
    dataset: str,
    items: list[Item],
    plant: bool = True,
    design: Design | None = None,
) -> Session:
    """One simulated session of `dataset` with planted effects (see the module docstring);
    `plant` False: every rater neutral (for checking the rules' calibration, and for measuring
    the neutral raters' residual sd)."""
    design = design or Design()
    n_raters = int(rng.integers(6, 11))
    counts = rng.integers(150, 301, size=n_raters)
    double = design.double if items[0].second is not None else 0.0
    # Answers for the reads: a share `double` of them is read twice.
    pairs = _pick_answers(rng, items, int(np.ceil(counts.sum() / (1 + double))), dataset)
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
    rank = np.zeros(len(pairs), dtype=int)
    if double > 0:
        twice = np.flatnonzero(rng.random(len(pairs)) < double)
        other = np.array([_other(rng, shares, who[i]) for i in twice], dtype=int)
        seconds = np.array([items[item[i]].second[answer[i]] for i in twice], dtype=object)
        swap = rng.random(twice.size) < 0.5  # which of the data's two scores is read first
        firsts = labels[twice].copy()
        labels[twice] = np.where(swap, seconds, firsts)
        item, answer = np.r_[item, item[twice]], np.r_[answer, answer[twice]]
        rater = np.r_[rater, names[other]]
        # A second read's time: after the first, somewhere in the session.
        time = np.r_[time, time[twice] + rng.integers(1, len(pairs) + 1, twice.size) + 0.5]
        labels = np.r_[labels, np.where(swap, firsts, seconds)].astype(object)
        rank = np.r_[rank, np.ones(twice.size, dtype=int)]
    roles = dict.fromkeys(names.tolist(), "neutral")
    session = Session(dataset, items, item, answer, rater, labels, time, roles, labels.copy(),
                      rank=rank, design=design)  # fmt: skip
    if plant:
        _plant(rng, session, names)
    return session


def _other(rng, shares: np.ndarray, first: int) -> int:
    p = shares.copy()
    p[first] = 0
    return int(rng.choice(p.size, p=p / p.sum()))


def _plant(rng, session: Session, names: np.ndarray) -> None:
    planted = rng.permutation(names)
    if session.dataset == "scientsbank":
        for name in planted[: int(rng.integers(1, 3))]:
            _apply(rng, session, name, "noisy")
        return
    if session.design.same_way:
        kinds = UP_ONLY if session.design.up_only else SAME_WAY
        count = min(len(kinds), names.size // 2)
        for name, effect in zip(planted, rng.permutation(kinds)[:count]):
            _apply(rng, session, name, str(effect))
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
    sd = session.design.sd
    if effect in ("lenient", "harsh"):
        sign = 1.0 if effect == "lenient" else -1.0
        if sd is not None:
            share = 0.5
            _push(rng, session, mine, sign, np.full(mine.size, 0.5 * sd))
        else:
            share = rng.uniform(0.3, 0.5)
            _shift(rng, session, mine, sign, np.full(mine.size, share))
    elif effect == "drifting":
        position = np.argsort(np.argsort(session.time[mine])) / max(mine.size - 1, 1)
        if sd is not None:
            share = 0.5
            _push(rng, session, mine, 1.0, sd * position)
        else:
            share = rng.uniform(0.6, 1.0)
            _shift(rng, session, mine, 1.0, share * position)
    elif effect == "noisy":
        share = 0.3 if sd is not None else rng.uniform(0.3, 0.5)
        for i in mine[rng.random(mine.size) < share]:
            scale = session.items[session.item[i]].scale
            others = [s for s in scale if s != _value(session, i)]
            session.label[i] = _label(session, i, others[int(rng.integers(len(others)))])
    else:  # central
        share = 0.5 if sd is not None else rng.uniform(0.5, 0.8)
        for i in mine[rng.random(mine.size) < share]:
            scale = session.items[session.item[i]].scale
            value = _value(session, i)
            # One point inwards (today's sizes) or one step of the scale (standardized).
            if value == scale.min():
                up = scale[scale > value].min() if sd is not None else min(value + 1, scale.max())
                session.label[i] = _label(session, i, up)
            elif value == scale.max():
                down = scale[scale < value].max() if sd is not None else max(value - 1, scale.min())
                session.label[i] = _label(session, i, down)
    session.shares[name] = share


def _push(rng, session: Session, where: np.ndarray, sign: float, points: np.ndarray) -> None:
    """Move each score `points` in expectation, in steps of its item's scale: floor(points /
    step) steps and one more with the remainder's probability, the amounts scaled up by the
    share of the rater's scores at the scale's end (which cannot move) so that the shift over
    all of them is `points` where the scale allows it."""
    if where.size == 0:
        return
    at_end = np.array([_value(session, i) == (session.items[session.item[i]].scale.max()
                       if sign > 0 else session.items[session.item[i]].scale.min())
                       for i in where])  # fmt: skip
    movable = max(1.0 - at_end.mean(), 0.05)
    for i, amount in zip(where, points / movable):
        scale = session.items[session.item[i]].scale
        step = float(np.min(np.diff(scale)))
        steps = amount / step
        whole = int(np.floor(steps)) + int(rng.random() < steps - np.floor(steps))
        value = _value(session, i)
        for _ in range(whole):
            ahead = scale[scale > value] if sign > 0 else scale[scale < value]
            if ahead.size == 0:
                break
            value = ahead.min() if sign > 0 else ahead.max()
        session.label[i] = _label(session, i, value)


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
