"""The rater effects in a session's outputs: their columns in raters.csv, rater_item_bias.csv, the
per-rater feedback file, and their parts of report.json and report.md.

The feedback is one file, rater_feedback.csv, with a `rater` column, rather than one file per
rater: rater ids come from the data, and turned into file names they would need sanitising
(path separators, `..`, names Windows reserves, two ids that sanitise to the same name), while
one file keeps the set of outputs fixed and is filtered by rater in any spreadsheet. Every cell
goes through engine.outputs.write.csv_text (quoted, formulas guarded) like every CSV.
"""

from __future__ import annotations

from engine.audit.raters.bias import NO_CELL
from engine.audit.raters.every_read import every_read
from engine.audit.raters.verdicts import RULES
from engine.core.numbers import signed
from engine.outputs import declared
from engine.outputs.columns import FIGURE, csv_cell
from engine.outputs.declared import rule_text
from engine.outputs.report import markdown
from engine.outputs.report.markdown import md_text

EVIDENCE_SHOWN = 5


def bias_table(session) -> tuple[list[str], list[list]]:
    """rater_item_bias.csv: every rater x item cell with enough scores, largest |t| first."""
    return declared.BIAS.csv(session.raters.bias)


def feedback_table(session) -> tuple[list[str], list[list]]:
    """rater_feedback.csv: each rater's reads the model would score otherwise (raters.csv's
    model_differs), every read counted as the rater table counts it
    (engine.audit.raters.every_read), most severe first, with the answer, the model's score and
    the neighbours that are the evidence; raters in the rater table's order."""
    order = {row.rater: k for k, row in enumerate(session.raters.rows)}
    rows = []
    for result in session.results:
        responses = result.responses
        labels, scores = responses.labels, responses.scores
        reads = every_read(responses)
        for rater, i, code, row in zip(reads.rater, reads.answer, reads.code, reads.row):
            if not rater or result.predicted[i] == code:
                continue
            neighbours = result.evidence[i][:EVIDENCE_SHOWN]
            shown = "; ".join(
                f"{responses.ids[nb.index]} ({labels[scores[nb.index]]}, {nb.similarity:.2f})"
                for nb in neighbours
            )
            nearest = responses.texts[neighbours[0].index] if neighbours else ""
            rows.append([
                rater, responses.item if responses.item is not None else "",
                int(row), responses.ids[i], labels[code],
                labels[result.predicted[i]], csv_cell(float(result.fitted.proba[i, code]), FIGURE),
                csv_cell(float(result.severity[i]), FIGURE), responses.texts[i], shown, nearest,
            ])  # fmt: skip
    rows.sort(key=lambda r: (order.get(r[0], len(order)), -float(r[7] or 0), r[2]))
    return declared.FEEDBACK.header, rows


def effects_dict(effects) -> dict | None:
    """One rater's effects for report.json (the drift with its periods)."""
    if effects is None:
        return None
    from engine.outputs.report.item_content import _clean

    out = {k: _clean(getattr(effects, k)) for k in effects.__dataclass_fields__
           if k not in ("drift", "verdicts")}  # fmt: skip
    out["verdicts"] = [
        {"verdict": v.name, "because": v.because, "rule": RULES[v.name]} for v in effects.verdicts
    ]
    drift = effects.drift
    out["drift"] = None if drift is None else {
        **{k: _clean(getattr(drift, k)) for k in ("n", "change", "se", "t", "p", "untimed")},
        "periods": [{k: _clean(getattr(p, k)) for k in p.__dataclass_fields__}
                    for p in drift.periods],
    }  # fmt: skip
    return out


def bias_dicts(session) -> list[dict]:
    from engine.outputs.report.item_content import _clean

    return [{k: _clean(getattr(c, k)) for k in c.__dataclass_fields__} for c in session.raters.bias]


