"""The tables bench_severity_errors.py prints: every ranking per dataset and kind of error (not
held out), the held-out table (nested leave-one-dataset-out), and the items where the held-out
choice falls more than ITEM_SLACK below the better peer."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata
from severity_metrics import Outcome, pooled
from sklearn.metrics import roc_auc_score

KNN, OOF_LR, CURRENT = "kNN vote", "OOF LR", "current"
PEERS = (KNN, OOF_LR)
ITEM_SLACK = 0.02
# An item's AUROC is reported when its positives, summed over the seeds, reach this.
ITEM_POSITIVES = 20
BOOTSTRAP = 200
# The rule that picks a candidate on the training kinds (fixed before any held-out figure):
# the mean over their units of the gain over the better peer, a shortfall counted twice.
SHORTFALL_WEIGHT = 2.0


def units(outcomes: list[Outcome]) -> dict[tuple, list[Outcome]]:
    grouped: dict[tuple, list[Outcome]] = {}
    for o in outcomes:
        grouped.setdefault((o.dataset, o.task), []).append(o)
    return grouped


def table(grouped, names) -> dict[tuple, dict[str, float]]:
    return {u: {n: pooled(found, n)["auroc"] for n in names} for u, found in grouped.items()}


def gain(row: dict[str, float], name: str) -> float:
    return row[name] - max(row[p] for p in PEERS)


def score_rule(rows: list[dict[str, float]], name: str) -> float:
    gains = np.array([gain(r, name) for r in rows])
    return float(np.mean(np.where(gains < 0, SHORTFALL_WEIGHT * gains, gains)))


def choose(figures, seen_units, pool) -> str:
    return max(pool, key=lambda n: score_rule([figures[u] for u in seen_units], n))


def held_out(figures, pool) -> dict[str, str]:
    datasets = list(dict.fromkeys(u[0] for u in figures))
    return {d: choose(figures, [u for u in figures if u[0] != d], pool) for d in datasets}


def item_auroc(found: list[Outcome], name: str) -> dict[str, tuple[float, int]]:
    """Per item: mean AUROC over its seeds (those with both classes) and positives summed."""
    out: dict[str, list] = {}
    for o in found:
        if 0 < o.positives.sum() < o.positives.size:
            entry = out.setdefault(o.item, [[], 0])
            entry[0].append(roc_auc_score(o.positives, o.rankings[name]))
            entry[1] += int(o.positives.sum())
    return {item: (float(np.mean(a)), n) for item, (a, n) in out.items()}


def overview(grouped, figures, names) -> list[str]:
    head = [f"{d} {t}" for d, t in grouped]
    order = sorted(names, key=lambda n: -np.mean([figures[u][n] for u in grouped]))
    lines = ["## Every ranking: pooled AUROC per dataset and kind of error (not held out)", ""]
    lines += [
        "| ranking | " + " | ".join(head) + " | mean | rule |",
        "|---" * (len(head) + 3) + "|",
    ]
    for n in order:
        cells = [f"{figures[u][n]:.3f}" for u in grouped]
        mean = np.mean([figures[u][n] for u in grouped])
        rule = score_rule(list(figures.values()), n) if n not in PEERS else float("nan")
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {mean:.3f} | {rule:+.3f} |")
    return lines


def held_out_lines(grouped, figures, choices) -> list[str]:
    lines = ["", "## Held out: each dataset scored with the candidate chosen on the other four", ""]
    lines += ["| dataset | task | chosen without it | **held out** | kNN | OOF LR | current | "
              "gain over better peer |", "|---" * 8 + "|"]  # fmt: skip
    misses = []
    for u in grouped:
        row, chosen = figures[u], choices[u[0]]
        peer = max(PEERS, key=lambda p: row[p])
        g = row[chosen] - row[peer]
        if g < 0:
            low, high = pooled_gap(grouped[u], chosen, peer)
            noise = "beyond noise" if high < 0 else "within noise"
            misses.append(f"{u[0]} {u[1]} ({g:+.3f}; 95% {low:+.3f} to {high:+.3f}, {noise})")
        lines.append(
            f"| {u[0]} | {u[1]} | {chosen} | **{row[chosen]:.3f}** | {row[KNN]:.3f} | "
            f"{row[OOF_LR]:.3f} | {row[CURRENT]:.3f} | {g:+.3f} |"
        )
    lines += ["", f"Cells below the better peer: {', '.join(misses) or 'none'}."]
    return lines


def fast_auroc(positives: np.ndarray, ranking: np.ndarray) -> float:
    """AUROC by ranks (ties averaged), as roc_auc_score computes it."""
    ranks = rankdata(ranking)
    hits = positives.sum()
    return float(
        (ranks[positives].sum() - hits * (hits + 1) / 2) / (hits * (positives.size - hits))
    )


def pooled_gap(found: list[Outcome], ours: str, peer: str) -> tuple[float, float]:
    """The paired bootstrap 95% interval of (ours - peer) pooled AUROC: items resampled with
    replacement (an item's answers and seeds move together: they share its texts and raters)."""
    rng = np.random.default_rng(0)
    items = sorted({o.item for o in found})
    by_seed: dict = {}
    for o in found:
        by_seed.setdefault(o.seed, {})[o.item] = o
    draws = []
    for _ in range(BOOTSTRAP):
        picked = rng.choice(len(items), size=len(items))
        gaps = []
        for group in by_seed.values():
            chosen = [group[items[i]] for i in picked if items[i] in group]
            y = np.concatenate([o.positives for o in chosen])
            if 0 < y.sum() < y.size:
                a = np.concatenate([o.rankings[ours] for o in chosen])
                b = np.concatenate([o.rankings[peer] for o in chosen])
                gaps.append(fast_auroc(y, a) - fast_auroc(y, b))
        if gaps:
            draws.append(np.mean(gaps))
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(low), float(high)


def paired_gap(found: list[Outcome], ours: str, peer: str) -> tuple[float, float, float]:
    """(ours - peer) mean AUROC over the item's seeds, and its paired bootstrap 95% interval
    (answers resampled within each seed, the same draw for both rankings)."""
    rng = np.random.default_rng(0)
    usable = [o for o in found if 0 < o.positives.sum() < o.positives.size]
    point = np.mean(
        [fast_auroc(o.positives, o.rankings[ours]) - fast_auroc(o.positives, o.rankings[peer])
         for o in usable]
    )  # fmt: skip
    draws = []
    for _ in range(BOOTSTRAP):
        gaps = []
        for o in usable:
            pick = rng.integers(o.positives.size, size=o.positives.size)
            y = o.positives[pick]
            if 0 < y.sum() < y.size:
                a, b = o.rankings[ours][pick], o.rankings[peer][pick]
                gaps.append(fast_auroc(y, a) - fast_auroc(y, b))
        if gaps:
            draws.append(np.mean(gaps))
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(point), float(low), float(high)


def item_lines(grouped, choices, title: str) -> list[str]:
    """Every item cell with at least ITEM_POSITIVES positives over its seeds: those more than
    ITEM_SLACK below the better peer (the better of the two on that item), and whether the gap
    is beyond noise (its paired bootstrap interval below 0)."""
    lines = ["", f"## {title}: items (>= {ITEM_POSITIVES} positives over seeds) more than "
             f"{ITEM_SLACK} below the better peer", ""]  # fmt: skip
    lines += ["| dataset | task | item | positives | ranking | better peer | gap (95% interval) "
              "| beyond noise |", "|---" * 8 + "|"]  # fmt: skip
    counted = below = beyond = 0
    for u, found in grouped.items():
        chosen = choices[u[0]]
        per = {n: item_auroc(found, n) for n in (chosen, *PEERS)}
        for item, (ours, positives) in per[chosen].items():
            if positives < ITEM_POSITIVES:
                continue
            counted += 1
            peer = max(PEERS, key=lambda p: per[p][item][0])
            if ours >= per[peer][item][0] - ITEM_SLACK:
                continue
            below += 1
            mine = [o for o in found if o.item == item]
            gap, low, high = paired_gap(mine, chosen, peer)
            beyond += high < 0
            lines.append(f"| {u[0]} | {u[1]} | {item} | {positives} | {ours:.3f} | "
                         f"{per[peer][item][0]:.3f} ({peer}) | {gap:+.3f} ({low:+.3f}, "
                         f"{high:+.3f}) | {'yes' if high < 0 else 'no'} |")  # fmt: skip
    lines += ["", f"{below} of {counted} measured item cells more than {ITEM_SLACK} below the "
              f"better peer; {beyond} of them beyond noise."]  # fmt: skip
    return lines


def report(outcomes: list[Outcome]) -> str:
    grouped = units(outcomes)
    names = list(outcomes[0].rankings)
    figures = table(grouped, names)
    pool = [n for n in names if n not in PEERS]
    choices = held_out(figures, pool)
    lines = overview(grouped, figures, names)
    lines += held_out_lines(grouped, figures, choices)
    lines += item_lines(grouped, choices, "Held out")
    lines += item_lines(grouped, {d: CURRENT for d in choices}, "Current (shipped before)")
    return "\n".join(lines)
