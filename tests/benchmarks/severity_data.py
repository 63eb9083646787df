"""The scoring files bench_severity.py audits, read as parm reads them, and the ranking tasks.

Every file of `../shared/data/` (or $PARM_DATA_ROOT) is read with parm's own reader and split
into items with `engine.input.items.split_items` (a file without an item column is one item),
so each item is exactly what `parm audit --item-col ...` would audit: its own scale, the rows
parm keeps, the items parm skips. Each file is embedded once, whole, with parm's cached
`embed_texts` (texts as in the shared cache: pandas dtype=str, keep_default_na=False, through
`safe_text`), and each item takes its rows' vectors.

Tasks: "real" (where a second human score exists: positives are the rows whose second score
differs from the audited one) and "injected" (5% of each item's scores moved within the item's
scale: one step up or down on ordered scores, the end steps inward; another label of the item on
nominal labels; one seed per corruption). Nothing but the scoring of a ranking sees the truth.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from engine.core.text import repair_misread, safe_text
from engine.embedding.sentence import embed_texts
from engine.input.items import Items, split_items
from engine.input.responses import Responses
from engine.input.settings.config import AuditConfig, load_defaults
from engine.input.table import read_table

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("PARM_DATA_ROOT", ROOT.parent / "shared" / "data"))
ERROR_RATE = 0.05
ASAP_PROMPTS = (1, 2, 3, 4, 7, 8, 9, 10)
ESSAY_SETS = (1, 2, 7, 8)


@dataclasses.dataclass(frozen=True)
class Dataset:
    """One kind of scoring file: its files (each one item when there is no item column) and the
    columns parm is told to audit. `binary` recodes the label column to "correct" against
    "incorrect" (SemEval's 2-way task) before parm reads it."""

    name: str
    files: tuple[str, ...]
    text: str
    score: str
    id: str
    item: str | None = None
    second: str | None = None
    binary: bool = False

    def config(self) -> AuditConfig:
        # Bootstrap intervals change no ranking; everything else is parm's default run.
        return load_defaults().updated(
            text_column=self.text,
            score_column=self.score,
            id_column=self.id,
            item_column=self.item,
            second_score_column=self.second,
            bootstrap_samples=0,
        )

    @property
    def tasks(self) -> tuple[str, ...]:
        return ("real", "injected") if self.second else ("injected",)


DATASETS = (
    Dataset(
        "asap-sas",
        tuple(f"asap-sas/prompt{p}-train.csv" for p in ASAP_PROMPTS),
        "EssayText",
        "Score1",
        "Id",
        second="Score2",
    ),
    Dataset("scientsbank-5way", ("scientsbank/train.csv",), "answer", "label", "id", "question_id"),
    Dataset(
        "scientsbank-2way",
        ("scientsbank/train.csv",),
        "answer",
        "label",
        "id",
        "question_id",
        binary=True,
    ),
    Dataset(
        "asap-aes",
        tuple(f"asap-aes/set{s}.csv" for s in ESSAY_SETS),
        "essay",
        "rater1_domain1",
        "essay_id",
        second="rater2_domain1",
    ),
    Dataset(
        "mohler",
        ("mohler/answers.csv",),
        "answer",
        "score_grader1",
        "id",
        "question_id",
        second="score_grader2",
    ),
)
# Three graders per answer (G1 audited; bench_severity_visible.py reads G3 from the file too).
# Not in DATASETS: bench_severity.py's table predates it.
POWERGRADING = Dataset(
    "powergrading",
    ("powergrading/answers.csv",),
    "answer",
    "G1",
    "id",
    "question_id",
    second="G2",
)
BY_NAME = {d.name: d for d in (*DATASETS, POWERGRADING)}


@dataclasses.dataclass
class Item:
    """One audited item: parm's Responses, its vectors (rows of the file's embedding) and the
    name the reports use (the item, or the file's stem for a file that is one item)."""

    dataset: str
    name: str
    responses: Responses
    vectors: np.ndarray


def file_vectors(path: Path, column: str) -> np.ndarray:
    """The whole file embedded by parm's cached embed_texts (a cache hit for the shared data),
    each text as parm reads it (misread characters restored, controls replaced)."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    texts = [safe_text(repair_misread(t)[0]) for t in frame[column].tolist()]
    vectors, _ = embed_texts(texts)
    return vectors


def load_file(dataset: Dataset, relative: str) -> tuple[Items, np.ndarray]:
    path = DATA / relative
    frame = read_table(path)
    if dataset.binary:
        correct = frame[dataset.score].astype(str).str.strip() == "correct"
        frame[dataset.score] = np.where(correct, "correct", "incorrect")
    return split_items(frame, dataset.config(), source=str(path)), file_vectors(path, dataset.text)


def load_items(dataset: Dataset, limit: int | None = None) -> tuple[list[Item], list[str]]:
    """Every item parm audits (the first `limit` per file when given) and the skipped ones
    (`item: reason`)."""
    items, skipped = [], []
    for relative in dataset.files:
        found, vectors = load_file(dataset, relative)
        for responses in found.audited[:limit]:
            name = responses.item if responses.item is not None else Path(relative).stem
            items.append(Item(dataset.name, str(name), responses, vectors[responses.rows - 1]))
        skipped += [f"{s.item}: {s.reason}" for s in found.skipped]
    return items, skipped


def with_progress(name: str, items: list[Item], every: int):
    """The items one by one, saying on stderr after every `every`-th and the last how far the
    dataset's audit is and its seconds so far."""
    started = time.perf_counter()
    for number, item in enumerate(items, 1):
        yield item
        if number % every == 0 or number == len(items):
            print(f"  {name}: {number} of {len(items)} items, "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)  # fmt: skip


def item_seed(dataset: str, item: str, seed: int) -> np.random.Generator:
    """The corruption's generator: the same for every ranking, different per item and seed."""
    words = np.frombuffer(f"{dataset}/{item}".encode(), dtype=np.uint8).astype(np.uint32)
    return np.random.default_rng([seed, *words.tolist()])


def inject_errors(responses: Responses, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(corrupted scores, moved mask): max(1, round(5% of N)) scores moved within 0..C, one step
    on ordered scores (inward at the ends), to another label of the item on nominal ones."""
    scores, top = responses.scores, responses.n_classes - 1
    n = scores.size
    moved = np.zeros(n, dtype=bool)
    moved[rng.choice(n, size=max(1, round(ERROR_RATE * n)), replace=False)] = True
    if responses.ordered:
        step = rng.choice([-1, 1], size=n)
        step = np.where(scores == 0, 1, np.where(scores == top, -1, step))
        new = scores + step
    else:
        shift = rng.integers(1, top + 1, size=n)  # another label: never the row's own
        new = (scores + shift) % (top + 1)
    return np.where(moved, new, scores), moved


def tasks_for(item: Item, task: str, seeds: int) -> list[tuple[int | None, np.ndarray, np.ndarray]]:
    """(seed, scores to audit, positives) for one item and task."""
    responses = item.responses
    if task == "real":
        second = responses.second_scores
        return [(None, responses.scores, (second >= 0) & (second != responses.scores))]
    return [
        (seed, *inject_errors(responses, item_seed(item.dataset, item.name, seed)))
        for seed in range(seeds)
    ]
