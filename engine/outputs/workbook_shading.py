"""What results.xlsx shades, sheet by sheet: the rows and figures the reports single out, by the
reports' own rules and thresholds (imported from where they are declared, never copied), as
conditional formats, so the shading follows the rows through a sort or a filter:

- predictions: the flagged rows (likely wrong: the top of their item's queue);
- items: QWK under the field's minimum (engine.outputs.report.item_content.FIELD_THRESHOLDS, as report.md
  and report.html mark it);
- agreement: exact, adjacent and QWK under RSMTool's thresholds (engine.audit.reads.agreement
  THRESHOLDS), not for a pair with too few shared answers (as the `below` column says);
- raters: the judged raters with a verdict (engine.audit.raters.verdicts: not "fine");
- rater_item_bias: the cells beyond the rule (`listed`);
- consensus: the answers to read a third time (a third_read_rank);
- tuning: the configuration chosen (green, not a warning).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.audit.raters.verdicts import FINE
from engine.audit.reads.agreement import THRESHOLDS
from engine.audit.reads.agreement import TOO_FEW as SHARED_ANSWERS
from engine.input.sheet_table import column_letter
from engine.outputs.declared import TOO_FEW
from engine.outputs.names import AGREEMENT_FILE, BIAS_FILE, CONSENSUS_FILE, ITEMS_FILE, RATERS_FILE
from engine.outputs.report.item_content import FIELD_THRESHOLDS

FLAGGED, BELOW, CHOSEN = "FCE4D6", "F4B183", "E2EFDA"  # light orange, orange, light green


@dataclass(frozen=True)
class Shade:
    """One conditional format: the cells it covers, the formula (of the range's first row)
    that shades a cell, the colour, and what it means in words (the about sheet says it)."""

    range: str
    formula: str
    colour: str
    meaning: str

    def rule(self):
        from openpyxl.formatting.rule import FormulaRule
        from openpyxl.styles import PatternFill

        fill = PatternFill(start_color=self.colour, end_color=self.colour, fill_type="solid")
        return FormulaRule(formula=[self.formula], fill=fill)


def shades(file: str, header: list[str], rows: int) -> list[Shade]:
    """The shading of the sheet of `file` with these columns and rows ([] when it has none)."""
    if rows == 0:
        return []
    at = {name: column_letter(j) for j, name in enumerate(header)}
    whole = f"A2:{column_letter(len(header) - 1)}{rows + 1}"

    def cells(name: str) -> str:
        return f"{at[name]}2:{at[name]}{rows + 1}"

    found: list[Shade] = []
    if file == "predictions.csv" and "flagged" in at:
        found.append(Shade(whole, f"${at['flagged']}2=TRUE", FLAGGED,
                           "flagged rows: likely wrong, the top of their item's queue"))  # fmt: skip
    elif file == ITEMS_FILE:
        limit = FIELD_THRESHOLDS["qwk"]
        for figure in (n for n in ("qwk", "cross_fit_qwk") if n in at):
            found.append(Shade(cells(figure), f"AND(ISNUMBER({at[figure]}2),{at[figure]}2<{limit})",
                               BELOW, f"{figure} under the field's minimum of {limit:.2f}"))  # fmt: skip
    elif file == AGREEMENT_FILE:
        few = f"${at['too_few']}2<>TRUE" if "too_few" in at else "TRUE"
        for name, limit in ((n, v) for n, v in THRESHOLDS.items() if n in at):
            test = f"AND(ISNUMBER({at[name]}2),{at[name]}2<{limit},{few})"
            found.append(Shade(cells(name), test, BELOW,
                               f"{name} under RSMTool's {limit:.2f} (pairs with "
                               f"{SHARED_ANSWERS} or more shared answers)"))  # fmt: skip
    elif file == RATERS_FILE and {"verdict", "note"} <= set(at):
        verdict, note = f"${at['verdict']}2", f"${at['note']}2"
        test = f'AND({verdict}<>"{FINE}",{verdict}<>"",{note}<>"{TOO_FEW}")'
        found.append(Shade(whole, test, FLAGGED, "raters with a verdict (not fine)"))
    elif file == BIAS_FILE and "listed" in at:
        found.append(Shade(whole, f"${at['listed']}2=TRUE", FLAGGED, "cells beyond the rule"))
    elif file == CONSENSUS_FILE and "third_read_rank" in at:
        found.append(Shade(whole, f"ISNUMBER(${at['third_read_rank']}2)", FLAGGED,
                           "answers to read a third time"))  # fmt: skip
    elif file == "tuning.csv" and "selected" in at:
        found.append(Shade(whole, f"${at['selected']}2=TRUE", CHOSEN, "the configuration chosen"))
    return found
