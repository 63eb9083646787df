"""How well a ranking finds the wrong scores: AUROC, average precision (AP) and precision among
the top 5% of the queue, pooled over a dataset's items (one queue over the whole file, as
parm's review merges the items by severity) and as the mean over the items with at least one
wrong score (and one right one). Injected tasks: the mean over their seeds."""

from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

TOP_SHARE = 0.05
METRICS = ("auroc", "ap", "top5")


@dataclasses.dataclass
class Outcome:
    """One item audited on one set of scores: the truth and every ranking of it."""

    dataset: str
    item: str
    task: str
    seed: int | None
    positives: np.ndarray
    rankings: dict[str, np.ndarray]
    costs: dict[str, float]


def top_precision(positives: np.ndarray, severity: np.ndarray, share: float = TOP_SHARE) -> float:
    """Precision among the ceil(share * N) most severe rows; a tie group straddling the cut
    counts by its share of positives (the expectation under random tie-breaking)."""
    n = max(1, int(np.ceil(share * severity.size)))
    threshold = np.sort(severity)[::-1][n - 1]
    above = severity > threshold
    tied = severity == threshold
    hits = positives[above].sum() + (n - above.sum()) * positives[tied].mean()
    return float(hits / n)


def measure(positives: np.ndarray, severity: np.ndarray) -> dict[str, float]:
    return {
        "auroc": float(roc_auc_score(positives, severity)),
        "ap": float(average_precision_score(positives, severity)),
        "top5": top_precision(positives, severity),
    }


def _seeds(outcomes: list[Outcome]) -> dict:
    grouped: dict = {}
    for outcome in outcomes:
        grouped.setdefault(outcome.seed, []).append(outcome)
    return grouped


def pooled(outcomes: list[Outcome], name: str) -> dict[str, float]:
    """Metrics of one queue over all the outcomes' items, per seed, then the mean over seeds."""
    per_seed = []
    for group in _seeds(outcomes).values():
        truth = np.concatenate([o.positives for o in group])
        ranking = np.concatenate([o.rankings[name] for o in group])
        per_seed.append(measure(truth, ranking))
    return {m: float(np.mean([s[m] for s in per_seed])) for m in METRICS}


def per_item(outcomes: list[Outcome], name: str) -> dict[str, float]:
    """Mean over items (and seeds) with at least one wrong and one right score."""
    found = [
        measure(o.positives, o.rankings[name])
        for o in outcomes
        if 0 < o.positives.sum() < o.positives.size
    ]
    return {m: float(np.mean([f[m] for f in found])) for m in METRICS}


def seconds(outcomes: list[Outcome], name: str) -> float:
    """Seconds the ranking took over all the items of one pass (mean over seeds)."""
    totals = [sum(o.costs.get(name, 0.0) for o in g) for g in _seeds(outcomes).values()]
    return float(np.mean(totals))
