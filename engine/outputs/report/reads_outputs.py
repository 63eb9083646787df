"""A session whose answers are read twice or more in its outputs (engine.audit.reads.reads_audit):
consensus.csv, agreement.csv, report.json's `agreement` section and report.md's agreement
section. Rater names come from the data: CSV cells are guarded by engine.outputs.write, and
report.md's table cells are escaped by engine.outputs.report.markdown._table.
"""

from __future__ import annotations

import json

import numpy as np

from engine.audit.reads.agreement import ALL, THRESHOLDS, TOO_FEW, figure_names
from engine.audit.reads.alpha import alpha_levels
from engine.audit.reads.consensus import SURE
from engine.core.text import safe_text
from engine.outputs import declared
from engine.outputs.columns import missing
from engine.outputs.report import markdown


def _item_name(session, k: int) -> str:
    item = session.results[k].responses.item
    return "" if item is None else item


def consensus_table(session) -> tuple[list[str], list[list]]:
    """consensus.csv: one row per answer, items in order, each in input-row order; a
    score_<rater> column per rater of the session."""
    reads = session.reads
    raters = () if reads is None else reads.raters
    header = [*declared.CONSENSUS.header, *(f"score_{name}" for name in raters)]
    if reads is None:
        return header, []
    rows = []
    for k, (result, found) in enumerate(zip(session.results, reads.consensus.items)):
        responses, item = result.responses, reads.items[k]
        labels = responses.labels
        given = np.full((len(responses), len(raters)), -1)
        given[item.answer, item.rater] = item.score
        for i in np.argsort(responses.rows, kind="stable"):
            many = found.reads[i] >= 2
            row = {
                "id": responses.ids[i],
                "item": _item_name(session, k),
                "reads": int(found.reads[i]),
                "consensus": labels[found.consensus[i]] if many else None,
                "consensus_p": float(found.consensus_p[i]) if many else None,
                "third_read_rank": int(found.third_read_rank[i]) or None,
            }
            scores = [labels[code] if code >= 0 else "" for code in given[i]]
            rows.append([*declared.CONSENSUS.csv_row(row), *scores])
    return header, rows


def consensus_by_row(session) -> dict[int, tuple[str, str]]:
    """The consensus (its label) and its probability by the data row of each answer's audited
    read, for answers read twice or more (scores_reviewed.csv's columns)."""
    reads = session.reads
    if reads is None:
        return {}
    cells = {}
    for result, found in zip(session.results, reads.consensus.items):
        responses = result.responses
        for i in np.flatnonzero(np.asarray(found.reads) >= 2):
            label = responses.labels[found.consensus[i]]
            cells[int(responses.rows[i])] = (label, f"{float(found.consensus_p[i]):.6f}")
    return cells


def typed_reads_by_row(added) -> dict[int, str]:
    """decisions.csv's `added_reads` cell by data row: the reads typed in the review of that
    answer (engine.results.added_reads.AddedRead) as a JSON list, which review import reads."""
    found: dict[int, list[dict]] = {}
    for read in added:
        found.setdefault(int(read.row), []).append({
            "rater": safe_text(read.rater), "score": read.score, "added_at": read.added_at,
            "reviewer": safe_text(read.reviewer), "kind": read.kind,
        })  # fmt: skip
    return {row: json.dumps(reads, ensure_ascii=False) for row, reads in found.items()}


def _figure_cells(row: dict, name: str, interval) -> None:
    row[name], row[f"{name}_low"], row[f"{name}_high"] = (
        interval.estimate,
        interval.low,
        interval.high,
    )


