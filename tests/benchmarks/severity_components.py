"""The costly pieces severity candidates are built from, per item and ranking task, cached on
disk (outside the repository) so re-running the selection and the report is instant.

For one item and one set of scores (the human scores, or corrupted ones) `compute` returns a dict
of arrays, each with its cost in seconds under `cost/<name>`:

  parm/severity   run_audit(...).severity: the severity parm ships at this commit
  parm/proba      PARM's fitted probabilities (balanced, in-sample); parm/cross: cross-fitted
  parm/T, parm/S  PARM's features of the selected graph
  emb/C<c>        out-of-fold probabilities of parm's logistic regression on the embeddings
  tfidf/C<c>      the same on TF-IDF features (word 1-2-grams + character 2-5-grams within word
                  boundaries, scikit-learn's TfidfVectorizer fitted on the item's answers, each
                  part L2-normalised), fitted exactly through the Gram matrix (below)
  both/C<c>       one logistic regression on the embeddings and the TF-IDF features together
  stack/<name>    cross-fitted stacked models (standardised logistic, C = 1) on log-probabilities
                  of the pieces chosen by inner cross-validation (below), with or without PARM's
                  features

All out-of-fold fits use the stratified folds the shipped severity uses (engine's
`stratified_folds`, seed 0). "Inner cross-validation" picks, per item, the C whose out-of-fold
probabilities give the human scores being audited the lowest log loss: only the file's own
scores decide, never the truth.

The Gram trick: L2-penalised logistic regression depends on the features only through inner
products (its optimum lies in the span of the training rows), so fitting it on Z with
Z Z^T = X X^T (Z = U sqrt(S) from the eigendecomposition of the item's Gram matrix) gives the
same held-out probabilities as fitting it on X, with n columns instead of ~10^5 sparse ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from pathlib import Path

import numpy as np
from severity_peers import peers
from severity_pool import pooled_proba
from sklearn.feature_extraction.text import TfidfVectorizer

from engine.embedding.vectors import Embedded
from engine.model.classifier import out_of_fold_proba, stratified_folds
from engine.pipeline import run_audit

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("PARM_BENCH_CACHE", "/tmp/parm-bench-severity"))
EMB_C = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
TFIDF_C = (1.0, 3.0, 10.0, 30.0, 100.0)
BOTH_C = (1.0, 3.0, 10.0, 30.0)
FOLDS, SEED = 5, 0
LOG_FLOOR = 1e-6  # log-probabilities of scores a fold never saw
VERSION = "2"  # bump when a component's definition changes


def log_loss(proba: np.ndarray, scores: np.ndarray) -> float:
    return float(-np.log(np.maximum(proba[np.arange(scores.size), scores], LOG_FLOOR)).mean())


def inner_choice(found: dict, family: str, grid, scores: np.ndarray) -> float:
    """The C of `family` whose out-of-fold probabilities fit the audited scores best."""
    return min(grid, key=lambda c: log_loss(found[f"{family}/C{c:g}"], scores))


def tfidf_gram(texts: list[str]) -> np.ndarray:
    """(n, n) Gram matrix of the word and character TF-IDF features (each part unit rows)."""
    gram = np.zeros((len(texts), len(texts)))
    for vectorizer in (
        TfidfVectorizer(ngram_range=(1, 2)),
        TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5)),
    ):
        try:
            x = vectorizer.fit_transform(texts)
        except ValueError:  # no token at all (every answer blank or one-letter words)
            continue
        gram += (x @ x.T).toarray()
    return gram


def gram_features(gram: np.ndarray) -> np.ndarray:
    """Z (n, r) with Z Z^T = gram (eigenvalues below 1e-10 of the largest dropped)."""
    values, vectors = np.linalg.eigh(gram)
    keep = values > 1e-10 * max(values.max(), 1e-300)
    return vectors[:, keep] * np.sqrt(values[keep])


def _timed(found: dict, name: str, make):
    started = time.perf_counter()
    found[name] = make()
    found[f"cost/{name}"] = np.float64(time.perf_counter() - started)


def _grid(found, family, features, scores, n_classes, parts, grid):
    for c in grid:
        _timed(found, f"{family}/C{c:g}", lambda c=c: out_of_fold_proba(
            features, scores, n_classes, parts, c))  # fmt: skip


def _stack(found, name, pieces, scores, n_classes, parts, parm=True):
    logs = [np.log(np.maximum(found[p], LOG_FLOOR)) for p in pieces]
    if parm:
        features = stack_features(found[pieces[0]], found["parm/T"], found["parm/S"])
        features = np.hstack([features, *logs[1:]])
    else:
        features = np.hstack(logs)
    _timed(found, f"stack/{name}", lambda: out_of_fold_proba(
        features, scores, n_classes, parts, 1.0, standardise=True, max_iter=1000))  # fmt: skip


def _pool(found, name, pieces, scores, parts, parm_share):
    """The log-linear pool (severity_pool.py) of the pieces' log-probabilities, with PARM's
    neighbour shares T_i(c) / S_i as one more expert when `parm_share`."""
    experts = [np.log(np.maximum(found[p], LOG_FLOOR)) for p in pieces]
    if parm_share:
        s = np.maximum(found["parm/S"], np.finfo(float).tiny)
        experts.append(found["parm/T"] / s[:, None])
    features = np.stack(experts, axis=1)
    _timed(found, f"pool/{name}", lambda: pooled_proba(features, scores, parts))


def parm_part(item, scores: np.ndarray, config) -> dict[str, np.ndarray]:
    """What one default run_audit gives: the shipped severity and PARM's pieces."""
    responses = dataclasses.replace(item.responses, scores=scores)
    result = run_audit(responses, config, embedded=Embedded.precomputed(item.vectors))
    t, s = result.tuning.features
    return {
        "parm/severity": result.severity,
        "cost/parm/severity": np.float64(result.timings.get("severity", 0.0)),
        "cost/parm/total": np.float64(result.timings["total"]),
        "parm/proba": result.fitted.proba,
        "parm/cross": result.cross_fit.proba,
        "parm/T": t,
        "parm/S": s,
    }


