"""Does a share of visible second reads teach the review queue where the other answers' real
disagreements are? (issue 35, point 3)

    PARM_DATA_ROOT=../shared/data PARM_CACHE_DIR=~/.cache/parm \\
        python tests/benchmarks/bench_severity_visible.py
    python tests/benchmarks/bench_severity_visible.py --datasets mohler --limit 10 --seeds 1

Data: the shared files with a real second read (severity_data.py): the eight ASAP-SAS prompts,
the ASAP essay sets 1, 2, 7, 8, Mohler, and Powergrading (G1 audited; a disagreement is G2 or
G3 differing from G1, and an answer's visible "second read" is both other grades). Each item is
read, split and embedded as bench_severity.py does it, and today's severity is run_audit's
(cached under $PARM_BENCH_CACHE with bench_severity.py's key where that bench ran, else
computed by severity_fast.py: the same stages without cross-fitting and the other checks,
equal to run_audit's severity on every item of Powergrading and the first six of Mohler).

For each fraction (10%, 20%, 50%) and seed, that share of each item's answers with a second read
has it visible; the candidates (severity_visible.py) are trained on those, pooled over the
dataset's items, and every ranking is measured ONLY on the other answers: pooled AUROC (one
queue per dataset, mean over seeds) and the mean per-item AUROC. Peers on the same embeddings
(severity_peers.py): kNN vote and OOF LR. The candidate is chosen by leaving one dataset out
(best mean pooled AUROC over the other datasets' fractions); the goal is the held-out figure
above the better peer on every dataset and fraction with a mean gain of at least 0.01.
"""

from __future__ import annotations

import dataclasses
import pickle
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import dataset_options, machine_line  # noqa: E402
from severity_components import CACHE, _load_or, _path, engine_digest, parm_part  # noqa: E402
from severity_data import BY_NAME, DATA, item_seed, load_items  # noqa: E402
from severity_fast import fast_severity  # noqa: E402
from severity_metrics import Outcome, per_item, pooled  # noqa: E402
from severity_peers import KNN, OOF_LR, knn_vote, oof_lr_proba  # noqa: E402
from severity_visible import CANDIDATES, CHOSEN, ENGINE, session_rankings  # noqa: E402

NAMES = ("asap-sas", "asap-aes", "mohler", "powergrading")
FRACTIONS = (0.1, 0.2, 0.5)
SHIPPED = "today's severity"
PEERS = (KNN, OOF_LR)
GOAL = 0.01


@dataclasses.dataclass
class Prepared:
    """One item's rankings without visible reads, and its truth."""

    name: str
    scores: np.ndarray
    n_classes: int
    vectors: np.ndarray
    severity: np.ndarray
    knn: np.ndarray
    lr_proba: np.ndarray
    disagree: np.ndarray
    has_read: np.ndarray


def other_reads(name: str, item) -> list[np.ndarray]:
    """The item's other reads as numbers (NaN where missing), and the audited one."""
    dataset = BY_NAME[name]
    columns = [dataset.score, dataset.second] + (["G3"] if name == "powergrading" else [])
    frame = pd.read_csv(DATA / dataset.files[0], dtype=str, keep_default_na=False)
    if len(dataset.files) > 1:
        raise ValueError("other_reads reads one file")
    picked = frame.iloc[item.responses.rows - 1]
    return [pd.to_numeric(picked[c], errors="coerce").to_numpy() for c in columns]


def truth(name: str, item) -> tuple[np.ndarray, np.ndarray]:
    """(has another read, another read differs from the audited score)."""
    if name != "powergrading":
        second = item.responses.second_scores
        has = second >= 0
        return has, has & (second != item.responses.scores)
    first, *others = other_reads(name, item)
    has = np.all([np.isfinite(o) for o in others], axis=0)
    return has, has & np.any([o != first for o in others], axis=0)


