"""Out-of-fold logistic regression: every response's score probabilities from a model that never
saw that response's score.

The fit is scikit-learn's `LogisticRegression` (multinomial; binomial for two scores; L2 penalty
1 / (2 C N) |coef|^2 on the mean log loss, intercepts unpenalised; L-BFGS-B from zero with
scikit-learn's stopping rule), written out so that the objective is one pass over the features
per evaluation in their own precision (float32 embeddings stay float32) and BLAS runs on one
thread: a fold at N = 12,000, d = 384 takes about a second instead of several.
`out_of_fold_proba` steps every fold's fit side by side (engine.model.fold_fits): one product
of all rows per round for all folds, about half the time of the folds one after another.
"""

from __future__ import annotations

import numpy as np

from engine.core.progress import CHECKS, Reporter
from engine.model.fold_fits import FoldProblem, fit_side_by_side, on_raw_rows
from engine.model.lbfgsb import minimize_free
from engine.model.pseudo_likelihood import one_blas_thread

# scikit-learn's LogisticRegression defaults: max_iter, tol (L-BFGS-B's gtol), ftol.
MAX_ITER = 100
TOLERANCE = 1e-4
FTOL = 64 * np.finfo(float).eps


def stratified_folds(scores: np.ndarray, folds: int, seed: int) -> list[np.ndarray]:
    """Held-out positions of each fold, stratified by score: each score's responses, shuffled
    by the seed, are dealt to the folds in turn (continuing where the previous score stopped),
    so every fold holds about the same share of each score and fold sizes differ by at most one.
    Fewer folds when the most common score has fewer responses than `folds`; [] when not even
    two folds are possible."""
    folds = min(folds, int(np.bincount(scores).max()))
    if folds < 2:
        return []
    rng = np.random.default_rng(seed)
    fold_of = np.empty(scores.shape[0], dtype=np.int64)
    dealt = 0
    for score in np.unique(scores):
        members = rng.permutation(np.flatnonzero(scores == score))
        fold_of[members] = (dealt + np.arange(members.size)) % folds
        dealt += members.size
    return [np.flatnonzero(fold_of == k) for k in range(folds)]


def gram_rows(gram: np.ndarray) -> np.ndarray:
    """Z (N, N) with Z Z^T = gram: its Cholesky factor, with a jitter of 1e-10 of the mean
    diagonal so duplicate rows do not make it singular.

    An L2-penalised logistic regression depends on its features only through their inner
    products (its coefficients lie in the span of the training rows), so fitting it on Z gives
    the held-out probabilities of fitting it on the features themselves: with fewer rows than
    columns, the same model at less cost."""
    jitter = 1e-10 * max(float(np.trace(gram)) / gram.shape[0], 1e-300)
    with one_blas_thread():
        return np.linalg.cholesky(gram + jitter * np.eye(gram.shape[0]))


def narrow(features: np.ndarray) -> np.ndarray:
    """The features, or with fewer rows than columns their Gram rows (`gram_rows`) in the
    features' precision: the same fitted model with N columns instead of d (on an item of 37
    answers and 384-dimensional embeddings, the fit takes about half the time)."""
    n, d = features.shape
    if n >= d:
        return features
    with one_blas_thread():
        wide = features.astype(np.float64)
        gram = wide @ wide.T
    return gram_rows(gram).astype(features.dtype)


