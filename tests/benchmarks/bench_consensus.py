"""The consensus (engine.audit.reads.consensus) against majority vote, Dawid-Skene and CROWDLAB on
simulated sessions over real answers of every kind of shared data (consensus_data.py), 2 and 3
reads per answer, 10 seeds; the candidates for the shipped evidence chosen by leaving one
dataset out.

    PARM_DATA_ROOT=../shared/data python tests/benchmarks/bench_consensus.py
    python tests/benchmarks/bench_consensus.py --datasets mohler --seeds 2 --limit 10
    python tests/benchmarks/bench_consensus.py --report-only    # the cached sessions' report

Per session: accuracy against gold of every candidate and peer (and of each candidate's
consensus allowed outside its reads' range: the fit posterior's most probable score), the
Spearman correlation of the raters' estimated reliabilities with their true accuracies (the
share of their reads equal to gold), the share of answers sure and the accuracy among them, the
reliability intervals' coverage of the raters' realised accuracy, and seconds; for the shipped
evidence also the calibration of p, the share of sure answers among two reads one step apart,
and the variants' accuracy (the prior's share of a read, the EM on the restricted posterior). Session results are cached (JSON lines) under $PARM_BENCH_CACHE (default
/tmp/parm-bench-consensus) by dataset, design, seed and CACHE_VERSION.
"""

from __future__ import annotations

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
from consensus_report import SHIPPED, report  # noqa: E402
from machine import dataset_options  # noqa: E402

from engine.audit.reads.consensus import SURE, TextEvidence, consensus  # noqa: E402
from engine.audit.reads.consensus_fit import fit_posterior, posteriors, read_terms  # noqa: E402
from engine.audit.reads.consensus_layout import layout  # noqa: E402
from engine.audit.reads.text_evidence import reads_classifier  # noqa: E402

CACHE = Path(os.environ.get("PARM_BENCH_CACHE", "/tmp/parm-bench-consensus"))
CACHE_VERSION = 3
NEIGHBOURS = (5, 10, 20)
# The prior's share of one read the benchmark also tries (consensus_fit.PRIOR_SHARE ships).
SHARES = (0.25, 0.75)
# Calibration bins of the consensus probability (the last: p = 1, reads that agree).
BINS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)


