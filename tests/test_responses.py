"""Loading responses: delimiters and encodings just work; score labels are coded 0..C with the
originals kept; bad rows stop the load or are skipped, and kept rows keep their row numbers."""

from __future__ import annotations

import numpy as np
import pytest

from engine.core.errors import DataError
from engine.input.responses import (
    MAX_CATEGORIES,
    MIN_RESPONSES,
    code_labels,
    load_responses,
    read_table,
)
from engine.input.settings.config import config_from_dict

HEADER = ["id", "answer", "score"]


def rows_for(n: int, scores=(0, 1, 2)):
    return [[f"s{i}", f"Plants need light {i}", scores[i % len(scores)]] for i in range(n)]


def write(tmp_path, rows, header=HEADER, name="answers.csv", delimiter=",", encoding="utf-8"):
    lines = [delimiter.join(header)] + [delimiter.join(str(v) for v in row) for row in rows]
    path = tmp_path / name
    path.write_bytes(("\n".join(lines) + "\n").encode(encoding))
    return path


def load(path, **settings):
    return load_responses(path, config_from_dict(settings))


@pytest.mark.parametrize(
    ("delimiter", "name"), [(",", "a.csv"), (";", "a.csv"), ("\t", "a.tsv"), ("\t", "a.txt")]
)
def test_delimiters_are_detected(tmp_path, delimiter, name):
    responses = load(write(tmp_path, rows_for(12), delimiter=delimiter, name=name))
    assert len(responses) == 12
    assert responses.texts[0] == "Plants need light 0"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16"])
def test_encodings_are_decoded(tmp_path, encoding):
    rows = rows_for(12)
    rows[0][1] = "Les plantes ont besoin de lumière et d’eau"
    if encoding == "latin-1":
        rows[0][1] = "Les plantes ont besoin de lumière"
    responses = load(write(tmp_path, rows, encoding=encoding))
    assert responses.texts[0] == rows[0][1]
    assert responses.ids[0] == "s0"


def test_bom_does_not_end_up_in_the_first_column_name(tmp_path):
    frame = read_table(write(tmp_path, rows_for(12), encoding="utf-8-sig"))
    assert list(frame.columns) == HEADER


def test_quoted_answers_with_delimiters_and_newlines_are_one_field(tmp_path):
    path = tmp_path / "q.csv"
    body = "".join(f'{i},"Light, water; and\nsoil {i}",{i % 2}\n' for i in range(12))
    path.write_text("id,answer,score\n" + body)
    responses = load(path)
    assert responses.texts[3] == "Light, water; and\nsoil 3"
    assert responses.rows.tolist() == list(range(1, 13))


def test_integer_scores_are_coded_in_numeric_order():
    labels, code, bad = code_labels(["10", "2", "0", "2"])
    assert labels == ("0", "2", "10")
    assert code == {"0": 0, "2": 1, "10": 2}
    assert bad == set()


def test_float_spellings_of_one_score_are_one_category():
    labels, code, _ = code_labels(["2.0", "1", "2", "0.0"])
    assert labels == ("0", "1", "2")
    assert code["2"] == code["2.0"] == 2


def test_text_labels_are_coded_in_sorted_order():
    labels, code, bad = code_labels(["good", "poor", "fair", "good"])
    assert labels == ("fair", "good", "poor")
    assert bad == set()


def test_decimal_scores_sort_numerically():
    labels, code, _ = code_labels(["2", "1.5", "10", "0.5"])
    assert labels == ("0.5", "1.5", "2", "10")
    assert [code[v] for v in ("0.5", "1.5", "2", "10")] == [0, 1, 2, 3]


def test_numeric_scores_are_ordered(tmp_path):
    assert load(write(tmp_path, rows_for(12, scores=(10, 2, 1.5)))).ordered


def test_text_labels_without_an_order_are_nominal_and_say_why(tmp_path):
    responses = load(write(tmp_path, rows_for(12, scores=("low", "medium", "high"))))
    assert not responses.ordered
    assert responses.labels == ("high", "low", "medium")  # codes only; no order is claimed
    note = next(w for w in responses.warnings if "nominal" in w)
    assert "column 'score'" in note and "'high', 'low', 'medium'" in note
    assert "QWK, near agreement" in note and "score_order" in note