def agreement_rows(session) -> list[dict]:
    """agreement.csv's rows as dicts (declared.AGREEMENT's names): per item its pairs, then an
    'all' row with alpha and PRMSE; then the session's (item 'all'), when there are several."""
    reads = session.reads
    found = reads.agreement
    groups = [(item.name, fit) for item, fit in zip(reads.items, reads.prmse)]
    if len(reads.items) > 1:
        groups.append((ALL, reads.session_prmse))
    rows = []
    for position, (item, fit) in enumerate(groups):
        for pair in (p for p in found.pairs if p.item == item):
            row = {"item": item, "rater_a": reads.raters[pair.rater_a],
                   "rater_b": reads.raters[pair.rater_b], "n": pair.n,
                   "too_few": pair.too_few, "below": " ".join(pair.below)}  # fmt: skip
            for name, interval in pair.figures.items():
                _figure_cells(row, name, interval)
            rows.append(row)
        alpha = found.alpha[position]
        row = {"item": item, "rater_a": ALL, "rater_b": "", "n": alpha.answers}
        for level, interval in alpha.levels.items():
            _figure_cells(row, f"alpha_{level}", interval)
        if fit.prmse is not None:
            _figure_cells(row, "prmse", fit.prmse)
        row["prmse_note"] = fit.reason and f"not estimable: {fit.reason}"
        rows.append(row)
    return rows


def agreement_table(session) -> tuple[list[str], list[list]]:
    """agreement.csv (declared.AGREEMENT); no rows without answers read twice."""
    rows = [] if session.reads is None else agreement_rows(session)
    return declared.AGREEMENT.csv(rows)


def _number(value) -> float | None:
    """A float for report.json; None where there is none (NaN: JSON has no NaN)."""
    return None if missing(value) else float(value)


def _interval(interval) -> dict | None:
    if interval is None:
        return None
    return {key: _number(value) for key, value in interval.as_dict().items()}


def agreement_dict(session) -> dict | None:
    """report.json's `agreement`: the raters, the counts, every pair's figures with intervals
    and marks, alpha per item and over the session, PRMSE, the consensus's counts and each
    rater's reliability (the session's pairs and alpha, item 'all', when there are several
    items). None where no answer is read twice."""
    reads = session.reads
    if reads is None:
        return None
    consensus = reads.consensus
    reliability = consensus.raters
    # One item: the session's figures are the item's, said once.
    several = len(reads.items) > 1
    pairs = [p for p in reads.agreement.pairs if several or p.item != ALL]
    alphas = [a for a in reads.agreement.alpha if several or a.item != ALL]
    return {
        "raters": list(reads.raters),
        "reads": reads.reads,
        "answers_read_twice": reads.answers_read_twice,
        "too_few": TOO_FEW,
        "thresholds": dict(THRESHOLDS),
        "pairs": [
            {
                "item": p.item,
                "rater_a": reads.raters[p.rater_a],
                "rater_b": reads.raters[p.rater_b],
                "n": p.n,
                "too_few": p.too_few,
                "below": list(p.below),
                "figures": {name: _interval(iv) for name, iv in p.figures.items()},
            }
            for p in pairs
        ],  # fmt: skip
        "alpha": [
            {
                "item": a.item,
                "answers": a.answers,
                "values": a.values,
                "levels": {level: _interval(iv) for level, iv in a.levels.items()},
            }
            for a in alphas
        ],  # fmt: skip
        "prmse": [
            {
                "item": item.name,
                "prmse": _interval(fit.prmse),
                "reason": fit.reason or None,
                "answers": fit.answers,
                "answers_read_twice": fit.multiple,
            }
            for item, fit in zip(reads.items, reads.prmse)
        ],  # fmt: skip
        "session_prmse": _interval(reads.session_prmse.prmse),
        "session_prmse_reason": reads.session_prmse.reason or None,
        "consensus": {
            "answers": reads.answers_read_twice,
            "sure": reads.answers_read_twice - reads.third_reads,
            "third_reads": reads.third_reads,
            "sure_at": SURE,
            "text_weights": list(consensus.weights),
            "iterations": consensus.iterations,
            "converged": consensus.converged,
        },
        "reliability": [
            {
                "rater": name,
                "accuracy": _number(reliability.accuracy[r]),
                "low": _number(reliability.low[r]),
                "high": _number(reliability.high[r]),
                "reads": int(reliability.reads[r]),
            }
            for r, name in enumerate(reads.raters)
        ],  # fmt: skip
    }


def pair_cells(pair: dict, names: tuple[str, ...], intervals: bool = True) -> list[str]:
    """A pair's figures for people: each with its interval (unless told not to), '▼' after
    one under its threshold."""
    cells = []
    for name in names:
        figure = pair["figures"].get(name)
        if figure is None or figure["estimate"] is None:
            cells.append("n/a")
            continue
        text = f"{figure['estimate']:.3f}"
        if intervals and figure["low"] is not None:
            text += f" ({figure['low']:.2f} to {figure['high']:.2f})"
        cells.append(text + (" ▼" if name in pair["below"] else ""))
    return cells


