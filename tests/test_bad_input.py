"""Bad input through the real CLI: each case exits non-zero with one clear message that names
the file, row, column or setting, and never a traceback. Also: exports are all-or-nothing, a
bug is reported as an internal error with a log file, and numerical trouble is a warning."""

from __future__ import annotations

import csv
import errno
import os
from pathlib import Path

import helpers
import numpy as np
import pandas as pd
import pytest
from helpers import FAST_CLI, TALKING_CLI, cli, clustered_embeddings, unfaulted_keep, write_rows

from engine.core import files
from engine.core.errors import ExportError
from engine.embedding.vectors import Embedded
from engine.input.responses import Responses
from engine.input.settings.config import config_from_dict
from engine.outputs import write as export
from engine.pipeline import run_audit

N = 60


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A valid 60-row file, its embeddings, and an output folder name."""
    folder = tmp_path_factory.mktemp("good")
    vectors, scores = clustered_embeddings(N, 3, seed=3)
    rows = [[f"s{i}", f"Plants need light {i}", int(scores[i])] for i in range(N)]
    np.save(folder / "emb.npy", vectors)
    write_rows(folder / "answers.csv", ["id", "answer", "score"], rows)
    return folder, rows


def audit_rows(tmp_path, good, change, *extra):
    """Run the CLI on the good rows after `change(rows)`, with the good embeddings."""
    folder, rows = good
    rows = [list(r) for r in rows]
    change(rows)
    path = write_rows(tmp_path / "edited.csv", ["id", "answer", "score"], rows)
    return cli(
        path, "--embeddings", folder / "emb.npy", "--out", tmp_path / "out", *TALKING_CLI, *extra
    )


# -- the input file ----------------------------------------------------------------------------
FILE_CASES = {
    "missing": (None, "File not found"),
    "empty": (b"", "is empty"),
    "blank lines only": (b"\n\n  \n", "is empty"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "looks binary"),
    "excel workbook": (b"PK\x03\x04\x14\x00\x06\x00", "Excel .xlsx workbook?"),
    "one column, not a table": (
        b"just some words\nmore words\n",
        "this does not look like a CSV/TSV file: it has 1 column",
    ),
    # pandas would make the first column the index and shift the others left.
    "a first row longer than the header": (
        b"id,answer,score\n1,roots,1,extra\n2,light,0\n",
        "this does not look like a CSV/TSV file: line 2 has 4 fields where the first line",
    ),
    "a Markdown file": (
        b"# parm\n\nAudit the scores\nof free-text answers, with a model.\n",
        "this does not look like a CSV/TSV file: line 4 has 2 fields where the first line",
    ),
    "header only": (b"id,answer,score\n", "0 usable response(s)"),
    "unbalanced quote": (b'id,answer,score\n1,"open quote,1\n2,b,0\n', "EOF inside string"),
}


@pytest.mark.parametrize("case", FILE_CASES)
def test_unusable_file_is_named_in_a_one_line_error(tmp_path, case):
    content, expected = FILE_CASES[case]
    path = tmp_path / "input.csv"
    if content is not None:
        path.write_bytes(content)
    code, output = cli(path, *FAST_CLI)
    assert code == 2
    assert output.startswith("Error: ")
    assert expected in output
    assert "input.csv" in output


def test_folder_given_as_file_is_refused(tmp_path):
    code, output = cli(tmp_path, *FAST_CLI)
    assert code == 2 and "is a folder, not a regular file" in output


def test_unreadable_file_says_why(tmp_path, good, monkeypatch):
    real_open = os.open

    def refuse(path, *args, **kwargs):
        if str(path).endswith("answers.csv"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(files.os, "open", refuse)
    code, output = cli(good[0] / "answers.csv", *FAST_CLI)
    assert code == 2
    assert "answers.csv cannot be read: permission denied" in output


# -- columns and rows --------------------------------------------------------------------------
def set_score(row_index, value):
    def change(rows):
        rows[row_index][2] = value

    return change


def set_text(row_index, value):
    def change(rows):
        rows[row_index][1] = value

    return change


ROW_CASES = {
    "score not a number": (set_score(4, "high"), "score is not a number in 1 row(s) (5)"),
    "score missing": (set_score(9, ""), "missing score in 1 row(s) (10)"),
}


@pytest.mark.parametrize("blank", ["", " \t "])
def test_blank_answers_are_audited_not_bad_rows(tmp_path, good, blank):
    code, output = audit_rows(tmp_path, good, set_text(59, blank))
    assert code == 0, output
    assert "1 blank answer(s) (rows 60)" in output
    with open(tmp_path / "out" / "predictions.csv", newline="", encoding="utf-8") as handle:
        rows = [int(r["row"]) for r in csv.DictReader(handle)]
    assert len(rows) == N and 60 in rows


@pytest.mark.parametrize("case", ROW_CASES)
def test_bad_rows_stop_the_run_by_default(tmp_path, good, case):
    change, expected = ROW_CASES[case]
    code, output = audit_rows(tmp_path, good, change)
    assert code == 2
    assert expected in output and "edited.csv" in output and 'on_bad_rows to "skip"' in output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", ROW_CASES)
def test_bad_rows_are_skipped_when_asked_and_rows_keep_numbers(tmp_path, good, case):
    change, expected = ROW_CASES[case]
    code, output = audit_rows(tmp_path, good, change, "--set", "on_bad_rows=skip")
    assert code == 0, output
    assert "Warning: Skipped 1 row(s): " + expected in output
    with open(tmp_path / "out" / "predictions.csv", newline="", encoding="utf-8") as handle:
        rows = [int(r["row"]) for r in csv.DictReader(handle)]
    assert len(rows) == N - 1
    assert set(range(1, N + 1)) - set(rows) == {int(expected.split("(")[-1].rstrip(")"))}


@pytest.mark.parametrize(
    ("flag", "name", "role"),
    [("--text-col", "essay", "text"), ("--score-col", "grade", "score")],
)
def test_missing_column_lists_the_columns_that_exist(good, flag, name, role):
    code, output = cli(good[0] / "answers.csv", flag, name, *FAST_CLI)
    assert code == 2
    assert f"the {role} column '{name}' does not exist" in output
    assert "Columns in the file: id, answer, score" in output


def test_single_score_category_is_refused(tmp_path, good):
    code, output = audit_rows(tmp_path, good, lambda rows: [r.__setitem__(2, 1) for r in rows])
    assert code == 2 and "at least two score categories" in output


def test_too_few_responses_are_refused(tmp_path):
    path = write_rows(tmp_path / "few.csv", ["answer", "score"], [["a", 0], ["b", 1]] * 4)
    code, output = cli(path, *FAST_CLI)
    assert code == 2 and "8 usable response(s); parm needs at least 10" in output


def test_duplicate_ids_and_single_response_category_warn_but_run(tmp_path, good):
    def change(rows):
        rows[1][0] = rows[0][0]
        for row in rows:
            row[2] = min(int(row[2]), 1)
        rows[7][2] = 2

    code, output = audit_rows(tmp_path, good, change)
    assert code == 0, output
    assert "Warning: Column 'id' has 1 duplicated id(s)" in output
    assert "Score '2' in column 'score' has a single response (row 8)" in output


@pytest.mark.parametrize(
    ("delimiter", "encoding"), [(";", "latin-1"), ("\t", "utf-8-sig"), (",", "cp1252")]
)
def test_other_delimiters_and_encodings_just_work(tmp_path, good, delimiter, encoding):
    folder, rows = good
    rows = [[r[0], "Lumière et eau " + r[1], r[2]] for r in rows]
    path = write_rows(tmp_path / "fr.csv", ["id", "answer", "score"], rows, delimiter, encoding)
    code, output = cli(path, "--embeddings", folder / "emb.npy", "--out", tmp_path / "o", *FAST_CLI)
    assert code == 0, output
    predictions = (tmp_path / "o" / "predictions.csv").read_text(encoding="utf-8")
    assert "Lumière et eau Plants need light 0" in predictions


# -- settings ----------------------------------------------------------------------------------
CONFIG_CASES = {
    "K zero": ("similarity_top_k=0", "'similarity_top_k' = 0"),
    "K negative": ("similarity_top_k=-4", "'similarity_top_k' = -4"),
    "K not below N": ("similarity_top_k=60", "smaller than the number of responses (60)"),
    "power zero": ("similarity_power=0", "'similarity_power' = 0"),
    "power negative": ("similarity_power=-1", "expected a finite number > 0"),
    "interval min >= max": ('similarity_power={"min":3,"max":1}', "min < max"),
    "unknown metric": ("selection_metric=auc", "'selection_metric' = \"auc\""),
    "unknown key": ("top_k=5", "Unknown setting 'top_k'"),
    "not KEY=VALUE": ("similarity_top_k", "--set expects KEY=VALUE"),
    "bad on_bad_rows": ("on_bad_rows=drop", "expected one of error, skip"),
}


@pytest.mark.parametrize("case", CONFIG_CASES)
def test_invalid_setting_is_named(tmp_path, good, case):
    setting, expected = CONFIG_CASES[case]
    folder, _ = good
    code, output = cli(
        folder / "answers.csv", "--embeddings", folder / "emb.npy", "--out", tmp_path / "o",
        "--set", setting, "-q",
    )  # fmt: skip
    assert code == 2
    assert output.startswith("Error: ") and expected in output
    assert not (tmp_path / "o").exists()


def test_k_grid_partly_too_large_runs_with_a_warning(tmp_path, good):
    folder, _ = good
    code, output = cli(
        folder / "answers.csv", "--embeddings", folder / "emb.npy", "--out", tmp_path / "o",
        "--set", "similarity_top_k=[5,59,60,100]",
    )  # fmt: skip
    assert code == 0, output
    assert "left out K = 60, 100, not smaller than the number of responses (60)" in output


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "is not valid JSON (line 1, column 2)"),
        ('{"similarity_power": {"min": 2, "max": 2}}', "min < max"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_bad_config_file_is_named(tmp_path, good, content, expected):
    settings = tmp_path / "settings.json"
    settings.write_text(content)
    code, output = cli(good[0] / "answers.csv", "--config", settings, "-q")
    assert code == 2 and "settings.json" in output and expected in output


# -- embeddings --------------------------------------------------------------------------------
@pytest.mark.slow
def test_model_that_cannot_load_offline_names_the_bundled_default(tmp_path, good):
    code, output = cli(
        good[0] / "answers.csv", "--out", tmp_path / "o", "--set", "embedding_model=no-such/model",
        *FAST_CLI,
    )  # fmt: skip
    assert code == 2
    assert "Embedding model 'no-such/model' could not be loaded" in output
    assert "The bundled default 'sentence-transformers/all-MiniLM-L6-v2' works offline" in output


EMBEDDING_CASES = {
    "wrong row count": (lambda v: v[:-3], "has 57 rows but the input has 60 data rows"),
    "non-finite": (lambda v: np.where(np.arange(N)[:, None] == 7, np.nan, v), "data rows 8"),
    "one dimension": (lambda v: v[:, 0], "expected (rows, dim)"),
    "text values": (lambda v: v.astype(str), "expected numbers"),
}


@pytest.mark.parametrize("case", EMBEDDING_CASES)
def test_bad_precomputed_embeddings_are_named(tmp_path, good, case):
    change, expected = EMBEDDING_CASES[case]
    folder, _ = good
    np.save(tmp_path / "bad.npy", change(np.load(folder / "emb.npy")))
    code, output = cli(folder / "answers.csv", "--embeddings", tmp_path / "bad.npy", *FAST_CLI)
    assert code == 2 and "bad.npy" in output and expected in output


def test_missing_or_unreadable_embeddings_file_is_named(tmp_path, good):
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    for name, expected in (("nothere.npy", "not found"), ("junk.npy", "not a readable .npy")):
        code, output = cli(good[0] / "answers.csv", "--embeddings", tmp_path / name, *FAST_CLI)
        assert code == 2 and name in output and expected in output


# -- the output folder -------------------------------------------------------------------------
def test_output_path_that_is_a_file_is_refused(tmp_path, good):
    folder, _ = good
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    for out in (blocker, blocker / "sub"):
        code, output = cli(folder / "answers.csv", "--embeddings", folder / "emb.npy",
                           "--out", out, *FAST_CLI)  # fmt: skip
        assert code == 2 and "blocker" in output and "not a folder" in output


def test_unwritable_output_folder_is_refused_before_the_run(tmp_path, good, monkeypatch):
    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(export.tempfile, "TemporaryFile", read_only)
    folder, _ = good
    code, output = cli(folder / "answers.csv", "--embeddings", folder / "emb.npy",
                       "--out", tmp_path / "o", *FAST_CLI)  # fmt: skip
    assert (
        code == 2
        and "Output folder" in output
        and "is not writable: read-only file system" in output
    )


def test_existing_outputs_are_not_overwritten_without_force(tmp_path, good):
    folder, _ = good
    args = [folder / "answers.csv", "--embeddings", folder / "emb.npy", "--out", tmp_path / "o"]
    assert cli(*args, *FAST_CLI)[0] == 0
    code, output = cli(*args, *FAST_CLI)
    assert code == 2 and "already has predictions.csv" in output and "--force" in output
    assert cli(*args, *FAST_CLI, "--force")[0] == 0


# -- exports are all or nothing ----------------------------------------------------------------
@pytest.fixture(scope="module")
def small_result():
    return helpers.small_result(text="=cmd {}")  # a formula in every answer


def snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def full_disk_on_call(target, number):
    calls = {"n": 0}

    def failing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == number:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return target(*args, **kwargs)

    return failing


@pytest.mark.parametrize(("where", "call"), [("fsync", 1), ("fsync", 3), ("replace", 1)])
def test_full_disk_during_export_keeps_previous_outputs(tmp_path, small_result, where, call):
    out = tmp_path / "out"
    export.write_outputs(small_result, out)
    before = snapshot(out)
    (out / "report.md").write_text("previous report")
    before["report.md"] = b"previous report"
    patch = pytest.MonkeyPatch()
    patch.setattr(files.os, where, full_disk_on_call(getattr(os, where), call))
    try:
        with pytest.raises(ExportError, match="Could not write .*: the disk is full"):
            export.write_outputs(small_result, out, overwrite=True)
    finally:
        patch.undo()
    assert snapshot(out) == before
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_interrupted_export_leaves_no_temporary_files(tmp_path, small_result, monkeypatch):
    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "fsync", full_disk_on_call(os.fsync, 99))
    monkeypatch.setattr(files.os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        export.write_outputs(small_result, tmp_path / "out")
    # The set was being written in a sibling folder: neither it nor the output folder is left.
    assert list(tmp_path.iterdir()) == []


def test_full_disk_in_cli_export_is_one_line(tmp_path, good, monkeypatch):
    unfaulted_keep(monkeypatch)
    monkeypatch.setattr(files.os, "fsync", full_disk_on_call(os.fsync, 2))
    folder, _ = good
    code, output = cli(folder / "answers.csv", "--embeddings", folder / "emb.npy",
                       "--out", tmp_path / "o", *FAST_CLI)  # fmt: skip
    assert code == 2
    assert output.strip().count("\n") == 0 and "the disk is full" in output
    assert not list((tmp_path / "o").glob("*.csv"))


def test_formula_cells_are_guarded_in_predictions(tmp_path, small_result):
    export.write_outputs(small_result, tmp_path)
    assert "'=cmd 0" in (tmp_path / "predictions.csv").read_text(encoding="utf-8")


# -- bugs and numerical trouble ----------------------------------------------------------------
def test_internal_error_prints_one_line_and_writes_a_log(tmp_path, good, monkeypatch):
    import engine.session

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(engine.session, "run_session", broken)
    folder, _ = good
    code, output = cli(folder / "answers.csv", "--embeddings", folder / "emb.npy",
                       "--out", tmp_path / "o", *FAST_CLI)  # fmt: skip
    assert code == 1
    assert output.startswith("Internal error: RuntimeError: boom (details in ")
    log = output.strip().split("details in ", 1)[1].rstrip(")")
    assert log.startswith(os.environ["PARM_DATA_DIR"])
    text = open(log, encoding="utf-8").read()
    assert "Traceback" in text and "RuntimeError: boom" in text


def test_separable_categories_are_reported_as_a_warning():
    n = 60
    scores = np.arange(n) % 3
    rng = np.random.default_rng(1)
    vectors = np.eye(8)[scores] + 0.01 * rng.normal(size=(n, 8))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    responses = Responses(
        texts=[f"t{i}" for i in range(n)],
        scores=scores,
        labels=("0", "1", "2"),
        ids=[str(i) for i in range(n)],
        rows=np.arange(1, n + 1),
    )
    config = config_from_dict({"similarity_top_k": [5], "similarity_power": 1.0})
    result = run_audit(responses, config, embedded=Embedded.precomputed(vectors))
    assert any("perfectly separated" in w for w in result.warnings)


def test_overlapping_categories_give_no_separation_warning(small_result):
    assert not any("perfectly separated" in w for w in small_result.warnings)


@pytest.mark.slow
def test_long_texts_are_counted_as_truncated_also_from_the_cache():
    from engine.embedding.sentence import embed_texts

    texts = [f"Plants need light {i}." for i in range(11)]
    texts.append("Plants need light and water and soil. " * 120)
    first = embed_texts(texts)[1]
    cached = embed_texts(texts)[1]
    assert first.truncated == 1
    assert cached.cached is True and cached.truncated == 1


def test_exports_follow_the_umask_not_mkstemps_private_mode(tmp_path):
    import os
    import stat

    from engine.core.files import atomic_write_text

    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "shared.csv", "a,b\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "shared.csv").stat().st_mode) == 0o644


# -- a column that cannot hold scores, stopped before anything is embedded -------------------------
@pytest.fixture
def nothing_embedded(monkeypatch):
    """The run must stop before a model is loaded or anything embedded: both fail the test."""
    from engine import workspace

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded or answers embedded")

    monkeypatch.setattr(workspace, "preload", refuse)
    monkeypatch.setattr(workspace, "run", refuse)


def many_items(tmp_path, items=30, per_item=12):
    """Mohler in miniature: many small items, half-point scores read twice, text answers."""
    rng = np.random.default_rng(7)
    rows = []
    for g in range(items):
        for i in range(per_item):
            score = rng.integers(0, 11) / 2
            rows.append([f"{g}-{i}", f"Q{g}", f"answer {i} to question {g}", score, score])
    header = ["id", "question_id", "answer", "score_grader1", "score_grader2"]
    return write_rows(tmp_path / "many.csv", header, rows)


@pytest.mark.parametrize(
    ("flags", "column"),
    [
        (["--score-col", "answer", "--set", "on_bad_rows=skip"], "answer"),
        (["--score-col", "answer"], "answer"),
        (["--score-col", "id"], "id"),
        (["--second-score-col", "answer"], "answer"),
    ],
)
def test_a_column_of_text_or_ids_named_as_scores_stops_at_once(
    tmp_path, nothing_embedded, flags, column
):
    path = many_items(tmp_path)
    code, output = cli(path, "--text-col", "answer", "--out", tmp_path / "out", *flags, "-q")
    assert code == 2, output
    assert f"column '{column}' cannot hold the scores: it has 360 different values in 360 rows" in (
        output.replace("\n", " ")
    )
    assert "Columns that look like scores: 'score_grader1', 'score_grader2'" in output
    assert "Traceback" not in output and not (tmp_path / "out").exists()


def test_a_small_files_column_with_a_value_for_most_rows_is_no_score(tmp_path, nothing_embedded):
    rows = [[f"answer {i}", i, i % 3] for i in range(40)]
    path = write_rows(tmp_path / "small.csv", ["answer", "number", "score"], rows)
    code, output = cli(path, "--score-col", "number", "-q")
    assert code == 2
    assert "column 'number' cannot hold the scores: it has 40 different values in 40 rows" in output
    assert "more than 50% of the file's 40 rows" in output
    assert "Columns that look like scores: 'score'" in output


def test_skip_never_leaves_out_most_of_a_file(tmp_path, good, nothing_embedded):
    def unscored(rows):
        for k, row in enumerate(rows[:40]):
            row[2] = "" if k < 25 else "n/a"

    code, output = audit_rows(tmp_path, good, unscored, "--set", "on_bad_rows=skip")
    assert code == 2
    assert "40 of the file's 60 rows (67%) have no usable score in column 'score'" in output
    assert "(25 missing, 15 not a score)" in output and "at most 50% of a file" in output


def test_numbers_are_counted_in_each_item_which_has_its_own_scale():
    """Essay sets in one file (scored 0-40 and 50-90): 82 values in the file, 41 in an item."""
    from engine.core.errors import DataError
    from engine.input.score_check import check_score_columns
    from engine.input.settings.config import AuditConfig

    scores = [str(v) for v in range(41)] * 5 + [str(v) for v in range(50, 91)] * 5
    frame = pd.DataFrame({"set": ["A"] * 205 + ["B"] * 205, "essay": ["e"] * 410, "score": scores})
    check_score_columns(frame, AuditConfig().updated(item_column="set"), "sets.csv")
    with pytest.raises(DataError, match=r"it has 82 different values in 410 rows \(more than 50;"):
        check_score_columns(frame, AuditConfig(), "sets.csv")
    frame["score"] = [str(v) for v in range(80)] * 5 + ["1"] * 10  # one item of 80 values
    with pytest.raises(DataError, match="80 in item 'A', more than 50"):
        check_score_columns(frame, AuditConfig().updated(item_column="set"), "sets.csv")


@pytest.mark.parametrize(("bad", "stops"), [(30, False), (31, True)])
def test_skip_leaves_out_at_most_half_of_a_file(bad, stops):
    from engine.core.errors import DataError
    from engine.input.score_check import MAX_SKIPPED_SHARE, check_score_columns
    from engine.input.settings.config import AuditConfig

    assert MAX_SKIPPED_SHARE == 0.5
    scores = [""] * bad + ["1", "2"] * 30
    frame = pd.DataFrame({"answer": [f"a{i}" for i in range(60)], "score": scores[:60]})
    config = AuditConfig().updated(on_bad_rows="skip")
    if stops:
        with pytest.raises(DataError, match=f"{bad} of the file's 60 rows"):
            check_score_columns(frame, config, "f.csv")
    else:
        check_score_columns(frame, config, "f.csv")
    check_score_columns(frame, AuditConfig(), "f.csv")  # "error" stops on the rows themselves


def test_the_load_screens_call_stops_the_same_way(tmp_path):
    """The app's Load screen and `parm audit` both prepare the file with workspace.prepare."""
    from engine import workspace
    from engine.core.errors import DataError

    file = workspace.open_file(many_items(tmp_path), runs=False)
    config = config_from_dict({"text_column": "answer", "score_column": "answer",
                               "item_column": "question_id", "on_bad_rows": "skip"})  # fmt: skip
    with pytest.raises(DataError, match="column 'answer' cannot hold the scores") as caught:
        workspace.prepare(file, config)
    assert "'score_grader1', 'score_grader2'" in str(caught.value)


