"""Can the queue catch a rater who never gives the top score by asking models that never saw that
rater's scores? A measurement for issue 44, not yet a ranking parm ships.

    PARM_DATA_ROOT=../shared/data nice python tests/benchmarks/bench_central_rater.py
    python tests/benchmarks/bench_central_rater.py --datasets mohler --seeds 1

On every item of the ordered datasets (scales of three scores or more): the answers are dealt at
random to four raters, and rater 0 never gives the top score (each of their top scores one step
lower), as bench_severity_errors.py's "central" error plants it, but here the rater of each
answer is known, as it is in a session's file with a rater column. Rankings, each scored by AUROC
of the moved scores among all the item's answers (mean over items and seeds):

  kNN vote, OOF LR   the peers of bench_severity_errors.py (severity_peers.py)
  rater left out     1 - p(score) from engine.audit.raters.expectation.rater_left_out_proba: each
                     rater's answers predicted by the embedding classifier fitted on the other
                     raters' answers only (what the rater table's expectation already fits)
  blend              the probability whose logit is the mean of OOF LR's and rater left out's

Last run (2026-11-29, 2 seeds, the default datasets, about a minute): ASAP-SAS (8 prompts, 16
item-seeds) kNN 0.458, OOF LR 0.490, rater left out 0.686, blend 0.618; the essays (sets 1 and 7,
the two with enough top scores; 4) 0.553, 0.495, 0.553, 0.539 (set 1: rater left out 0.41 and
0.51 against kNN's 0.57 and 0.59; set 7: 0.60 and 0.69 against 0.54 and 0.52); Mohler (55)
0.702, 0.704, 0.868, 0.826. Not parm's queue itself, and not the nested
protocol of bench_severity_errors.py: a lead for making the queue use the rater-left-out
expectation where a file names its raters.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from machine import dataset_options, machine_line  # noqa: E402
from severity_data import BY_NAME, load_items  # noqa: E402
from severity_peers import KNN, OOF_LR, peers  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from engine.audit.raters.expectation import rater_left_out_proba  # noqa: E402
from engine.core.progress import Reporter  # noqa: E402

RATERS = 4
MIN_MOVED = 5


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def rankings(vectors, scores, n_classes, rater) -> dict[str, np.ndarray]:
    found = peers(vectors, scores, n_classes)
    names = np.array([f"r{k}" for k in rater])
    left_out = rater_left_out_proba(vectors, scores, n_classes, names, Reporter())
    own = 1.0 - left_out[np.arange(scores.size), scores]
    blend = 1.0 / (1.0 + np.exp(-(_logit(found[OOF_LR]) + _logit(own)) / 2))
    return {"kNN vote": found[KNN], "OOF LR": found[OOF_LR], "rater left out": own,
            "blend": blend}  # fmt: skip


def main() -> None:
    args = dataset_options(__doc__, ("asap-sas", "asap-aes", "mohler"), 2).parse_args()
    print(machine_line())
    by_dataset = defaultdict(list)
    for name in args.datasets:
        items, _ = load_items(BY_NAME[name], args.limit)
        for number, item in enumerate(items):
            responses = item.responses
            top = responses.n_classes - 1
            if not responses.ordered or top < 2:
                continue
            for seed in range(args.seeds):
                rng = np.random.default_rng([seed, number])
                rater = rng.integers(RATERS, size=responses.scores.size)
                scores = responses.scores.copy()
                scores[(rater == 0) & (scores == top)] = top - 1
                moved = scores != responses.scores
                if moved.sum() < MIN_MOVED:
                    continue
                found = rankings(item.vectors, scores, responses.n_classes, rater)
                auroc = {k: float(roc_auc_score(moved, v)) for k, v in found.items()}
                by_dataset[name].append(auroc)
                print(f"{name} {item.name} seed {seed}: {int(moved.sum())} moved; "
                      + ", ".join(f"{k} {v:.3f}" for k, v in auroc.items()), flush=True)  # fmt: skip
    print("\nMean AUROC of the moved scores (item-seeds):")
    for name, rows in by_dataset.items():
        means = ", ".join(f"{k} {np.mean([r[k] for r in rows]):.3f}" for k in rows[0])
        print(f"  {name} ({len(rows)}): {means}")


if __name__ == "__main__":
    main()