def agreement_markdown(data: dict | None) -> list[str]:
    """report.md's agreement section from report.json's `agreement` (nothing when None)."""
    if data is None:
        return []
    ordered = any(p["figures"].get("qwk") for p in data["pairs"]) or not data["pairs"]
    names = figure_names(ordered)
    consensus = data["consensus"]
    lines = ["", "## Agreement between raters", "",
             f"{data['reads']:,} reads; {data['answers_read_twice']:,} answers read twice or "
             "more. Figures with 95% intervals; ▼ marks a figure under RSMTool's threshold "
             "(exact < 0.50, adjacent < 0.95, QWK < 0.70); pairs with fewer than "
             f"{data['too_few']} shared answers are too few to judge.", ""]  # fmt: skip
    rows = []
    for p in data["pairs"]:
        note = "too few" if p["too_few"] else ""
        rows.append([p["item"] or "the file", p["rater_a"], p["rater_b"], p["n"],
                     *pair_cells(p, names), note])  # fmt: skip
    header = ["item", "rater", "rater", "n", *names, "note"]
    lines.append(markdown._table(header, rows))
    lines += ["", "Krippendorff's alpha over every read (answers read once left out; item all: "
              "every answer of the session as one set of units) and PRMSE of the model's "
              "cross-fitted scores (true-score evaluation):", ""]  # fmt: skip
    lines.append(markdown._table(*alpha_table(data, ordered)))
    lines += ["", f"PRMSE of the model's cross-fitted expected scores over the session: "
              f"{prmse_text(data)}."]  # fmt: skip
    lines += ["", f"Consensus: {consensus['answers']:,} answers read twice or more; "
              f"{consensus['sure']:,} sure (p >= {consensus['sure_at']:.2f}), "
              f"{consensus['third_reads']:,} need a third read (consensus.csv, third_read_rank)."]  # fmt: skip
    reliability = [[r["rater"], r["reads"], interval_text(r, "accuracy")]
                   for r in data["reliability"] if r["reads"]]  # fmt: skip
    lines += ["", markdown._table(["rater", "reads", "reliability (95% interval)"], reliability)]
    return lines


def alpha_table(data: dict, ordered: bool) -> tuple[list[str], list[list]]:
    """(header, rows): each item's alpha at every level (then the session's, item all) and, on
    ordered scales, its PRMSE or "not estimable (why)"."""
    levels = alpha_levels(ordered)
    fits = {p["item"]: p for p in data["prmse"]}
    rows = []
    for a in data["alpha"]:
        row = [a["item"] or "the file", a["answers"],
               *(interval_text(a["levels"].get(level)) for level in levels)]  # fmt: skip
        if ordered:
            fit = fits.get(a["item"])
            if a["item"] == ALL or fit is None:
                row.append(prmse_text(data))
            else:
                row.append(prmse_text({"session_prmse": fit["prmse"],
                                       "session_prmse_reason": fit["reason"]}))  # fmt: skip
        rows.append(row)
    return ["item", "answers", *levels, *(["PRMSE"] if ordered else [])], rows


def prmse_text(data: dict) -> str:
    """The session's PRMSE with its interval, or "not estimable (why)"; below 0 with what that
    means (PRMSE has no lower bound: 1 - MSE_T / V_T)."""
    if data["session_prmse"] is None:
        return f"not estimable ({data.get('session_prmse_reason') or 'no figure'})"
    text = interval_text(data["session_prmse"])
    if data["session_prmse"]["estimate"] < 0:
        text += ": below 0, the model's scores are further from the true scores than the mean is"
    return text


def interval_text(interval: dict | None, key: str = "estimate") -> str:
    if interval is None or interval[key] is None:
        return "n/a"
    if interval["low"] is None:
        return f"{interval[key]:.3f}"
    return f"{interval[key]:.3f} ({interval['low']:.3f} to {interval['high']:.3f})"