def cached_rankings(item, config, engine: str) -> tuple[dict, dict]:
    """run_audit's pieces (bench_severity.py's cache key) and the peers' (their own key)."""
    scores = item.responses.scores
    whole = _path(item, "real", None, scores, f"parm-{engine}")
    if whole.is_file():  # bench_severity.py ran run_audit on it
        parm = _load_or(whole, lambda: parm_part(item, scores, config))
    else:
        parm = _load_or(
            _path(item, "real", None, scores, f"severity-{engine}"),
            lambda: fast_severity(item, scores, config),
        )
    peers = _load_or(
        _path(item, "real", None, scores, "visible-peers-1"),
        lambda: {
            "knn": knn_vote(item.vectors, scores),
            "proba": oof_lr_proba(item.vectors, scores, item.responses.n_classes),
        },
    )
    return parm, peers


def prepare(name: str, limit: int | None, engine: str) -> list[Prepared]:
    """Every item's rankings and truth, kept whole under the cache (loading the embeddings of
    a whole dataset takes minutes; the candidates take seconds)."""
    path = CACHE / "visible-prepared" / f"{name}-{limit}-{engine}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    out = _prepare(name, limit, engine)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out


def _prepare(name: str, limit: int | None, engine: str) -> list[Prepared]:
    dataset = BY_NAME[name]
    items, _ = load_items(dataset, limit)
    config = dataset.config()
    out = []
    for item in items:
        parm, peers = cached_rankings(item, config, engine)
        has, differs = truth(name, item)
        out.append(
            Prepared(
                item.name,
                item.responses.scores,
                item.responses.n_classes,
                item.vectors.astype(np.float64),
                parm["parm/severity"],
                peers["knn"],
                peers["proba"],
                differs,
                has,
            )
        )
    answers = sum(p.scores.size for p in out)
    found = sum(int(p.disagree.sum()) for p in out)
    print(f"{name}: {len(out)} items, {answers:,} answers, {found} disagreements", file=sys.stderr)
    return out


def visible_mask(name: str, item: Prepared, fraction: float, seed: int) -> np.ndarray:
    rng = item_seed(name, item.name, 1000 + seed * 100 + round(fraction * 100))
    readable = np.flatnonzero(item.has_read)
    mask = np.zeros(item.scores.size, dtype=bool)
    mask[rng.choice(readable, size=round(fraction * readable.size), replace=False)] = True
    return mask


def outcomes_for(name: str, items: list[Prepared], seeds: int) -> list[Outcome]:
    out = []
    for fraction in FRACTIONS:
        for seed in range(seeds):
            visible = [visible_mask(name, i, fraction, seed) for i in items]
            rankings = session_rankings(items, visible)
            for item, shown, found in zip(items, visible, rankings):
                held = item.has_read & ~shown
                found[SHIPPED] = item.severity
                found[KNN] = item.knn
                found[OOF_LR] = 1.0 - item.lr_proba[np.arange(item.scores.size), item.scores]
                out.append(
                    Outcome(
                        name,
                        item.name,
                        f"{fraction:g}",
                        seed,
                        item.disagree[held],
                        {k: v[held] for k, v in found.items()},
                        {},
                    )
                )
    return out


def units(outcomes: list[Outcome]) -> dict[tuple, list[Outcome]]:
    grouped: dict[tuple, list[Outcome]] = {}
    for o in outcomes:
        grouped.setdefault((o.dataset, o.task), []).append(o)
    return grouped


