"""Reading CSV/TSV tables: the file's text (UTF-8 with or without BOM, UTF-16 with BOM,
Windows-1252, latin-1), made safe to display (engine.core.text), the sniffed delimiter, and a
guess at which columns hold what."""

from __future__ import annotations

import codecs
import csv
import io
import math
import re
import warnings
import zlib
from pathlib import Path

import pandas as pd

from engine.core.errors import DataError
from engine.core.files import open_regular, reason
from engine.core.suggest import did_you_mean
from engine.core.text import MISREAD_NOTE, read_safely

_SNIFF_BYTES = 256 * 1024
GZIP_MAGIC = b"\x1f\x8b"
# A gzip file is decompressed in memory; beyond this it is refused (a "zip bomb" of a few MB
# can hold many GB), with a pointer to decompressing it first.
MAX_GUNZIPPED_BYTES = 2 << 30
# DOS's end-of-file mark (Ctrl-Z), which some old Windows tools still append; trailing
# line breaks after it are dropped with it.
_DOS_EOF = re.compile(r"\x1a[\r\n]*\Z")
NOT_A_TABLE = "this does not look like a CSV/TSV file"
_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
# Column names (lower case, spaces and dashes as _) that hold a response or respondent id.


def as_number(value: str) -> float | None:
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def read_text_file(path: str | Path) -> tuple[str, str]:
    """The file's text and the encoding it was read with: UTF-8 (with or without BOM), UTF-16
    with a BOM, else Windows-1252, else latin-1 (which decodes any bytes). A gzip-compressed
    file is decompressed in memory first (the encoding then ends in "+gzip"); a trailing DOS
    end-of-file mark (Ctrl-Z) is dropped. Anything but a regular file (a folder, a named pipe,
    a device) is refused before reading. Errors name the file."""
    path = Path(path).expanduser()
    with open_regular(path, "File", DataError) as handle:
        try:
            raw = handle.read()
        except OSError as exc:
            raise DataError(f"File {path} cannot be read: {reason(exc)}") from None
    if raw.startswith(GZIP_MAGIC):
        text, encoding = _decoded(gunzip(raw, path), path)
        return text, encoding + "+gzip"
    return _decoded(raw, path)


def gunzip(raw: bytes, path: Path, limit: int | None = None) -> bytes:
    """The decompressed bytes of a gzip file (every member of a concatenated one), refused
    beyond `limit` bytes (default MAX_GUNZIPPED_BYTES) or when damaged; errors name the file."""
    limit = MAX_GUNZIPPED_BYTES if limit is None else limit
    out = bytearray()
    data = raw
    while data:
        inflater = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer
        try:
            out += inflater.decompress(data, limit + 1 - len(out))
            while inflater.unconsumed_tail and len(out) <= limit:
                out += inflater.decompress(inflater.unconsumed_tail, limit + 1 - len(out))
        except zlib.error as exc:
            raise DataError(f"File {path} is gzip-compressed but damaged ({exc}).") from None
        if len(out) > limit:
            raise DataError(
                f"File {path} is gzip-compressed and holds more than {limit:,} bytes of text; "
                "decompress it (gunzip) and load the result."
            )
        if not inflater.eof:
            raise DataError(f"File {path} is gzip-compressed but cut short (truncated).")
        # Another member may follow; padding of zero bytes after the last one is allowed.
        data = inflater.unused_data.lstrip(b"\x00")
    return bytes(out)


def _decoded(raw: bytes, path: Path) -> tuple[str, str]:
    if not raw.strip():
        raise DataError(f"File {path} is empty.")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # Excel's "Unicode text" export: UTF-16 with a BOM (its NUL bytes are not binary).
        try:
            return _without_dos_eof(raw.decode("utf-16")), "utf-16"
        except UnicodeDecodeError:
            raise DataError(f"File {path} starts like UTF-16 text but cannot be decoded.") from None
    if raw.startswith(b"PK\x03\x04"):
        if b"[Content_Types].xml" in raw[:_SNIFF_BYTES] or b"xl/" in raw[:_SNIFF_BYTES]:
            raise DataError(
                f"File {path} is a zip archive (an Excel .xlsx workbook?), not a CSV or TSV "
                "text file; save it as CSV (UTF-8) first."
            )
        raise DataError(
            f"File {path} is a zip archive, not a CSV or TSV text file: an Excel .xlsx "
            "workbook? Save it as CSV (UTF-8). A .zip? Unzip it and load the file inside."
        )
    if raw.startswith(GZIP_MAGIC):
        raise DataError(f"File {path} is gzip-compressed twice; decompress it first (gunzip).")
    if b"\x00" in raw[:_SNIFF_BYTES]:
        raise DataError(f"File {path} looks binary, not a CSV or TSV text file.")
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return _without_dos_eof(raw.decode(encoding)), encoding
        except UnicodeDecodeError:
            continue
    return _without_dos_eof(raw.decode("latin-1")), "latin-1"


def _without_dos_eof(text: str) -> str:
    return _DOS_EOF.sub("", text)


