"""Errors real raters make, planted in one item's scores for bench_severity_errors.py (issue 44).

Each generator takes an item (severity_data.Item) and a random generator and returns (scores to
audit, moved mask). The truth (the moved mask) never reaches a ranking. Ordered scales move one
step; nominal labels move to another label of the item.

  random    5% of the answers, each one step up or down (severity_data.inject_errors);
  cluster   a rater who misjudges one wording: the CLUSTER_SHARE of the item's answers nearest
            (cosine) to a random answer, all moved the same way (one step up, or down, or to
            one other label), with every answer as similar as the last one taken (so identical
            answers all move): on Powergrading's question 20 the real grader scored "13 original
            states" 0 and "13 original colonies" 1. Members already at the scale's end stay;
  central   one of RATERS raters (the answers dealt at random) never gives the top score: each
            of their top scores is one step lower (ordered scales of three or more scores);
  drift     one of RATERS raters (the answers dealt at random, file order as scoring order)
            drifts one step (up or down, the same for all) with a probability growing linearly
            from 0 at their first answer to DRIFT_TOP at their last (ordered scales).

A kind that does not apply to an item (central on a binary scale, central or drift on nominal
labels) returns None.
"""

from __future__ import annotations

import numpy as np
from severity_data import inject_errors

CLUSTER_SHARE = 0.05
CLUSTER_MIN = 3
RATERS = 4
DRIFT_TOP = 0.8
TIE = 1e-6
KINDS = ("random", "cluster", "central", "drift")


def random_errors(item, rng: np.random.Generator):
    return inject_errors(item.responses, rng)


def cluster_errors(item, rng: np.random.Generator):
    """The nearest CLUSTER_SHARE of the answers to a random one, moved together."""
    responses = item.responses
    scores, top = responses.scores, responses.n_classes - 1
    n = scores.size
    size = min(n - 1, max(CLUSTER_MIN, round(CLUSTER_SHARE * n)))
    seed = int(rng.integers(n))
    sims = item.vectors.astype(np.float64) @ item.vectors[seed].astype(np.float64)
    # Every answer as similar as the last one taken: a wording is misjudged wherever it occurs.
    edge = np.sort(sims)[::-1][size - 1]
    members = np.flatnonzero(sims >= edge - TIE)
    new = scores.copy()
    if responses.ordered:
        step = 1 if scores[seed] == 0 else -1 if scores[seed] == top else int(rng.choice([-1, 1]))
        new[members] = np.clip(scores[members] + step, 0, top)
    else:
        target = (scores[seed] + int(rng.integers(1, top + 1))) % (top + 1)
        new[members] = target
    return new, new != scores


def _dealt(n: int, rng: np.random.Generator) -> np.ndarray:
    """The audited rater's answers (one of RATERS, dealt at random), in file order."""
    return np.flatnonzero(rng.integers(RATERS, size=n) == 0)


def central_errors(item, rng: np.random.Generator, mine: np.ndarray | None = None):
    """mine: the central rater's answers (default: a quarter dealt at random by `rng`)."""
    responses = item.responses
    top = responses.n_classes - 1
    if not responses.ordered or top < 2:
        return None
    mine = _dealt(responses.scores.size, rng) if mine is None else mine
    new = responses.scores.copy()
    hit = mine[new[mine] == top]
    new[hit] = top - 1
    return new, new != responses.scores


def drift_errors(item, rng: np.random.Generator, mine: np.ndarray | None = None):
    """mine: the drifting rater's answers in scoring order (default: a quarter dealt by `rng`)."""
    responses = item.responses
    if not responses.ordered:
        return None
    scores, top = responses.scores, responses.n_classes - 1
    mine = _dealt(scores.size, rng) if mine is None else mine
    step = int(rng.choice([-1, 1]))
    chance = DRIFT_TOP * np.arange(mine.size) / max(mine.size - 1, 1)
    drifted = mine[rng.random(mine.size) < chance]
    new = scores.copy()
    new[drifted] = np.clip(scores[drifted] + step, 0, top)
    return new, new != scores


GENERATORS = {
    "random": random_errors,
    "cluster": cluster_errors,
    "central": central_errors,
    "drift": drift_errors,
}