def report(outcomes: list[Outcome]) -> list[str]:
    names = [SHIPPED, KNN, OOF_LR, *CANDIDATES, CHOSEN, ENGINE]
    grouped = units(outcomes)
    table = {u: {n: pooled(f, n)["auroc"] for n in names} for u, f in grouped.items()}
    items = {u: {n: per_item(f, n)["auroc"] for n in names} for u, f in grouped.items()}
    datasets = list(dict.fromkeys(u[0] for u in grouped))
    lines = ["## Every ranking, pooled AUROC on the held-out answers (not held out)", ""]
    lines += ["| ranking | " + " | ".join(f"{d} {t}" for d, t in grouped) + " | mean |"]
    lines += ["|---" * (len(grouped) + 2) + "|"]
    for n in names:
        cells = [f"{table[u][n]:.3f}" for u in grouped]
        lines.append(
            f"| {n} | " + " | ".join(cells) + f" | {np.mean([table[u][n] for u in grouped]):.3f} |"
        )
    lines += ["", "## Held out: the candidate chosen on the other datasets", ""]
    lines += ["| dataset | visible | chosen | **held out** pooled / per item | today | kNN | "
              "OOF LR | gain over better peer |", "|---" * 8 + "|"]  # fmt: skip
    gains, misses = [], []
    for d in datasets:
        seen = [u for u in grouped if u[0] != d]
        pool = [*CANDIDATES, CHOSEN]
        choice = max(pool, key=lambda n: np.mean([table[u][n] for u in seen]))
        for u in (u for u in grouped if u[0] == d):
            best = max(table[u][p] for p in PEERS)
            gain = table[u][choice] - best
            gains.append(gain)
            if gain <= 0:
                misses.append(f"{d} {u[1]} ({gain:+.3f})")
            cells = [f"{table[u][n]:.3f} / {items[u][n]:.3f}" for n in (SHIPPED, *PEERS)]
            lines.append(
                f"| {d} | {u[1]} | {choice} | **{table[u][choice]:.3f}** / "
                f"{items[u][choice]:.3f} | " + " | ".join(cells) + f" | {gain:+.3f} |"
            )
    met = not misses and np.mean(gains) >= GOAL
    lines += ["", f"Mean gain of the held-out choice over the better peer: {np.mean(gains):+.3f}; "
              f"below it: {', '.join(misses) or 'none'}. Goal (above on every unit, mean "
              f">= {GOAL}): {'met' if met else 'not met'}."]  # fmt: skip
    lines += fixed_lines(grouped, table, items, ENGINE)
    lines += per_item_lines(outcomes, "powergrading", names)
    return lines


def fixed_lines(grouped, table, items, name: str) -> list[str]:
    """One fixed ranking against the peers and today's severity on every unit."""
    lines = ["", f"## {name} on every unit (pooled / mean per item)", ""]
    lines += ["| dataset | visible | ranking | today | better peer | gain | pooled >= per item |"]
    lines += ["|---" * 7 + "|"]
    gains = []
    for u in grouped:
        best = max(table[u][p] for p in PEERS)
        gains.append(table[u][name] - best)
        lines.append(
            f"| {u[0]} | {u[1]} | {table[u][name]:.3f} / {items[u][name]:.3f} | "
            f"{table[u][SHIPPED]:.3f} / {items[u][SHIPPED]:.3f} | {best:.3f} | {gains[-1]:+.3f} | "
            f"{'yes' if table[u][name] >= items[u][name] else 'no'} |"
        )
    met = min(gains) > 0 and np.mean(gains) >= GOAL
    lines += ["", f"Mean gain {np.mean(gains):+.3f}, smallest {min(gains):+.3f}: goal "
              f"{'met' if met else 'not met'}."]  # fmt: skip
    return lines


def per_item_lines(outcomes, dataset: str, names) -> list[str]:
    found = [o for o in outcomes if o.dataset == dataset]
    if not found:
        return []
    lines = ["", f"## {dataset} per item (AUROC, mean over fractions and seeds)", ""]
    lines += ["| item | positives held out | " + " | ".join(names) + " |"]
    lines += ["|---" * (len(names) + 2) + "|"]
    for item in dict.fromkeys(o.item for o in found):
        mine = [o for o in found if o.item == item and 0 < o.positives.sum() < o.positives.size]
        if not mine:
            continue
        positives = np.mean([o.positives.sum() for o in mine])
        cells = [f"{np.mean([pooled([o], n)['auroc'] for o in mine]):.3f}" for n in names]
        lines.append(f"| {item} | {positives:.0f} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = dataset_options(__doc__, NAMES, seeds=3)
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"{machine_line()}; engine digest {engine_digest()}; cache {CACHE}", file=sys.stderr)
    outcomes = []
    with threadpool_limits(1, user_api="blas"):
        for name in args.datasets:
            items = prepare(name, args.limit, engine_digest())
            outcomes += outcomes_for(name, items, args.seeds)
    np.seterr(all="ignore")
    print("\n".join(report(outcomes)))
    print(f"\nTotal {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
