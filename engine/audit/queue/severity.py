"""Which scores to look at first: the review queue's raw severity, and what "the model prefers
another score" means (`flags`, kept for the rater table; the flagged list is engine.audit.queue.flagging).

The raw severity is 1 - p(human score) under models that never saw that response's score, from
two kinds of cross-fitting, their logits averaged (`logit_mean`):

1. over random folds stratified by score (before issue 44, the whole severity): a logistic
   regression on the embeddings (engine.model.classifier, C = 10) and one on the answers' words
   and character n-grams (TF-IDF, engine.model.lexical, C = 10, through their Gram matrix); on
   an item with at least ROWS_PER_PARAMETER responses per parameter of the stacker, a stacked
   multinomial logistic model on both models' out-of-fold log-probabilities and PARM's
   features of the selected graph (T_i(c) / S_i and log(1 + S_i)): (C+1)(3C+5) parameters, 8
   with two scores, so 80 responses with two scores, 330 on a 0-2 scale; on a smaller item the
   mean of the two models' probabilities;
2. over folds of whole groups of similar answers (engine.audit.queue.answer_groups, GROUPS groups):
   the mean of the same two classifiers, so an answer is predicted by models that never saw any
   answer like it. A rater who scores a whole wording the same wrong way teaches random folds
   (and the neighbours) the error; group folds do not (issue 44: on Powergrading's planted
   clusters, AUROC .529 before, .915 now).
3. on an answer read once, where the file names two raters or more: the rater table's
   expectation (engine.audit.raters.expectation: each rater's answers predicted by a model
   fitted on the other raters' answers only), which a rater's own consistent error cannot
   teach, joins with a third of the weight, more where the answer's rater read more of the
   item than the others together, up to two thirds (`with_rater_expectation`,
   `expectation_share`, called by engine.pipeline once the expectation is made; not on an
   answer read twice, whose other read that model saw). Issue 44's fourth and fifth rounds
   (tests/benchmarks/bench_severity_raters.py: the same tasks with four raters dealt and
   known, evenly and with one reading 70%) chose it held out: a rater who never gives the top
   score .642 -> .692 on ASAP-SAS, .697 -> .792 on Mohler, at up to .016 on random errors,
   real reads and clusters every rater scores alike.

tests/benchmarks/bench_severity_errors.py chose 1-2 by leaving one kind of file out, over every
kind in the shared data, on random errors, real second reads and the errors raters make (a
cluster of similar answers one step off, a rater who never gives the top score, one who
drifts), against a kNN vote and out-of-fold logistic regression computed per item on the same
embeddings; docs/explanation/severity.md gives the held-out tables. engine.audit.queue.calibration
then puts the severity on one scale across items.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.audit.queue.answer_groups import group_folds, similar_groups
from engine.core.machine.helper import Helper, Offer, offered_result
from engine.core.progress import CHECKS, Reporter
from engine.model.classifier import (
    narrow,
    out_of_fold_proba,
    out_of_fold_probas,
    stratified_folds,
)
from engine.model.lexical import gram_features, lexical_features

SEVERITY_FOLDS = 5
# C of both classifiers: 10 (less penalty than scikit-learn's default 1) ranked best held out;
# the stacker keeps C = 1 on its few standardised features.
EMBEDDING_C = 10.0
LEXICAL_C = 10.0
STACKER_C = 1.0
STACKER_MAX_ITER = 1000
# Items with fewer responses per stacker parameter use the mean of the two classifiers.
ROWS_PER_PARAMETER = 10
# Up to this many responses the lexical model's Gram matrix is exact (every item of the
# benchmark, at most 1,800 answers); above, it sees the answers through LEXICAL_LANDMARKS of
# them (Nystrom), so its cost grows with N x 500, not N x N. On the eight ASAP prompts (1,023-
# 1,447 answers, real disagreement) Nystrom with 250, 500 or 1,000 landmarks ranked as well as
# the exact Gram matrix (mean AUROC 0.709, 0.708, 0.707 against 0.710; no prompt apart by more
# than 0.007); with 2,000 landmarks a 100,000-answer item spent 154 s in the severity.
LEXICAL_EXACT_UP_TO = 2000
LEXICAL_LANDMARKS = 500
# The lexical model is fitted in float32 like the embeddings: its (N, N) Gram features are read
# twice per optimiser step, and half the bytes is a quarter less time on a 1,500-answer item.
LEXICAL_DTYPE = np.float32
LOG_FLOOR = 1e-6
# Groups of similar answers for the group folds (engine.audit.queue.answer_groups).
GROUPS = 20
# The rater expectation's share of the logit where raters are named (the fourth round's choice
# among 1/3, 1/2 and 2/3, and the severity alone), and where the answer's rater read more of the
# item than the others together, up to twice that (the fifth round's, expectation_share).
RATER_SHARE = 1 / 3
RATER_SHARE_MAX = 2 / 3
CLASSIFIER_STEP = "severity: embedding classifier"
LEXICAL_STEP = "severity: word and character classifier"


def severity(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """1 - p(human score), in [0, 1]. proba: (N, C+1); scores: (N,) codes. Returns (N,)."""
    return 1.0 - proba[np.arange(scores.shape[0]), scores]


def stack_features(
    embedded: np.ndarray, lexical: np.ndarray, t: np.ndarray, s: np.ndarray
) -> np.ndarray:
    """(N, 3(C+1) + 1): log p_oof(c) of the embedding and the lexical classifier (floored at
    1e-6 for scores a fold never saw), the neighbours' shares T_i(c) / S_i, and log(1 + S_i)."""
    shares = t / np.maximum(s, np.finfo(float).tiny)[:, None]
    logs = [np.log(np.maximum(p, LOG_FLOOR)) for p in (embedded, lexical)]
    return np.hstack([logs[0], shares, np.log1p(s)[:, None], logs[1]])


