"""results.xlsx (engine.outputs.workbook, engine.outputs.workbook_shading): a sheet per table of
the set after the about sheet, each holding its CSV's rows as typed values (the CSV is the
oracle), frozen headers, filters, widths, shading by the reports' own rules; the set's manifest;
hostile text written as inert string cells, read back by openpyxl and by a second reader
(python-calamine)."""

from __future__ import annotations

import csv
import hashlib
import json

import numpy as np
import pytest
from helpers import FAST_CLI, cli, run_frame, session_config, session_frame
from hostile import FORMULA_START, NUMBER, UNSAFE, write_hostile

from engine.audit.reads.agreement import THRESHOLDS
from engine.outputs import declared
from engine.outputs.columns import COUNT, FIGURE, FLAG, LABEL, POINTS, SHARE
from engine.outputs.names import WORKBOOK_FILE
from engine.outputs.report.item_content import FIELD_THRESHOLDS
from engine.outputs.session import write_session
from engine.outputs.workbook import (
    MAX_CELL,
    MAX_WIDTH,
    MIN_WIDTH,
    SHEETS,
    cell_value,
    column_kinds,
    declared_column,
    inert,
    sheet_name,
)
from engine.saved.decisions import open_store

NUMBERS = (COUNT, FIGURE, SHARE, POINTS)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A session with items, raters and two reads per answer, two decisions, written as CSVs
    and as results.xlsx (--format both)."""
    folder = tmp_path_factory.mktemp("book")
    frame, vectors = session_frame()
    rng = np.random.default_rng(3)
    flip = rng.random(len(frame)) < 0.2
    frame["score2"] = np.where(flip, (frame["score"].astype(int) + 1) % 3, frame["score"])
    frame["score2"] = frame["score2"].astype(str)
    frame["id"] = [f"{i:05d}" for i in range(len(frame))]  # text digits: stay text
    config = session_config(rater_column="rater", second_score_column="score2", id_column="id")
    session = run_frame(frame, vectors, config)
    responses = session.review.responses
    source = folder / "session.csv"
    source.write_text("x\n")
    with open_store(source, responses, folder / "d.sqlite3", session.review.on_scale) as store:
        store.record(int(responses.rows[0]), responses.ids[0], responses.texts[0], "keep")
        label = responses.labels[(responses.scores[3] + 1) % 2]
        store.record(int(responses.rows[3]), responses.ids[3], responses.texts[3], "change",
                     label, "=HYPERLINK(\"http://x\")")  # fmt: skip
        paths = write_session(session, folder / "out", store=store, table=frame,
                              table_format="both")  # fmt: skip
    return folder / "out", paths, session


def book(path):
    from openpyxl import load_workbook

    return load_workbook(path)


def read_csv(path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0][:-1], [row[:-1] for row in rows[1:]]  # without run_id


def test_a_sheet_per_table_of_the_set_after_the_about_sheet(written):
    out, paths, session = written
    tables = [name for name in SHEETS if (out / name).exists()]
    assert len(tables) == 13  # every table: items, raters, reads, the lead's lists, decisions
    names = book(out / WORKBOOK_FILE).sheetnames
    expected = ["about", *map(sheet_name, tables)] + (["warnings"] if session.warnings else [])
    assert names == expected
    manifest = json.loads((out / "parm-manifest.json").read_text())
    entry = next(f for f in manifest["files"] if f["name"] == WORKBOOK_FILE)
    assert entry["sha256"] == hashlib.sha256((out / WORKBOOK_FILE).read_bytes()).hexdigest()
    assert entry["run_id"] == session.run_id


def test_every_sheet_holds_its_csvs_rows_as_typed_values(written):
    out, _, session = written
    workbook = book(out / WORKBOOK_FILE)
    tables = {table.file: table for table in declared.TABLES}
    labels = {session.config.score_column, session.config.second_score_column}
    for file in [name for name in SHEETS if (out / name).exists()]:
        header, rows = read_csv(out / file)
        sheet = workbook[sheet_name(file)]
        cells = list(sheet.iter_rows())
        assert [c.value for c in cells[0]] == header and len(cells) == len(rows) + 1, file
        kinds = column_kinds(tables[file], header, labels if file.startswith("scores_") else ())
        for row, line in zip(rows, cells[1:]):
            for text, cell, kind in zip(row, line, kinds):
                _check_cell(text, cell, kind, file)


def _check_cell(text: str, cell, kind: str, file: str) -> None:
    """The cell holds the CSV cell's value: nothing for an empty one, the number, the flag,
    the label as a number where it is one, else the same (guarded) text as a string cell."""
    where = (file, cell.coordinate, text)
    if text == "":
        assert cell.value is None, where
    elif kind in NUMBERS and cell.data_type == "n":
        assert cell.value == pytest.approx(float(text), abs=1e-9), where
        assert kind != COUNT or isinstance(cell.value, int), where
    elif kind == FLAG:
        assert (cell.data_type, cell.value) == ("b", text == "True"), where
    elif kind == LABEL and cell.data_type == "n":
        assert str(cell.value) == text, where
    else:
        assert (cell.data_type, cell.value) == ("s", text), where


def test_ids_of_digits_stay_text_and_numbers_are_numbers(written):
    out, _, _ = written
    sheet = book(out / WORKBOOK_FILE)["predictions"]
    header = [c.value for c in sheet[1]]
    first = {name: cell for name, cell in zip(header, sheet[2])}
    assert first["id"].data_type == "s" and first["id"].value.startswith("0")
    assert isinstance(first["row"].value, int) and isinstance(first["score"].value, int)
    assert first["severity"].number_format == "0.000" and 0 <= first["severity"].value <= 1
    assert isinstance(first["flagged"].value, bool)


def test_headers_are_frozen_filtered_and_columns_fit(written):
    out, _, _ = written
    workbook = book(out / WORKBOOK_FILE)
    for sheet in workbook.worksheets[1:]:
        assert sheet.freeze_panes == "A2", sheet.title
        assert sheet.auto_filter.ref == sheet.dimensions, sheet.title
        widths = [d.width for d in sheet.column_dimensions.values()]
        assert len(widths) == sheet.max_column and all(MIN_WIDTH <= w <= MAX_WIDTH for w in widths)
        assert all(cell.font.bold for cell in sheet[1])
    predictions = workbook["predictions"]
    header = [c.value for c in predictions[1]]
    width = {h: predictions.column_dimensions[c.column_letter].width for h, c in zip(header, predictions[1])}  # fmt: skip
    assert width["text"] > width["score"] >= MIN_WIDTH


def test_the_about_sheet_says_what_each_sheet_and_column_is(written):
    out, _, session = written
    rows = [[c.value for c in row] for row in book(out / WORKBOOK_FILE)["about"].iter_rows()]
    assert rows[0][0] == "parm results: session.csv"
    assert ["Run", session.run_id] == rows[2][:2]
    start = next(i for i, row in enumerate(rows) if row[:3] == ["Sheet", "Rows", "One row per"])
    tables = {table.file: table for table in declared.TABLES}
    for file in [name for name in SHEETS if (out / name).exists()]:
        listed = next(row for row in rows[start:] if row[0] == sheet_name(file))
        assert listed[2] == tables[file].row and listed[1] == len(read_csv(out / file)[1])
        header = read_csv(out / file)[0]
        meanings = {row[1]: row[2] for row in rows if row[0] == sheet_name(file) and row[2]
                    and row is not listed}  # fmt: skip
        for name in header:
            column = declared_column(tables[file], name)
            assert meanings[name] == (column.meaning if column else "a column of the input file")
    shaded = next(row for row in rows[start:] if row[0] == "predictions")[3]
    assert "flagged rows" in shaded


def _rules(sheet) -> dict[str, list[str]]:
    return {str(cf.sqref): [rule.formula[0] for rule in cf.rules] for cf in sheet.conditional_formatting}  # fmt: skip


def test_flagged_rows_and_figures_under_the_reports_thresholds_are_shaded(written):
    out, _, _ = written
    workbook = book(out / WORKBOOK_FILE)
    predictions = workbook["predictions"]
    flagged = next(c.column_letter for c in predictions[1] if c.value == "flagged")
    assert _rules(predictions) == {
        predictions.dimensions.replace("A1", "A2"): [f"${flagged}2=TRUE"]
    }
    items = _rules(workbook["items"])
    assert any(f"<{FIELD_THRESHOLDS['qwk']})" in f for fs in items.values() for f in fs)
    formulas = [f for fs in _rules(workbook["agreement"]).values() for f in fs]
    assert sorted(f.split("<")[1].split(",")[0] for f in formulas) == sorted(
        str(limit) for limit in THRESHOLDS.values())  # fmt: skip


def test_the_agreement_shading_is_the_below_column_of_the_csv(written):
    """The conditional formats, evaluated row by row, shade exactly the figures agreement.csv's
    `below` names (the report's own rule): same thresholds, none for a pair with too few."""
    out, _, _ = written
    header, rows = read_csv(out / "agreement.csv")
    at = {name: j for j, name in enumerate(header)}
    assert any(row[at["below"]] for row in rows) or all(row[at["exact"]] == "" or float(
        row[at["exact"]]) >= THRESHOLDS["exact"] for row in rows)  # fmt: skip
    for row in rows:
        shaded = {
            name for name, limit in THRESHOLDS.items()
            if row[at[name]] != "" and float(row[at[name]]) < limit and row[at["too_few"]] != "True"
        }  # fmt: skip
        assert shaded == set(row[at["below"]].split()), row


def test_a_second_reader_reads_the_same_workbook(written):
    from python_calamine import CalamineWorkbook

    out, _, _ = written
    first = book(out / WORKBOOK_FILE)
    second = CalamineWorkbook.from_path(str(out / WORKBOOK_FILE))
    assert second.sheet_names == first.sheetnames
    for name in ("predictions", "scores_reviewed", "agreement"):
        theirs = second.get_sheet_by_name(name).to_python()
        ours = [[c.value for c in row] for row in first[name].iter_rows()]
        assert len(theirs) == len(ours)
        for a, b in zip(theirs, ours):
            assert [("" if v is None else v) for v in b] == pytest.approx(a), name


def test_only_the_workbook_holds_the_tables_with_format_xlsx(tmp_path):
    frame, vectors = session_frame(items=(("A", 40, 3),))
    frame["id"] = [f"S{i}" for i in range(len(frame))]
    frame[["id", "answer", "score"]].to_csv(tmp_path / "answers.csv", index=False)
    np.save(tmp_path / "v.npy", vectors)
    args = ("--embeddings", tmp_path / "v.npy", *FAST_CLI)
    code, output = cli(tmp_path / "answers.csv", "--out", tmp_path / "o", "--format", "xlsx", *args)
    assert code == 0, output
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "decisions.csv", "parm-manifest.json", "report.html", "report.json", "report.md",
        "results.xlsx", "warnings.txt"]  # fmt: skip
    code, output = cli(tmp_path / "answers.csv", "--out", tmp_path / "p", "--format", "pdf", *args)
    assert code == 2 and "--format 'pdf': choose one of csv, xlsx, both" in output