# -- memory, checked before an array sized by the data is made ------------------------------------
def test_an_array_that_would_not_fit_is_refused_before_it_is_made(monkeypatch):
    from engine.core.machine import memory

    monkeypatch.setattr(memory, "available_bytes", lambda: 2 * memory.GIB)
    assert memory.zeros((1000, 1000)).shape == (1000, 1000)  # 8 MB
    with pytest.raises(memory.MemoryNeeded) as caught:
        memory.zeros((4000, 1000, 1000), what="A test array (4,000 x 1,000 x 1,000)", advice="Cut.")
    assert str(caught.value) == (
        "A test array (4,000 x 1,000 x 1,000) would need 29.8 GiB of memory; this machine has "
        "2.0 GiB free and one array may take 50%. Nothing was allocated. Cut."
    )
    assert caught.value.nbytes == 4000 * 1000 * 1000 * 8
    monkeypatch.setattr(memory, "available_bytes", lambda: None)  # unknown: only absurd sizes
    memory.check_memory(30 * memory.GIB, "x")
    with pytest.raises(memory.MemoryNeeded, match="does not say how much memory is free"):
        memory.check_memory(2000 * memory.GIB, "x")


def test_a_session_model_too_big_for_the_machine_stops_before_embedding(
    tmp_path, monkeypatch, nothing_embedded
):
    from engine.core.machine import memory

    path = many_items(tmp_path)
    monkeypatch.setattr(memory, "available_bytes", lambda: 4 * 1024**2)  # 4 MiB free
    code, output = cli(path, "--text-col", "answer", "-q")
    assert code == 2
    assert "The session model over 720 reads on a scale of 11 scores" in output
    assert "would need" in output and 'Set session_model to "off"' in output
    code, output = cli(path, "--text-col", "answer", "--set", "session_model=off", "-q")
    assert code == 1 and "a model was loaded or answers embedded" in output  # past the check


