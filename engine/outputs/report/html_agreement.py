"""report.html's agreement section (answers read twice or more), from report.json's
`agreement`: the rater-pair matrix as a heatmap (QWK on ordered scales, else kappa), every pair
with its intervals and marks, Krippendorff's alpha, PRMSE, the consensus's counts and each
rater's reliability. Rendered by `templates/agreement.html.j2`, included by the page's template;
every value is text or a number the template escapes (cell colours are made here from numbers).
"""

from __future__ import annotations

from engine.audit.reads.agreement import ALL, figure_names
from engine.outputs.report.reads_outputs import alpha_table, interval_text, pair_cells, prmse_text


def _colour(value: float | None) -> str:
    """A cell's background: from red (0 or below) through yellow to green (1)."""
    if value is None:
        return ""
    hue = 120 * min(max(value, 0.0), 1.0)
    return f"background: hsl({hue:.0f}, 60%, 85%)"


def _matrix(data: dict, figure: str) -> dict:
    """Rater x rater: the session's figure for each pair (the item's for one item)."""
    session = [p for p in data["pairs"] if p["item"] == ALL] or data["pairs"]
    found = {}
    for p in session:
        found[(p["rater_a"], p["rater_b"])] = found[(p["rater_b"], p["rater_a"])] = p
    raters = [r for r in data["raters"] if any(r in pair for pair in found)]
    rows = []
    for a in raters:
        cells = []
        for b in raters:
            p = found.get((a, b))
            value = None if p is None else (p["figures"].get(figure) or {}).get("estimate")
            text = "" if a == b else "–" if value is None else f"{value:.2f}"
            title = "" if p is None else f"n = {p['n']}" + (", too few" if p["too_few"] else "")
            cells.append({"text": text, "style": _colour(value), "title": title,
                          "below": p is not None and figure in p["below"]})  # fmt: skip
        rows.append({"rater": a, "cells": cells})
    return {"raters": raters, "rows": rows, "figure": figure}


def agreement_view(data: dict | None) -> dict | None:
    """The section's content, None when no answer is read twice."""
    if data is None:
        return None
    ordered = any(p["figures"].get("qwk") for p in data["pairs"]) or not data["pairs"]
    names = figure_names(ordered)
    consensus = data["consensus"]
    return {
        "reads": f"{data['reads']:,}",
        "answers": f"{data['answers_read_twice']:,}",
        "too_few": data["too_few"],
        "matrix": _matrix(data, "qwk" if ordered else "kappa"),
        "header": ["item", "rater", "rater", "n", *names, "note"],
        "pairs": [
            [
                p["item"] or "the file",
                p["rater_a"],
                p["rater_b"],
                p["n"],
                *pair_cells(p, names),
                "too few" if p["too_few"] else "",
            ]
            for p in data["pairs"]
        ],  # fmt: skip
        "alpha_header": alpha_table(data, ordered)[0],
        "alpha": alpha_table(data, ordered)[1],
        "prmse": prmse_text(data),
        "consensus": consensus,
        "reliability": [
            [r["rater"], r["reads"], interval_text(r, "accuracy")]
            for r in data["reliability"]
            if r["reads"]
        ],  # fmt: skip
    }
