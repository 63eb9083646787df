"""The Markdown bench_severity.py prints: every ranking on every unit (orientation, not held
out), the held-out table per dataset and task and per ASAP prompt, the ship rule, and costs."""

from __future__ import annotations

import numpy as np
from severity_metrics import Outcome, per_item, pooled, seconds
from severity_select import (
    PEER_NAMES,
    by_unit,
    held_out_choices,
    held_out_rows,
    rule_check,
)

SHIPPED = "shipped (run_audit)"


def _unit_name(unit: tuple) -> str:
    return f"{unit[0]} {unit[1]}"


def _cell(found, name) -> str:
    figures = pooled(found, name)
    return f"{figures['auroc']:.3f} / {figures['ap']:.3f} / {figures['top5']:.3f}"


def overview(outcomes: list[Outcome], names) -> list[str]:
    units = by_unit(outcomes)
    table = {u: {n: pooled(found, n)["auroc"] for n in names} for u, found in units.items()}
    order = sorted(names, key=lambda n: -np.mean([table[u][n] for u in units]))
    head = [_unit_name(u) for u in units]
    lines = [
        "## Every ranking: pooled AUROC per dataset and task (not held out)",
        "",
        "| ranking | " + " | ".join(head) + " | mean real | mean injected | mean | units >= "
        "better peer | point 5 | seconds per pass |",
        "|---" * (len(head) + 7) + "|",
    ]
    for name in order:
        cells = [f"{table[u][name]:.3f}" for u in units]
        rows = {u: table[u] for u in units}
        check = rule_check(rows, name)
        wins = sum(table[u][name] >= max(table[u][p] for p in PEER_NAMES) for u in units)
        cost = sum(seconds(found, name) for found in units.values())
        means = [check["means"][t][0] for t in ("real", "injected")]
        overall = np.mean([table[u][name] for u in units])
        lines.append(
            f"| {name} | " + " | ".join(cells) + f" | {means[0]:.3f} | {means[1]:.3f} | "
            f"{overall:.3f} | {wins} of {len(units)} | {'met' if check['met'] else 'no'} | "
            f"{cost:.1f} |"
        )
    return lines


def _chosen_table(head: list[str], first: str, rows, today: str, cell) -> list[str]:
    """A table of held-out choices: per row (name, task, chosen candidate, its outcomes) the
    chosen candidate's cell beside the peers' and today's."""
    columns = ["held out", *PEER_NAMES, today]
    lines = [
        *head,
        f"| {first} | task | chosen without it | " + " | ".join(columns) + " |",
        "|---|---|---|" + "---|" * len(columns),
    ]
    for name, task, chosen, found in rows:
        cells = [cell(found, chosen if c == "held out" else c) for c in columns]
        lines.append(f"| {name} | {task} | {chosen} | " + " | ".join(cells) + " |")
    return lines


def held_out_table(outcomes, per_dataset: dict[str, str], today: str) -> list[str]:
    head = [
        "## Held out: each dataset's figures from the candidate chosen on the other datasets",
        "",
        "Cells: pooled AUROC / AP / top-5% precision; (per-item mean AUROC).",
        "",
    ]
    rows = [(u[0], u[1], per_dataset[u[0]], found) for u, found in by_unit(outcomes).items()]

    def cell(found, name):
        return f"{_cell(found, name)} ({per_item(found, name)['auroc']:.3f})"

    return _chosen_table(head, "dataset", rows, today, cell)


def prompt_table(outcomes, per_prompt: dict[str, str], today: str) -> list[str]:
    head = ["## ASAP-SAS per prompt: the candidate chosen without that prompt", ""]
    rows = [
        (prompt, task, chosen, [o for o in outcomes
                                if o.dataset == "asap-sas" and o.item == prompt and o.task == task])
        for task in ("real", "injected")
        for prompt, chosen in per_prompt.items()
    ]  # fmt: skip
    return _chosen_table(head, "prompt", rows, today, _cell)


def rule_lines(title: str, check: dict) -> list[str]:
    lines = [f"{title}: point 5 {'MET' if check['met'] else 'NOT met'}."]
    for task, (ours, best) in check["means"].items():
        lines.append(
            f"- {task}: mean over datasets {ours:.3f} against the better peer's {best:.3f} "
            f"({ours - best:+.3f}; needs +0.020)"
        )
    for unit, gap in check["misses"]:
        lines.append(f"- below the better peer on {_unit_name(unit)} by {-gap:.3f}")
    return lines


def cost_table(outcomes, names) -> list[str]:
    units = by_unit(outcomes)
    lines = [
        "## Seconds per pass (sum over the dataset's items; severity only, PARM's fit excluded)",
        "",
        "| ranking | " + " | ".join(_unit_name(u) for u in units) + " |",
        "|---" * (len(units) + 1) + "|",
    ]
    for name in names:
        cells = [f"{seconds(found, name):.1f}" for found in units.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def report(outcomes: list[Outcome], today: str, shipped_as: str) -> str:
    names = list(outcomes[0].rankings)
    pool = [n for n in names if n not in PEER_NAMES and n != SHIPPED]
    everything, per_dataset, per_prompt = held_out_choices(outcomes, pool)
    cheaper = held_out_choices(outcomes, pool, cost_aware=True)
    held = rule_check(held_out_rows(outcomes, per_dataset), "held out")
    shipped_rows = held_out_rows(outcomes, {d: SHIPPED for d in per_dataset})
    lines = overview(outcomes, names) + [""]
    lines += held_out_table(outcomes, per_dataset, today) + [""]
    if per_prompt:
        lines += prompt_table(outcomes, per_prompt, today) + [""]
    gaps = [
        abs(pooled([o], SHIPPED)["auroc"] - pooled([o], shipped_as)["auroc"])
        for o in outcomes
        if 0 < o.positives.sum() < o.positives.size
    ]
    pooled_gap = max(
        abs(pooled(found, SHIPPED)["auroc"] - pooled(found, shipped_as)["auroc"])
        for found in by_unit(outcomes).values()
    )
    lines += [
        f"Chosen on every dataset: **{everything}** (with a cost tie-break within 0.002: "
        f"{cheaper[0]}; held out with it: "
        + "; ".join(f"{d}: {c}" for d, c in cheaper[1].items())
        + f"). run_audit's severity against '{shipped_as}': pooled AUROC apart by at most "
        f"{pooled_gap:.4f} per dataset and task; per item and task by at most {max(gaps):.4f} "
        f"(median {np.median(gaps):.4f}; rounding: float32 and Gram-row fits in the engine).",
        "",
    ]
    lines += rule_lines("Held-out figures", held) + [""]
    lines += rule_lines(f"'{SHIPPED}' (what run_audit computes now)", rule_check(
        shipped_rows, "held out")) + [""]  # fmt: skip
    lines += cost_table(outcomes, [everything, today, SHIPPED, *PEER_NAMES])
    return "\n".join(lines)