def test_score_order_codes_text_labels_in_the_stated_order(tmp_path):
    path = write(tmp_path, rows_for(12, scores=("high", "low", "medium")))
    responses = load(path, score_order=["low", "medium", "high"])
    assert responses.ordered and responses.labels == ("low", "medium", "high")
    np.testing.assert_array_equal(responses.scores[:3], [2, 0, 1])
    assert not any("nominal" in w for w in responses.warnings)


def test_score_order_labels_that_never_occur_are_left_out_with_a_warning(tmp_path):
    path = write(tmp_path, rows_for(12, scores=("low", "high")))
    responses = load(path, score_order=["low", "medium", "high", "top"])
    assert responses.labels == ("low", "high")
    note = next(w for w in responses.warnings if "score_order" in w)
    assert "'medium', 'top'" in note and "column 'score'" in note


def test_labels_missing_from_score_order_are_named_with_their_column(tmp_path):
    path = write(tmp_path, rows_for(12, scores=("low", "medium", "high", "n/a")))
    with pytest.raises(DataError) as caught:
        load(path, score_order=["low", "high"])
    message = str(caught.value)
    assert "column 'score'" in message and "'medium', 'n/a'" in message
    assert "not in score_order (low, high)" in message


def test_second_rater_labels_missing_from_score_order_are_named(tmp_path):
    rows = [
        [*row, "medium" if i == 3 else "low"] for i, row in enumerate(rows_for(12, ("low", "high")))
    ]
    path = write(tmp_path, rows, header=[*HEADER, "score2"])
    with pytest.raises(DataError) as caught:
        load(path, score_order=["low", "high"], second_score_column="score2")
    assert "column 'score2'" in str(caught.value) and "'medium'" in str(caught.value)


def test_non_numbers_among_numeric_scores_are_bad():
    _, _, bad = code_labels(["1", "2", "0", "n/a", "1"])
    assert bad == {"n/a"}


def test_numeric_labels_are_shown_in_one_canonical_spelling(tmp_path):
    responses = load(write(tmp_path, rows_for(12, scores=("1.0", "2.0", "3.0"))))
    assert responses.labels == ("1", "2", "3")
    assert responses.scores[:3].tolist() == [0, 1, 2]


def test_bad_scores_stop_the_load_naming_rows_and_count(tmp_path):
    rows = rows_for(20)
    rows[3][2], rows[7][2], rows[9][2] = "x", "", "abc"
    with pytest.raises(DataError) as caught:
        load(write(tmp_path, rows))
    message = str(caught.value)
    assert "answers.csv" in message
    assert "3 row(s) cannot be used" in message
    assert "score is not a number in 2 row(s) (4, 10)" in message
    assert "missing score in 1 row(s) (8)" in message
    assert 'on_bad_rows to "skip"' in message


def test_skipped_rows_keep_original_row_numbers(tmp_path):
    rows = rows_for(20)
    rows[3][2], rows[7][2] = "x", " "
    responses = load(write(tmp_path, rows), on_bad_rows="skip")
    assert len(responses) == 18
    assert 4 not in responses.rows and 8 not in responses.rows
    assert responses.rows[:5].tolist() == [1, 2, 3, 5, 6]
    assert responses.ids[3] == "s4"
    assert responses.skipped == ((4, "score 'x' is not a number"), (8, "missing score"))
    assert responses.file_rows == 20
    assert any("Skipped 2 row(s)" in w for w in responses.warnings)


def test_blank_texts_are_answers_kept_with_their_scores_and_counted(tmp_path):
    rows = rows_for(20, scores=(0, 1))
    rows[5][1], rows[4] = " ", ["s4", "", 7]
    responses = load(write(tmp_path, rows))
    assert len(responses) == 20 and responses.skipped == ()
    assert responses.blank.tolist() == [i in (4, 5) for i in range(20)]
    assert responses.labels == ("0", "1", "7")
    assert any(w.startswith("2 blank answer(s) (rows 5, 6)") for w in responses.warnings)


def test_score_seen_only_in_skipped_rows_is_no_category(tmp_path):
    rows = [[*row, row[2]] for row in rows_for(20, scores=(0, 1))]
    rows[4] = ["s4", "an answer", "", 7]  # skipped: no first score; its second score is no category
    path = write(tmp_path, rows, header=["id", "answer", "score", "score2"])
    responses = load(path, on_bad_rows="skip", second_score_column="score2")
    assert responses.labels == ("0", "1")


