"""Reading a workbook (Excel .xlsx, .xlsm, .xlsb, .xls; OpenDocument .ods) with python-calamine, a
Rust reader that never evaluates a formula (it reads the value the file saved with it), and any
file parm reads: `read_file` sends a workbook here, a Parquet file to pandas (when pyarrow or
fastparquet is installed: parm does not install them) and the rest to the CSV/TSV reader.

The sheet is the `sheet` setting's, or guessed: the one visible sheet whose table has a text
column and a score column and at least MIN_RESPONSES rows. When two or more qualify the guess is
doubtful: `Sheets.question()` says so, `parm audit` stops and asks for --sheet, the app asks.
engine.input.sheet_table turns the sheet's cells into the table. Every message names the file,
the sheet, and where it can, the row and the column (letter and name); `placed` adds the sheet's
row and column letters to a message about data rows and columns (engine.input.items).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from engine.core.errors import DataError
from engine.core.files import open_regular, reason
from engine.core.suggest import did_you_mean
from engine.core.text import MISREAD_NOTE, safe_text
from engine.input.sheet_table import HEADER_SCAN, SheetTable, cell_text, sheet_table
from engine.input.table import read_table

_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an .xls (BIFF) workbook
_ODS = b"mimetypeapplication/vnd.oasis.opendocument.spreadsheet"
_PARQUET = b"PAR1"
WORKBOOK_SUFFIXES = (".xlsx", ".xlsm", ".xlsb", ".xls", ".ods")
# The first rows a sheet's guess reads (the chosen sheet is then read whole).
GUESS_ROWS = HEADER_SCAN + 200
# Mentions of data rows in a message: "row 5", "rows 3, 7 and 12" (engine.input.table
# describe_rows writes them so).
_ROWS = re.compile(r"\brows?(?:\(s\))? \(?(\d+(?:(?:, | and )\d+\b(?! more))*)")


@dataclass(frozen=True)
class SheetPlace:
    """Where a workbook's table is: the file, the sheet, the sheet row of its header, of each
    data row (data row n is sheet row rows[n - 1]) and each column's letter by name."""

    source: str
    sheet: str
    header_row: int
    rows: np.ndarray = field(compare=False)
    letters: dict[str, str] = field(default_factory=dict)

    def where(self) -> str:
        return f"{self.source}, sheet '{self.sheet}'"


@dataclass(frozen=True)
class Sheets:
    """A file's sheets as read: its table (of `sheet`), every sheet's name, and the sheets that
    could be the table when the guess is doubtful (else ())."""

    frame: pd.DataFrame
    sheet: str | None = None
    names: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()

    def question(self) -> str | None:
        """What to ask when two or more sheets could be the table, else None."""
        if len(self.candidates) < 2:
            return None
        shown = ", ".join(repr(name) for name in self.candidates)
        return f"Which sheet holds the answers? Sheets {shown} each have a text and a score column."


def file_kind(path: Path) -> str:
    """What the file is: "workbook", "parquet" or "text", from its first bytes (a zip archive:
    by its members, or by its name when it is too damaged to show them)."""
    if not path.is_file():  # a pipe or a device would block or never end: the CSV reader,
        return "text"  # which opens without blocking, says what it is
    try:
        with open(path, "rb") as handle:
            start = handle.read(4096)
    except OSError:
        return "text"  # the CSV reader says what is wrong with it
    named = path.suffix.lower() in WORKBOOK_SUFFIXES
    zipped = start.startswith(b"PK\x03\x04") and (named or _zip_workbook(start))
    if start.startswith(_OLE2) or zipped:
        return "workbook"
    if start.startswith(_PARQUET):
        return "parquet"
    return "text"


def _zip_workbook(start: bytes) -> bool:
    return _ODS in start[:200] or b"[Content_Types].xml" in start or b"xl/" in start


def read_sheets(path: str | Path, sheet: str | None = None) -> Sheets:
    """Any table file parm reads, as `Sheets` (a CSV or Parquet file has no sheets: a `sheet`
    given for one is noted among its warnings and not used)."""
    path = Path(path).expanduser()
    kind = file_kind(path)
    if kind == "workbook":
        return _workbook(path, sheet)
    frame = _parquet(path) if kind == "parquet" else read_table(path)
    if sheet is not None:
        frame.attrs["warnings"] = [
            *frame.attrs.get("warnings", ()),
            f"File {path} has no sheets; the sheet setting ('{safe_text(sheet, True)}') is for "
            "workbooks and was not used.",
        ]
    return Sheets(frame)


