"""The tables bench_severity_errors.py prints: every ranking per dataset and kind of error (not
held out), the held-out table (nested leave-one-dataset-out), and the items where the held-out
choice falls more than ITEM_SLACK below the better peer."""

from __future__ import annotations

import numpy as np
from severity_metrics import Outcome, pooled
from sklearn.metrics import roc_auc_score

KNN, OOF_LR, CURRENT = "kNN vote", "OOF LR", "current"
PEERS = (KNN, OOF_LR)
ITEM_SLACK = 0.02
# An item's AUROC is reported when its positives, summed over the seeds, reach this.
ITEM_POSITIVES = 20
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
        g = row[chosen] - max(row[p] for p in PEERS)
        if g < 0:
            misses.append(f"{u[0]} {u[1]} ({g:+.3f})")
        lines.append(
            f"| {u[0]} | {u[1]} | {chosen} | **{row[chosen]:.3f}** | {row[KNN]:.3f} | "
            f"{row[OOF_LR]:.3f} | {row[CURRENT]:.3f} | {g:+.3f} |"
        )
    lines += ["", f"Cells below the better peer: {', '.join(misses) or 'none'}."]
    return lines


def item_lines(grouped, choices) -> list[str]:
    lines = ["", f"## Items (>= {ITEM_POSITIVES} positives over seeds) where the held-out choice "
             f"is more than {ITEM_SLACK} below the better peer", ""]  # fmt: skip
    lines += ["| dataset | task | item | positives | held out | kNN | OOF LR | current |"]
    lines += ["|---" * 8 + "|"]
    counted = below = 0
    for u, found in grouped.items():
        chosen = choices[u[0]]
        per = {n: item_auroc(found, n) for n in (chosen, *PEERS, CURRENT)}
        for item, (ours, positives) in per[chosen].items():
            if positives < ITEM_POSITIVES:
                continue
            counted += 1
            best = max(per[p][item][0] for p in PEERS)
            if ours < best - ITEM_SLACK:
                below += 1
                cells = [f"{per[n][item][0]:.3f}" for n in (*PEERS, CURRENT)]
                lines.append(f"| {u[0]} | {u[1]} | {item} | {positives} | {ours:.3f} | "
                             + " | ".join(cells) + " |")  # fmt: skip
    lines += ["", f"{below} of {counted} measured item cells more than {ITEM_SLACK} below."]
    return lines


def report(outcomes: list[Outcome]) -> str:
    grouped = units(outcomes)
    names = list(outcomes[0].rankings)
    figures = table(grouped, names)
    pool = [n for n in names if n not in PEERS]
    choices = held_out(figures, pool)
    lines = overview(grouped, figures, names)
    lines += held_out_lines(grouped, figures, choices)
    lines += item_lines(grouped, choices)
    current = {d: CURRENT for d in choices}
    lines += ["", "### The severity parm ships now (current), per item"]
    lines += item_lines(grouped, current)[1:]
    return "\n".join(lines)
