"""Krippendorff's alpha over all reads of an item, answers read once left out as Krippendorff
leaves out units with one value.

With n_uc the reads of answer u that gave code c and m_u = sum_c n_uc its reads, the coincidence
matrix is o_ck = sum_{u: m_u >= 2} (n_uc n_uk - [c = k] n_uc) / (m_u - 1), n_c = sum_k o_ck, n =
sum_c n_c (the pairable reads), e_ck = (n_c n_k - [c = k] n_c) / (n - 1) the coincidences
expected by chance, and

    alpha = 1 - sum_ck o_ck delta_ck / sum_ck e_ck delta_ck

with delta_ck = [c != k] (nominal), (v_c - v_k)^2 on the codes' values (interval), or
(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 (ordinal, codes in scale order). These are the formulas
of the `krippendorff` package (0.9), which the tests compare to 1e-9.

Over a session of several items (`pooled_scale`, `pool_coincidences`) alpha is the same
formula over every unit of every item: the items' coincidences summed on one scale, as the
package computes it on one reliability-data matrix holding every item's answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from engine.audit.reads.item_reads import ItemReads, ReadPairs
from engine.input.scale import pooled_labels, score_values

NOMINAL, ORDINAL, INTERVAL = "nominal", "ordinal", "interval"


def alpha_levels(ordered: bool) -> tuple[str, ...]:
    """The levels of measurement an item's scale allows: nominal, and with ordered codes
    ordinal and interval."""
    return (NOMINAL, ORDINAL, INTERVAL) if ordered else (NOMINAL,)


def coincidence_rows(reads: ItemReads, pairs: ReadPairs) -> sparse.csr_matrix:
    """(N, (C+1)^2): each answer's contribution to the coincidence matrix, flattened. Each pair
    of reads of an answer with m_u reads adds 1 / (m_u - 1) to cells (c, k) and (k, c)."""
    k = reads.n_classes
    weight = 1.0 / (pairs.reads - 1)
    rows = np.concatenate([pairs.unit, pairs.unit])
    cells = np.concatenate([pairs.code_a * k + pairs.code_b, pairs.code_b * k + pairs.code_a])
    shape = (reads.n_answers, k * k)
    matrix = sparse.csr_matrix((np.concatenate([weight, weight]), (rows, cells)), shape=shape)
    matrix.sum_duplicates()
    return matrix


def _distances(level: str, n_c: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(b, K, K) squared distances delta_ck for each draw's pairable counts n_c (b, K)."""
    size = n_c.shape[1]
    if level == NOMINAL:
        return np.broadcast_to(1.0 - np.eye(size), (n_c.shape[0], size, size))
    if level == INTERVAL:
        gaps = (points[:, None] - points[None, :]) ** 2
        return np.broadcast_to(gaps, (n_c.shape[0], size, size))
    low = np.minimum.outer(np.arange(size), np.arange(size))
    high = np.maximum.outer(np.arange(size), np.arange(size))
    through = np.concatenate([np.zeros((n_c.shape[0], 1)), np.cumsum(n_c, axis=1)], axis=1)
    between = through[:, high + 1] - through[:, low]
    return (between - (n_c[:, low] + n_c[:, high]) / 2) ** 2


def alpha_from_coincidences(o: np.ndarray, level: str, points: np.ndarray) -> np.ndarray:
    """Alpha (b,) for coincidence matrices o (b, K, K); NaN where chance disagreement is zero
    (fewer than two pairable reads, or every pairable read the same code)."""
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    expected = n_c[:, :, None] * n_c[:, None, :] - n_c[:, :, None] * np.eye(o.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = expected / (n - 1)[:, None, None]
        delta = _distances(level, n_c, points)
        observed = np.sum(o * delta, axis=(1, 2))
        chance = np.sum(expected * delta, axis=(1, 2))
        return np.where(chance > 0, 1.0 - observed / np.where(chance > 0, chance, 1.0), np.nan)


def pairable(o: np.ndarray) -> np.ndarray:
    """(b,) n: the reads that enter the coincidences (of answers read at least twice)."""
    return o.sum(axis=(1, 2))


@dataclass(frozen=True)
class PooledScale:
    """The session's one scale for its alpha over every unit: item j's code c is code
    codes[j][c] of it; points: (K,) each code's value (for the interval level)."""

    codes: tuple[np.ndarray, ...]
    points: np.ndarray


def pooled_scale(
    items: Sequence[ItemReads], labels: Sequence[Sequence[str]] | None = None
) -> PooledScale:
    """The items' codes on one scale: by value where every item's codes have values in points
    (so 2 of an item scored 0-2 is 2 of one scored 0-3), else by label (`labels`, each item's,
    ordered by value as engine.input.scale pools them), else by code."""
    keys: list[tuple[float, ...]] | list[tuple[str, ...]]
    pooled: list[float] | list[str]
    if labels is None or all(r.values is not None for r in items):
        keys = [tuple(float(v) for v in r.points) for r in items]
        pooled = sorted({k for item in keys for k in item})
        points = np.array(pooled, dtype=np.float64)
    else:
        keys = [tuple(item) for item in labels]
        pooled = list(pooled_labels([tuple(item) for item in labels]))
        points = score_values(tuple(pooled))
    where = {key: c for c, key in enumerate(pooled)}
    codes = tuple(np.array([where[k] for k in item], dtype=np.int64) for item in keys)
    return PooledScale(codes, points)


def pool_coincidences(found: Sequence[np.ndarray], scale: PooledScale) -> np.ndarray:
    """(b, K, K): the items' coincidence matrices (b, k_j, k_j) summed on the pooled scale."""
    size = scale.points.size
    total = np.zeros((found[0].shape[0], size * size))
    for o, code in zip(found, scale.codes):
        cells = (code[:, None] * size + code[None, :]).ravel()
        # numpy's stubs take no slice in `at`'s index, which numpy itself does.
        np.add.at(total, (slice(None), cells), o.reshape(o.shape[0], -1))  # type: ignore[arg-type]
    return total.reshape(-1, size, size)