def stack_features(classifier: np.ndarray, t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The stacker's inputs as parm shipped them before issue 22: log p_oof(c) floored at 1e-6,
    the neighbours' shares T_i(c) / S_i and log(1 + S_i) (kept here so the candidate does not
    change when the engine does)."""
    shares = t / np.maximum(s, np.finfo(float).tiny)[:, None]
    return np.hstack([np.log(np.maximum(classifier, LOG_FLOOR)), shares, np.log1p(s)[:, None]])


def other_part(item, scores: np.ndarray, parm: dict) -> dict[str, np.ndarray]:
    """Every component but run_audit's (see the module docstring), and the peers."""
    n_classes, found = item.responses.n_classes, dict(parm)
    parts = stratified_folds(scores, FOLDS, SEED)
    vectors = item.vectors.astype(np.float64)
    _grid(found, "emb", item.vectors, scores, n_classes, parts, EMB_C)
    started = time.perf_counter()
    gram = tfidf_gram(item.responses.texts)
    z = gram_features(gram)
    both = gram_features(gram + vectors @ vectors.T)
    found["cost/tfidf/setup"] = np.float64(time.perf_counter() - started)
    _grid(found, "tfidf", z, scores, n_classes, parts, TFIDF_C)
    _grid(found, "both", both, scores, n_classes, parts, BOTH_C)
    emb = f"emb/C{inner_choice(found, 'emb', EMB_C, scores):g}"
    tfidf = f"tfidf/C{inner_choice(found, 'tfidf', TFIDF_C, scores):g}"
    both_c = f"both/C{inner_choice(found, 'both', BOTH_C, scores):g}"
    _stack(found, "parm+emb*", [emb], scores, n_classes, parts)
    _stack(found, "parm+emb*+tfidf*", [emb, tfidf], scores, n_classes, parts)
    _stack(found, "parm+both*", [both_c], scores, n_classes, parts)
    _stack(found, "emb*+tfidf*", [emb, tfidf], scores, n_classes, parts, parm=False)
    _stack(found, "parm+emb10", ["emb/C10"], scores, n_classes, parts)
    _stack(found, "parm+emb3+tfidf10", ["emb/C3", "tfidf/C10"], scores, n_classes, parts)
    _stack(found, "parm+emb10+tfidf10", ["emb/C10", "tfidf/C10"], scores, n_classes, parts)
    _stack(found, "parm+both3", ["both/C3"], scores, n_classes, parts)
    for name, pieces, parm_share in (
        ("emb*+tfidf*+parm", [emb, tfidf], True),
        ("emb*+tfidf*", [emb, tfidf], False),
        ("emb10+tfidf10+parm", ["emb/C10", "tfidf/C10"], True),
        ("emb3+tfidf10+parm", ["emb/C3", "tfidf/C10"], True),
        ("both*+parm", [both_c], True),
        ("both3+parm", ["both/C3"], True),
        ("emb*+parm", [emb], True),
    ):
        _pool(found, name, pieces, scores, parts, parm_share)
    started = time.perf_counter()
    for name, ranking in peers(item.vectors, scores, n_classes).items():
        found[f"peer/{name}"] = ranking
    found["cost/peers"] = np.float64(time.perf_counter() - started)
    return {k: v for k, v in found.items() if k not in parm}


def engine_digest() -> str:
    """12 hex digits over the engine's sources: run_audit's outputs are cached under it."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "engine").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def _path(item, task, seed, scores, version: str) -> Path:
    digest = hashlib.sha256(np.ascontiguousarray(scores).tobytes()).hexdigest()[:12]
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in item.name)
    return CACHE / version / item.dataset / f"{safe}-{task}-{seed}-{digest}.npz"


def _load_or(path: Path, make) -> dict[str, np.ndarray]:
    if path.is_file():
        with np.load(path) as stored:
            return {k: stored[k] for k in stored.files}
    found = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part.npz")
    np.savez(partial, **found)
    partial.replace(path)
    return found


def cached(item, task: str, seed, scores: np.ndarray, config, engine: str) -> dict:
    """Every component for one item audited on `scores`: run_audit's under the engine's digest
    (recomputed when the engine changes), the rest under VERSION."""
    parm = _load_or(
        _path(item, task, seed, scores, f"parm-{engine}"),
        lambda: parm_part(item, scores, config),
    )
    rest = _load_or(
        _path(item, task, seed, scores, f"v{VERSION}"),
        lambda: other_part(item, scores, parm),
    )
    return {**parm, **rest}
