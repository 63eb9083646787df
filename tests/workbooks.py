"""Workbooks written by the tests that read them (never shipped): an .xlsx built with openpyxl
(with the cached values of its formulas written in as Excel would save them: openpyxl writes
none), a minimal OpenDocument .ods, and the sample file as either."""

from __future__ import annotations

import csv
import re
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

from helpers import SAMPLE_CSV


def sample_rows() -> tuple[list[str], list[list]]:
    """The sample's header and rows, scores as numbers (as a spreadsheet holds them)."""
    with open(SAMPLE_CSV, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    return header, [[i, a, int(s), int(t)] for i, a, s, t in body]


def write_xlsx(path: Path, sheets: dict, merges: dict | None = None) -> Path:
    """An .xlsx with these sheets ({name: rows}, a row a list of cells, None empty) and merged
    ranges ({name: ["A1:D1", ...]})."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
        for cells in (merges or {}).get(name, ()):
            sheet.merge_cells(cells)
    book.save(path)
    return path


def with_cached_values(path: Path, values: dict[str, object], sheet: int = 1) -> Path:
    """The workbook with these cached values ({"E4": 4}) written into its formula cells, as
    Excel saves them (a number, or text as a t="str" cell)."""
    member = f"xl/worksheets/sheet{sheet}.xml"
    with zipfile.ZipFile(path) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    xml = contents[member].decode("utf-8")
    for cell, value in values.items():
        found = re.search(rf'<c r="{cell}"( [^>]*)?><f>(.*?)</f><v ?/>', xml)
        assert found, cell
        kind = ' t="str"' if isinstance(value, str) else ""
        cached = f'<c r="{cell}"{kind}><f>{found.group(2)}</f><v>{escape(str(value))}</v>'
        xml = xml.replace(found.group(0), cached)
    contents[member] = xml.encode("utf-8")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
    return path


_ODS_NAMESPACES = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
)
_ODS_TYPE = "application/vnd.oasis.opendocument.spreadsheet"


def _ods_cell(value) -> str:
    if value is None:
        return "<table:table-cell/>"
    if isinstance(value, (int, float)):
        return (
            f'<table:table-cell office:value-type="float" office:value="{value}">'
            f"<text:p>{value}</text:p></table:table-cell>"
        )
    return (
        '<table:table-cell office:value-type="string">'
        f"<text:p>{escape(str(value))}</text:p></table:table-cell>"
    )


def write_ods(path: Path, sheets: dict) -> Path:
    """A minimal OpenDocument spreadsheet with these sheets ({name: rows})."""
    tables = "".join(
        f'<table:table table:name="{escape(name)}">'
        + "".join(
            "<table:table-row>" + "".join(_ods_cell(v) for v in row) + "</table:table-row>"
            for row in rows
        )
        + "</table:table>"
        for name, rows in sheets.items()
    )
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_ODS_NAMESPACES} '
        f'office:version="1.2"><office:body><office:spreadsheet>{tables}</office:spreadsheet>'
        "</office:body></office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest='
        '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{_ODS_TYPE}"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), _ODS_TYPE)  # first, stored
        archive.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("META-INF/manifest.xml", manifest, compress_type=zipfile.ZIP_DEFLATED)
    return path


def scored_rows(n: int = 24, start: int = 0) -> list[list]:
    """n rows of id, answer, score (0-2, as numbers)."""
    topics = ("roots take up water", "leaves need light", "seeds need warmth")
    return [[f"S{start + i:03d}", f"{topics[i % 3]} ({start + i})", i % 3] for i in range(n)]
