"""Which scores should a rater-lead check first? The review queue's severity against baselines,
on all eight ASAP-SAS prompts, chosen by leave-one-prompt-out.

    python tests/benchmarks/bench_severity.py            # all eight prompts (about 9 minutes, embeddings cached)
    python tests/benchmarks/bench_severity.py --prompts 1 2 --seeds 2

Data: $PARM_ASAP_DIR (default ../shared/data/asap-sas beside the repository), promptN-train.csv,
embedded once with parm's own cached `embed_texts` (bundled all-MiniLM-L6-v2). Two tasks per
prompt, each measured by AUROC, average precision (AP) and the precision among the top 5% of the
queue (what a reviewer opens first; ties at the cut count by their share of positives):
  real     fit on Score1; positives: rows whose Score2 differs;
  injected 5% of Score1 moved by one point within the scale (a 0 moves up, the top score down,
           others up or down at random), positives the moved rows; one seed per corruption,
           everything refitted on the corrupted scores; means over the seeds.
Every ranking sees the scores it is fitted on and the embeddings, never Score2 or the mask.

Baselines, on the same embeddings: (a) similarity-weighted kNN vote, K = 34: 1 - the cosine-
weighted share of the 34 nearest neighbours (own row excluded) carrying the row's score;
(b) out-of-fold logistic regression, scikit-learn defaults, `cross_val_predict` with 5
stratified folds: 1 - P_oof(human score); (c) cleanlab (when installed): `get_label_quality_scores`
on (b)'s probabilities, and `Datalab` label issues from the embeddings alone.

Candidates (severity_candidates.py builds them from one run_audit with default settings,
bootstrap off since it changes no ranking): PARM probabilities in-sample or cross-fitted,
balanced or unweighted, scored as 1 - p(human) or as the margin; the kNN vote of PARM's selected
graph; parm's out-of-fold embedding classifier with C = 1 (scikit-learn's default) and C = 10;
their mixtures (probability average and rank average, weight 0.1..0.9); cross-fitted stacked
logistic models on PARM's features (or cross-fitted probabilities) and the classifier's.

Selection: for each prompt, the rule picks the candidate (with its weight) with the highest mean
AUROC over both tasks on the other seven prompts, and that prompt's figures are the held-out
ones. "shipped" is `run_audit(...).severity` itself, what a user gets.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score, roc_auc_score
from sklearn.model_selection import cross_val_predict
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from severity_candidates import SHIPPED_AS, Pieces, candidates  # noqa: E402

from engine.embedding.sentence import embed_texts  # noqa: E402
from engine.input.config import load_defaults  # noqa: E402
from engine.input.responses import load_responses  # noqa: E402

DATA = Path(os.environ.get("PARM_ASAP_DIR", ROOT.parent / "shared" / "data" / "asap-sas"))
PROMPTS = (1, 2, 3, 4, 7, 8, 9, 10)
ERROR_RATE = 0.05
TOP_SHARE = 0.05
KNN_K = 34
BASELINES = ("kNN vote, K=34", "OOF logistic regression")
ALONE = "classifier C=10, 1-p"  # the shipped severity's classifier without PARM's features
CLEANLAB = ("cleanlab label quality", "cleanlab Datalab (embeddings)")
TASKS = ("real", "injected")
METRICS = ("auroc", "ap", "top5")


@dataclasses.dataclass
class Task:
    """One ranking problem: which rows are wrong (`positives`) and every ranking's metrics."""

    prompt: int
    task: str
    seed: int | None
    metrics: dict[str, dict[str, float]]