def read_file(path: str | Path, sheet: str | None = None) -> pd.DataFrame:
    """The table of any file parm reads; DataError with the question when the sheet's guess
    is doubtful (a command cannot ask)."""
    read = read_sheets(path, sheet)
    if read.question() is not None:
        raise DataError(f"File {Path(path).expanduser()}: {read.question()}")
    return read.frame


# -- workbooks --------------------------------------------------------------------------------
def _workbook(path: Path, sheet: str | None) -> Sheets:
    from python_calamine import CalamineError, CalamineWorkbook, PasswordError

    with open_regular(path, "File", DataError) as handle:
        try:
            raw = handle.read()
        except OSError as exc:
            raise DataError(f"File {path} cannot be read: {reason(exc)}") from None
    try:
        book = CalamineWorkbook.from_filelike(io.BytesIO(raw))
        with book:
            names = tuple(book.sheet_names)
            loaded: dict = {}  # each sheet parsed once
            chosen, candidates = _chosen_sheet(book, path, names, sheet, loaded)
            table = _table(_sheet(book, chosen, loaded), path, chosen)
    except PasswordError:
        raise DataError(
            f"File {path} is a password-protected workbook; save a copy without the password "
            "and load that."
        ) from None
    except CalamineError as exc:
        raise DataError(
            f"File {path} looks like a workbook but cannot be read ({exc}); open it in Excel "
            "or LibreOffice and save it again, or save it as CSV (UTF-8)."
        ) from None
    frame = _frame(table, path, chosen, names, candidates)
    return Sheets(frame, chosen, names, candidates)


def _sheet(book, name: str, loaded: dict):
    if name not in loaded:
        loaded[name] = book.get_sheet_by_name(name)
    return loaded[name]


def _chosen_sheet(book, path: Path, names, sheet, loaded) -> tuple[str, tuple[str, ...]]:
    """(the sheet to read, the candidates when the guess is doubtful)."""
    if sheet is not None:
        if sheet not in names:
            raise DataError(
                f"File {path} has no sheet '{safe_text(sheet, True)}'.{did_you_mean(sheet, names)}"
                f" Its sheets: {_listed(names)}."
            )
        return sheet, ()
    visible = [m.name for m in book.sheets_metadata if _readable(m)] or list(names)
    if not visible:
        raise DataError(f"File {path} is a workbook without sheets.")
    if len(visible) == 1:
        return visible[0], ()
    qualified = [name for name in visible if _qualifies(_sheet(book, name, loaded))]
    if not qualified:
        return visible[0], ()
    return qualified[0], tuple(qualified) if len(qualified) > 1 else ()


def _readable(metadata) -> bool:
    return str(metadata.visible).endswith("Visible") and str(metadata.typ).endswith("WorkSheet")


def _qualifies(sheet) -> bool:
    """Whether the sheet's first rows have a header, a text column and a score column, and
    it has at least MIN_RESPONSES rows."""
    from engine.input.guess import guess_columns
    from engine.input.responses import MIN_RESPONSES

    table = sheet_table(sheet.to_python(skip_empty_area=False, nrows=GUESS_ROWS),
                        sheet.merged_cell_ranges)  # fmt: skip
    if table is None or len(table.names) < 2 or len(table.rows) < MIN_RESPONSES:
        return False
    frame = pd.DataFrame(dict(zip(table.names, table.columns)), dtype=str)
    guess = guess_columns(frame)
    text = guess["text"]
    if text is None or guess["score"] is None or text == guess["score"]:
        return False
    numbers = pd.to_numeric(frame[text], errors="coerce").notna().mean()
    return bool(numbers < 0.5)


def _table(sheet, path: Path, name: str) -> SheetTable:
    grid = sheet.to_python(skip_empty_area=False)
    where = f"File {path}, sheet '{safe_text(name, True)}'"
    if not any(cell_text(v).strip() for row in grid for v in row):
        raise DataError(f"{where} is empty.")
    table = sheet_table(grid, sheet.merged_cell_ranges)
    if table is None:
        raise DataError(
            f"{where}: no header row in the first {HEADER_SCAN} rows that hold anything (a row "
            "of column names, at least two, above the answers); add one, or choose another "
            "sheet."
        )
    if len(table.names) < 2:
        raise DataError(
            f"{where}: the header on row {table.header_row} names {len(table.names)} column "
            f"({_columns(table)}); parm needs at least a text and a score column."
        )
    _refuse_repeated(table, where)
    return table


def _refuse_repeated(table: SheetTable, where: str) -> None:
    names = [safe_text(n, True) for n in table.names]
    for name in dict.fromkeys(names):
        at = [letter for n, letter in zip(names, table.letters) if n == name]
        if len(at) > 1:
            raise DataError(
                f"{where}: the header on row {table.header_row} names column '{name}' "
                f"{len(at)} times (columns {', '.join(at)}); rename them so each column name "
                "is unique."
            )


