"""results.xlsx: every table of an output set in one workbook, a sheet each, from the same rows as
its CSV (engine.outputs.session), for a lead who filters and colours in a spreadsheet.

The first sheet, `about`, says what the run was and what each sheet is: one row per what, how
many rows, what its shading means, and every column's meaning, all from the declarations
(engine.outputs.declared). Each table sheet has its header frozen, a filter on, columns as
wide as their cells (capped), numbers as numbers (figures, shares and points in the formats
the reports use; a score label that is a number as that number: 2, not "2"), TRUE/FALSE for
flags, and the rows or figures the reports single out shaded by conditional formats (so the
shading follows a sort or a filter): engine.outputs.workbook_shading.

Answers, ids, labels, rater names and column names are untrusted: every text cell goes through
engine.core.text.safe_text (control characters replaced, which also keeps the file valid XML),
gets the CSV's guard against formulas (engine.outputs.write.guard_cell: a leading ' before
= + - @ tab), and is written as a string cell (openpyxl would take "=..." for a formula and
"#N/A" for an error), cut to the 32,767 characters a cell holds.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

from engine.core.text import safe_text
from engine.input.sheet_table import column_letter, number_text
from engine.outputs import declared, workbook_shading
from engine.outputs.columns import COUNT, FIGURE, FLAG, LABEL, POINTS, SHARE, TEXT, OutputTable
from engine.outputs.names import (
    AGREEMENT_FILE,
    BACKREADS_FILE,
    BIAS_FILE,
    CONSENSUS_FILE,
    DECISIONS_FILE,
    FEEDBACK_FILE,
    ITEMS_FILE,
    RATERS_FILE,
    REVIEWED_FILE,
    STATUS_FILE,
    THIRD_READS_FILE,
)
from engine.outputs.write import guard_cell

# The tables a workbook holds, in the order of its sheets (each sheet named as its file, less
# .csv): what a lead reads first, first.
SHEETS = ("predictions.csv", DECISIONS_FILE, REVIEWED_FILE, ITEMS_FILE, RATERS_FILE, BIAS_FILE,
          FEEDBACK_FILE, CONSENSUS_FILE, AGREEMENT_FILE, BACKREADS_FILE, THIRD_READS_FILE,
          STATUS_FILE, "tuning.csv")  # fmt: skip
ABOUT, WARNINGS = "about", "warnings"
# Excel's limit on a cell's text; and the widths of a column, in characters.
MAX_CELL = 32_767
MIN_WIDTH, MAX_WIDTH = 6, 60
# How many rows a column's width is measured on.
WIDTH_ROWS = 500
FORMATS = {FIGURE: "0.000", SHARE: "0.0%", POINTS: "+0.00;-0.00;0.00", COUNT: "0"}
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")
_PLAIN_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def sheet_name(file: str) -> str:
    return Path(file).stem


def inert(value) -> str:
    """A text cell as written: control characters replaced, guarded against formulas, cut to
    what a cell holds."""
    text = _NOT_XML.sub("\ufffd", safe_text("" if value is None else value))
    text = guard_cell(text)
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def cell_value(value, kind: str):
    """The value a cell holds for a CSV cell of this kind: a number, a boolean, text (inert) or
    None (an empty cell)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if kind == FLAG:
        if isinstance(value, bool) or str(value) in ("True", "False"):
            return value if isinstance(value, bool) else value == "True"
    elif kind in FORMATS:
        number = _number(value)
        if number is not None:
            return int(number) if kind == COUNT and number.is_integer() else number
    elif kind == LABEL and isinstance(value, str) and _PLAIN_NUMBER.fullmatch(value):
        number = float(value)
        if number_text(number) == value:  # "2", "2.5"; never "02" or "2.0", spelt otherwise
            return int(number) if number.is_integer() else number
    return inert(value)


def _number(value) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def column_kinds(table: OutputTable | None, header, labels=frozenset()) -> list[str]:
    """Each column's kind: its declaration's (a family's, `p_<label>`, for the columns named
    from the data); `labels`: input columns that hold score labels (scores_reviewed)."""
    kinds = []
    for name in header:
        column = None if table is None else declared_column(table, name)
        kinds.append(LABEL if name in labels else TEXT if column is None else column.kind)
    return kinds


def declared_column(table: OutputTable, name: str):
    """The column `name` of the table, or the family it belongs to (None: neither)."""
    for column in table.columns:
        if column.name == name:
            return column
    for family in table.families:
        pattern = ".+".join(re.escape(part) for part in re.split(r"<[^>]+>", family.name))
        if re.fullmatch(pattern, name):
            return family
    return None


def workbook_bytes(session, tables: dict) -> bytes:
    """results.xlsx of the session: the about sheet, then a sheet for each of `tables`
    ({file: a function giving its (header, rows)}) in SHEETS order, then the warnings."""
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    declared_tables = {table.file: table for table in declared.TABLES}
    about = book.create_sheet(ABOUT)
    written = []
    for file in [name for name in SHEETS if name in tables]:
        header, rows = tables[file]()
        table = declared_tables.get(file)
        labels = _score_inputs(session.config) if file == REVIEWED_FILE else frozenset()
        kinds = column_kinds(table, header, labels)
        shading = workbook_shading.shades(file, header, len(rows))
        write_sheet(book.create_sheet(sheet_name(file)), header, rows, kinds, shading)
        written.append((file, table, header, len(rows), shading))
    if session.warnings:
        rows = [[w.kind, w.item or "", w.message] for w in session.warnings]
        write_sheet(book.create_sheet(WARNINGS), ["kind", "item", "message"], rows, [TEXT] * 3)
    _write_about(about, session, written)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _score_inputs(config) -> frozenset[str]:
    """The input columns a run read scores from (scores_reviewed.csv keeps them as read)."""
    named = [config.score_column, config.second_score_column, config.expert_column]
    return frozenset(c for c in [*named, *(config.score_columns or ())] if c)