# -- untrusted text -----------------------------------------------------------------------------
def test_hostile_text_is_written_as_inert_strings(tmp_path):
    from python_calamine import CalamineWorkbook

    path, embeddings = write_hostile(tmp_path)
    out = tmp_path / "out"
    code, output = cli(path, "--embeddings", embeddings, "--out", out, "--format", "both",
                       *FAST_CLI)  # fmt: skip
    assert code == 0, output
    workbook = book(out / WORKBOOK_FILE)
    strings = 0
    for sheet in workbook.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                assert cell.data_type in ("s", "n", "b"), (sheet.title, cell.coordinate)
                if cell.data_type == "s":
                    strings += 1
                    assert not UNSAFE.search(cell.value), (sheet.title, cell.coordinate)
                    assert _inert(cell.value), (sheet.title, cell.coordinate, cell.value)
    assert strings > 500
    header, rows = read_csv(out / "predictions.csv")
    sheet = workbook["predictions"]
    assert [c.value for c in sheet[1]] == header
    for j, name in enumerate(header):
        if name in ("text", "id", "score", "predicted", "evidence"):
            ours = [sheet.cell(row=i + 2, column=j + 1).value for i in range(len(rows))]
            assert ours == [row[j] for row in rows], name  # the CSV's guarded text, verbatim
    texts = [row[header.index("text")] for row in rows]
    assert any(t.startswith("'\"=HYPERLINK") for t in texts) and any("\n=2+2" in t for t in texts)
    again = CalamineWorkbook.from_path(str(out / WORKBOOK_FILE))
    for name in again.sheet_names:
        for row in again.get_sheet_by_name(name).to_python():
            for value in row:
                assert not (isinstance(value, str) and value.startswith(("=", "+", "@")))