def sniff_delimiter(text: str, path: Path | None = None) -> str:
    """The delimiter among , ; tab |, from the first lines; tab for .tsv files."""
    sample = text[:_SNIFF_BYTES]
    if path is not None and path.suffix.lower() in (".tsv", ".tab"):
        return "\t"
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        header = sample.splitlines()[0] if sample else ""
        counts = {d: header.count(d) for d in ",;\t|"}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","


def _parser_problem(exc: Exception) -> str:
    """pandas' tokenizer message in words: 'Expected 1 fields in line 4, saw 2' becomes
    'line 4 has 2 fields where the header has 1'."""
    message = str(exc).strip()
    found = _FIELDS.search(message)
    if found:
        expected, line, saw = found.groups()
        return _fields_problem(int(expected), int(line), int(saw))
    return message


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV/TSV as strings (no NA guessing), delimiter sniffed.

    Every cell and column name comes out through `safe_text` (control characters replaced by
    U+FFFD), so nothing read from the file can act on a terminal. What the reading noticed (a
    fallback encoding, replaced characters) is in ``frame.attrs["warnings"]``.
    """
    path = Path(path).expanduser()
    raw_text, encoding = read_text_file(path)
    # One pass over the whole text: a cell or a column name cannot hold a character the file
    # does not, and the delimiters (, ; tab |) and quotes are untouched.
    text, replaced, restored = read_safely(raw_text)
    delimiter = sniff_delimiter(text, path)
    _refuse_repeated_columns(text, delimiter, path)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            # index_col=False: a row with more fields than the header must not turn the first
            # column into the index and shift every other column left (pandas' default).
            frame = pd.read_csv(
                io.StringIO(text),
                sep=delimiter,
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                index_col=False,
            )
    except (pd.errors.ParserError, ValueError, csv.Error) as exc:
        raise DataError(f"File {path}: {NOT_A_TABLE}: {_parser_problem(exc)}") from None
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        # pandas dropped the extra fields of a longer row: say which row instead.
        raise DataError(f"File {path}: {NOT_A_TABLE}: {_longer_row(text, delimiter)}")
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.shape[1] < 2:
        raise DataError(
            f"File {path}: {NOT_A_TABLE}: it has {frame.shape[1]} column; parm needs at least "
            "a text and a score column, one row per response."
        )
    frame.attrs["warnings"] = _reading_warnings(path, encoding, replaced, restored)
    return frame


def _longer_row(text: str, delimiter: str) -> str:
    """The first row with more fields than the header, in words."""
    rows = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = len(next(rows, []))
    for row in rows:
        if len(row) > header:
            return _fields_problem(header, rows.line_num, len(row))
    return "a row has more fields than the first line (the header)"


def _fields_problem(expected: int, line: int, saw: int) -> str:
    return (
        f"line {line} has {saw} fields where the first line (the header) has {expected}; "
        "every line of a table has the same number of columns"
    )


def _refuse_repeated_columns(text: str, delimiter: str, path: Path) -> None:
    """Refuse a header that names a column twice, read with the csv module before pandas would
    rename the second one (score, score.1) and let the user audit a column they did not pick."""
    try:
        rows = csv.reader(io.StringIO(text[:_SNIFF_BYTES]), delimiter=delimiter)
        header = next((row for row in rows if any(cell.strip() for cell in row)), [])
    except csv.Error:
        return  # pandas reports the unreadable file with its own message
    names = [cell.strip() for cell in header]
    repeated = sorted({n for n in names if n and names.count(n) > 1})
    if repeated:
        raise DataError(
            f"File {path} has more than one column named {', '.join(map(repr, repeated))}; "
            "rename them so each column name is unique."
        )


def _reading_warnings(path: Path, encoding: str, replaced: int, restored: int = 0) -> list[str]:
    warnings = []
    encoding, gzipped, _ = encoding.partition("+gzip")
    if gzipped:
        warnings.append(f"File {path} is gzip-compressed; it was decompressed in memory.")
    if encoding in ("cp1252", "latin-1"):
        name = "Windows-1252" if encoding == "cp1252" else "latin-1"
        warnings.append(
            f"File {path} is not valid UTF-8; it was read as {name}. If accented letters look "
            "wrong, save the file as UTF-8 and load it again."
        )
    if restored:
        warnings.append(f"File {path} holds {restored:,} {MISREAD_NOTE}.")
    if replaced:
        warnings.append(
            f"File {path} holds {replaced:,} control character(s) (terminal escape sequences, "
            "bidi overrides); each was replaced by U+FFFD."
        )
    return warnings


def missing_column(where, role: str, name: str, columns) -> str:
    """The message about a column the file does not have, with the closest one it has."""
    columns = [str(c) for c in columns]
    return (
        f"{where}: the {role} column '{name}' does not exist.{did_you_mean(name, columns)} "
        f"Columns in the file: {', '.join(columns)}."
    )


# How many rows a message names before "and N more".
SHOWN_ROWS = 8


def describe_rows(rows, limit: int = SHOWN_ROWS) -> str:
    """'3, 7, 12 and 40 more': the first `limit` data-row numbers a message names."""
    rows = [int(r) for r in rows]
    shown = ", ".join(str(r) for r in rows[:limit])
    return shown + (f" and {len(rows) - limit} more" if len(rows) > limit else "")
