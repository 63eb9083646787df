"""Agreement metrics, always over the full label set 0..C (absent categories still count)."""

from __future__ import annotations

import numpy as np

from engine.model.pseudo_likelihood import PROBA_FLOOR

# The agreement figures given intervals and cross-fitted values.
HEADLINE_METRICS = ("accuracy", "kappa", "qwk")

HIGHER_IS_BETTER = {
    "accuracy": True,
    "kappa": True,
    "qwk": True,
    "near": True,
    "f1": True,
    "nll": False,
}


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
    """Unweighted mean of per-category F1; a category with no true or predicted cases scores 0."""
    tp = np.diag(matrix).astype(float)
    denominator = matrix.sum(axis=0) + matrix.sum(axis=1)
    f1 = np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)
    return float(f1.mean())


def average_nll(human: np.ndarray, proba: np.ndarray) -> float:
    """Mean of -log p_{i, x_i}, probabilities clipped at 1e-15 (unweighted)."""
    chosen = np.clip(proba[np.arange(human.shape[0]), human], PROBA_FLOOR, 1.0)
    return float(-np.log(chosen).mean())


def agreement(human: np.ndarray, predicted: np.ndarray, n_classes: int) -> dict[str, float]:
    """Exact, near (|a - b| <= 1), kappa, QWK and macro F1 between two sets of codes."""
    matrix = confusion(human, predicted, n_classes)
    return {
        "accuracy": float(np.mean(human == predicted)),
        "kappa": cohen_kappa(matrix),
        "qwk": quadratic_kappa(matrix),
        "near": float(np.mean(np.abs(human - predicted) <= 1)),
        "f1": macro_f1(matrix),
    }


def evaluate(human: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    """All six metrics for predictions argmax(proba) against the human scores."""
    metrics = agreement(human, np.argmax(proba, axis=1), proba.shape[1])
    metrics["nll"] = average_nll(human, proba)
    return metrics


def better(metric: str, a: float, b: float) -> bool:
    """Is a strictly better than b under `metric`? NaN is never better."""
    if np.isnan(a):
        return False
    if np.isnan(b):
        return True
    return a > b if HIGHER_IS_BETTER[metric] else a < b