def stacker_parameters(n_classes: int) -> int:
    """Parameters of the stacker on an item with `n_classes` scores: per free category, one
    coefficient per input (3 per score and log(1 + S)) and an intercept."""
    free = n_classes if n_classes > 2 else 1
    return free * (3 * n_classes + 2)


def stacks(n_responses: int, n_classes: int) -> bool:
    """Whether an item is large enough for the stacker (else: the mean of the classifiers)."""
    return n_responses >= ROWS_PER_PARAMETER * stacker_parameters(n_classes)


def lexical_rows(texts: list[str], seed: int, reporter: Reporter | None = None) -> np.ndarray:
    """The answers' word and character n-grams as Gram rows (exact up to LEXICAL_EXACT_UP_TO
    answers, through LEXICAL_LANDMARKS of them above), computed once per item."""
    landmarks = len(texts) if len(texts) <= LEXICAL_EXACT_UP_TO else LEXICAL_LANDMARKS
    features = lexical_features(texts)
    if reporter is not None:  # each half about a second at N = 15,000
        reporter(CHECKS, 0, SEVERITY_FOLDS, f"{LEXICAL_STEP}: Gram rows")
    return gram_features(features, landmarks, seed, LEXICAL_DTYPE)


def classifier_proba(
    vectors: np.ndarray,
    texts: list[str],
    scores: np.ndarray,
    n_classes: int,
    parts: list[np.ndarray],
    seed: int,
    reporter: Reporter,
    words: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold probabilities (N, C+1) of the embedding and of the lexical classifier over
    `parts`; words: the lexical rows when already computed (`lexical_rows`)."""
    if words is None:
        reporter(CHECKS, 0, len(parts), f"{LEXICAL_STEP}: n-grams")
        words = lexical_rows(texts, seed)
        reporter.check()
    embedded, lexical = classifier_probas(vectors, words, scores, n_classes, [parts], reporter)
    return embedded[0], lexical[0]


def classifier_probas(vectors, words, scores, n_classes, partitions, reporter, offered=None):
    """Both classifiers' out-of-fold probabilities over each partition in `partitions`: lists
    of (N, C+1), the folds of all partitions fitted side by side (engine.model.fold_fits).
    offered: the embedding model's fits as offered to the item's helper process
    (engine.core.machine.helper.Offer), taken there if it began them before the lexical
    model's fits end here, else made here: the same bits either way (`review_severity`)."""
    lexical = lexical_probas(words, scores, n_classes, partitions, reporter)
    embedded, _ = offered_result(
        offered, lambda: embedding_probas(vectors, scores, n_classes, partitions, reporter),
        reporter, f"{CLASSIFIER_STEP}: in the helper process",
    )  # fmt: skip
    assert isinstance(embedded, list)  # embedding_probas's, here or there
    return embedded, lexical


def embedding_probas(vectors, scores, n_classes, partitions, reporter=None) -> list[np.ndarray]:
    """The embedding classifier's out-of-fold probabilities over each partition."""
    return out_of_fold_probas(
        narrow(vectors), scores, n_classes, partitions, EMBEDDING_C, reporter=reporter,
        what=CLASSIFIER_STEP,
    )  # fmt: skip


def lexical_probas(words, scores, n_classes, partitions, reporter=None) -> list[np.ndarray]:
    """The word and character classifier's out-of-fold probabilities over each partition."""
    return out_of_fold_probas(
        words, scores, n_classes, partitions, LEXICAL_C, reporter=reporter, what=LEXICAL_STEP
    )


def random_fold_severity(embedded, lexical, features, scores, n_classes, parts, reporter):
    """The severity over random folds (before issue 44, the whole severity): the stack of both
    classifiers and PARM's features on an item large enough, else their mean."""
    if not stacks(scores.shape[0], n_classes):
        return severity((embedded + lexical) / 2, scores)
    stacked = out_of_fold_proba(
        stack_features(embedded, lexical, *features),
        scores,
        n_classes,
        parts,
        STACKER_C,
        standardise=True,
        max_iter=STACKER_MAX_ITER,
        reporter=reporter,
        what="severity: stacked model",
    )
    return severity(stacked, scores)


def group_fold_severity(embedded, lexical, scores, parts, fallback):
    """1 - p(human score) of the mean of both classifiers cross-fitted over folds of whole
    groups of similar answers (`group_parts`); an answer whose score its fold's training rows
    lack keeps `fallback` (the random folds' mean): no model there could give it."""
    proba = (embedded + lexical) / 2
    for held in parts:
        train = np.ones(scores.shape[0], dtype=bool)
        train[held] = False
        unseen = held[~np.isin(scores[held], scores[train])]
        proba[unseen] = fallback[unseen]
    return severity(proba, scores)


def group_parts(vectors: np.ndarray, seed: int) -> list[np.ndarray]:
    """Folds of whole groups of similar answers (engine.audit.queue.answer_groups); [] when the
    answers form fewer than two groups."""
    return group_folds(similar_groups(vectors, GROUPS, seed), SEVERITY_FOLDS, seed)


def logit_mean(*probabilities: np.ndarray, weights: tuple[float, ...] | None = None) -> np.ndarray:
    """The probability whose logit is the mean of the probabilities' logits (each clipped to
    [LOG_FLOOR, 1 - LOG_FLOOR]), or their sum weighted by `weights`."""
    clipped = [np.clip(p, LOG_FLOOR, 1 - LOG_FLOOR) for p in probabilities]
    logits = [np.log(p / (1 - p)) for p in clipped]
    if weights is None:
        return 1.0 / (1.0 + np.exp(-sum(logits) / len(logits)))
    return 1.0 / (1.0 + np.exp(-sum(w * logit for w, logit in zip(weights, logits))))


def with_rater_expectation(
    raw: np.ndarray, proba: np.ndarray, scores: np.ndarray, share=RATER_SHARE
) -> np.ndarray:
    """The probability whose logit is (1 - share) logit(raw) + share logit(1 - p(score)) under
    the rater-left-out model (proba: (N, C+1), each answer's audited read; share: a number or
    (N,), `expectation_share`)."""
    return logit_mean(raw, severity(proba, scores), weights=(1 - share, share))


def expectation_share(own: np.ndarray, others: np.ndarray) -> np.ndarray:
    """(N,) the rater expectation's weight in each answer's severity: RATER_SHARE, times the
    answer's rater's reads of the item over the other raters' where they are more, up to
    RATER_SHARE_MAX (own, others: (N,) counts). The more of an item one rater read, the more the
    classifiers learned that rater's own errors, and the more the others' model is the evidence
    left (issue 44's fifth round)."""
    ratio = np.asarray(own, np.float64) / np.maximum(np.asarray(others, np.float64), 1.0)
    return np.minimum(RATER_SHARE_MAX, RATER_SHARE * np.maximum(1.0, ratio))


@dataclass(frozen=True)
class SeverityStart:
    """What a severity begins with: its random folds (`parts`), its folds of groups of similar
    answers (`grouped`, [] under two groups) and its embedding fits as offered to the item's
    helper process (None: made here)."""

    parts: list[np.ndarray]
    grouped: list[np.ndarray]
    offered: Offer | None = None

    @property
    def partitions(self) -> list[list[np.ndarray]]:
        return [self.parts, self.grouped] if self.grouped else [self.parts]


def start_severity(
    vectors: np.ndarray, scores: np.ndarray, n_classes: int, seed: int,
    reporter: Reporter | None = None, helper: Helper | None = None,
) -> SeverityStart | None:  # fmt: skip
    """The severity's folds, and its embedding fits offered to `helper` (the item's helper
    process, engine.core.machine.helper) when there is one, so that an item's audit can offer
    them before other work (engine.pipeline): the helper makes them while the lexical model's
    fits run here (N = 15,000, default grid: the severity 4.1 -> 3.1 s), or, busy with a large
    grid's cross-fitting, takes them when it is free if this process has not begun them. None
    when there are too few responses for two folds."""
    reporter = reporter or Reporter()
    parts = stratified_folds(scores, SEVERITY_FOLDS, seed)
    if not parts:
        return None
    reporter(CHECKS, 0, len(parts), "severity: groups of similar answers")
    start = SeverityStart(parts, group_parts(vectors, seed))
    if helper is None:
        return start
    offered = helper.offer(embedding_probas, vectors, scores, n_classes, start.partitions)
    return replace(start, offered=offered)


def review_severity(
    vectors: np.ndarray,
    texts: list[str],
    features: tuple[np.ndarray, np.ndarray],
    scores: np.ndarray,
    n_classes: int,
    seed: int,
    reporter: Reporter | None = None,
    started: SeverityStart | None = None,
) -> np.ndarray | None:
    """Raw severity in [0, 1] (see the module docstring), every response predicted by models
    fitted on other folds' scores only: the logit mean of the random-fold and the group-fold
    severities. vectors: (N, d) embeddings; texts: the N answers; features: PARM's T (N, C+1)
    and S (N,) for the selected graph; started: `start_severity`'s, when the caller began the
    severity (its folds, and its embedding fits offered to a helper process); None: begun here,
    with no helper. None when there are too few responses for two folds."""
    reporter = reporter or Reporter()
    if started is None:
        started = start_severity(vectors, scores, n_classes, seed, reporter)
        if started is None:
            return None
    parts, grouped, partitions = started.parts, started.grouped, started.partitions
    offered = started.offered
    reporter(CHECKS, 0, len(parts), f"{LEXICAL_STEP}: n-grams")
    words = lexical_rows(texts, seed, reporter)
    embedded, lexical = classifier_probas(
        vectors, words, scores, n_classes, partitions, reporter, offered
    )
    ranked = random_fold_severity(
        embedded[0], lexical[0], features, scores, n_classes, parts, reporter
    )
    if not grouped:
        return ranked
    fallback = (embedded[0] + lexical[0]) / 2
    return logit_mean(
        ranked, group_fold_severity(embedded[1], lexical[1], scores, grouped, fallback)
    )


def flags(predicted: np.ndarray, scores: np.ndarray) -> np.ndarray:
    return predicted != scores


def queue_order(severity: np.ndarray, confirmed: np.ndarray | None = None) -> np.ndarray:
    """The review queue: most severe first, ties in input order. Whether a response is flagged
    (the PARM fit prefers another score) does not change its place. confirmed: (N,) answers
    whose every read (two or more) gave the audited score; they come after all the others, in
    the same order among themselves: their second look was taken and agreed (on Mohler 143 of
    the 313 flags were such answers)."""
    order = np.argsort(-severity, kind="stable")
    if confirmed is None:
        return order
    return order[np.argsort(confirmed[order], kind="stable")]
