"""A worksheet's cells as parm's table (engine.input.workbook reads the workbook): the header row
found below any title rows, merged header cells named, trailing and empty rows and columns left
out, every cell as the text the sheet shows.

The header is the first of the HEADER_SCAN rows from the sheet's first filled one that has at least two cells and
names at least three quarters of the columns the rows below it fill (a title, "Class 5B", or a
block of "Teacher: Smith" lines above it does not; names that are numbers, "1", "2", are names). A header cell merged across
columns names its first column; when the row under it is text only and sits under such merged
cells ("Score" over "R1", "R2"), it is a second header row and the names join ("Score R1").
Merged cells below the header (an item written once over its block of answers) fill every cell
they cover, as the sheet shows them.

Cells: text as written (an id "00123" typed as text stays "00123"), numbers as the shortest
spelling of their value to 15 significant digits (2.0 is "2", 0.1+0.2 is "0.3"; Excel keeps 15),
dates and times in ISO 8601 (the time column reads them), TRUE and FALSE, formulas as the value
the file saved with them (never evaluated). A cell showing an error (#N/A) holds no value.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np

from engine.core.text import is_safe, read_safely

# How many of the sheet's first rows may hold titles above the header.
HEADER_SCAN = 50
# The share of the filled columns below it that a header row must name.
HEADER_COVER = 0.75
# How many rows below a candidate header count for the columns they fill.
BELOW_SCAN = 200


@dataclass(frozen=True)
class SheetTable:
    """A sheet as a table: column names, each column's cells (text), the 1-based sheet row of
    every data row and of the header (its last row), each column's letter, how many characters
    were replaced (and restored: engine.core.text.repair_misread) and which merged cells were
    spread, for the reading's notes."""

    names: list[str]
    columns: list[list[str]]
    rows: np.ndarray
    header_row: int
    letters: list[str]
    replaced: int = 0
    empty_rows: int = 0
    restored: int = 0
    renamed: tuple[str, ...] = ()


def column_letter(index: int) -> str:
    """'A' for 0, 'Z' for 25, 'AA' for 26: the column's name in a spreadsheet."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def cell_text(value) -> str:
    """A cell's value as the text parm reads (module docstring)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number_text(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        seconds = round(value.total_seconds())
        sign, seconds = ("-" if seconds < 0 else ""), abs(seconds)
        return f"{sign}{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return str(value)


def number_text(value: float) -> str:
    """2.0 -> '2', 0.30000000000000004 -> '0.3', 1e20 -> '1e+20': a spreadsheet keeps 15
    significant digits, so the 16th and 17th of a float are noise of its arithmetic."""
    if value != value or value in (float("inf"), float("-inf")):
        return ""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.15g}"


def _column_text(column: list) -> list[str]:
    """A column's cells as text; in a column of dates and times, a date alone is the midnight
    it is (calamine gives a date for a date-time cell that falls on midnight). A column of
    whole numbers (scores, counts) is spelt at once."""
    kinds = set(map(type, column))
    if kinds == {str}:
        return list(column)
    if kinds == {float}:
        values = np.array(column)
        if np.all((values == np.floor(values)) & (np.abs(values) < 1e15)):
            return values.astype(np.int64).astype(str).tolist()
    if dt.datetime in kinds and dt.date in kinds:
        column = [dt.datetime.combine(v, dt.time()) if type(v) is dt.date else v for v in column]
        kinds.discard(dt.date)
    if kinds == {dt.datetime}:
        return [v.isoformat(sep=" ") for v in column]
    return [v if type(v) is str else cell_text(v) for v in column]


def _filled(value) -> bool:
    return not (value is None or (isinstance(value, str) and not value.strip()))


def _cut(grid: list[list]) -> list[list]:
    """The grid without its empty rows at the end and its empty columns on the right."""
    last = len(grid)
    while last and not any(_filled(v) for v in grid[last - 1]):
        last -= 1
    grid = grid[:last]
    width = 0
    for row in grid:  # from the right: a row's last cell is usually filled
        j = len(row)
        while j > width and not _filled(row[j - 1]):
            j -= 1
        width = max(width, j)
    if all(len(row) == width for row in grid):  # calamine's rows are as wide as the sheet
        return grid
    return [list(row[:width]) + [""] * (width - len(row)) for row in grid]


def _spans(merges, row: int) -> dict[int, int]:
    """{first column: last column} of the cells merged across columns that start on `row`."""
    return {c0: c1 for (r0, c0), (_, c1) in merges if r0 == row and c1 > c0}


def _columns_of(row: list) -> set[int]:
    return {j for j, v in enumerate(row) if _filled(v)}


def find_header(grid: list[list], merges) -> int | None:
    """The 0-based index of the header row (module docstring), or None when there is none."""
    start = next((i for i, row in enumerate(grid) if any(map(_filled, row))), 0)
    for i in range(start, min(start + HEADER_SCAN, len(grid))):
        if sum(_filled(v) for v in grid[i]) < 2:
            continue
        below = set().union(*(_columns_of(r) for r in grid[i + 1 : i + 1 + BELOW_SCAN]))
        if not below:
            continue
        named = _columns_of(grid[i])
        for first, last in _spans(merges, i).items():
            named |= set(range(first, last + 1))
        if len(named & below) >= HEADER_COVER * len(below):
            return i
    return None


