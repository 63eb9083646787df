"""Score labels on one scale across items: each label's value in score points, and the labels of
several items pooled in order of value (an item scored 0-2 and one scored 0-3 share 0, 1, 2)."""

from __future__ import annotations

import numpy as np


def score_values(labels: tuple[str, ...], order: tuple[str, ...] | None = None) -> np.ndarray:
    """Each label's value in points: its position in `order` (score_order) when one is stated,
    else the number when every label is one, else its position among `labels`."""
    if order is not None:
        return np.array([order.index(label) for label in labels], dtype=np.float64)
    try:
        return np.array([float(label) for label in labels])
    except ValueError:
        return np.arange(len(labels), dtype=np.float64)


def pooled_labels(
    label_sets: list[tuple[str, ...]], order: tuple[str, ...] | None = None
) -> tuple[str, ...]:
    """Every label of every set, ordered by value (ties by the label), each once; `order` is
    the stated score_order, so items using only some of its labels still pool in its order."""
    seen: dict[str, float] = {}
    for labels in label_sets:
        for label, value in zip(labels, score_values(labels, order)):
            seen.setdefault(label, value)
    return tuple(sorted(seen, key=lambda label: (seen[label], label)))


def recode(labels: tuple[str, ...], pooled: tuple[str, ...]) -> np.ndarray:
    """(C,) the position in `pooled` of each of an item's labels, to move codes onto it."""
    return np.array([pooled.index(label) for label in labels], dtype=np.int64)
