"""Choosing the severity by leaving one dataset out (and one ASAP prompt out within ASAP), and
the ship rule.

A unit is one dataset and one task ("real" or "injected"); its figure is the pooled AUROC over
the dataset's items (mean over seeds for injected errors). The rule picks the candidate with the
highest mean figure over the units it may see. (With `cost_aware=True` it would take, of the
candidates within TIE = 0.002 of that mean, the one that cost least on those units; the report
shows that choice beside, for what a slower candidate buys.) A dataset's held-out figure is that of the
candidate the rule picks on the other datasets (SciEntsBank's two versions share their answers,
so they are held out together); an ASAP prompt's is that of the candidate picked on everything
but that prompt. The ship rule (issue 22, point 5): the held-out figure reaches the better
peer's on every unit, and the mean over datasets beats the better peer's by at least 0.02 in
each task.
"""

from __future__ import annotations

import numpy as np
from severity_metrics import Outcome, per_item, pooled, seconds
from severity_peers import PEERS

MARGIN = 0.02
# Mean AUROCs closer than this are a tie, broken by cost: below the spread of the injected
# tasks' seeds, and a tenth of the margin point 5 asks for.
TIE = 0.002
GROUPS = {"scientsbank-5way": "scientsbank", "scientsbank-2way": "scientsbank"}
PEER_NAMES = tuple(f"peer/{p}" for p in PEERS)


def group(dataset: str) -> str:
    return GROUPS.get(dataset, dataset)


def by_unit(outcomes: list[Outcome], skip_item: str | None = None) -> dict[tuple, list[Outcome]]:
    units: dict[tuple, list[Outcome]] = {}
    for o in outcomes:
        if o.item != skip_item:
            units.setdefault((o.dataset, o.task), []).append(o)
    return units


def figures(units: dict[tuple, list[Outcome]], names) -> dict[tuple, dict[str, float]]:
    """Pooled AUROC of every ranking on every unit."""
    return {u: {n: pooled(found, n)["auroc"] for n in names} for u, found in units.items()}


def costs(units: dict[tuple, list[Outcome]], names) -> dict[tuple, dict[str, float]]:
    """Seconds of every ranking on every unit (one pass over the dataset's items)."""
    return {u: {n: seconds(found, n) for n in names} for u, found in units.items()}


def choose(table, units, pool, spent=None) -> str:
    """The highest mean AUROC over `units`; with `spent` (seconds per unit and ranking), the
    cheapest of the rankings within TIE of it (a slow candidate only for what it buys)."""
    means = {n: float(np.mean([table[u][n] for u in units])) for n in pool}
    best = max(means.values())
    if spent is None:
        return max(pool, key=means.get)
    close = [n for n in pool if means[n] >= best - TIE]
    return min(close, key=lambda n: (sum(spent[u][n] for u in units), -means[n]))


def held_out_choices(outcomes, pool, cost_aware=False):
    """(choice on everything, choice per held-out dataset, choice per held-out ASAP prompt)."""
    units = by_unit(outcomes)
    table = figures(units, pool)
    spent = costs(units, pool) if cost_aware else None
    everything = choose(table, list(units), pool, spent)
    per_dataset = {}
    for dataset in dict.fromkeys(u[0] for u in units):
        seen = [u for u in units if group(u[0]) != group(dataset)]
        per_dataset[dataset] = choose(table, seen, pool, spent)
    per_prompt = {}
    for prompt in dict.fromkeys(o.item for o in outcomes if o.dataset == "asap-sas"):
        without = by_unit(outcomes, skip_item=prompt)
        partial = dict(table)
        partial.update(figures({u: v for u, v in without.items() if u[0] == "asap-sas"}, pool))
        per_prompt[prompt] = choose(partial, list(units), pool, spent)
    return everything, per_dataset, per_prompt


def rule_check(rows: dict[tuple, dict[str, float]], candidate: str) -> dict[str, object]:
    """Point 5 on figures {unit: {ranking: AUROC}} for `candidate` (a name in each row)."""
    misses = []
    means = {}
    for task in ("real", "injected"):
        units = [u for u in rows if u[1] == task]
        ours = [rows[u][candidate] for u in units]
        best = [max(rows[u][p] for p in PEER_NAMES) for u in units]
        means[task] = (float(np.mean(ours)), float(np.mean(best)))
        misses += [(u, o - b) for u, o, b in zip(units, ours, best) if o < b]
    met = not misses and all(o - b >= MARGIN for o, b in means.values())
    return {"met": met, "misses": misses, "means": means}


def held_out_rows(outcomes, per_dataset: dict[str, str]) -> dict[tuple, dict[str, float]]:
    """{unit: {"held out": AUROC of the held-out choice, peer: AUROC, ...}}."""
    rows = {}
    for unit, found in by_unit(outcomes).items():
        rows[unit] = {"held out": pooled(found, per_dataset[unit[0]])["auroc"]}
        rows[unit].update({p: pooled(found, p)["auroc"] for p in PEER_NAMES})
    return rows


def per_item_figure(found: list[Outcome], name: str) -> float:
    return per_item(found, name)["auroc"]
