"""Agreement through time: per item, per rater and for the session, per period (each day, and
each half day where times of day are given), the double reads and their exact and adjacent
agreement, Cohen's kappa and QWK (engine.model.metrics, as scikit-learn computes them), the
validity accuracy against the expert scores, and the reads.

A double read is a pair of independent reads (first and second) of one answer; it belongs to
the period of its later read (when the answer was double-scored). A rater's row compares each of
their reads with the co-rater's read of the same answer. Rows of all items (item "") and a
rater's row over all items pool the items' counts; their kappa and QWK are the items' figures
weighted by double reads (codes of different scales are never put in one table).

Intervals: Wilson for the shares (engine.audit.resample.wilson_interval); for kappa and QWK the
large-sample variance of Fleiss, Cohen and Everitt (1969), which holds for any agreement
weights (identity for kappa, quadratic for QWK): cheap enough for every cell of every period.

Each item's period is computed once: its figures are kept in the store with the digest of the
reads they came from, and a later run reuses them while that digest is unchanged, so adding a
day computes only that day's periods (and any day a late export touched).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from engine.live.intake.session_reads import SessionReads
from engine.model.metrics import cohen_kappa, confusion, quadratic_kappa

# The fields a cell counts (pooled by summing) and those it estimates (pooled by weighting).
COUNTS = ("reads", "pairs", "exact", "adjacent_pairs", "adjacent", "qwk_pairs",
          "validity_reads", "validity_exact")  # fmt: skip


@dataclass
class Cell:
    """One (item, rater, period) of monitor.csv, as counts and estimates ("" item: all items;
    "" rater: all raters). kappa_var, qwk_var: the estimates' large-sample variances."""

    item: str
    rater: str
    period: str
    reads: int = 0
    pairs: int = 0
    exact: int = 0
    adjacent_pairs: int = 0
    adjacent: int = 0
    kappa: float = float("nan")
    kappa_var: float = float("nan")
    qwk_pairs: int = 0
    qwk: float = float("nan")
    qwk_var: float = float("nan")
    validity_reads: int = 0
    validity_exact: int = 0

    @property
    def key(self) -> tuple[str, str, str]:
        return self.item, self.rater, self.period


def kappa_variance(matrix: np.ndarray, weights: np.ndarray) -> float:
    """The large-sample variance of weighted kappa (agreement weights, 1 on the diagonal) from
    the (C, C) counts (Fleiss, Cohen and Everitt 1969); NaN where kappa is not defined."""
    n = matrix.sum()
    if n < 2:
        return float("nan")
    p = matrix / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    observed = float((weights * p).sum())
    expected = float((weights * np.outer(rows, cols)).sum())
    if expected >= 1.0:
        return float("nan")
    kappa = (observed - expected) / (1.0 - expected)
    row_w, col_w = weights @ cols, weights.T @ rows
    spread = (weights - (row_w[:, None] + col_w[None, :]) * (1 - kappa)) ** 2
    total = float((p * spread).sum()) - (kappa - expected * (1 - kappa)) ** 2
    return max(total, 0.0) / (n * (1.0 - expected) ** 2)


