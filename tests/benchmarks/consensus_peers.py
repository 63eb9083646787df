"""The peers bench_consensus.py compares the consensus with, each run per item and over the whole
session (raters shared by every item), computed in the same run:

- majority vote (crowd-kit 1.4.2 `MajorityVote`; its ties go to the label it meets first) and
  cleanlab's (`get_majority_vote_label`: ties to the more frequent label, then to the
  annotators of higher initial quality);
- Dawid-Skene (crowd-kit `DawidSkene(n_iter=100)`: a full confusion matrix per rater; over the
  session on the items' codes, an item's absent codes simply unused);
- CROWDLAB (cleanlab 2.9 `get_label_quality_multiannotator`, its default "best_quality"
  consensus), with out-of-fold probabilities of a logistic regression on the embeddings fitted on
  cleanlab's majority vote (cleanlab's recipe; on crowd-kit's vote, whose ties all go to one
  label, CROWDLAB fell below the vote itself on ASAP-SAS), the same classifier the consensus uses (C = 10, 5
  stratified folds); over the session, each item's probabilities padded with zeros to the
  session's largest scale.

Each returns the predicted codes per item.
"""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np
import pandas as pd

from engine.audit.reads.item_reads import ItemReads
from engine.model.classifier import narrow, out_of_fold_proba, stratified_folds

C = 10.0
FOLDS = 5


def _frame(items: list[ItemReads]) -> pd.DataFrame:
    return pd.concat(
        [pd.DataFrame({"task": j * 1_000_000 + r.answer, "worker": r.rater, "label": r.score})
         for j, r in enumerate(items)], ignore_index=True,
    )  # fmt: skip


def _split(items: list[ItemReads], labels: pd.Series) -> list[np.ndarray]:
    return [
        labels.reindex(j * 1_000_000 + np.arange(r.n_answers)).fillna(0).to_numpy(dtype=np.int64)
        for j, r in enumerate(items)
    ]


def majority_vote(items: list[ItemReads]) -> list[np.ndarray]:
    from crowdkit.aggregation import MajorityVote

    return _split(items, MajorityVote().fit_predict(_frame(items)))


def dawid_skene(items: list[ItemReads], pooled: bool) -> list[np.ndarray]:
    from crowdkit.aggregation import DawidSkene

    if pooled:
        return _split(items, DawidSkene(n_iter=100).fit_predict(_frame(items)))
    return [_split([r], DawidSkene(n_iter=100).fit_predict(_frame([r])))[0] for r in items]


def labels_table(reads: ItemReads, raters: int) -> np.ndarray:
    table = np.full((reads.n_answers, raters), np.nan)
    table[reads.answer, reads.rater] = reads.score
    return table


def vote_proba(vectors: np.ndarray, votes: np.ndarray, n_classes: int, seed: int) -> np.ndarray:
    """Out-of-fold probabilities of the logistic regression fitted on the majority vote."""
    parts = stratified_folds(votes, FOLDS, seed)
    if not parts:
        return np.bincount(votes, minlength=n_classes)[None].repeat(votes.size, 0) / votes.size
    return out_of_fold_proba(narrow(vectors), votes, n_classes, parts, C)


def _crowdlab(table: np.ndarray, proba: np.ndarray) -> np.ndarray:
    from cleanlab.multiannotator import get_label_quality_multiannotator

    used = ~np.all(np.isnan(table), axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        found = get_label_quality_multiannotator(
            pd.DataFrame(table[:, used]), proba, verbose=False, return_detailed_quality=False,
            return_annotator_stats=False,
        )  # fmt: skip
        logging.disable(logging.NOTSET)
    return found["label_quality"]["consensus_label"].to_numpy(dtype=np.int64)


def cleanlab_vote(reads: ItemReads, raters: int) -> np.ndarray:
    """cleanlab's `get_majority_vote_label`: ties go to the more frequent label, then to the
    annotators of higher initial quality (crowd-kit's to the label met first)."""
    from cleanlab.multiannotator import get_majority_vote_label

    table = labels_table(reads, raters)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return get_majority_vote_label(table[:, ~np.all(np.isnan(table), axis=0)], verbose=False)


def crowdlab(items, vectors, raters: int, seed: int) -> dict[str, list[np.ndarray]]:
    """CROWDLAB per item and over the session, on the same out-of-fold probabilities of a
    classifier fitted on cleanlab's majority vote (as its tutorial does)."""
    votes = [cleanlab_vote(r, raters) for r in items]
    probas = [vote_proba(v, m, r.n_classes, seed) for r, v, m in zip(items, vectors, votes)]
    probas = [(p + 1e-6) / (p + 1e-6).sum(axis=1, keepdims=True) for p in probas]
    per_item = []
    for reads, proba in zip(items, probas):
        try:
            per_item.append(_crowdlab(labels_table(reads, raters), proba))
        except (ValueError, IndexError):  # a scale cleanlab refuses: the classifier's choice
            per_item.append(np.argmax(proba, axis=1))
    width = max(r.n_classes for r in items)
    table = np.vstack([labels_table(r, raters) for r in items])
    padded = np.vstack([np.pad(p, ((0, 0), (0, width - p.shape[1]))) for p in probas])
    pooled = np.split(_crowdlab(table, padded), np.cumsum([r.n_answers for r in items])[:-1])
    return {"crowdlab-item": per_item, "crowdlab-session": pooled, "majority-cleanlab": votes}


PEERS = ("majority", "majority-cleanlab", "ds-item", "ds-session", "crowdlab-item",
         "crowdlab-session")  # fmt: skip


def peers(items, vectors, raters: int, seed: int) -> dict[str, tuple[list[np.ndarray], float]]:
    """Every peer's codes per item, with its seconds."""
    found = {}
    for run in (
        lambda: {"majority": majority_vote(items)},
        lambda: {"ds-item": dawid_skene(items, False)},
        lambda: {"ds-session": dawid_skene(items, True)},
        lambda: crowdlab(items, vectors, raters, seed),
    ):
        start = time.perf_counter()
        codes = run()
        seconds = time.perf_counter() - start
        found.update({k: (v, seconds) for k, v in codes.items()})
    return found