def _second_header(grid: list[list], merges, header: int) -> bool:
    """Whether the row under the header is a second header row: text only, every cell under a
    header cell merged across columns."""
    if header + 1 >= len(grid):
        return False
    row = grid[header + 1]
    cells = _columns_of(row)
    under = {j for first, last in _spans(merges, header).items() for j in range(first, last + 1)}
    return bool(cells) and cells <= under and all(isinstance(row[j], str) for j in cells)


def _names(grid, merges, header: int, two_rows: bool) -> tuple[list[str], dict[int, int]]:
    """Every column's name, and the columns that only continue a merged header cell with their
    place in it (2 for its second column; named after it, left out when they hold nothing)."""
    width = len(grid[header])
    top = [cell_text(v).strip() for v in grid[header]]
    sub = [cell_text(v).strip() for v in grid[header + 1]] if two_rows else [""] * width
    continued: dict[int, int] = {}
    for first, last in _spans(merges, header).items():
        for j in range(first + 1, min(last, width - 1) + 1):
            top[j] = top[first]
            if not sub[j]:
                continued[j] = j - first + 1
    names = [f"{t} {s}".strip() if t and s and t != s else t or s for t, s in zip(top, sub)]
    return names, continued


def _spread(grid: list[list], merges, first_row: int) -> None:
    """Merged cells below the header: their value in every cell they cover."""
    for (r0, c0), (r1, c1) in merges:
        if r0 < first_row or r0 >= len(grid):
            continue
        value = grid[r0][c0] if c0 < len(grid[r0]) else None
        for r in range(r0, min(r1, len(grid) - 1) + 1):
            for c in range(c0, min(c1, len(grid[r]) - 1) + 1):
                grid[r][c] = value


def sheet_table(grid: list[list], merges=None) -> SheetTable | None:
    """The sheet's table, or None when no header row is found (engine.input.workbook says
    so, naming the sheet). `grid`: every row from the sheet's first, cells as read (str,
    numbers, dates, booleans); `merges`: ((row, column), (last row, last column)), 0-based."""
    merges = list(merges or ())
    grid = _cut(grid)
    header = find_header(grid, merges)
    if header is None:
        return None
    two_rows = _second_header(grid, merges, header)
    names, continued = _names(grid, merges, header, two_rows)
    first = header + 1 + two_rows
    _spread(grid, merges, first)
    body = grid[first:]
    columns = [[row[j] for row in body] for j in range(len(names))]
    texts = [_column_text(column) for column in columns]
    kept, renamed = _kept_columns(names, texts, continued)
    texts = [texts[j] for j in kept]
    shown = np.flatnonzero(_filled_rows(texts, len(body)))
    if len(shown) < len(body):  # empty rows between the answers: layout, not answers
        texts = [[column[r] for r in shown] for column in texts]
    texts, replaced, restored = _made_safe(texts)
    return SheetTable(
        names=[names[j] for j in kept],
        columns=texts,
        rows=shown + first + 1,  # 1-based sheet rows
        header_row=first,
        letters=[column_letter(j) for j in kept],
        replaced=replaced,
        empty_rows=len(body) - len(shown),
        restored=restored,
        renamed=tuple(renamed),
    )


def _filled_rows(columns: list[list[str]], rows: int) -> np.ndarray:
    """(rows,) True where a row has a cell that is not blank; a column looks only at the rows
    the columns before it left blank (the first, an id or the answer, usually fills them all)."""
    filled = np.zeros(rows, dtype=bool)
    for column in columns:
        left = np.flatnonzero(~filled)
        if not len(left):
            break
        filled[left] = [bool(column[r]) and not column[r].isspace() for r in left]
    return filled


def _kept_columns(names, texts, continued) -> tuple[list[int], list[str]]:
    """The columns kept (those named or holding something) and the names given to the columns
    that have none ('column E') or continue a merged header cell ('Score (2)')."""
    kept, renamed = [], []
    for j, name in enumerate(names):
        holds = any(v.strip() for v in texts[j])
        if not holds and (j in continued or not name):
            continue
        if j in continued:
            names[j] = f"{name} ({continued[j]})"
            renamed.append(f"{column_letter(j)}: {names[j]}")
        elif not name:
            names[j] = f"column {column_letter(j)}"
            renamed.append(f"{column_letter(j)}: {names[j]}")
        kept.append(j)
    return kept, renamed


def _made_safe(columns: list[list[str]]) -> tuple[list[list[str]], int, int]:
    """Every cell through engine.core.text.read_safely (misread characters restored, control
    characters replaced), a column at a time: one scan of a column without
    any is all it costs. Returns the columns, the characters replaced and those restored."""
    replaced = restored = 0
    out = []
    for column in columns:
        if is_safe("\n".join(column)):
            out.append(column)
            continue
        clean = []
        for value in column:
            text, n, fixed = read_safely(value)
            clean.append(text)
            replaced += n
            restored += fixed
        out.append(clean)
    return out, replaced, restored