def _weights(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Agreement weights of kappa and of QWK on a scale of `size` codes."""
    grid = np.arange(size)
    quadratic = 1.0 - (grid[:, None] - grid[None, :]) ** 2 / max((size - 1) ** 2, 1)
    return np.eye(size), quadratic


def pair_cell(cell: Cell, mine: np.ndarray, theirs: np.ndarray, size: int, ordered: bool) -> None:
    """Fill `cell`'s agreement from codes of two reads of each double-read answer."""
    if mine.size == 0:
        return
    matrix = confusion(mine, theirs, size)
    identity, quadratic = _weights(size)
    cell.pairs = int(mine.size)
    cell.exact = int(np.trace(matrix))
    cell.kappa = cohen_kappa(matrix)
    cell.kappa_var = kappa_variance(matrix, identity)
    if ordered:
        cell.adjacent_pairs = cell.qwk_pairs = int(mine.size)
        cell.adjacent = int(np.sum(np.abs(mine - theirs) <= 1))
        cell.qwk = quadratic_kappa(matrix)
        cell.qwk_var = kappa_variance(matrix, quadratic)


@dataclass(frozen=True)
class Pairs:
    """The double reads: for each, the two reads (indices into the session's reads, earlier
    first) and its period's day and half."""

    first: np.ndarray
    second: np.ndarray

    def __len__(self) -> int:
        return int(self.first.size)


def double_reads(reads: SessionReads) -> Pairs:
    """Every pair of independent reads of one answer (reads are sorted by answer, then time)."""
    index = np.flatnonzero(reads.independent())
    answer = reads.answer[index]
    firsts, seconds = [], []
    gap = 1
    while gap < index.size:
        same = answer[:-gap] == answer[gap:]
        if not same.any():
            break
        firsts.append(index[:-gap][same])
        seconds.append(index[gap:][same])
        gap += 1
    if not firsts:
        return Pairs(np.zeros(0, np.int64), np.zeros(0, np.int64))
    return Pairs(np.concatenate(firsts), np.concatenate(seconds))


def session_cells(reads: SessionReads, cache: dict | None = None) -> tuple[list[Cell], dict]:
    """Every cell of monitor.csv, and the cache to keep ({block: (digest, cells as JSON)}):
    each item's periods computed, or taken from `cache` where their reads' digest is the same."""
    cache = cache or {}
    pairs = double_reads(reads)
    valid = np.flatnonzero(reads.validity())
    kept: dict[str, tuple[str, str]] = {}
    cells: list[Cell] = []
    for k, name in enumerate(reads.items):
        for period, block in _blocks(reads, pairs, valid, k):
            key = f"{name}\x1f{period}"
            digest = _digest(reads, pairs, k, block)
            found = cache.get(key)
            if found is not None and found[0] == digest:
                cells += [Cell(**row) for row in json.loads(found[1])]
                kept[key] = found
                continue
            computed = _item_period(reads, pairs, k, period, block)
            kept[key] = (digest, json.dumps([vars(c) for c in computed]))
            cells += computed
    return cells + pooled(cells), kept


def _blocks(reads: SessionReads, pairs: Pairs, valid: np.ndarray, k: int):
    """(period, (pairs, validity reads, reads) of item k in it) for each day and half day."""
    mine = np.flatnonzero(reads.item == k)
    pair_mine = np.flatnonzero(reads.item[pairs.second] == k)
    valid_mine = valid[reads.item[valid] == k]
    later = pairs.second[pair_mine]
    for day in sorted(set(reads.day[mine].tolist())):
        on_day = (pair_mine[reads.day[later] == day], valid_mine[reads.day[valid_mine] == day],
                  mine[reads.day[mine] == day])  # fmt: skip
        yield day, on_day
        for half in ("am", "pm"):
            part = (
                on_day[0][reads.half[pairs.second[on_day[0]]] == half],
                on_day[1][reads.half[on_day[1]] == half],
                on_day[2][reads.half[on_day[2]] == half],
            )
            if part[2].size:
                yield f"{day} {half}", part


def _digest(reads: SessionReads, pairs: Pairs, k: int, block) -> str:
    """What an item's period is computed from: its scale, its double reads' codes and raters,
    its validity reads' codes, expert codes and raters, and every read's rater."""
    pair_index, valid, every = block
    a, b = pairs.first[pair_index], pairs.second[pair_index]
    names = np.array(reads.raters, dtype=object)
    scale = reads.scales[k]
    digest = hashlib.sha256(json.dumps([scale.labels, scale.ordered]).encode())
    for part in (reads.score[a], reads.score[b], reads.score[valid],
                 reads.expert[reads.answer[valid]]):  # fmt: skip
        digest.update(np.int64(part.size).tobytes() + part.astype(np.int64).tobytes())
    for part in (a, b, valid, every):
        digest.update(("\x1f".join(names[reads.rater[part]]) + "\x1e").encode())
    return digest.hexdigest()


def _item_period(reads: SessionReads, pairs: Pairs, k: int, period: str, block) -> list[Cell]:
    """Item k's row and each of its raters' rows for one period."""
    pair_index, valid, every = block
    name, scale = reads.items[k], reads.scales[k]
    size = len(scale.labels)
    a, b = pairs.first[pair_index], pairs.second[pair_index]
    first, second = reads.score[a], reads.score[b]
    item = Cell(name, "", period, reads=int(every.size))
    pair_cell(item, first, second, size, scale.ordered)
    _validity(item, reads, valid)
    out = [item]
    names = reads.raters
    for r in np.unique(reads.rater[np.r_[every, a, b]]):
        cell = Cell(name, names[r], period, reads=int(np.sum(reads.rater[every] == r)))
        as_first, as_second = reads.rater[a] == r, reads.rater[b] == r
        mine = np.r_[first[as_first], second[as_second]]
        theirs = np.r_[second[as_first], first[as_second]]
        pair_cell(cell, mine, theirs, size, scale.ordered)
        _validity(cell, reads, valid[reads.rater[valid] == r])
        out.append(cell)
    return out


def _validity(cell: Cell, reads: SessionReads, valid: np.ndarray) -> None:
    cell.validity_reads = int(valid.size)
    cell.validity_exact = int(np.sum(reads.score[valid] == reads.expert[reads.answer[valid]]))


def pooled(cells: list[Cell]) -> list[Cell]:
    """The rows over all items: the session's per period, and each rater's per period."""
    groups: dict[tuple[str, str], list[Cell]] = {}
    for cell in cells:
        if cell.item:
            groups.setdefault((cell.rater, cell.period), []).append(cell)
    return [pool("", rater, period, parts) for (rater, period), parts in groups.items()]


def pool(item: str, rater: str, period: str, parts: list[Cell]) -> Cell:
    """One cell from several items' cells: counts summed; kappa and QWK weighted by double
    reads (and their variances by the squared weights)."""
    out = Cell(item, rater, period)
    for name in COUNTS:
        setattr(out, name, sum(getattr(c, name) for c in parts))
    out.kappa, out.kappa_var = _weighted(parts, "kappa", "pairs")
    out.qwk, out.qwk_var = _weighted(parts, "qwk", "qwk_pairs")
    return out


def _weighted(parts: list[Cell], figure: str, weight: str) -> tuple[float, float]:
    values = np.array([getattr(c, figure) for c in parts], dtype=float)
    variances = np.array([getattr(c, f"{figure}_var") for c in parts], dtype=float)
    w = np.array([getattr(c, weight) for c in parts], dtype=float)
    use = np.isfinite(values) & (w > 0)
    if not use.any():
        return float("nan"), float("nan")
    total = w[use].sum()
    estimate = float(np.sum(w[use] * values[use]) / total)
    known = use & np.isfinite(variances)
    if not np.array_equal(known, use):
        return estimate, float("nan")
    return estimate, float(np.sum(w[use] ** 2 * variances[use]) / total**2)