def verdicts_section(session) -> list[str]:
    """report.md lines after the rater table: each rater's verdict with the rule, the fit and
    central-tendency figures, the bias cells beyond the rule and the drift periods."""
    raters = session.raters
    judged = [r for r in raters.rows if r.effects is not None]
    if not judged:
        return []
    ordered = judged[0].effects.infit is not None
    lines = ["", "### Verdicts", ""]
    for r in judged:
        lines.append(f"- **{md_text(r.rater, 80)}**: {md_text(rule_text(r.effects))}")
    lines += ["", _expectation_note(raters), *_two_raters_note(raters, judged), ""]
    if ordered:
        header = ["rater", "infit (ZSTD)", "outfit (ZSTD)", "noise x ref.", "spread x ref.",
                  "middle share (expected)", "fair average", "observed average"]  # fmt: skip
        rows = [[r.rater, *_fit_cells(r.effects)] for r in judged]
        lines.append(markdown._table(header, rows))
        lines += _bias_lines(raters)
        lines += _drift_lines(judged)
    else:
        lines.append(
            "Unordered labels: leniency, infit and outfit, central tendency, drift and rater x "
            "item bias need score points and are left out; noise is the disagreement ratio."
        )
        rows = [[r.rater, f"{r.effects.disagreement:.2f}", f"{r.effects.noise:.2f}"]
                for r in judged]  # fmt: skip
        lines += ["", markdown._table(["rater", "disagreement", "noise x ref."], rows)]
    return lines


def _two_raters_note(raters, judged) -> list[str]:
    """Two judged raters (Mohler's two graders) are their own reference: a verdict says who
    scores higher, not which of them is off."""
    if len(judged) != 2 or raters.anchored:
        return []
    return ["", "Two raters: the typical rater is their midpoint, so each one's leniency is half "
            "their difference, and lenient beside harsh says which of them scores higher, not "
            "which is off (a third read of some answers, or the lead's scores of some, says "
            "that)."]  # fmt: skip


def _expectation_note(raters) -> str:
    if raters.rater_left_out:
        return ("E and W for each rater's scores come from models fitted without that rater's "
                "scores (cross-fitted by rater).")  # fmt: skip
    # Not only old saved sessions: an item scored by a single rater has nobody else's scores to
    # fit a model on (engine.audit.raters.expectation.rater_folds).
    return ("E and W come from models fitted without each rater's scores, except in items "
            "scored by a single rater (no other rater's scores to fit on) and in sessions saved "
            "before that expectation (run the audit again for it), where they come from the "
            "fitted model.")  # fmt: skip


def _fit_cells(e) -> list[str]:
    return [
        f"{e.infit:.2f} ({signed(e.infit_z, 1)})", f"{e.outfit:.2f} ({signed(e.outfit_z, 1)})",
        f"{e.noise:.2f}", "n/a" if e.spread is None else f"{e.spread:.2f}",
        _middle(e), f"{e.fair_average:.2f}",
        f"{e.observed_average:.2f}",
    ]  # fmt: skip


def _middle(e) -> str:
    """The middle share beside the expected one; n/a where no item's scale has a middle score
    (two-point scales: both shares are 0 by construction)."""
    if not e.middle_expected:
        return "n/a"
    return f"{e.middle_share:.1%} ({e.middle_expected:.1%})"


def _bias_lines(raters) -> list[str]:
    if not raters.bias:
        return ["", f"Rater x item bias cells: {NO_CELL}."]
    listed = [c for c in raters.bias if c.listed]
    lines = ["", f"Rater x item bias cells beyond the rule ({RULES['bias cell']}): "
                 f"{len(listed)} of {len(raters.bias)} cells with enough scores."]  # fmt: skip
    if listed:
        rows = [[c.rater, c.item, c.n, f"{c.observed:.2f}", f"{c.expected:.2f}",
                 signed(c.bias), f"{c.se:.2f}", signed(c.t, 1)] for c in listed]  # fmt: skip
        header = ["rater", "item", "n", "observed", "expected", "Obs - Exp", "SE", "t"]
        lines += ["", markdown._table(header, rows)]
    return lines


def _drift_lines(judged) -> list[str]:
    timed = [r for r in judged if r.effects.drift is not None]
    if not timed:
        return []
    rows = []
    for r in timed:
        d = r.effects.drift
        periods = ", ".join(signed(p.leniency) for p in d.periods) or "too few for periods"
        rows.append([r.rater, d.n, f"{signed(d.change)} ({d.se:.2f})", signed(d.t, 1), f"{d.p:.3f}",
                     periods])  # fmt: skip
    header = ["rater", "timed scores", "change (SE)", "t", "p", "leniency by period"]
    return ["", "Drift: each rater's leniency over their scoring time.", "",
            markdown._table(header, rows)]  # fmt: skip