def _inert(text: str) -> bool:
    """No formula: a leading ' (shown as text), or nothing a spreadsheet would evaluate at the
    start, also after blanks and quotes (hostile.check_csv_inert's rule for a CSV's cells)."""
    bare = text.lstrip(' \t\r\n"')
    starts = text.startswith(FORMULA_START) or bare.startswith(FORMULA_START)
    return text.startswith("'") or not starts or bool(NUMBER.fullmatch(text))


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [("2", LABEL, 2), ("2.5", LABEL, 2.5), ("-1", LABEL, -1), ("02", LABEL, "02"),
     ("2.0", LABEL, "2.0"), ("=2", LABEL, "'=2"), ("0.123456", FIGURE, 0.123456),
     ("-0.250000", POINTS, -0.25), ("12", COUNT, 12), ("", FIGURE, None), ("n/a", FIGURE, "n/a"),
     ("True", FLAG, True), ("False", FLAG, False), (True, FLAG, True), ("#N/A", "text", "#N/A"),
     ("@SUM(A1)", "text", "'@SUM(A1)"), ("\tx", "text", "'\tx"), ("a\x1bb\u202e", "text",
     "a\ufffdb\ufffd"), ("\ud800", "text", "\ufffd")],
)  # fmt: skip
def test_a_cell_holds_a_number_a_flag_or_inert_text(value, kind, expected):
    assert cell_value(value, kind) == expected
    assert type(cell_value(value, kind)) is type(expected)


def test_text_past_what_a_cell_holds_is_cut():
    assert len(inert("x" * (MAX_CELL + 10))) == MAX_CELL


def test_error_codes_and_formulas_are_string_cells(tmp_path):
    from openpyxl import Workbook

    from engine.outputs.workbook import write_sheet

    workbook = Workbook(write_only=True)
    rows = [["#N/A", "=1+1"], ["#DIV/0!", "+1"]]
    write_sheet(workbook.create_sheet("s"), ["a", "b"], rows, ["text", "text"])
    workbook.save(tmp_path / "s.xlsx")
    cells = [c for row in book(tmp_path / "s.xlsx")["s"].iter_rows(min_row=2) for c in row]
    assert [(c.data_type, c.value) for c in cells] == [
        ("s", "#N/A"), ("s", "'=1+1"), ("s", "#DIV/0!"), ("s", "+1")]  # fmt: skip