def test_the_session_models_memory_estimate_bounds_what_its_fit_asks_for(monkeypatch):
    from engine.core.machine import memory
    from engine.model.session.figures import check_session_memory

    frame, vectors = helpers.session_frame()
    config = helpers.session_config(rater_column="rater", cross_fit_folds=2)
    asked = []
    real = memory.check_memory
    monkeypatch.setattr(memory, "check_memory",
                        lambda nbytes, *a, **k: (asked.append(nbytes), real(nbytes, *a, **k)))  # fmt: skip
    session = helpers.run_frame(frame, vectors, config)
    assert session.session_model is not None and asked
    estimate = check_session_memory(session.items.audited, "auto", 2)
    assert max(asked) <= estimate < 4 * max(asked)


# -- the real files (../shared/data, or $PARM_DATA_ROOT) ---------------------------------------------
DATA = Path(
    os.environ.get("PARM_DATA_ROOT", Path(__file__).resolve().parents[2] / "shared" / "data")
)
with_data = pytest.mark.skipif(not (DATA / "mohler").is_dir(), reason="needs ../shared/data")
# Each kind of real file: its score columns (every one must pass) and columns named by mistake.
REAL_COLUMNS = {
    "mohler/answers.csv": (("score_grader1", "score_grader2"),
                           ("answer", "id", "question_id", "question", "reference_answer")),
    "powergrading/answers.csv": (("G1", "G2", "G3"), ("answer", "id", "student_id")),
    "scientsbank/train.csv": (("label",), ("answer", "id", "question_id", "question")),
    "asap-sas/prompt1-train.csv": (("Score1", "Score2"), ("EssayText", "Id")),
    "asap-aes/set8.csv": (("rater1_domain1", "rater2_domain1", "rater3_domain1", "domain1_score"),
                          ("essay", "essay_id")),
}  # fmt: skip


