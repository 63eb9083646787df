"""Reading workbooks (engine.input.workbook, engine.input.sheet_table): the sample as .xlsx and
.ods reads and audits as the CSV; header rows below titles, merged header cells, empty rows and
columns, cached formula values, numbers, dates and ids as the sheet shows them; the sheet's
guess and its question; errors naming the sheet, the row and the column."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib

import numpy as np
import pandas as pd
import pytest
from helpers import FAST_CLI, SAMPLE_CSV, cli, clustered_embeddings, parm_command
from workbooks import (
    sample_rows,
    scored_rows,
    with_cached_values,
    write_ods,
    write_xlsx,
)

from engine import workspace
from engine.core.errors import DataError
from engine.input.items import load_items
from engine.input.settings.config import config_from_dict
from engine.input.sheet_table import column_letter, number_text, sheet_table
from engine.input.table import read_table
from engine.input.times import parse_times
from engine.input.workbook import file_kind, placed, read_file, read_sheets

HEADER = ["id", "answer", "score"]


@pytest.fixture(scope="module")
def sample_xlsx(tmp_path_factory):
    header, rows = sample_rows()
    path = tmp_path_factory.mktemp("book") / "plant_growth.xlsx"
    return write_xlsx(path, {"Scores": [header, *rows]})


@pytest.mark.parametrize("kind", ["xlsx", "ods"])
def test_the_sample_as_a_workbook_reads_as_the_csv(tmp_path, sample_xlsx, kind):
    header, rows = sample_rows()
    path = sample_xlsx if kind == "xlsx" else write_ods(tmp_path / "p.ods", {"S": [header, *rows]})
    frame = read_file(path)
    expected = read_table(SAMPLE_CSV)
    pd.testing.assert_frame_equal(frame, expected, check_dtype=False)
    assert frame.attrs["place"].sheet in ("Scores", "S")
    assert frame.attrs["place"].rows.tolist() == list(range(2, len(rows) + 2))


def test_the_sample_as_a_workbook_audits_to_the_csvs_predictions(tmp_path, sample_xlsx):
    """The same vectors for both (the bundled model's own run is the slow test below): the
    same answers, scores, rows and ids give the same predictions, row for row."""
    vectors, _ = clustered_embeddings(758, 3, seed=4)
    np.save(tmp_path / "v.npy", vectors)
    outputs = {}
    for name, source in (("csv", SAMPLE_CSV), ("xlsx", sample_xlsx)):
        out = tmp_path / name
        code, output = cli(source, "--embeddings", tmp_path / "v.npy", "--out", out, *FAST_CLI)
        assert code == 0, output
        outputs[name] = _without_run(out / "predictions.csv")
    assert outputs["xlsx"] == outputs["csv"]
    assert len(outputs["csv"]) == 759


@pytest.mark.slow
def test_the_sample_as_a_workbook_audits_as_the_csv_with_the_bundled_model(tmp_path, sample_xlsx):
    quick = ("--set", "bootstrap_samples=0", "--set", "cross_fit_folds=0", *FAST_CLI)
    for name, source in (("csv", SAMPLE_CSV), ("xlsx", sample_xlsx)):
        code, output = cli(source, "--out", tmp_path / name, *quick)
        assert code == 0, output
    csv_rows = _without_run(tmp_path / "csv" / "predictions.csv")
    assert _without_run(tmp_path / "xlsx" / "predictions.csv") == csv_rows


def _without_run(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [row[:-1] for row in csv.reader(handle)]


def test_the_digest_is_the_sha256_of_the_files_bytes(sample_xlsx):
    opened = workspace.open_file(sample_xlsx, runs=False)
    assert opened.digest == hashlib.sha256(sample_xlsx.read_bytes()).hexdigest()
    assert (opened.sheet, opened.sheets, opened.sheet_question()) == ("Scores", ("Scores",), None)


# -- the table on the sheet ---------------------------------------------------------------------
def test_the_header_is_found_below_title_rows_and_empty_rows_are_left_out(tmp_path):
    rows = scored_rows(12)
    sheet = [["Term 2 marks"], ["Class:", "5B"], [], HEADER, *rows[:5], [], [None, " "],
             *rows[5:], [], [], [None, None, None, None, ""]]  # fmt: skip
    path = write_xlsx(tmp_path / "t.xlsx", {"Marks": sheet}, {"Marks": ["A1:D1"]})
    frame = read_file(path)
    assert list(frame.columns) == HEADER
    assert frame["id"].tolist() == [r[0] for r in rows]
    place = frame.attrs["place"]
    assert place.header_row == 4
    assert place.rows.tolist() == [5, 6, 7, 8, 9, *range(12, 19)]
    notes = frame.attrs["warnings"]
    assert any("header is on row 4 and 2 empty row(s)" in n for n in notes)


def test_metadata_lines_above_the_header_are_not_taken_for_it():
    grid = [["School:", "Greenfield"], ["Teacher:", "Smith"], [], HEADER, ["S1", "roots", 1]]
    table = sheet_table(grid)
    assert table.names == HEADER and table.header_row == 4


def test_column_names_that_are_numbers_are_names():
    grid = [
        ["Marks"],
        ["id", "answer", 1.0, 2.0],
        ["S1", "roots", 1.0, 2.0],
        ["S2", "light", 0.0, 1.0],
    ]
    table = sheet_table(grid)
    assert table.names == ["id", "answer", "1", "2"] and table.header_row == 2
    assert table.columns[2] == ["1", "0"]


def test_a_table_far_down_the_sheet_is_found(tmp_path):
    sheet = [[None]] * 60 + [["Marks"], HEADER, *scored_rows(12)]
    frame = read_file(write_xlsx(tmp_path / "far.xlsx", {"S": sheet}))
    assert list(frame.columns) == HEADER and frame.attrs["place"].header_row == 62


def test_a_header_cell_merged_over_two_named_columns_joins_their_names(tmp_path):
    sheet = [["id", "answer", "Score", None], [None, None, "R1", "R2"],
             *[[f"S{i}", f"answer {i}", i % 3, (i + 1) % 3] for i in range(12)]]  # fmt: skip
    merges = {"S": ["C1:D1", "A1:A2", "B1:B2"]}
    frame = read_file(write_xlsx(tmp_path / "m.xlsx", {"S": sheet}, merges))
    assert list(frame.columns) == ["id", "answer", "Score R1", "Score R2"]
    assert frame.attrs["place"].header_row == 2
    assert frame["Score R2"].tolist()[:3] == ["1", "2", "0"]


def test_a_merged_header_over_an_empty_column_names_one_column(tmp_path):
    sheet = [
        ["id", "answer", None, "score"],
        *[[f"S{i}", f"a {i}", None, i % 2] for i in range(12)],
    ]
    frame = read_file(write_xlsx(tmp_path / "w.xlsx", {"S": sheet}, {"S": ["B1:C1"]}))
    assert list(frame.columns) == ["id", "answer", "score"]
    assert frame.attrs["place"].letters == {"id": "A", "answer": "B", "score": "D"}


def test_merged_cells_below_the_header_fill_every_row_they_cover(tmp_path):
    sheet = [["item", "answer", "score"], *[["Q1" if i == 0 else None, f"a {i}", i % 2]
                                            for i in range(12)]]  # fmt: skip
    frame = read_file(write_xlsx(tmp_path / "v.xlsx", {"S": sheet}, {"S": ["A2:A13"]}))
    assert frame["item"].tolist() == ["Q1"] * 12


def test_a_column_without_a_name_is_named_by_its_letter(tmp_path):
    sheet = [["id", "answer", "score", None], *[[f"S{i}", f"a {i}", i % 2, "x"] for i in range(12)]]
    frame = read_file(write_xlsx(tmp_path / "n.xlsx", {"S": sheet}))
    assert list(frame.columns) == ["id", "answer", "score", "column D"]
    assert any("D: column D" in note for note in frame.attrs["warnings"])


def test_cells_read_as_the_sheet_shows_them(tmp_path):
    when = dt.datetime(2026, 3, 5, 14, 30)
    sheet = [["id", "answer", "score", "marked_at", "day", "clock", "ok"],
             ["00123", "roots", 2.0, when, dt.date(2026, 3, 5), dt.time(9, 15), True],
             ["124", "light", 2.5, when + dt.timedelta(hours=1), dt.date(2026, 3, 6),
              dt.time(10, 0), False],
             [125, "water", 0.1 + 0.2, when, dt.date(2026, 3, 7), dt.time(23, 59, 30), True]]  # fmt: skip
    frame = read_file(write_xlsx(tmp_path / "c.xlsx", {"S": sheet}))
    assert frame["id"].tolist() == ["00123", "124", "125"]
    assert frame["score"].tolist() == ["2", "2.5", "0.3"]
    assert frame["marked_at"].tolist()[:2] == ["2026-03-05 14:30:00", "2026-03-05 15:30:00"]
    assert frame["day"].tolist() == ["2026-03-05", "2026-03-06", "2026-03-07"]
    assert frame["clock"].tolist() == ["09:15:00", "10:00:00", "23:59:30"]
    assert frame["ok"].tolist() == ["TRUE", "FALSE", "TRUE"]
    # The time column reads them: seconds since 1970, an hour apart.
    times = parse_times(frame["marked_at"].tolist(), np.arange(1, 4), "marked_at", "c.xlsx")
    assert times[1] - times[0] == 3600 and times[0] == when.replace(tzinfo=dt.UTC).timestamp()


@pytest.mark.parametrize(
    ("value", "text"),
    [(2.0, "2"), (-3.0, "-3"), (2.5, "2.5"), (0.1 + 0.2, "0.3"), (1 / 3, "0.333333333333333"),
     (1e20, "1e+20"), (123456789012.0, "123456789012"), (float("nan"), "")],
)  # fmt: skip
def test_numbers_keep_the_fifteen_digits_a_spreadsheet_keeps(value, text):
    assert number_text(value) == text


def test_formulas_are_read_as_the_values_the_file_saved_never_evaluated(tmp_path):
    sheet = [HEADER + ["double", "label"],
             *[[f"S{i}", f"answer {i}", i % 3, f"=C{i + 2}*2", f'=IF(C{i + 2}>0,"up","")']
               for i in range(12)]]  # fmt: skip
    path = write_xlsx(tmp_path / "f.xlsx", {"S": sheet})
    cached = {f"D{i + 2}": 100 + i for i in range(11)} | {"E2": "cached text"}
    frame = read_file(with_cached_values(path, cached))
    # The saved values, not what the formulas would compute now (C2*2 is 0, not 100).
    assert frame["double"].tolist()[:3] == ["100", "101", "102"]
    assert frame["double"].tolist()[11] == ""  # no saved value: nothing to read
    assert frame["label"].tolist()[0] == "cached text"


def test_control_characters_in_cells_and_names_are_replaced(tmp_path):
    """C1 controls and bidi overrides as written; ESC as Excel writes it into the file's XML
    (_x001B_), which the reader decodes."""
    sheet = [["id", "answer_x001B_[2J", "score"],
             *[[f"S{i}", f"a\x9b31m {i}\u202e_x001B_]52;c;", i % 2] for i in range(12)]]  # fmt: skip
    frame = read_file(write_xlsx(tmp_path / "h.xlsx", {"S": sheet}))
    assert list(frame.columns) == ["id", "answer\ufffd[2J", "score"]
    assert frame.iloc[0, 1] == "a\ufffd31m 0\ufffd\ufffd]52;c;"
    assert any("36 control character(s)" in note for note in frame.attrs["warnings"])


def test_characters_misread_as_latin_1_in_cells_are_restored(tmp_path):
    """A right quote's UTF-8 bytes read back as Latin-1 ("donâ\x80\x99t") is restored, as in a
    CSV (engine.core.text.repair_misread), and said apart from the controls replaced."""
    sheet = [["id", "answer", "score"],
             *[[f"S{i}", f"don\u00e2\x80\x99t {i}", i % 2] for i in range(12)]]  # fmt: skip
    frame = read_file(write_xlsx(tmp_path / "m.xlsx", {"S": sheet}))
    assert frame.iloc[0, 1] == "don’t 0"
    assert any("12 character(s) whose UTF-8 bytes" in note for note in frame.attrs["warnings"])
    assert not any("control character" in note for note in frame.attrs["warnings"])


# -- which sheet --------------------------------------------------------------------------------
def two_sheets(tmp_path, name="two.xlsx"):
    notes = [["note"], ["read me"]]
    rubric = [["score", "description"], [0, "nothing right"], [1, "one idea"], [2, "both"]]
    sheets = {"Notes": notes, "Rubric": rubric, "Term 1": [HEADER, *scored_rows(20)],
              "Term 2": [HEADER, *scored_rows(16, start=100)]}  # fmt: skip
    return write_xlsx(tmp_path / name, sheets)


def test_the_sheet_with_answers_and_scores_is_read(tmp_path):
    sheets = {"Notes": [["note"], ["read me"]], "Marks": [HEADER, *scored_rows(20)]}
    read = read_sheets(write_xlsx(tmp_path / "one.xlsx", sheets))
    assert (read.sheet, read.candidates, read.question()) == ("Marks", (), None)
    assert any("'Marks' was read" in note for note in read.frame.attrs["warnings"])


def test_two_qualifying_sheets_make_a_question_the_cli_asks_with_sheet(tmp_path):
    path = two_sheets(tmp_path)
    read = read_sheets(path)
    assert read.candidates == ("Term 1", "Term 2")
    assert "'Term 1', 'Term 2'" in read.question()
    code, output = cli(path, "--out", tmp_path / "o", *FAST_CLI)
    assert code == 2
    assert "'Term 1', 'Term 2'" in output and "--sheet" in output and "two.xlsx" in output
    with pytest.raises(DataError, match="Term 1"):
        read_file(path)
    assert read_sheets(path, "Term 2").frame["id"].tolist()[0] == "S100"


def test_a_hidden_sheet_is_not_guessed_but_can_be_named(tmp_path):
    from openpyxl import load_workbook

    path = two_sheets(tmp_path)
    book = load_workbook(path)
    book["Term 1"].sheet_state = "hidden"
    book.save(path)
    assert (read_sheets(path).sheet, read_sheets(path).candidates) == ("Term 2", ())
    assert read_sheets(path, "Term 1").frame["id"].tolist()[0] == "S000"


def test_a_sheet_that_does_not_exist_is_named_with_the_closest_one(tmp_path):
    with pytest.raises(DataError, match=r"no sheet 'term 2'\. Did you mean 'Term 2'\?.*'Notes'"):
        read_sheets(two_sheets(tmp_path), "term 2")


def test_a_sheet_named_for_a_csv_is_noted_and_not_used():
    frame = read_sheets(SAMPLE_CSV, "Term 2").frame
    assert any("has no sheets" in note for note in frame.attrs["warnings"])


def test_an_audit_of_a_named_sheet_keeps_it_and_export_reads_it_again(tmp_path):
    path = two_sheets(tmp_path)
    vectors, _ = clustered_embeddings(16, 3, seed=2)
    np.save(tmp_path / "v.npy", vectors)
    args = ("--embeddings", tmp_path / "v.npy", "--out", tmp_path / "a", *FAST_CLI)
    code, output = cli(path, "--sheet", "Term 2", *args)
    assert code == 0, output
    code, output = parm_command("export", path, "--out", tmp_path / "e")
    assert code == 0, output
    with open(tmp_path / "e" / "scores_reviewed.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["id"] for row in rows] == [r[0] for r in scored_rows(16, start=100)]


# -- errors name the sheet, the row and the column ----------------------------------------------
def test_a_bad_score_is_named_by_sheet_row_and_column_letter(tmp_path):
    rows = scored_rows(14)
    rows[5][2] = "lots"
    sheet = [["Marks of term 2"], [], HEADER, *rows]
    path = write_xlsx(tmp_path / "bad.xlsx", {"Term 2": sheet})
    with pytest.raises(DataError) as caught:
        load_items(path, config_from_dict({}))
    message = str(caught.value)
    assert "bad.xlsx" in message and "sheet 'Term 2'" in message
    assert "data row 6 is row 9" in message and "'score' is column C" in message


@pytest.mark.parametrize(
    ("sheet", "expected"),
    [
        ([["id", "score", "id"], ["a", 1, "b"]], r"sheet 'S': the header on row 1 names column "
         r"'id' 2 times \(columns A, C\)"),
        ([["just one title"], [1], [2]], r"sheet 'S': no header row in the first 50 rows"),
        ([[None], [None]], r"sheet 'S' is empty"),
    ],
    ids=["repeated column", "no header", "empty"],
)  # fmt: skip
def test_a_sheet_that_is_no_table_is_named(tmp_path, sheet, expected):
    path = write_xlsx(tmp_path / "x.xlsx", {"S": sheet})
    with pytest.raises(DataError, match=expected):
        read_file(path)


def test_a_damaged_workbook_is_named_and_the_way_out_said(tmp_path):
    path = tmp_path / "broken.xlsx"
    path.write_bytes(write_xlsx(tmp_path / "ok.xlsx", {"S": [HEADER]}).read_bytes()[:300])
    with pytest.raises(DataError, match=r"broken.xlsx looks like a workbook but cannot be read"):
        read_file(path)


def test_placed_names_the_sheet_rows_and_columns_of_a_message():
    place = read_file_place()
    message = placed("x.xlsx: column 'score' is bad in rows 2, 3 and 40 more.", place)
    assert message.endswith(
        "(sheet 'S': data row 2 is row 6, data row 3 is row 9; column 'score' is column D)"
    )
    assert "counted from the header on row 4" in placed("x.xlsx: too few answers.", place)


def read_file_place():
    from engine.input.workbook import SheetPlace

    return SheetPlace("x.xlsx", "S", 4, np.array([5, 6, 9]), {"id": "A", "score": "D"})


def test_parquet_without_an_engine_says_what_to_install(tmp_path, monkeypatch):
    path = tmp_path / "scores.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 32 + b"PAR1")
    assert file_kind(path) == "parquet"

    def no_engine(*args, **kwargs):
        raise ImportError("Unable to find a usable engine")

    monkeypatch.setattr(pd, "read_parquet", no_engine)
    with pytest.raises(DataError, match="Parquet file; reading it needs pyarrow"):
        read_file(path)


def test_parquet_is_read_as_a_csv_of_it_would_be(tmp_path):
    pytest.importorskip("pyarrow")  # parm does not install it: read only where it is
    frame = pd.DataFrame({"id": ["007", "8"], "answer": ["a", "b"], "score": [2.0, 1.5]})
    frame.to_parquet(tmp_path / "s.parquet")
    read = read_file(tmp_path / "s.parquet")
    assert read["id"].tolist() == ["007", "8"] and read["score"].tolist() == ["2", "1.5"]


def test_column_letters():
    assert [column_letter(j) for j in (0, 25, 26, 51, 52, 701, 702)] == [
        "A", "Z", "AA", "AZ", "BA", "ZZ", "AAA"]  # fmt: skip
