"""The severity candidates bench_severity_errors.py chooses among (issue 44), each a function of
one item's pieces (severity_error_pieces.py) and the audited scores, never of the truth.

  current                 the severity parm shipped before issue 44 (cur/sev)
  random folds            1 - p(score) of the mean of the two classifiers over random folds
  groups<k>               the same over folds of whole groups of similar answers (k groups); an
                          answer whose own score its fold's training rows lack keeps the
                          random folds' probabilities (no model there could give that score)
  mean current+groups<k>  the mean of the two severities (of the two probabilities of the
                          audited score)
  max current, groups<k>  the larger of the two severities
  logit mean ...          the severity whose logit is the mean of the two logits
  logit w current + ...   a weighted mean of the two logits (w = 1/3, 2/3)
  ... +kNN                the mean of three logits: current, groups<k> and the kNN vote
Added in a second round (after the first held-out table was printed; listed as such):
  kNN out of group<k>     the kNN vote of the neighbours outside the answer's group
  ... +kNN out of group<k>  the mean of three logits: current, groups<k> and that vote
  ... +LR                 the mean of three logits: current, groups<k> and scikit-learn's OOF LR
Added in a third round (2026-11-29, after both tables above were printed; not blind):
  ... +graph vote         the mean of three logits: current, groups<k> and PARM's own neighbour
                          vote, 1 - T_i(y_i) / S_i of the selected graph (the evidence the
                          stacker reads on an item large enough for it)
  ... +graph vote where small   the same on an item too small for the stacker (where current
                          is the mean of the two classifiers and no neighbour evidence enters),
                          logit mean current+groups<k> elsewhere
  ... +kNN where small    the same with the kNN vote (K = 34) instead of the graph's
"""

from __future__ import annotations

import numpy as np
from severity_error_pieces import GROUP_COUNTS

from engine.audit.queue.severity import stacks

CLIP = 1e-6
WEIGHTS = (1 / 3, 2 / 3)


def one_minus(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    return 1.0 - proba[np.arange(scores.size), scores]


def _logit(p):
    p = np.clip(p, CLIP, 1 - CLIP)
    return np.log(p / (1 - p))


def _blend(a, b, w):
    """The probability whose logit is w logit(a) + (1 - w) logit(b)."""
    return 1 / (1 + np.exp(-(w * _logit(a) + (1 - w) * _logit(b))))


def _three(a, b, c):
    """The probability whose logit is the mean of the three logits (votes clipped to 2-98%, as
    a vote of 0 or 1 would outweigh the other two)."""
    c = np.clip(c, 0.02, 0.98)
    return 1 / (1 + np.exp(-(_logit(a) + _logit(b) + _logit(c)) / 3))


def lr_severity(found, scores):
    return one_minus(found["peer/lr"], scores)


def random_folds(found, scores):
    return one_minus((found["emb/r"] + found["lex/r"]) / 2, scores)


def grouped(found, scores, k):
    proba = (found[f"grp{k}/emb"] + found[f"grp{k}/lex"]) / 2
    fallback = (found["emb/r"] + found["lex/r"]) / 2
    proba = np.where(found[f"grp{k}/seen"][:, None], proba, fallback)
    return one_minus(proba, scores)


def graph_vote(found, scores):
    """1 - the share of the audited score among the selected graph's neighbours (T / S)."""
    t, s = found["T"], found["S"]
    share = t[np.arange(scores.size), scores] / np.maximum(s, np.finfo(float).tiny)
    return np.where(s > 0, 1.0 - share, 0.5)


def candidates(found: dict, scores: np.ndarray, groups=GROUP_COUNTS) -> dict[str, np.ndarray]:
    cur = found["cur/sev"]
    out = {"current": cur, "random folds": random_folds(found, scores)}
    for k in groups:
        g = grouped(found, scores, k)
        out[f"groups{k}"] = g
        out[f"mean current+groups{k}"] = (cur + g) / 2
        out[f"max current, groups{k}"] = np.maximum(cur, g)
        out[f"logit mean current+groups{k}"] = _blend(cur, g, 0.5)
        for w in WEIGHTS:
            out[f"logit {w:.2f} current + {1 - w:.2f} groups{k}"] = _blend(cur, g, w)
        out[f"logit mean current+groups{k}+kNN"] = 1 / (
            1 + np.exp(-(_logit(cur) + _logit(g) + _logit(found["peer/knn"])) / 3)
        )
        outside = found[f"knn/out{k}"]
        out[f"kNN out of group{k}"] = outside
        out[f"logit mean current+groups{k}+kNN out of group{k}"] = _three(cur, g, outside)
        out[f"logit mean current+groups{k}+LR"] = _three(cur, g, lr_severity(found, scores))
        vote = graph_vote(found, scores)
        small = not stacks(scores.size, found["emb/r"].shape[1])
        plain = out[f"logit mean current+groups{k}"]
        out[f"logit mean current+groups{k}+graph vote"] = _three(cur, g, vote)
        out[f"logit mean current+groups{k}+graph vote where small"] = (
            _three(cur, g, vote) if small else plain
        )
        out[f"logit mean current+groups{k}+kNN where small"] = (
            _three(cur, g, found["peer/knn"]) if small else plain
        )
    return out
