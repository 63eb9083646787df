"""The session model's cross-fitted agreement against today's per-item fit and one pooled fit,
on every kind of shared data, in one run (issue 35, point 2).

Every figure is cross-fitted: each answer's audited read (the first score column) is predicted
by a model that never saw any read of that answer (engine.model.session.cross_fit for the
session model; session_baselines.py for the two others). Per dataset the table gives QWK (kappa
for SciEntsBank's nominal labels) over all the dataset's answers where its items share one scale
("pooled"), and the mean and median over items (the goal's figure where items have different
scales: ASAP-SAS, the essays).

The session model is fitted unweighted (K by the restricted Laplace marginal pseudo-likelihood);
its decision rule's `balance` (engine.model.session.cross_fit.decide: 0 the plain argmax, 1 what
balanced class weights do) is chosen from BALANCES leaving one dataset out: for each dataset, the
value with the best mean margin over the better of today's fits on the other datasets, and its
figure on the held-out one is reported. Beside it, chosen the same way: the session model of the
audited reads only (no second reads, no raters), and today's two fits fitted unweighted with the
same decision rule ("+b"), so that what the model adds can be told from what the rule adds.

    python tests/benchmarks/bench_session_model.py [--datasets mohler ...] [--limit N]
        [--cache DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_line  # noqa: E402
from session_baselines import per_item_probabilities, pooled_probabilities  # noqa: E402
from session_data import BY_NAME, SPECS, load_session, scale_groups  # noqa: E402

from engine.model.metrics import agreement  # noqa: E402
from engine.model.session.cross_fit import (  # noqa: E402
    SessionOptions,
    decide,
    session_cross_fit,
)

BALANCES = (0.0, 0.25, 0.5, 0.75, 1.0)
# Part of the cache key of the session model's results: raise it when the model changes.
MODEL_VERSION = 3
OPTIONS = SessionOptions()
# The session model's K selection: the Laplace marginal (the default) or in-sample kappa as
# today's tuning does; chosen with the balance, leaving one dataset out.
KAPPA_OPTIONS = dataclasses.replace(OPTIONS, selection="kappa")
SESSION_METHODS = ("session", "session K by kappa")
# The goal's figure: pooled over answers where a dataset's items share one scale.
SINGLE_SCALE = ("mohler", "scientsbank", "powergrading")


def cached(cache: Path | None, key: str, compute):
    """compute() once per key (an .npy under `cache`), timed; (array, seconds or None)."""
    path = (
        None if cache is None else cache / (hashlib.sha256(key.encode()).hexdigest()[:20] + ".npy")
    )
    if path is not None and path.exists():
        return np.load(path), None
    started = time.perf_counter()
    value = np.asarray(compute())
    seconds = time.perf_counter() - started
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, value)
    return value, seconds


def session_probabilities(group, options: SessionOptions, audited_only: bool) -> np.ndarray:
    """(sum N_g, 2 (C+1)): each audited read's cross-fitted p and its fold's category shares."""
    sessions = [item.session for item in group]
    if audited_only:
        sessions = [
            dataclasses.replace(
                s,
                answer=s.answer[s.audited],
                rater=s.rater[s.audited],
                score=s.score[s.audited],
                audited=None,
            )
            for s in sessions
        ]
    result = session_cross_fit(sessions, options)
    return np.hstack([result.proba[result.audited], result.shares[result.audited]])


def decisions(stacked: np.ndarray, balance: float) -> np.ndarray:
    half = stacked.shape[1] // 2
    return decide(stacked[:, :half], stacked[:, half:], balance)


def figures(spec, group_items, predicted_by_group) -> dict[str, float]:
    """pooled (single-scale kinds), mean and median per item of QWK or kappa."""
    metric = "qwk" if spec.ordered else "kappa"
    per_item, truth_all, predicted_all = [], [], []
    for group, predicted in zip(group_items, predicted_by_group):
        offset = 0
        for item in group:
            n = item.audited.size
            mine = predicted[offset : offset + n]
            offset += n
            per_item.append(
                agreement(item.audited, mine, item.session.n_classes, spec.ordered)[metric]
            )
            truth_all.append(item.audited)
            predicted_all.append(mine)
    out = {"mean": float(np.mean(per_item)), "median": float(np.median(per_item))}
    if spec.name in SINGLE_SCALE:
        n_classes = group_items[0][0].session.n_classes
        out["pooled"] = agreement(
            np.concatenate(truth_all), np.concatenate(predicted_all), n_classes, spec.ordered
        )[metric]
    return out


def goal_figure(spec, values: dict[str, float]) -> float:
    return values["pooled"] if spec.name in SINGLE_SCALE else values["mean"]


def run_dataset(spec, limit, cache) -> dict[str, tuple]:
    """Every method's figures (and seconds) on one kind of data: today's per-item and pooled
    fits ("per-item", "pooled": balanced weights, argmax), and per balance b of the decision
    rule ("... b=0.25"): the session model, the session model of the audited reads alone, and
    today's two fits unweighted."""
    items, skipped = load_session(spec, limit)
    groups = scale_groups(items)
    print(
        f"\n{spec.name}: {len(items)} items ({skipped} skipped), {len(groups)} scale group(s), "
        f"{sum(i.audited.size for i in items):,} answers, "
        f"{sum(i.session.n_reads for i in items):,} reads; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    key = f"{spec.name}|{limit}|probabilities|"
    methods = {}

    def each_group(name, compute):
        found, seconds = [], 0.0
        for number, group in enumerate(groups):
            value, took = cached(cache, key + f"{name}|{number}", lambda g=group: compute(g))
            found.append(value)
            seconds += took or 0.0
        return found, seconds

    def per_item(weight):
        return lambda group: np.concatenate([per_item_probabilities(i, weight) for i in group])

    def pooled(weight):
        options = dataclasses.replace(OPTIONS, class_weight=weight)
        return lambda group: pooled_probabilities(group, options)

    runs = (
        ("per-item", per_item("balanced"), (0.0,)),
        ("pooled", pooled("balanced"), (0.0,)),
        ("per-item unweighted", per_item(None), BALANCES),
        ("pooled unweighted", pooled(None), BALANCES),
        (
            f"session|{OPTIONS}|{MODEL_VERSION}",
            lambda g: session_probabilities(g, OPTIONS, False),
            BALANCES,
        ),
        (
            f"session K by kappa|{KAPPA_OPTIONS}|{MODEL_VERSION}",
            lambda g: session_probabilities(g, KAPPA_OPTIONS, False),
            BALANCES,
        ),
        (
            f"session, audited only|{OPTIONS}|{MODEL_VERSION}",
            lambda g: session_probabilities(g, OPTIONS, True),
            BALANCES,
        ),
    )
    for name, compute, balances in runs:
        stacked, seconds = each_group(name, compute)
        short = name.split("|")[0]
        for balance in balances:
            label = short if len(balances) == 1 else f"{short} b={balance:g}"
            predicted = [decisions(s, balance) for s in stacked]
            methods[label] = (figures(spec, groups, predicted), seconds)
            print(f"  {label:30s} {_row(methods[label][0])}  ({seconds:.0f} s)", flush=True)
    return methods


def _row(values: dict[str, float]) -> str:
    pooled = f"{values['pooled']:.3f}" if "pooled" in values else "  -  "
    return f"pooled {pooled}  mean {values['mean']:.3f}  median {values['median']:.3f}"


def _chosen(results, name, methods, today) -> tuple[str, float]:
    """(label, figure) of the best of `methods` x BALANCES on dataset `name`, chosen on the other
    datasets by the mean margin over `today` (the better of today's two fits)."""
    others = [n for n in results if n != name] or [name]
    labels = [f"{m} b={b:g}" for m in methods for b in BALANCES]

    def margin(dataset, label):
        return goal_figure(BY_NAME[dataset], results[dataset][label][0]) - today[dataset]

    chosen = max(labels, key=lambda label: np.mean([margin(o, label) for o in others]))
    return chosen, goal_figure(BY_NAME[name], results[name][chosen][0])


def held_out_table(results: dict[str, dict]) -> None:
    """Each dataset's figures with each method's balance chosen on the other datasets."""
    today = {
        name: max(goal_figure(BY_NAME[name], methods[m][0]) for m in ("per-item", "pooled"))
        for name, methods in results.items()
    }
    print(
        "\nHeld out: QWK (kappa for SciEntsBank) of the cross-fitted decisions against the "
        "audited reads, pooled over the answers of single-scale kinds, mean per item otherwise; "
        "each balance b (and the session model's K selection) chosen on the other datasets. 'today' = the better of today's per-item "
        "and pooled fits (balanced weights, argmax); '+b' = the same fits unweighted with the "
        "session model's decision rule."
    )
    print(
        f"{'dataset':13s} {'session':>7s} {'chosen':>22s} {'audited only':>12s} {'per-item':>8s} "
        f"{'pooled':>7s} {'per-item+b':>10s} {'pooled+b':>8s} {'vs today':>8s} {'vs all':>7s}"
    )
    for name, methods in results.items():
        spec = BY_NAME[name]
        label, session = _chosen(results, name, SESSION_METHODS, today)
        _, alone = _chosen(results, name, ("session, audited only",), today)
        _, item_b = _chosen(results, name, ("per-item unweighted",), today)
        _, pooled_b = _chosen(results, name, ("pooled unweighted",), today)
        base = [goal_figure(spec, methods[m][0]) for m in ("per-item", "pooled")]
        best = max(base + [item_b, pooled_b])
        print(
            f"{name:13s} {session:7.3f} {label:>22s} {alone:12.3f} {base[0]:8.3f} {base[1]:7.3f} "
            f"{item_b:10.3f} {pooled_b:8.3f} {session - today[name]:+8.3f} {session - best:+7.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=[s.name for s in SPECS])
    parser.add_argument("--limit", type=int, default=None, help="items per file")
    parser.add_argument("--cache", type=Path, default=None)
    args = parser.parse_args()
    print(machine_line())
    results = {}
    started = time.perf_counter()
    for name in args.datasets:
        results[name] = run_dataset(BY_NAME[name], args.limit, args.cache)
    held_out_table(results)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
