"""Which scores should a rater-lead check first? The review queue's severity against two peers on
every kind of scoring file in the shared data, chosen by leaving one dataset out.

    PARM_DATA_ROOT=../shared/data python tests/benchmarks/bench_severity.py
    python tests/benchmarks/bench_severity.py --datasets mohler scientsbank-5way --seeds 2
    python tests/benchmarks/bench_severity.py --limit 10            # 10 items per file: a quick look

Data ($PARM_DATA_ROOT, default ../shared/data beside the repository; severity_data.py): the eight
ASAP-SAS prompts (train files, each one item), SciEntsBank (135 questions, five nominal labels;
and its 2-way version, correct against the rest), the ASAP essay sets 1, 2, 7, 8 (rater1_domain1,
second score rater2_domain1) and Mohler's 81 questions (score_grader1, second score_grader2).
Every file is read and split into items by parm itself and embedded whole by parm's cached
embed_texts (set PARM_CACHE_DIR to the shared cache for hits). Tasks: real disagreement where a
second score exists, injected errors everywhere (5% per item, 5 seeds).

Every item and task is audited by run_audit (the severity parm ships at this commit), and the
candidates (severity_candidates.py, from severity_components.py's cached pieces) and the peers
(severity_peers.py: kNN vote, OOF LR with scikit-learn's defaults) are computed per item on the
same embeddings. Metrics (severity_metrics.py): AUROC, AP, top-5% precision, pooled over each
dataset's items and as the mean over items. Selection and the ship rule: severity_select.py.
Pieces are cached under $PARM_BENCH_CACHE (default /tmp/parm-bench-severity), run_audit's under a
digest of the engine's sources, so a second run only recomputes what changed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import dataset_options, machine_line  # noqa: E402
from severity_candidates import BEFORE, SHIPPED_AS, candidates, costs  # noqa: E402
from severity_components import cached, engine_digest  # noqa: E402
from severity_data import BY_NAME, DATASETS, load_items, tasks_for, with_progress  # noqa: E402
from severity_metrics import Outcome  # noqa: E402
from severity_peers import knn_shares  # noqa: E402
from severity_report import report  # noqa: E402


def audit_dataset(name: str, seeds: int, limit: int | None, engine: str) -> list[Outcome]:
    dataset = BY_NAME[name]
    started = time.perf_counter()
    items, skipped = load_items(dataset, limit)
    config = dataset.config()
    outcomes = []
    for item in with_progress(name, items, every=20):
        for task in dataset.tasks:
            for seed, scores, positives in tasks_for(item, task, seeds):
                found = cached(item, task, seed, scores, config, engine)
                found["knn/shares"] = knn_shares(item.vectors, scores, item.responses.n_classes)
                rankings = candidates(found, scores)
                spent = costs(found)
                for key in found:
                    if key.startswith("peer/"):
                        rankings[key] = found[key]
                        spent[key] = float(found["cost/peers"])
                rankings["shipped (run_audit)"] = found["parm/severity"]
                spent["shipped (run_audit)"] = float(found["cost/parm/severity"])
                outcomes.append(Outcome(name, item.name, task, seed, positives, rankings, spent))
    n = sum(len(i.responses) for i in items)
    print(
        f"{name}: {len(items)} items, {n:,} answers, {len(skipped)} skipped by parm "
        f"({'; '.join(skipped[:3])}{' ...' if len(skipped) > 3 else ''}), "
        f"{time.perf_counter() - started:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    return outcomes


def main() -> None:
    parser = dataset_options(__doc__, [d.name for d in DATASETS], seeds=5)
    parser.add_argument(
        "--engine",
        default=None,
        help="read run_audit's cached results of the engine with this digest (the report of an "
        "earlier run, e.g. before an engine change) instead of this checkout's",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"{machine_line()}; engine digest {engine_digest()}", file=sys.stderr)
    engine = args.engine or engine_digest()
    # Many small fits: one BLAS thread is several times faster than two on a busy 2-core machine.
    with threadpool_limits(1, user_api="blas"):
        outcomes = [
            o for d in args.datasets for o in audit_dataset(d, args.seeds, args.limit, engine)
        ]
    np.seterr(all="ignore")
    print(report(outcomes, today=BEFORE, shipped_as=SHIPPED_AS))
    print(f"\nTotal {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