def nearest(vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each answer's k most similar other answers of its item (cosine, ties: lower index)."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similarity = unit.astype(np.float64) @ unit.T.astype(np.float64)
    np.fill_diagonal(similarity, -np.inf)
    k = min(k, vectors.shape[0] - 1)
    order = np.argsort(-similarity, axis=1, kind="stable")[:, :k]
    return order, np.clip(np.take_along_axis(similarity, order, axis=1), 0.0, None)


def candidates(session, vectors, graphs, seed) -> dict[str, list[TextEvidence | None]]:
    """Every candidate's evidence per item: reads alone, the classifier on every read, the
    neighbour vote (k), and the combinations. (The classifier on each answer's first read, and
    its combinations, never chosen held out in issue 34's 10-seed run nor in this one's first
    seed, are left out: they cost a classifier per item.)"""
    every = [reads_classifier(v, r, seed) for r, v in zip(session.reads, vectors)]
    found: dict[str, list[TextEvidence | None]] = {"reads-only": [None] * len(vectors)}
    found["lr-reads"] = [TextEvidence((p,)) for p in every]
    for k in NEIGHBOURS:
        near = [(n[:, :k], s[:, :k]) for n, s in graphs]
        if k == 10:
            found[f"nb{k}"] = [TextEvidence((), n, s) for n, s in near]
        found[f"lr-reads+nb{k}"] = [TextEvidence((p,), n, s) for p, (n, s) in zip(every, near)]
    return found


def _realised(session) -> np.ndarray:
    """Each rater's true accuracy: the share of their reads equal to gold."""
    return np.array([
        np.mean(np.concatenate([r.score[r.rater == j] == g[r.answer[r.rater == j]]
                                for r, g in zip(session.reads, session.gold)]))
        for j in range(session.accuracy.size)
    ])  # fmt: skip


def _calibration(p, right, disagree) -> dict:
    """Counts of answers and of right consensuses per p bin (BINS), over every answer read
    twice or more and over those whose reads disagree."""
    where = np.searchsorted(BINS, p, side="right") - 1
    return {
        name: [[int(np.sum(keep & (where == b))), int(np.sum(keep & (where == b) & right))]
               for b in range(len(BINS))]
        for name, keep in (("all", np.ones(p.size, dtype=bool)), ("disagree", disagree))
    }  # fmt: skip


def _disagreement(session) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per answer: reads that disagree; two reads one step apart (ordered); the truth within
    the reads' range (between the lowest and highest read; among the reads on nominal)."""
    disagree, adjacent, within = [], [], []
    for reads, gold in zip(session.reads, session.gold):
        low = np.full(reads.n_answers, reads.n_classes)
        high = np.full(reads.n_answers, -1)
        np.minimum.at(low, reads.answer, reads.score)
        np.maximum.at(high, reads.answer, reads.score)
        given = np.zeros((reads.n_answers, reads.n_classes), dtype=bool)
        given[reads.answer, reads.score] = True
        disagree.append(high > low)
        adjacent.append(reads.ordered & (high - low == 1) & (reads.reads_per_answer() == 2))
        inside = (
            (low <= gold) & (gold <= high) if reads.ordered else given[np.arange(gold.size), gold]
        )
        within.append(inside)
    return tuple(np.concatenate(x) for x in (disagree, adjacent, within))


def score_consensus(session, gold, evidence, variants: bool = False) -> dict:
    """The consensus's figures on one session; `variants`: also the shipped evidence's
    variants (the prior's share of a read, the EM on the restricted posterior) and its
    calibration."""
    raters = session.accuracy.size
    start = time.perf_counter()
    result = consensus(session.reads, evidence, raters)
    seconds = time.perf_counter() - start
    best = np.concatenate([np.argmax(item.proba, axis=1) for item in result.items])
    p = np.concatenate([np.max(item.proba, axis=1) for item in result.items])
    right = best == gold
    realised = _realised(session)
    estimate = result.raters
    plan = layout(session.reads, evidence)
    own = read_terms(plan, result.model.rater)
    outside = np.argmax(fit_posterior(plan, result.model, own), axis=1)
    found = {
        "accuracy": float(right.mean()),
        "outside": {"accuracy": float(np.mean(outside == gold))},
        "spearman": float(stats.spearmanr(estimate.accuracy, realised).statistic),
        "sure": float(np.mean(p >= SURE)),
        "sure_accuracy": float(right[p >= SURE].mean()) if np.any(p >= SURE) else None,
        "coverage": float(np.mean((estimate.low <= realised) & (realised <= estimate.high))),
        "weights": list(result.weights),
        "iterations": result.iterations,
        "seconds": seconds,
    }
    if variants:
        disagree, adjacent, within = _disagreement(session)
        found["calibration"] = _calibration(p, right, disagree)
        found["adjacent_sure"] = [int(adjacent.sum()), int(np.sum(adjacent & (p >= SURE)))]
        found["truth_within_reads"] = float(within.mean())
        for share in SHARES:
            other = np.argmax(posteriors(plan, result.model, own, share)[0], axis=1)
            found[f"share{share:g}"] = {"accuracy": float(np.mean(other == gold))}
        refit = consensus(session.reads, evidence, raters, restricted_fit=True)
        other = np.concatenate([np.argmax(item.proba, axis=1) for item in refit.items])
        found["restricted-fit"] = {"accuracy": float(np.mean(other == gold))}
    return found


def run_session(dataset, items, graphs, reads, seed, as_file: bool = False) -> dict:
    session = simulate(items, reads, seed, as_file)
    gold = np.concatenate(session.gold)
    vectors = [item.vectors for item in items]
    row = {"dataset": dataset, "reads": reads, "seed": seed, "raters": int(session.accuracy.size)}
    for name, evidence in candidates(session, vectors, graphs, seed).items():
        found = score_consensus(session, gold, evidence, name == SHIPPED)
        for variant in [k for k, v in found.items() if isinstance(v, dict) and "accuracy" in v]:
            row[f"{name} {variant}"] = found.pop(variant)
        row[name] = found
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
    parser = dataset_options(__doc__, SOURCES, seeds=10)
    parser.add_argument("--reads", nargs="+", type=int, default=[2, 3])
    parser.add_argument("--raters", choices=("drawn", "file"), default="drawn",
                        help="drawn: accuracies 0.55-0.95; file: as good as the file's own "
                        "human scores (consensus_data.simulate)")  # fmt: skip
    parser.add_argument("--report-only", action="store_true",
                        help="report the cached sessions of these datasets, compute none")  # fmt: skip
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}", flush=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / (
        f"sessions-v{CACHE_VERSION}{'' if args.limit is None else f'-limit{args.limit}'}"
        f"{'' if args.raters == 'drawn' else '-' + args.raters}.jsonl"
    )
    done = cached_rows(path)
    rows = []
    for dataset in args.datasets:
        keys = [(dataset, r, seed) for r in args.reads for seed in range(args.seeds)]
        missing = [k for k in keys if k not in done]
        if missing and not args.report_only:
            items = load(dataset, args.limit)
            graphs = [nearest(item.vectors, max(NEIGHBOURS)) for item in items]
            for key in missing:
                start = time.perf_counter()
                done[key] = run_session(dataset, items, graphs, key[1], key[2],
                                        args.raters == "file")  # fmt: skip
                with path.open("a") as out:
                    out.write(json.dumps(done[key]) + "\n")
                print(f"{dataset} reads={key[1]} seed={key[2]}: "
                      f"{done[key][SHIPPED]['accuracy']:.3f} "
                      f"({time.perf_counter() - start:.0f} s)", flush=True)  # fmt: skip
        rows += [done[k] for k in keys if k in done]
    report(rows)


if __name__ == "__main__":
    main()
