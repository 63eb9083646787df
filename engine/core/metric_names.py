"""The agreement metrics parm reports, named once: how settings and outputs call each, the labels
reports and front ends show, which value is better, and which need ordered scores.

The settings (engine.input.settings.config: selection_metric), the metrics themselves (engine.model.metrics),
the report (engine.outputs) and both front ends read this list. It sits in engine.core because
the settings name the metrics before the model stage computes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """One metric. name: as settings, report.json and tuning.csv write it; label: report.md's
    long label; screen: the app's results label; column: a table column's header; word: in a
    sentence (`parm audit`'s summary); needs_order: it compares scores by their distance on the
    scale (QWK, near agreement), so it is left out for unordered labels; headline: it is given
    bootstrap intervals and a cross-fitted value."""

    name: str
    label: str
    screen: str
    column: str
    word: str
    higher_is_better: bool = True
    needs_order: bool = False
    headline: bool = False


# Every metric parm reports, in the order of its tables, report.json and tuning.csv.
METRICS = (
    Metric(
        "accuracy", "Exact agreement (accuracy)", "Exact agreement", "acc", "accuracy",
        headline=True,
    ),
    Metric("kappa", "Cohen's kappa", "Cohen's kappa", "kappa", "kappa", headline=True),
    Metric(
        "qwk", "Quadratic weighted kappa", "Quadratic w. kappa", "QWK", "QWK",
        needs_order=True, headline=True,
    ),
    Metric(
        "near", "Near agreement (within 1)", "Near agreement ±1", "near", "near", needs_order=True
    ),
    Metric("f1", "Macro F1", "Macro F1", "F1", "macro F1"),
    Metric(
        "nll", "Average negative log-likelihood", "Neg. log-likelihood", "NLL", "NLL",
        higher_is_better=False,
    ),
)  # fmt: skip
METRIC = {metric.name: metric for metric in METRICS}
METRIC_NAMES = tuple(METRIC)


def better(metric: str, a: float, b: float) -> bool:
    """Is a strictly better than b under `metric` (lowest wins for nll)? NaN is never better."""
    if math.isnan(a):
        return False
    if math.isnan(b):
        return True
    return a > b if METRIC[metric].higher_is_better else a < b
