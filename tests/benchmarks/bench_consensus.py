"""The consensus (engine.audit.reads.consensus) against majority vote, Dawid-Skene and CROWDLAB on
simulated sessions over real answers of every kind of shared data (consensus_data.py), 2 and 3
reads per answer, 10 seeds; the candidates for the shipped evidence chosen by leaving one
dataset out.

    PARM_DATA_ROOT=../shared/data python tests/benchmarks/bench_consensus.py
    python tests/benchmarks/bench_consensus.py --datasets mohler --seeds 2 --limit 10

Per session: accuracy against gold of every candidate and peer, the Spearman correlation of
the raters' estimated reliabilities with their true accuracies, the share of answers sure and
the accuracy among them, the reliability intervals' coverage of the raters' realised accuracy,
and seconds. Session results are cached (JSON lines) under $PARM_BENCH_CACHE (default
/tmp/parm-bench-consensus) by dataset, design, seed and CACHE_VERSION.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from consensus_data import SOURCES, load, simulate  # noqa: E402
from consensus_peers import peers  # noqa: E402
from consensus_report import report  # noqa: E402

from engine.audit.reads.consensus import SURE, TextEvidence, consensus  # noqa: E402
from engine.audit.reads.text_evidence import first_read_classifier, reads_classifier  # noqa: E402

CACHE = Path(os.environ.get("PARM_BENCH_CACHE", "/tmp/parm-bench-consensus"))
CACHE_VERSION = 2
NEIGHBOURS = (5, 10, 20)


def nearest(vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each answer's k most similar other answers of its item (cosine, ties: lower index)."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similarity = unit.astype(np.float64) @ unit.T.astype(np.float64)
    np.fill_diagonal(similarity, -np.inf)
    k = min(k, vectors.shape[0] - 1)
    order = np.argsort(-similarity, axis=1, kind="stable")[:, :k]
    return order, np.clip(np.take_along_axis(similarity, order, axis=1), 0.0, None)


def candidates(session, vectors, graphs, seed) -> dict[str, list[TextEvidence | None]]:
    """Every candidate's evidence per item: reads alone, a classifier (first read or every
    read), the neighbour vote (k), and the combinations."""
    first = [first_read_classifier(v, r, seed) for r, v in zip(session.reads, vectors)]
    every = [reads_classifier(v, r, seed) for r, v in zip(session.reads, vectors)]
    found: dict[str, list[TextEvidence | None]] = {"reads-only": [None] * len(vectors)}
    for name, probas in (("lr-first", first), ("lr-reads", every)):
        found[name] = [TextEvidence((p,)) for p in probas]
    for k in NEIGHBOURS:
        near = [(n[:, :k], s[:, :k]) for n, s in graphs]
        found[f"nb{k}"] = [TextEvidence((), n, s) for n, s in near]
        for name, probas in (("lr-first", first), ("lr-reads", every)):
            found[f"{name}+nb{k}"] = [TextEvidence((p,), n, s) for p, (n, s) in zip(probas, near)]
    return found


def score_consensus(session, gold, evidence) -> dict:
    raters = session.accuracy.size
    start = time.perf_counter()
    result = consensus(session.reads, evidence, raters)
    seconds = time.perf_counter() - start
    best = np.concatenate([np.argmax(item.proba, axis=1) for item in result.items])
    p = np.concatenate([np.max(item.proba, axis=1) for item in result.items])
    right = best == gold
    realised = np.array([
        np.mean(np.concatenate([r.score[r.rater == j] == g[r.answer[r.rater == j]]
                                for r, g in zip(session.reads, session.gold)]))
        for j in range(raters)
    ])  # fmt: skip
    estimate = result.raters
    return {
        "accuracy": float(right.mean()),
        "spearman": float(stats.spearmanr(estimate.accuracy, session.accuracy).statistic),
        "sure": float(np.mean(p >= SURE)),
        "sure_accuracy": float(right[p >= SURE].mean()) if np.any(p >= SURE) else None,
        "coverage": float(np.mean((estimate.low <= realised) & (realised <= estimate.high))),
        "weights": list(result.weights),
        "iterations": result.iterations,
        "seconds": seconds,
    }


def run_session(dataset, items, graphs, reads, seed) -> dict:
    session = simulate(items, reads, seed)
    gold = np.concatenate(session.gold)
    vectors = [item.vectors for item in items]
    row = {"dataset": dataset, "reads": reads, "seed": seed, "raters": int(session.accuracy.size)}
    for name, evidence in candidates(session, vectors, graphs, seed).items():
        row[name] = score_consensus(session, gold, evidence)
    for name, (codes, seconds) in peers(session.reads, vectors, int(session.accuracy.size),
                                        seed).items():  # fmt: skip
        row[name] = {"accuracy": float(np.mean(np.concatenate(codes) == gold)), "seconds": seconds}
    return row


def cached_rows(path: Path) -> dict[tuple, dict]:
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {(r["dataset"], r["reads"], r["seed"]): r for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(SOURCES))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--reads", nargs="+", type=int, default=[2, 3])
    parser.add_argument("--limit", type=int, default=None, help="items per file (a quick look)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}", flush=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    path = (
        CACHE
        / f"sessions-v{CACHE_VERSION}{'' if args.limit is None else f'-limit{args.limit}'}.jsonl"
    )
    done = cached_rows(path)
    rows = []
    for dataset in args.datasets:
        items = load(dataset, args.limit)
        graphs = [nearest(item.vectors, max(NEIGHBOURS)) for item in items]
        for reads in args.reads:
            for seed in range(args.seeds):
                key = (dataset, reads, seed)
                if key not in done:
                    done[key] = run_session(dataset, items, graphs, reads, seed)
                    with path.open("a") as out:
                        out.write(json.dumps(done[key]) + "\n")
                    print(f"{dataset} reads={reads} seed={seed}: "
                          f"{done[key]['lr-reads+nb10']['accuracy']:.3f}", flush=True)  # fmt: skip
                rows.append(done[key])
    report(rows)


if __name__ == "__main__":
    main()