def write_sheet(sheet, header, rows, kinds, shading=()) -> None:
    """One table: header frozen and bold, a filter over it, widths that fit, typed cells, the
    shading's conditional formats."""
    from openpyxl.styles import Font

    width = len(header)
    for j, chars in enumerate(_widths(header, rows, kinds)):
        sheet.column_dimensions[column_letter(j)].width = chars
    sheet.freeze_panes = "A2"
    _printed_across(sheet)
    bold = Font(bold=True)
    sheet.append([_string_cell(sheet, inert(name), font=bold) for name in header])
    templates = [_template(sheet, kind) for kind in kinds]
    for row in rows:
        sheet.append([_filled(templates[j], row[j], kinds[j]) for j in range(width)])
    last = column_letter(max(width - 1, 0))
    sheet.auto_filter.ref = f"A1:{last}{len(rows) + 1}"
    for shade in shading:
        sheet.conditional_formatting.add(shade.range, shade.rule())


def _printed_across(sheet) -> None:
    """Printed (or saved as PDF) landscape, every column on the page's width, the header on
    every page."""
    sheet.page_setup.orientation = "landscape"
    sheet.sheet_properties.pageSetUpPr.fitToPage = True
    sheet.page_setup.fitToWidth, sheet.page_setup.fitToHeight = 1, 0
    sheet.print_title_rows = "1:1"


def _template(sheet, kind: str):
    """The cell a column's values are written through, styled once (a number format)."""
    from openpyxl.cell import WriteOnlyCell

    cell = WriteOnlyCell(sheet)
    if kind in FORMATS and kind != COUNT:
        cell.number_format = FORMATS[kind]
    return cell


def _filled(template, value, kind: str):
    """The column's cell holding `value` (None for an empty cell), text typed as a string
    whatever it looks like (openpyxl's own typing would make "=..." a formula)."""
    value = cell_value(value, kind)
    if value is None:
        return None
    # Typed here, not by openpyxl's guess (which would also cost a third of the write).
    kind = "s" if isinstance(value, str) else "b" if isinstance(value, bool) else "n"
    template._value, template.data_type = value, kind
    return template


def _string_cell(sheet, text: str, font=None):
    """A cell typed as a string holding `text` (inert already)."""
    from openpyxl.cell import WriteOnlyCell

    cell = WriteOnlyCell(sheet)
    cell._value, cell.data_type = text, "s"
    if font is not None:
        cell.font = font
    return cell


def _row(sheet, values, font=None) -> list:
    """A row of the about sheet: text as inert string cells, numbers as they are."""
    return [
        v if isinstance(v, int) else _string_cell(sheet, inert(v), font) if v else None
        for v in values
    ]


def _widths(header, rows, kinds) -> list[int]:
    """Each column as wide as its widest cell among the header and the first WIDTH_ROWS rows,
    between MIN_WIDTH and MAX_WIDTH characters (a line of a long answer, not all of it)."""
    widths = []
    for j, name in enumerate(header):
        longest = len(str(name))
        for row in rows[:WIDTH_ROWS]:
            value = row[j]
            shown = 6 if kinds[j] in (FIGURE, SHARE, POINTS) else len(str(value).split("\n")[0])
            longest = max(longest, shown)
        widths.append(min(MAX_WIDTH, max(MIN_WIDTH, longest + 2)))
    return widths


def _write_about(sheet, session, written) -> None:
    """The first sheet: the run, each sheet (one row per what, rows, shading) and each column's
    meaning."""
    from openpyxl.styles import Font

    bold = Font(bold=True)
    for j, chars in enumerate((18, 22, 80, 60)):
        sheet.column_dimensions[column_letter(j)].width = chars
    _printed_across(sheet)
    sheet.print_title_rows = None
    source = session.items.source or "input"
    config = session.config
    facts = [
        ("File", source + (f" (sheet '{config.sheet}')" if config.sheet else "")),
        ("Run", session.run_id),
        ("Responses", session.n_responses),
        ("Flagged", int(session.flagged.sum())),
    ]
    sheet.append(_row(sheet, [f"parm results: {Path(source).name}"], bold))
    for fact in facts:
        sheet.append(_row(sheet, fact))
    sheet.append([])
    sheet.append(_row(sheet, ("Sheet", "Rows", "One row per", "Shaded"), bold))
    for file, table, _, count, shading in written:
        what = table.row if table is not None else ""
        shaded = "; ".join(shade.meaning for shade in shading)
        sheet.append(_row(sheet, (sheet_name(file), count, what, shaded)))
    if session.warnings:
        sheet.append(_row(sheet, (WARNINGS, len(session.warnings), "warning of the run", "")))
    sheet.append([])
    sheet.append(_row(sheet, ("Sheet", "Column", "Meaning"), bold))
    for file, table, header, _, _ in written:
        for name in header:
            column = None if table is None else declared_column(table, name)
            meaning = column.meaning if column is not None else "a column of the input file"
            sheet.append(_row(sheet, (sheet_name(file), name, meaning)))
