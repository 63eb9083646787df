"""The shared data as sessions of reads, for bench_session_model.py.

Each kind of file is one session: its items (the item column, or one item per file), every
score column a rater's read (Mohler's two graders, Powergrading's three, ASAP's two scorers;
SciEntsBank has one read per answer), the first column the audited read. Scores are coded on
the file's scale (the labels of every read column of the file, in numeric order, or sorted for
SciEntsBank's nominal labels); items whose scales differ (ASAP's 0-2 and 0-3 prompts, the
essay sets) are fitted as separate scale groups. Answers are embedded whole-file by parm's
cached `embed_texts` (severity_data.file_vectors); each item's graph is parm's own top-K search.
Items parm would skip (fewer than 10 answers, or one score) are skipped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from severity_data import ASAP_PROMPTS, DATA, ESSAY_SETS, file_vectors

from engine.graph.search import build_graph
from engine.model.session.features import SessionItem

K_MAX = 50
MIN_ANSWERS = 10


@dataclass(frozen=True)
class SessionSpec:
    name: str
    files: tuple[str, ...]
    text: str
    item: str | None
    reads: tuple[str, ...]
    ordered: bool = True


SPECS = (
    SessionSpec(
        "mohler",
        ("mohler/answers.csv",),
        "answer",
        "question_id",
        ("score_grader1", "score_grader2"),
    ),
    SessionSpec(
        "scientsbank", ("scientsbank/train.csv",), "answer", "question_id", ("label",), False
    ),
    SessionSpec(
        "powergrading",
        ("powergrading/answers.csv",),
        "answer",
        "question_id",
        ("G1", "G2", "G3"),
    ),
    SessionSpec(
        "asap-sas",
        tuple(f"asap-sas/prompt{p}-train.csv" for p in ASAP_PROMPTS),
        "EssayText",
        None,
        ("Score1", "Score2"),
    ),
    SessionSpec(
        "asap-aes",
        tuple(f"asap-aes/set{s}.csv" for s in ESSAY_SETS),
        "essay",
        None,
        ("rater1_domain1", "rater2_domain1"),
    ),
)
BY_NAME = {s.name: s for s in SPECS}


@dataclass
class BenchItem:
    """One item: the session model's view (`session`, codes on the file's scale) and today's
    per-item view (`local`: the audited reads coded on the item's own labels, `to_scale` maps
    those codes back), its vectors and graph."""

    dataset: str
    name: str
    scale: tuple
    session: SessionItem
    audited: np.ndarray
    local: np.ndarray
    to_scale: np.ndarray
    vectors: np.ndarray


def _labels(values: pd.Series, ordered: bool):
    return float(values) if ordered else str(values)


def _scale(frames: list[pd.DataFrame], spec: SessionSpec) -> tuple:
    found = set()
    for frame in frames:
        for column in spec.reads:
            present = frame[column][frame[column].str.strip() != ""]
            found |= {_labels(v, spec.ordered) for v in present}
    return tuple(sorted(found))


def _item(spec, name, rows: pd.DataFrame, vectors, scale) -> BenchItem | None:
    code = {label: k for k, label in enumerate(scale)}
    answer, rater, score = [], [], []
    for j, column in enumerate(spec.reads):
        values = rows[column].str.strip().to_numpy()
        present = np.flatnonzero(values != "")
        answer.append(present)
        rater.append(np.full(present.size, j))
        score.append(np.array([code[_labels(v, spec.ordered)] for v in values[present]], int))
    answer, rater, score = map(np.concatenate, (answer, rater, score))
    audited = rater == 0
    n = len(rows)
    if n < MIN_ANSWERS or audited.sum() != n or np.unique(score[audited]).size < 2:
        return None
    graph = build_graph(vectors, min(K_MAX, n - 1))
    present = np.unique(score)
    local = np.searchsorted(present, score[audited])
    item = SessionItem(answer, rater, score, len(scale), graph, spec.ordered, audited, name)
    return BenchItem(spec.name, name, scale, item, score[audited], local, present, vectors)


def load_session(spec: SessionSpec, limit: int | None = None) -> tuple[list[BenchItem], int]:
    """Every item of the kind (the first `limit` per file), and how many were skipped."""
    frames = [pd.read_csv(DATA / f, dtype=str, keep_default_na=False) for f in spec.files]
    file_scale = _scale(frames, spec) if spec.item else None
    items, skipped = [], 0
    for relative, frame in zip(spec.files, frames):
        vectors = file_vectors(DATA / relative, spec.text)
        scale = file_scale or _scale([frame], spec)
        if spec.item is None:
            groups = [(relative.split("/")[-1].removesuffix(".csv"), frame.index.to_numpy())]
        else:
            keys = frame[spec.item]
            groups = [(k, np.flatnonzero(keys == k)) for k in dict.fromkeys(keys)]
        for name, index in groups[:limit]:
            rows = frame.iloc[index]
            item = _item(spec, str(name), rows, vectors[index], scale)
            skipped += item is None
            if item is not None:
                items.append(item)
    return items, skipped


def scale_groups(items: list[BenchItem]) -> list[list[BenchItem]]:
    """Items that share a scale, in order of first appearance."""
    groups: dict[tuple, list[BenchItem]] = {}
    for item in items:
        groups.setdefault(item.scale, []).append(item)
    return list(groups.values())
