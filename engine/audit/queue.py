"""The review queue: which responses to list, and in what order, under the app's filters."""

from __future__ import annotations

import numpy as np


def review_view(
    result, show_all=False, human=None, predicted=None, off_by_two=False, search="", folded=None
) -> np.ndarray:
    """Indices of the responses to list, in the review queue's order (most severe first).

    show_all: every response (the whole queue), else only the flagged ones (the PARM fit
    prefers another score), in the same order; human/predicted: score codes to keep (None = any); off_by_two: |model - human| >= 2 codes;
    search: case-insensitive text (or id) to look for; folded: texts already casefolded.
    """
    scores, model = result.responses.scores, result.predicted
    order = result.review_order()
    keep = np.ones(len(scores), dtype=bool)
    if not show_all:
        keep &= model != scores
    if human is not None:
        keep &= scores == human
    if predicted is not None:
        keep &= model == predicted
    if off_by_two:
        keep &= np.abs(model.astype(int) - scores.astype(int)) >= 2
    if search:
        needle = search.casefold()
        texts = folded if folded is not None else [t.casefold() for t in result.responses.texts]
        ids = result.responses.ids
        found = [needle in t or needle in ids[i].casefold() for i, t in enumerate(texts)]
        keep &= np.asarray(found, dtype=bool)
    return order[keep[order]]
