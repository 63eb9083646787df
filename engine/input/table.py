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
from engine.core.text import sanitise

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
ID_NAMES = (
    "id",
    "uid",
    "response_id",
    "student",
    "student_id",
    "respondent",
    "respondent_id",
    "participant",
    "participant_id",
    "pupil",
    "pupil_id",
    "learner",
    "learner_id",
    "candidate",
    "candidate_id",
    "examinee",
    "examinee_id",
    "user_id",
)


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
        best = max(counts, key=counts.get)
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
    text, replaced = sanitise(raw_text)
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
    frame.attrs["warnings"] = _reading_warnings(path, encoding, replaced)
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


def _reading_warnings(path: Path, encoding: str, replaced: int) -> list[str]:
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
    if replaced:
        warnings.append(
            f"File {path} holds {replaced:,} control character(s) (terminal escape sequences, "
            "bidi overrides); each was replaced by U+FFFD."
        )
    return warnings


# Names of the item (question) and rater columns of a scoring session's export.
ITEM_NAMES = ("item", "question", "prompt", "essayset", "task", "itemid", "questionid")
RATER_NAMES = ("rater", "scorer", "marker", "grader", "reader", "judge")
# A time column (when, or in which order, each score was given) is guessed only beside a rater
# column: it dates a rater's scores (time_column needs rater_column).
TIME_NAMES = ("time", "timestamp", "datetime", "date", "scoredat", "markedat", "gradedat",
              "ratedat", "scoringtime", "markingtime")  # fmt: skip


def guess_columns(frame: pd.DataFrame) -> dict[str, str | None]:
    """Guess the text, score, id, second-score, item, rater, second-rater and time columns of a
    table (engine.input.column_guess chooses with it for both front ends). A `final_score`
    column, the reviewed scores of a scores_reviewed.csv, is the score column when there is one."""
    columns = list(frame.columns)
    lowered = {c: c.lower() for c in columns}

    def numeric_share(col):
        values = [v for v in frame[col].astype(str).head(200) if v.strip()]
        return sum(as_number(v) is not None for v in values) / max(len(values), 1)

    def mean_length(col):
        return frame[col].astype(str).head(200).str.len().mean()

    ids = _id_columns(columns)
    items = _named_columns(columns, ITEM_NAMES)
    # A column with one value throughout (EssaySet of one essay set's file) splits nothing: it
    # is not an item column, though named like one (it stays out of the text and the scores).
    varying = [c for c in items if frame[c].astype(str).nunique(dropna=False) > 1]
    raters = _named_columns(columns, RATER_NAMES)
    times = _named_columns(columns, TIME_NAMES)
    # An id, item, rater or time column is never the text or a score, even when its name says
    # "response_id" or its values are numbers (EssaySet, a scoring order).
    others = [c for c in columns if c not in ids + items + raters + times] or columns
    text_hint = ("answer", "response", "text", "essay")
    text = next((c for c in others if any(h in lowered[c] for h in text_hint)), None)
    if text is None:
        text = max(others, key=mean_length)
    scoreish = [c for c in others if c != text and numeric_share(c) > 0.9]
    named = [
        c for c in scoreish if any(h in lowered[c] for h in ("score", "grade", "mark", "rating"))
    ]
    ordered = named + [c for c in scoreish if c not in named]
    if "final_score" in others and "final_score" != text:
        # The reviewed scores of a scores_reviewed.csv (engine.outputs.reviewed): audited first.
        ordered = ["final_score"] + [c for c in ordered if c != "final_score"]
    score = ordered[0] if ordered else None
    second = next((c for c in ordered[1:] if any(ch.isdigit() for ch in c)), None)
    first_raters = [c for c in raters if not any(ch.isdigit() and ch != "1" for ch in c)]
    second_raters = [c for c in raters if c not in first_raters]
    # Three reads or more: the score column's numbered family (G1, G2, G3) is every read's.
    reads = _numbered_family(score, scoreish) if score is not None else []
    reads = reads if len(reads) >= 3 else []
    read_raters = _numbered_family(raters[0], raters) if reads and raters else []
    read_raters = read_raters if len(read_raters) == len(reads) else []
    if reads:
        score, second = reads[0], None
    return {
        "text": text,
        "score": score,
        "id": ids[0] if ids else None,
        "second": second,
        "reads": reads or None,
        "read_raters": read_raters or None,
        "item": varying[0] if varying else None,
        "rater": (read_raters or first_raters or [None])[0],
        "second_rater": second_raters[0] if second and second_raters else None,
        "time": times[0] if times and first_raters else None,
    }


def _numbered_family(column: str, columns: list[str]) -> list[str]:
    """The columns named like `column` but for their numbers (G1, G2, G3; rater1_domain1,
    rater2_domain1), in the order of their first number; [] when `column` has no number."""

    def stem(name: str) -> str:
        return re.sub(r"\d+", "#", name.lower())

    def number(name: str) -> int:
        return int(re.search(r"\d+", name).group())

    if not re.search(r"\d", column):
        return []
    family = [c for c in columns if re.search(r"\d", c) and stem(c) == stem(column)]
    return sorted(family, key=number)


def _named_columns(columns: list[str], names: tuple[str, ...]) -> list[str]:
    """Columns whose name is one of `names` (case, spaces, dashes and underscores ignored),
    optionally followed by a number or "_id" (rater2, grader_id), in the order of `names`."""
    found = []
    for name in names:
        pattern = re.compile(rf"{name}(\d*|id)")
        found += [
            c
            for c in columns
            if c not in found and pattern.fullmatch(re.sub(r"[\s\-_]+", "", c.lower()))
        ]
    return found


def _id_columns(columns: list[str]) -> list[str]:
    """Columns that look like ids, the likeliest first: a known name (id, student, respondent,
    ... in the order of ID_NAMES; case, spaces, dashes and underscores ignored, so StudentID
    counts), then any other name ending in _id."""
    squashed = [name.replace("_", "") for name in ID_NAMES]
    names = {c: re.sub(r"[\s\-]+", "_", c.strip().lower()) for c in columns}
    rank = {
        c: squashed.index(names[c].replace("_", ""))
        for c in columns
        if names[c].replace("_", "") in squashed
    }
    known = sorted(rank, key=rank.get)
    suffixed = [c for c in columns if c not in rank and names[c].endswith("_id")]
    return known + suffixed
