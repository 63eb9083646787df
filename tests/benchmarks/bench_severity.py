"""How well does `severity` find wrong scores? AUROC and average precision on ASAP-SAS.

For prompts 1 and 2 (/work/shared/data/asap-sas/promptN-train.csv, or $PARM_ASAP_DIR):
(a) real disagreement: fit on Score1, positives are rows with Score1 != Score2;
(b) injected errors: 5% of Score1 moved by one point (down or up, at random, kept in range),
    positives are the moved rows; several seeds, mean and spread reported.
Each severity candidate is compared with a k-nearest-neighbour majority-vote baseline on the same
neighbour graph: the share of a row's k nearest neighbours (itself excluded) whose score differs
from the row's, with k = the K that PARM selected. Run: python tests/benchmarks/bench_severity.py
Nothing here is tuned to these prompts; the script only compares the candidates the issue names.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

from engine.audit import severity as audit
from engine.embedding.sentence import embed_texts
from engine.input.config import load_defaults
from engine.input.responses import load_responses
from engine.model.pseudo_likelihood import fit
from engine.pipeline import run_audit

DATA = Path(os.environ.get("PARM_ASAP_DIR", "/work/shared/data/asap-sas"))
SEEDS = (0, 1, 2, 3, 4)
ERROR_RATE = 0.05


def knn_severity(result) -> np.ndarray:
    """Share of the k nearest neighbours (own vote excluded) whose score differs from the row's."""
    k = result.selected.top_k or result.graph.k_max
    neighbours = result.graph.indices[:, :k]
    scores = result.responses.scores
    return (scores[neighbours] != scores[:, None]).mean(axis=1)


def candidates(result) -> dict[str, np.ndarray]:
    scores = result.responses.scores
    t, s = result.tuning.features
    balanced = result.fitted.proba
    plain = fit(t, s, scores, class_weight=None, start=result.fitted.theta).proba
    return {
        "1-p balanced": audit.severity(balanced, scores),
        "margin balanced": audit.margin_severity(balanced, scores),
        "1-p unweighted": audit.severity(plain, scores),
        "margin unweighted": audit.margin_severity(plain, scores),
        "shipped (result.severity)": result.severity,
        "kNN baseline": knn_severity(result),
    }


def inject_errors(scores: np.ndarray, n_classes: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Move ERROR_RATE of the scores by one point; returns (new scores, moved mask)."""
    n = scores.shape[0]
    moved = np.zeros(n, dtype=bool)
    moved[rng.choice(n, size=max(1, round(ERROR_RATE * n)), replace=False)] = True
    step = rng.choice([-1, 1], size=n)
    step = np.where(scores + step < 0, 1, np.where(scores + step >= n_classes, -1, step))
    return np.where(moved, scores + step, scores), moved


def score_all(result, positives: np.ndarray) -> dict[str, tuple[float, float]]:
    return {
        name: (roc_auc_score(positives, sev), average_precision_score(positives, sev))
        for name, sev in candidates(result).items()
    }


def bench_prompt(prompt: int) -> dict[str, dict[str, tuple[float, float]]]:
    config = load_defaults().updated(
        text_column="EssayText",
        score_column="Score1",
        second_score_column="Score2",
        id_column="Id",
        bootstrap_samples=0,
        cross_fit_folds=0,
    )
    responses = load_responses(DATA / f"prompt{prompt}-train.csv", config)
    vectors, _ = embed_texts(responses.texts)
    out = {}
    base = run_audit(responses, config.updated(cross_fit_folds=5), embeddings=vectors)
    print(
        f"prompt {prompt}: kappa in-sample {base.metrics['kappa']:.3f}, cross-fitted "
        f"{base.cross_fit.metrics['kappa']:.3f}; checks took {base.timings['checks']:.2f} s",
        file=sys.stderr,
    )
    disagree = (responses.second_scores >= 0) & (responses.second_scores != responses.scores)
    out["real disagreement"] = score_all(base, disagree)
    print(
        f"prompt {prompt}: N={len(responses)}, K={base.selected.top_k}, "
        f"p={base.selected.power:.3g}, disagreements={disagree.sum()}",
        file=sys.stderr,
    )
    runs = []
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        noisy, moved = inject_errors(responses.scores, responses.n_classes, rng)
        result = run_audit(dataclasses.replace(responses, scores=noisy), config, embeddings=vectors)
        runs.append(score_all(result, moved))
    out["injected errors"] = {
        name: tuple(np.mean([r[name][m] for r in runs]) for m in (0, 1)) for name in runs[0]
    }
    out["injected errors (sd over seeds)"] = {
        name: tuple(np.std([r[name][m] for r in runs]) for m in (0, 1)) for name in runs[0]
    }
    return out


def main() -> None:
    print("| prompt | positives | severity | AUROC | average precision |")
    print("|---|---|---|---|---|")
    for prompt in (1, 2):
        tables = bench_prompt(prompt)
        for task in ("real disagreement", "injected errors"):
            for name, (auc, ap) in tables[task].items():
                sd = tables.get(f"{task} (sd over seeds)", {}).get(name)
                spread = f" ± {sd[0]:.3f}" if sd else ""
                ap_spread = f" ± {sd[1]:.3f}" if sd else ""
                print(f"| {prompt} | {task} | {name} | {auc:.3f}{spread} | {ap:.3f}{ap_spread} |")


if __name__ == "__main__":
    main()