def _columns(table: SheetTable) -> str:
    return ", ".join(f"{letter} '{name}'" for letter, name in zip(table.letters, table.names))


def _listed(names) -> str:
    return ", ".join(repr(safe_text(name, True)) for name in names)


def _frame(table: SheetTable, path: Path, sheet: str, names, candidates) -> pd.DataFrame:
    """The table as the frame parm reads (strings), with where each row and column is on the
    sheet (attrs "place") and what the reading noticed (attrs "warnings")."""
    columns = [safe_text(name, True) for name in table.names]
    frame = pd.DataFrame(dict(zip(columns, table.columns)), columns=columns, dtype=str)
    place = SheetPlace(str(path), sheet, table.header_row, table.rows,
                       dict(zip(columns, table.letters)))  # fmt: skip
    frame.attrs["place"] = place
    frame.attrs["warnings"] = _notes(table, path, sheet, names, candidates)
    return frame


def _notes(table: SheetTable, path: Path, sheet: str, names, candidates) -> list[str]:
    """What reading the sheet did that a lead would not guess, each a 'File ...' sentence."""
    where = f"File {path}, sheet '{safe_text(sheet, True)}'"
    notes = []
    if len(names) > 1 and not candidates:
        notes.append(f"File {path} has {len(names)} sheets ({_listed(names)}); "
                     f"'{safe_text(sheet, True)}' was read (the sheet setting chooses).")  # fmt: skip
    if table.empty_rows:
        notes.append(
            f"{where}: the header is on row {table.header_row} and {table.empty_rows:,} empty "
            "row(s) between the answers are left out: data row n is the n-th row below the "
            "header that is not empty."
        )
    elif table.header_row > 1:
        notes.append(
            f"{where}: the header is on row {table.header_row}: data row n is sheet row "
            f"n + {table.header_row}."
        )
    if table.renamed:
        notes.append(f"{where}: column(s) without a name of their own: {', '.join(table.renamed)}.")
    if table.restored:
        notes.append(f"{where} holds {table.restored:,} {MISREAD_NOTE}.")
    if table.replaced:
        notes.append(
            f"{where} holds {table.replaced:,} control character(s) (terminal escape "
            "sequences, bidi overrides); each was replaced by U+FFFD."
        )
    return notes


def placed(message: str, place: SheetPlace, read=()) -> str:
    """`message` (about data rows and columns by name) with where they are on the sheet:
    "... (sheet 'Scores': data row 5 is row 8; column 'score' is column C)". The columns are
    those it quotes, and those of `read` (the columns a run reads) it names."""
    parts = []
    numbers = [int(n) for found in _ROWS.findall(message) for n in re.findall(r"\d+", found)]
    shown = [n for n in dict.fromkeys(numbers) if 1 <= n <= len(place.rows)][:8]
    if shown:
        parts.append(", ".join(f"data row {n} is row {int(place.rows[n - 1])}" for n in shown))
    else:
        parts.append(f"data rows are counted from the header on row {place.header_row}")
    said = [name for name, letter in place.letters.items() if f"'{name}'" in message or (
        name in read and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", message))]  # fmt: skip
    named = [f"'{name}' is column {place.letters[name]}" for name in said]
    if named:
        parts.append("column " + ", ".join(named))
    return f"{message.rstrip()} (sheet '{safe_text(place.sheet, True)}': {'; '.join(parts)})"


# -- Parquet ------------------------------------------------------------------------------------
def _parquet(path: Path) -> pd.DataFrame:
    """A Parquet file's columns as text, as a CSV of it would hold them (numbers as the sheet
    reader spells them, missing values empty); pyarrow or fastparquet must be installed."""
    try:
        frame = pd.read_parquet(path)
    except ImportError:
        raise DataError(
            f"File {path} is a Parquet file; reading it needs pyarrow (pip install pyarrow), "
            "which parm does not install. Or save it as CSV."
        ) from None
    except (OSError, ValueError) as exc:
        raise DataError(f"File {path} is a Parquet file but cannot be read: {exc}") from None
    columns = [safe_text(str(c), True) for c in frame.columns]
    texts = {
        name: ["" if _absent(v) else safe_text(cell_text(v)) for v in frame[c].tolist()]
        for name, c in zip(columns, frame.columns)
    }
    out = pd.DataFrame(texts, columns=columns, dtype=str)
    out.attrs["warnings"] = []
    return out


def _absent(value) -> bool:
    return value is None or (isinstance(value, float) and value != value) or value is pd.NaT
