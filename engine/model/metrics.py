"""Agreement metrics, computed as scikit-learn computes them (tests compare every figure).

Codes are 0..C over the labels of the file (both raters' columns). Accuracy, Cohen's kappa and
the confusion matrix do not depend on which labels are listed. Macro F1 averages over the labels
present in the human or the predicted scores, as `sklearn.metrics.f1_score(average="macro")`.
QWK measures distances over the full scale 0..C, as `cohen_kappa_score(labels=range(C+1),
weights="quadratic")`: a scale point nobody used still separates its neighbours (scikit-learn's
default would list only the labels present and call 0 and 2 adjacent when 1 is absent). QWK and
near agreement need ordered scores; with nominal labels (text without a stated order) they are
left out.
"""

from __future__ import annotations

import numpy as np

from engine.core.metric_names import METRIC_NAMES, METRICS, better

# The metrics that compare scores by their distance on the scale, so need an order.
ORDINAL_METRICS = tuple(m.name for m in METRICS if m.needs_order)
# The agreement figures given intervals and cross-fitted values.
HEADLINE_METRICS = tuple(m.name for m in METRICS if m.headline)
# The average NLL is a reported figure, not the objective: one response the model deems
# impossible (p underflows to 0) adds -log(1e-15) / N = 34.5 / N instead of infinity, as
# scikit-learn's log_loss did with its former eps=1e-15. The fit itself uses log-softmax.
NLL_CLIP = 1e-15


def confusion(human: np.ndarray, predicted: np.ndarray, n_classes: int) -> np.ndarray:
    """(C+1, C+1) counts; rows are the human score, columns the predicted score."""
    return np.bincount(human * n_classes + predicted, minlength=n_classes**2).reshape(
        n_classes, n_classes
    )


def _kappa(matrix: np.ndarray, weights: np.ndarray) -> float:
    total = matrix.sum()
    if total == 0:
        return float("nan")
    observed = matrix / total
    expected = np.outer(matrix.sum(axis=1), matrix.sum(axis=0)) / total**2
    denominator = (weights * expected).sum()
    if denominator == 0:
        # Both raters used one and the same category: perfect but uninformative agreement.
        return 1.0 if (weights * observed).sum() == 0 else 0.0
    return float(1.0 - (weights * observed).sum() / denominator)


def cohen_kappa(matrix: np.ndarray) -> float:
    k = matrix.shape[0]
    return _kappa(matrix, 1.0 - np.eye(k))


def quadratic_kappa(matrix: np.ndarray) -> float:
    k = matrix.shape[0]
    grid = np.arange(k)
    return _kappa(matrix, (grid[:, None] - grid[None, :]) ** 2 / max((k - 1) ** 2, 1))


def macro_f1(matrix: np.ndarray) -> float:
    """Unweighted mean of per-category F1 = 2 TP / (2 TP + FP + FN) over the categories present
    in the human or the predicted scores (a category that is in neither is no category of this
    comparison; one never predicted scores 0), as scikit-learn's macro average."""
    tp = np.diag(matrix).astype(float)
    denominator = matrix.sum(axis=0) + matrix.sum(axis=1)
    present = denominator > 0
    if not present.any():
        return float("nan")
    return float((2 * tp[present] / denominator[present]).mean())


def average_nll(human: np.ndarray, proba: np.ndarray) -> float:
    """Mean of -log p_{i, x_i} (unweighted), probabilities clipped at NLL_CLIP."""
    chosen = np.clip(proba[np.arange(human.shape[0]), human], NLL_CLIP, 1.0)
    return float(-np.log(chosen).mean())


def metric_names(ordered: bool = True) -> tuple[str, ...]:
    """The metrics reported for ordered or nominal scores, in table order."""
    return METRIC_NAMES if ordered else tuple(m for m in METRIC_NAMES if m not in ORDINAL_METRICS)


def headline_metrics(ordered: bool = True) -> tuple[str, ...]:
    """The headline figures (intervals, cross-fitting) for ordered or nominal scores."""
    return tuple(m for m in HEADLINE_METRICS if m in metric_names(ordered))


def agreement(
    human: np.ndarray, predicted: np.ndarray, n_classes: int, ordered: bool = True
) -> dict[str, float]:
    """Exact agreement, kappa and macro F1 between two sets of codes, and with ordered scores
    QWK and near agreement (|a - b| <= 1 on the scale)."""
    matrix = confusion(human, predicted, n_classes)
    # QWK and near agreement are None for unordered scores, and then not returned.
    figures: dict[str, float | None] = {
        "accuracy": float(np.mean(human == predicted)),
        "kappa": cohen_kappa(matrix),
        "qwk": quadratic_kappa(matrix) if ordered else None,
        "near": float(np.mean(np.abs(human - predicted) <= 1)) if ordered else None,
        "f1": macro_f1(matrix),
    }
    return {m: v for m, v in figures.items() if v is not None and m in metric_names(ordered)}


def headline_agreement(
    human: np.ndarray, predicted: np.ndarray, n_classes: int, ordered: bool = True
) -> tuple[float, ...]:
    """`headline_metrics(ordered)` of `agreement`, in that order, computed the same way and
    only those (the bootstrap asks for them 200 times an item)."""
    matrix = confusion(human, predicted, n_classes)
    figures = {
        "accuracy": lambda: float(np.mean(human == predicted)),
        "kappa": lambda: cohen_kappa(matrix),
        "qwk": lambda: quadratic_kappa(matrix),
        "near": lambda: float(np.mean(np.abs(human - predicted) <= 1)),
        "f1": lambda: macro_f1(matrix),
    }
    return tuple(figures[m]() for m in headline_metrics(ordered))


def evaluate(human: np.ndarray, proba: np.ndarray, ordered: bool = True) -> dict[str, float]:
    """Every metric (`metric_names(ordered)`) for predictions argmax(proba) against the human
    scores."""
    metrics = agreement(human, np.argmax(proba, axis=1), proba.shape[1], ordered)
    metrics["nll"] = average_nll(human, proba)
    return metrics


__all__ = ["METRIC_NAMES", "ORDINAL_METRICS", "HEADLINE_METRICS", "better"]
