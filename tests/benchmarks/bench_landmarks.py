"""How many landmark answers the lexical model needs above LEXICAL_EXACT_UP_TO answers (issue 49).

    PARM_DATA_ROOT=../shared/data nice python tests/benchmarks/bench_landmarks.py
    python tests/benchmarks/bench_landmarks.py --landmarks 125 250 500 --no-merged

Above LEXICAL_EXACT_UP_TO answers the severity's word and character classifier sees the answers
through Nystrom features on LEXICAL_LANDMARKS of them (engine.model.lexical.gram_features): its
cost grows with N x landmarks. The held-out severity benchmark never reaches that path (its
largest item has 1,800 answers), so the landmark count is measured here, on real items, by
forcing Nystrom where parm would fit the exact Gram matrix, and on the only large real item at
hand: the eight ASAP-SAS prompts as one item (10,765 answers, the exact Gram matrix fitted
once for comparison).

For each item with a second read (ASAP-SAS, the essays, Powergrading; Mohler's and SciEntsBank's
items are smaller than the landmark counts, so Nystrom is exact there) and each landmark count:
the AUROC of the real disagreements (second read differs) and of 5% injected errors (seed 0)
under the lexical classifier alone and under the mean of both classifiers (engine.audit.queue.
severity's random folds, what the stacker and the small-item mean read), the largest change in
that mean severity against the exact Gram matrix, and the seconds of the lexical rows and fits.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from machine import machine_line  # noqa: E402
from severity_data import BY_NAME, Item, load_items, tasks_for  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from engine.audit.queue import severity as sv  # noqa: E402
from engine.input.responses import Responses  # noqa: E402
from engine.model.classifier import narrow, out_of_fold_proba, stratified_folds  # noqa: E402
from engine.model.lexical import gram_features, lexical_features  # noqa: E402

DATASETS = ("asap-sas", "asap-aes", "powergrading")
SEED = 0


def merged_asap(items: list[Item]) -> Item:
    """The eight ASAP-SAS prompts as one item (their scales all within 0-3)."""
    texts = [t for item in items for t in item.responses.texts]
    scores = np.concatenate([item.responses.scores for item in items])
    second = np.concatenate([item.responses.second_scores for item in items])
    responses = Responses(
        ids=[f"{k}" for k in range(len(texts))],
        texts=texts,
        scores=scores,
        labels=tuple(str(c) for c in range(int(scores.max()) + 1)),
        rows=np.arange(1, len(texts) + 1),
        second_scores=second,
    )
    return Item("asap-sas", "all eight prompts", responses, np.vstack([i.vectors for i in items]))


def one_count(item: Item, landmarks: int | None, scores, parts, embedded):
    """(lexical probabilities, mean severity, seconds) with `landmarks` (None: exact)."""
    texts = item.responses.texts
    started = time.perf_counter()
    count = len(texts) if landmarks is None else min(landmarks, len(texts))
    words = gram_features(lexical_features(texts), count, SEED, sv.LEXICAL_DTYPE)
    lexical = out_of_fold_proba(words, scores, item.responses.n_classes, parts, sv.LEXICAL_C)
    seconds = time.perf_counter() - started
    return lexical, sv.severity((embedded + lexical) / 2, scores), seconds


def measure(item: Item, counts: list[int | None]) -> list[dict]:
    rows = []
    for task in ("real", "injected"):
        seed, scores, positives = tasks_for(item, task, 1)[0]
        if positives.all() or not positives.any():
            continue
        parts = stratified_folds(scores, sv.SEVERITY_FOLDS, SEED)
        n_classes = item.responses.n_classes
        embedded = out_of_fold_proba(narrow(item.vectors), scores, n_classes, parts, sv.EMBEDDING_C)
        exact_mean = None
        for count in counts:
            lexical, mean, seconds = one_count(item, count, scores, parts, embedded)
            if count is None:
                exact_mean = mean
            rows.append({
                "item": f"{item.dataset} {item.name}", "n": len(scores), "task": task,
                "landmarks": "exact" if count is None else str(count),
                "lexical": roc_auc_score(positives, sv.severity(lexical, scores)),
                "mean": roc_auc_score(positives, mean),
                "change": float(np.abs(mean - exact_mean).max()) if exact_mean is not None else 0.0,
                "seconds": seconds,
            })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--landmarks", type=int, nargs="+", default=[125, 250, 500])
    parser.add_argument("--no-merged", action="store_true", help="skip the 10,765-answer item")
    args = parser.parse_args()
    print(machine_line())
    counts: list[int | None] = [None, *args.landmarks]
    rows = []
    for name in DATASETS:
        items, _ = load_items(BY_NAME[name])
        for item in items:
            rows += measure(item, counts)
            print(f"  {item.dataset} {item.name}: done", file=sys.stderr, flush=True)
        if name == "asap-sas" and not args.no_merged:
            rows += measure(merged_asap(items), counts)
    print("| item | N | task | landmarks | lexical AUROC | mean AUROC | max change | s |")
    print("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['item']} | {r['n']:,} | {r['task']} | {r['landmarks']} | {r['lexical']:.3f} "
              f"| {r['mean']:.3f} | {r['change']:.3f} | {r['seconds']:.1f} |")  # fmt: skip
    print("\nMean over items (the merged item apart):")
    for task in ("real", "injected"):
        for count in counts:
            label = "exact" if count is None else str(count)
            chosen = [r for r in rows if r["task"] == task and r["landmarks"] == label
                      and r["item"] != "asap-sas all eight prompts"]  # fmt: skip
            if chosen:
                print(f"  {task:8} {label:>5}: lexical {np.mean([r['lexical'] for r in chosen]):.3f}"
                      f"  mean {np.mean([r['mean'] for r in chosen]):.3f}"
                      f"  worst item vs exact {min(r['mean'] - e['mean'] for r, e in _pairs(rows, chosen, task)):+.3f}"
                      f"  ({len(chosen)} items)")  # fmt: skip


def _pairs(rows, chosen, task):
    exact = {r["item"]: r for r in rows if r["task"] == task and r["landmarks"] == "exact"}
    return [(r, exact[r["item"]]) for r in chosen]


if __name__ == "__main__":
    main()
