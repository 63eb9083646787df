"""The pieces bench_severity_errors.py builds its rankings from, per item and set of audited
scores, cached on disk piece by piece (a new piece is computed alone; the others are read).

  cur/sev          the severity parm shipped before issue 44 (engine.audit.queue.severity as of
                   4762fe4: the stack of the random-fold classifiers and PARM's features)
  emb/r, lex/r     out-of-fold probabilities (N, C+1) of the embedding and the lexical
                   classifier (C = 10) over the severity's stratified random folds
  T, S             PARM's features of the selected graph; cur/predicted: PARM's predicted
                   scores (what "flagged" meant before issue 44: predicted != audited)
  grp<k>/emb, grp<k>/lex   the same classifiers over folds of whole groups of similar answers
                   (engine.audit.queue.answer_groups, k groups)
  grp<k>/seen      (N,) whether the answer's own score was among its fold's training scores
  grp<k>/group     (N,) the answer's group
  peer/knn         kNN vote (severity_peers), peer/lr: OOF LR probabilities (scikit-learn)
  knn/shares       the kNN vote's score shares (N, C+1)
  knn/out<k>       the kNN vote of the neighbours outside the answer's group (k groups)

Nothing here sees the truth: only the scores being audited.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

import numpy as np
from severity_peers import knn_shares, knn_vote, knn_vote_outside, oof_lr_proba

from engine.audit.queue import severity
from engine.audit.queue.answer_groups import group_folds, similar_groups
from engine.core.progress import Reporter
from engine.embedding.vectors import Embedded
from engine.input.settings.config import fit_top_k
from engine.model.classifier import narrow, out_of_fold_proba, stratified_folds
from engine.model.features import ItemFeatures
from engine.model.lexical import gram_features, lexical_features
from engine.model.tuning import tune
from engine.pipeline import _graph, embed_responses, with_blank_answers

CACHE = Path(os.environ.get("PARM_BENCH_CACHE", "/tmp/parm-bench-severity")) / "errors-1"
GROUP_COUNTS = (5, 10, 20)
FOLDS = severity.SEVERITY_FOLDS


@dataclasses.dataclass
class ItemInputs:
    """What does not depend on the scores: the vectors the audit uses and the lexical rows."""

    vectors: np.ndarray
    words: np.ndarray | None = None


def item_inputs(item) -> ItemInputs:
    given = Embedded.precomputed(item.vectors)
    embedded = with_blank_answers(given, item.responses)
    return ItemInputs(embedded.single_vectors())


def _words(item, inputs: ItemInputs, seed: int) -> np.ndarray:
    if inputs.words is None:
        texts = item.responses.texts
        exact = len(texts) <= severity.LEXICAL_EXACT_UP_TO
        landmarks = len(texts) if exact else severity.LEXICAL_LANDMARKS
        inputs.words = gram_features(
            lexical_features(texts), landmarks, seed, severity.LEXICAL_DTYPE
        )
    return inputs.words


def _classifiers(item, inputs, scores, parts, seed):
    n_classes = item.responses.n_classes
    emb = out_of_fold_proba(narrow(inputs.vectors), scores, n_classes, parts, severity.EMBEDDING_C)
    words = _words(item, inputs, seed)
    lex = out_of_fold_proba(words, scores, n_classes, parts, severity.LEXICAL_C)
    return emb, lex


def current(item, inputs, scores, config) -> dict[str, np.ndarray]:
    """The shipped severity's pieces and value (as engine.audit.queue.severity.review_severity, its
    classifiers computed once)."""
    responses = dataclasses.replace(item.responses, scores=scores)
    config, _ = fit_top_k(config, len(responses))
    embedded = with_blank_answers(
        embed_responses(responses, config, Reporter(), Embedded.precomputed(item.vectors)),
        responses,
    )
    graph, _, tune_config = _graph(embedded, config, Reporter())
    features = ItemFeatures(
        graph, scores, responses.n_classes, tune_config.similarity_top_k_symmetric
    )
    tuned = tune(features, tune_config, Reporter(), responses.ordered)
    t, s = tuned.features
    predicted = {"cur/predicted": tuned.fitted.predicted}
    parts = stratified_folds(scores, FOLDS, config.seed)
    if not parts:
        sev = severity.severity(tuned.fitted.proba, scores)
        flat = np.full((scores.size, responses.n_classes), 1.0 / responses.n_classes)
        return {"cur/sev": sev, "emb/r": flat, "lex/r": flat, "T": t, "S": s, **predicted}
    emb, lex = _classifiers(item, inputs, scores, parts, config.seed)
    if severity.stacks(scores.size, responses.n_classes):
        stacked = out_of_fold_proba(
            severity.stack_features(emb, lex, t, s),
            scores,
            responses.n_classes,
            parts,
            severity.STACKER_C,
            standardise=True,
            max_iter=severity.STACKER_MAX_ITER,
        )
        sev = severity.severity(stacked, scores)
    else:
        sev = severity.severity((emb + lex) / 2, scores)
    return {"cur/sev": sev, "emb/r": emb, "lex/r": lex, "T": t, "S": s, **predicted}


def grouped(item, inputs, scores, k: int, seed: int) -> dict[str, np.ndarray]:
    groups = similar_groups(inputs.vectors, k, seed)
    parts = group_folds(groups, FOLDS, seed)
    n_classes = item.responses.n_classes
    if not parts:
        flat = np.full((scores.size, n_classes), 1.0 / n_classes)
        return {
            f"grp{k}/emb": flat,
            f"grp{k}/lex": flat,
            f"grp{k}/seen": np.zeros(scores.size, bool),
            f"grp{k}/group": groups,
        }
    emb, lex = _classifiers(item, inputs, scores, parts, seed)
    seen = np.zeros(scores.size, dtype=bool)
    for held in parts:
        train = np.ones(scores.size, dtype=bool)
        train[held] = False
        seen[held] = np.isin(scores[held], scores[train])
    return {f"grp{k}/emb": emb, f"grp{k}/lex": lex, f"grp{k}/seen": seen, f"grp{k}/group": groups}


def peer_pieces(item, inputs, scores) -> dict[str, np.ndarray]:
    n_classes = item.responses.n_classes
    return {
        "peer/knn": knn_vote(item.vectors, scores),
        "peer/lr": oof_lr_proba(item.vectors, scores, n_classes),
        "knn/shares": knn_shares(item.vectors, scores, n_classes),
    }


def _path(item, task: str, seed, scores: np.ndarray) -> Path:
    """The pieces' file: named by the scores audited, the texts and their vectors (the texts
    as read change when reading does: the essays' misread characters restored)."""
    hashed = hashlib.sha256(np.ascontiguousarray(scores).tobytes())
    hashed.update("\x00".join(item.responses.texts).encode("utf-8", "surrogatepass"))
    hashed.update(np.ascontiguousarray(item.vectors).tobytes())
    digest = hashed.hexdigest()[:12]
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in item.name)
    return CACHE / item.dataset / f"{safe}-{task}-{seed}-{digest}.npz"


def pieces(item, inputs, task, seed, scores, config, groups=GROUP_COUNTS) -> dict:
    """Every piece for one item audited on `scores`, read from the cache where it is."""
    path = _path(item, task, seed, scores)
    found: dict[str, np.ndarray] = {}
    if path.is_file():
        with np.load(path) as stored:
            found = {k: stored[k] for k in stored.files}
    before = set(found)
    if "cur/sev" not in found or (task == "real" and "cur/predicted" not in found):
        found.update(current(item, inputs, scores, config))
    if "peer/knn" not in found:
        found.update(peer_pieces(item, inputs, scores))
    for k in groups:
        if f"grp{k}/emb" not in found:
            found.update(grouped(item, inputs, scores, k, config.seed))
        if f"knn/out{k}" not in found:
            found[f"knn/out{k}"] = knn_vote_outside(item.vectors, scores, found[f"grp{k}/group"])
    if set(found) != before:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".part.npz")
        np.savez(partial, **found)
        partial.replace(path)
    return found
