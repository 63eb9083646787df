"""Score labels on one scale across items: each label's value in score points, the labels of
several items pooled in order of value (an item scored 0-2 and one scored 0-3 share 0, 1, 2),
and several items' responses as one on that pooled scale."""

from __future__ import annotations

from typing import TypeVar

import numpy as np

from engine.input.labels import number_label
from engine.input.responses import Responses


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


def file_scale(
    labels: tuple[str, ...], order: tuple[str, ...] | None = None
) -> tuple[str, ...] | None:
    """The whole scale the pooled `labels` come from, for a score a review may give that no
    answer has yet: the stated score_order; for numbers, every step from the lowest to the
    highest (1, 3, 4, 5 gives 1 to 5; half points when any label has one); None for unordered
    text labels, whose scale is each item's own."""
    if order is not None:
        return tuple(order)
    try:
        values = sorted({float(label) for label in labels})
    except ValueError:
        return None
    halves = [round(v * 2) for v in values]
    if len(values) < 2 or any(abs(v * 2 - h) > 1e-9 for v, h in zip(values, halves)):
        return tuple(labels)  # steps finer than half points: only the labels used
    step = int(np.gcd.reduce(np.diff(halves)))
    if (halves[-1] - halves[0]) // step > 100:
        return tuple(labels)
    steps = range(halves[0], halves[-1] + 1, step)
    return tuple(number_label(h / 2) for h in steps)


def recode(labels: tuple[str, ...], pooled: tuple[str, ...]) -> np.ndarray:
    """(C,) the position in `pooled` of each of an item's labels, to move codes onto it."""
    return np.array([pooled.index(label) for label in labels], dtype=np.int64)


def pool_responses(
    parts: list[Responses], order: tuple[str, ...] | None = None
) -> tuple[Responses, list[np.ndarray], np.ndarray]:
    """Several items' responses as one: scores on the pooled scale (the file's whole scale,
    `file_scale`, where it has one); also each item's codes on it and (N, C) which pooled labels
    each response may take: the file's scale for ordered scores (a review may give a score no
    answer has) from its lowest score to the highest the item's answers have (an item scored
    0-2 in a file of 0-3 items is not offered 3), the item's own labels for unordered text
    labels."""
    used = pooled_labels([p.labels for p in parts], order)
    whole = file_scale(used, order) if all(p.ordered for p in parts) else None
    pooled = used if whole is None else whole
    codes = [recode(p.labels, pooled) for p in parts]
    on_scale = np.zeros((sum(len(p) for p in parts), len(pooled)), dtype=bool)
    start = 0
    values = score_values(pooled, order)
    for p, code in zip(parts, codes):
        allowed = code if whole is None else values <= values[code].max()
        on_scale[start : start + len(p), allowed] = True
        start += len(p)
    first = parts[0]
    second = None
    if first.second_scores is not None:
        second = np.concatenate(
            [np.where(s >= 0, c[np.maximum(s, 0)], -1)
             for s, c in zip((_set_as_in_first(p.second_scores) for p in parts), codes)]
        )  # fmt: skip
    responses = Responses(
        texts=[text for p in parts for text in p.texts],
        scores=np.concatenate([c[p.scores] for p, c in zip(parts, codes)]),
        labels=pooled,
        ids=[i for p in parts for i in p.ids],
        rows=np.concatenate([p.rows for p in parts]),
        second_scores=second,
        source=first.source,
        file_rows=first.file_rows,
        item=first.item if len(parts) == 1 else None,
        ordered=all(p.ordered for p in parts),
        raters=(
            None
            if first.raters is None
            else tuple(r for p in parts for r in _set_as_in_first(p.raters))
        ),
        second_raters=(
            None
            if first.second_raters is None
            else tuple(r for p in parts for r in _set_as_in_first(p.second_raters))
        ),  # fmt: skip
    )
    return responses, codes, on_scale


Given = TypeVar("Given")


def _set_as_in_first(value: Given | None) -> Given:
    """A part's column the first part has: the items pooled share one run's settings, so each
    has the second scores or the raters when the first has."""
    assert value is not None
    return value