def inject_errors(scores: np.ndarray, n_classes: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Move ERROR_RATE of the scores by one point within 0..n_classes-1; (new scores, mask)."""
    n = scores.shape[0]
    moved = np.zeros(n, dtype=bool)
    moved[rng.choice(n, size=max(1, round(ERROR_RATE * n)), replace=False)] = True
    step = rng.choice([-1, 1], size=n)
    step = np.where(scores == 0, 1, np.where(scores == n_classes - 1, -1, step))
    return np.where(moved, scores + step, scores), moved


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


def knn_vote(vectors: np.ndarray, scores: np.ndarray, k: int = KNN_K) -> np.ndarray:
    """Baseline (a): 1 - cosine-weighted share of the k nearest neighbours with the row's score."""
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    nearest = np.argpartition(-sims, k, axis=1)[:, :k]
    weights = np.maximum(np.take_along_axis(sims, nearest, axis=1), 0.0)
    same = scores[nearest] == scores[:, None]
    total = weights.sum(axis=1)
    share = np.divide(
        (weights * same).sum(axis=1), total, out=np.zeros_like(total), where=total > 0
    )
    return 1.0 - share


def baselines(vectors: np.ndarray, scores: np.ndarray) -> dict[str, np.ndarray]:
    """Baselines (a), (b) and, when cleanlab is installed, (c)."""
    proba = cross_val_predict(LogisticRegression(), vectors, scores, cv=5, method="predict_proba")
    rows = np.arange(scores.size)
    out = {BASELINES[0]: knn_vote(vectors, scores), BASELINES[1]: 1.0 - proba[rows, scores]}
    try:
        from cleanlab import Datalab
        from cleanlab.rank import get_label_quality_scores
    except ImportError:
        return out
    out[CLEANLAB[0]] = 1.0 - get_label_quality_scores(scores, proba)
    lab = Datalab(data={"label": scores}, label_name="label", verbosity=0)
    with contextlib.redirect_stdout(io.StringIO()):
        lab.find_issues(features=vectors, issue_types={"label": {}})
    out[CLEANLAB[1]] = 1.0 - lab.get_issues("label")["label_score"].to_numpy()
    return out


def rankings(responses, scores, vectors, config) -> dict[str, np.ndarray]:
    """Every ranking of one task: baselines, then candidates (which include 'shipped')."""
    pieces = Pieces.build(dataclasses.replace(responses, scores=scores), vectors, config)
    return {**baselines(vectors, scores), **candidates(pieces)}


def bench_prompt(prompt: int, seeds: int) -> list[Task]:
    config = load_defaults().updated(
        text_column="EssayText",
        score_column="Score1",
        second_score_column="Score2",
        id_column="Id",
        bootstrap_samples=0,
    )
    responses = load_responses(DATA / f"prompt{prompt}-train.csv", config)
    vectors, _ = embed_texts(responses.texts)
    started = time.perf_counter()
    second = responses.second_scores
    disagree = (second >= 0) & (second != responses.scores)
    found = rankings(responses, responses.scores, vectors, config)
    tasks = [Task(prompt, "real", None, {k: measure(disagree, v) for k, v in found.items()})]
    for seed in range(seeds):
        noisy, moved = inject_errors(
            responses.scores, responses.n_classes, np.random.default_rng(seed)
        )
        found = rankings(responses, noisy, vectors, config)
        tasks.append(
            Task(prompt, "injected", seed, {k: measure(moved, v) for k, v in found.items()})
        )
    print(
        f"prompt {prompt}: N = {len(responses):,}, {responses.n_classes} scores, "
        f"{int(disagree.sum())} disagreements, {time.perf_counter() - started:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    return tasks


def figure(tasks: list[Task], prompt: int, task: str, name: str, metric: str) -> float:
    """One prompt's figure for one task: the real task's, or the mean over injection seeds."""
    values = [t.metrics[name][metric] for t in tasks if t.prompt == prompt and t.task == task]
    return float(np.mean(values))


def criterion(tasks: list[Task], prompts, name: str) -> float:
    """The selection rule's score: mean AUROC over both tasks and the given prompts."""
    return float(np.mean([figure(tasks, p, k, name, "auroc") for p in prompts for k in TASKS]))


def leave_one_prompt_out(tasks: list[Task], prompts, names) -> dict[int, str]:
    """For each prompt, the candidate the rule picks on the other prompts."""
    return {
        held: max(names, key=lambda n: criterion(tasks, [p for p in prompts if p != held], n))
        for held in prompts
    }


def overview(tasks: list[Task], prompts, names) -> list[str]:
    """Every ranking's mean over the prompts (chosen on all of them: orientation only)."""
    lines = [
        "## Every ranking, mean over the prompts (not held out)",
        "",
        "| ranking | AUROC real | AUROC injected | AP real | AP injected | top 5% real | "
        "top 5% injected |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in sorted(names, key=lambda n: -criterion(tasks, prompts, n)):
        cells = [
            np.mean([figure(tasks, p, k, name, m) for p in prompts]) for m in METRICS for k in TASKS
        ]
        # Order the cells as the header: AUROC, AP, top 5%, each real then injected.
        lines.append(f"| {name} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    return lines


def held_out_table(tasks: list[Task], prompts, picks: dict[int, str], columns) -> list[str]:
    """Per prompt and task: the rule's held-out figures beside the shipped severity and the
    baselines (AUROC / top-5% precision), with means and the rule's wins."""
    names = ["selected (held out)", *columns]
    lines = [
        "| prompt | task | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    means = {(n, k, m): [] for n in names for k in TASKS for m in METRICS}
    for k in TASKS:
        for p in prompts:
            row = []
            for n in names:
                source = picks[p] if n == names[0] else n
                values = {m: figure(tasks, p, k, source, m) for m in METRICS}
                for m in METRICS:
                    means[(n, k, m)].append(values[m])
                row.append(f"{values['auroc']:.3f} / {values['top5']:.3f}")
            lines.append(f"| {p} | {k} | " + " | ".join(row) + " |")
        cells = [
            f"{np.mean(means[(n, k, 'auroc')]):.3f} / {np.mean(means[(n, k, 'top5')]):.3f}"
            for n in names
        ]
        lines.append(f"| mean | {k} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Mean average precision (real / injected): "
        + "; ".join(
            f"{n} {np.mean(means[(n, 'real', 'ap')]):.3f} / {np.mean(means[(n, 'injected', 'ap')]):.3f}"
            for n in names
        ),
    ]
    return lines + wins(means, names, columns)


def wins(means, names, columns) -> list[str]:
    """How often the rule's held-out AUROC beats each baseline, per task."""
    lines = [""]
    for k in TASKS:
        ours = np.array(means[(names[0], k, "auroc")])
        parts = [
            f"{n}: {int((ours > np.array(means[(n, k, 'auroc')])).sum())} of {ours.size}"
            for n in columns
            if n not in ("shipped", ALONE)
        ]
        lines.append(f"Held-out AUROC above, {k} task: " + "; ".join(parts))
    return lines


def report(tasks: list[Task], prompts) -> str:
    names = list(tasks[0].metrics)
    pool = [n for n in names if n not in BASELINES + CLEANLAB and n != "shipped"]
    picks = leave_one_prompt_out(tasks, prompts, pool)
    columns = ["shipped", ALONE, *[n for n in BASELINES + CLEANLAB if n in names]]
    same = all(
        np.isclose(t.metrics["shipped"]["auroc"], t.metrics[SHIPPED_AS]["auroc"]) for t in tasks
    )
    lines = overview(tasks, prompts, names) + [
        "",
        "## Leave one prompt out: held-out AUROC / top-5% precision",
        "",
        "Chosen per held-out prompt (on the other prompts, mean AUROC over both tasks): "
        + "; ".join(f"{p}: {picks[p]}" for p in prompts),
        f"Chosen on all prompts: {max(pool, key=lambda n: criterion(tasks, prompts, n))}. "
        f"The shipped severity (run_audit) has the AUROC of '{SHIPPED_AS}' on every task: "
        f"{'yes' if same else 'NO'}.",
        "",
    ]
    return "\n".join(lines + held_out_table(tasks, prompts, picks, columns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, nargs="+", default=list(PROMPTS))
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    # Many small fits: one BLAS thread is several times faster than two on a busy 2-core machine.
    with threadpool_limits(1, user_api="blas"):
        tasks = [t for p in args.prompts for t in bench_prompt(p, args.seeds)]
    print(report(tasks, args.prompts))
    print(f"\nTotal {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