def _objective(x: np.ndarray, target: np.ndarray, free: int, penalty: float):
    """Mean log loss + penalty / 2 |coef|^2 and its gradient over parameters (free, d + 1):
    coefficients and an intercept per category, or with two categories one row for the second
    against the first (scikit-learn's binomial model)."""
    n, d = x.shape

    def value_and_gradient(w: np.ndarray) -> tuple[float, np.ndarray]:
        coef = w.reshape(free, d + 1)
        logits = (x @ coef[:, :d].T.astype(x.dtype)).astype(np.float64) + coef[:, d]
        if free == 1:
            logits = np.hstack([np.zeros((n, 1)), logits])
        logits -= logits.max(axis=1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        value = -(target * log_p).sum() / n + 0.5 * penalty * float((coef[:, :d] ** 2).sum())
        resid = (np.exp(log_p) - target)[:, -free:] / n
        weights = (resid.T.astype(x.dtype) @ x).astype(np.float64) + penalty * coef[:, :d]
        return float(value), np.hstack([weights, resid.sum(axis=0)[:, None]]).ravel()

    return value_and_gradient


def fit_logistic(x, codes, categories, inverse_penalty=1.0, max_iter=MAX_ITER):
    """Coefficients and intercepts (categories, d + 1) of `LogisticRegression(C=inverse_penalty,
    max_iter=max_iter)` on x (N, d) and codes 0..categories-1 (every code present).

    Minimises mean log loss + 1 / (2 C N) |coef|^2 from zero, stopping where scikit-learn does.
    """
    n, d = x.shape
    free = categories if categories > 2 else 1
    target = np.zeros((n, categories))
    target[np.arange(n), codes] = 1.0
    with one_blas_thread():
        # scipy's L-BFGS-B routine without minimize's per-call wrappers (engine.model.lbfgsb):
        # the same iterates; on many small items the wrappers cost more than the objective.
        result = minimize_free(
            _objective(x, target, free, 1.0 / (inverse_penalty * n)),
            np.zeros(free * (d + 1)),
            maxiter=max_iter,
            ftol=FTOL,
            gtol=TOLERANCE,
            max_line_search=50,
        )
    coef = result.x.reshape(free, d + 1)
    return coef if free > 1 else np.vstack([np.zeros((1, d + 1)), coef])


def predict_logistic(coef: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(N, categories) probabilities of a fitted `fit_logistic`."""
    logits = (x @ coef[:, :-1].T.astype(x.dtype)).astype(np.float64) + coef[:, -1]
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def out_of_fold_proba(
    features: np.ndarray,
    scores: np.ndarray,
    n_classes: int,
    parts: list[np.ndarray],
    inverse_penalty: float = 1.0,
    standardise: bool = False,
    max_iter: int = MAX_ITER,
    reporter: Reporter | None = None,
    what: str = "out-of-fold classifier",
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """(N, C+1) probabilities p_oof(c | response i), each row from the fold that held i out.

    For each held-out index array in `parts`, a logistic regression is fitted on the other rows
    (features standardised on those rows first when `standardise`) and predicts the held-out
    ones: with inverse_penalty 1, the numbers of scikit-learn's
    `cross_val_predict(LogisticRegression(), features, scores, cv=parts, method="predict_proba")`.
    A score absent from a fold's training rows gets probability 0 there; a single score present
    gets probability 1. Reports progress with stage "audit" (at least every 0.25 s; `what`
    names the model in the messages) and checks the cancel token every optimiser round.
    rows: (N,) score i's row of `features` when several scores share one (the reads of one
    answer): the same numbers as `features[rows]`.
    """
    return out_of_fold_probas(
        features, scores, n_classes, [parts], inverse_penalty, standardise, max_iter, reporter,
        what, rows,
    )[0]  # fmt: skip


def out_of_fold_probas(
    features, scores, n_classes, partitions, inverse_penalty=1.0, standardise=False,
    max_iter=MAX_ITER, reporter=None, what="out-of-fold classifier", rows=None,
) -> list[np.ndarray]:  # fmt: skip
    """`out_of_fold_proba` for each list of held-out parts in `partitions`, every fold of every
    partition fitted side by side (engine.model.fold_fits): the same fits, at a fraction of the
    cost of one after another."""
    reporter = reporter or Reporter()
    responses = features if rows is None else features[rows]
    outs = [np.zeros((scores.shape[0], n_classes)) for _ in partitions]
    problems, places = [], []
    for out, parts in zip(outs, partitions):
        for held in parts:
            problem, seen = _fold_problem(responses, scores, held, inverse_penalty, standardise)
            if problem is None:
                out[held, seen[0]] = 1.0
            else:
                problems.append(problem)
                places.append((out, held, seen))
    total = sum(len(parts) for parts in partitions)
    trivial = total - len(problems)
    message = f"{what}: {total} folds side by side"
    reporter(CHECKS, trivial, total, message)
    coefs = fit_side_by_side(
        responses, problems, max_iter, FTOL, TOLERANCE,
        lambda done, _: reporter.tick(CHECKS, trivial + done, total, message),
    )  # fmt: skip
    for problem, coef, (out, held, seen) in zip(problems, coefs, places):
        weights, intercept = on_raw_rows(problem, coef)
        on_raw = np.hstack([weights, intercept[:, None]])
        out[np.ix_(held, seen)] = predict_logistic(on_raw, responses[held])
    reporter(CHECKS, total, total, f"{what}: {total} folds done")
    return outs


def _fold_problem(responses, scores, held, inverse_penalty, standardise):
    """The fit of one fold (engine.model.fold_fits.FoldProblem) and the scores its training
    rows hold; no fit (None) when they hold one score only."""
    train = np.ones(scores.shape[0], dtype=bool)
    train[held] = False
    seen, codes = np.unique(scores[train], return_inverse=True)
    if seen.size == 1:
        return None, seen
    positions = np.flatnonzero(train)
    scaling = None
    if standardise:
        x_train = responses[positions]
        centre, spread = x_train.mean(axis=0), x_train.std(axis=0)
        spread[spread == 0] = 1.0
        scaling = (centre.astype(np.float64), spread.astype(np.float64))
    target = np.eye(seen.size)[codes]
    free = seen.size if seen.size > 2 else 1
    penalty = 1.0 / (inverse_penalty * positions.size)
    return FoldProblem(positions, target, free, penalty, scaling), seen