def test_missing_column_lists_the_columns_that_exist(tmp_path):
    with pytest.raises(DataError, match="text column 'essay' does not exist.*id, answer, score"):
        load(write(tmp_path, rows_for(12)), text_column="essay")


def test_missing_id_column_falls_back_to_row_numbers(tmp_path):
    path = write(tmp_path, [row[1:] for row in rows_for(12)], header=["answer", "score"])
    responses = load(path)
    assert responses.ids[:3] == ["1", "2", "3"]
    assert any("id column 'id' does not exist" in w for w in responses.warnings)


def test_duplicate_ids_warn_and_rows_stay_apart(tmp_path):
    rows = rows_for(12)
    rows[5][0] = "s0"
    responses = load(write(tmp_path, rows))
    assert responses.ids[0] == responses.ids[5] == "s0"
    assert any("1 duplicated id(s), e.g. 's0'" in w for w in responses.warnings)


def test_duplicate_column_names_are_refused(tmp_path):
    path = write(tmp_path, rows_for(12), header=["answer", " answer", "score"])
    with pytest.raises(DataError, match="more than one column named 'answer'"):
        read_table(path)


def test_single_category_is_refused(tmp_path):
    with pytest.raises(DataError, match="at least two score categories"):
        load(write(tmp_path, rows_for(12, scores=(1,))))


def test_single_response_category_warns_with_its_row(tmp_path):
    rows = rows_for(60, scores=(0, 1))
    rows[10][2] = 2
    responses = load(write(tmp_path, rows))
    assert any("Score '2'" in w and "single response (row 11)" in w for w in responses.warnings)


def test_score_only_in_second_column_warns(tmp_path):
    rows = [row + [row[2]] for row in rows_for(60, scores=(0, 1))]
    rows[0][3] = 2
    responses = load(
        write(tmp_path, rows, header=HEADER + ["score2"]), second_score_column="score2"
    )
    assert responses.labels == ("0", "1", "2")
    assert responses.second_scores[0] == 2
    assert any("only in the second rater's column" in w for w in responses.warnings)


def test_unreadable_second_scores_count_as_missing(tmp_path):
    rows = [row + [row[2]] for row in rows_for(60)]
    rows[2][3], rows[4][3] = "?", ""
    responses = load(
        write(tmp_path, rows, header=HEADER + ["score2"]), second_score_column="score2"
    )
    assert responses.second_scores[2] == -1 and responses.second_scores[4] == -1
    assert any("1 score(s) that are not numbers (rows 3)" in w for w in responses.warnings)


def test_too_few_responses_are_refused(tmp_path):
    with pytest.raises(DataError, match=f"9 usable response.*at least {MIN_RESPONSES}"):
        load(write(tmp_path, rows_for(9)))


def test_small_file_warns_that_estimates_are_imprecise(tmp_path):
    responses = load(write(tmp_path, rows_for(20)))
    assert any("Only 20 usable responses" in w for w in responses.warnings)
    assert not any("Only" in w for w in load(write(tmp_path, rows_for(60))).warnings)


def test_text_column_chosen_as_score_is_refused(tmp_path):
    with pytest.raises(DataError, match=f"distinct scores.*at most {MAX_CATEGORIES}"):
        load(write(tmp_path, rows_for(60)), score_column="answer")


def test_header_only_file_is_refused(tmp_path):
    with pytest.raises(DataError, match="0 usable response"):
        load(write(tmp_path, []))


def test_scores_are_int_codes(tmp_path):
    responses = load(write(tmp_path, rows_for(12)))
    assert responses.scores.dtype == np.int64
    assert responses.n_classes == 3


def test_responses_differ_when_the_second_score_column_changes(tmp_path):
    from engine.input.responses import load_responses
    from engine.input.settings.config import config_from_dict

    path = tmp_path / "two.csv"
    rows = ["id,answer,score,score2,score3"]
    rows += [f"r{i},answer number {i},{i % 3},{(i + 1) % 3},{i % 3}" for i in range(12)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    first = load_responses(path, config_from_dict({"second_score_column": "score2"}))
    again = load_responses(path, config_from_dict({"second_score_column": "score2"}))
    other = load_responses(path, config_from_dict({"second_score_column": "score3"}))
    without = load_responses(path, config_from_dict({}))
    assert first.same_as(again)
    assert not first.same_as(other)
    assert not first.same_as(without)