@pytest.mark.slow
@with_data
def test_mohlers_answers_named_as_the_score_stop_at_once(tmp_path, nothing_embedded):
    path = DATA / "mohler" / "answers.csv"
    flags = ["--score-col", "answer", "--set", "on_bad_rows=skip", "--out", tmp_path / "o", "-q"]
    code, output = cli(path, *flags)
    assert code == 2
    assert "column 'answer' cannot hold the scores: it has 2,171 different values in 2,273" in (
        output.replace("\n", " ")
    )
    assert "Columns that look like scores: 'score_grader1', 'score_grader2'" in output


@pytest.mark.slow
@with_data
@pytest.mark.parametrize("name", REAL_COLUMNS)
def test_every_real_score_column_passes_and_a_column_named_by_mistake_stops(name):
    from engine.core.errors import DataError
    from engine.input.score_check import check_score_columns
    from engine.input.settings.config import AuditConfig
    from engine.input.table import read_table

    frame = read_table(DATA / name)
    scores, mistakes = REAL_COLUMNS[name]
    for column in scores:
        check_score_columns(frame, AuditConfig().updated(score_column=column), name)
    for column in mistakes:
        with pytest.raises(DataError, match=f"column '{column}' cannot hold the scores"):
            check_score_columns(frame, AuditConfig().updated(score_column=column), name)
