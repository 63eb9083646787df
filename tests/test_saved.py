"""Saved runs (engine/saved/): a result saved and loaded again is the same result, field for
field, and writes the same outputs; per input file the newest runs are kept (saved_runs), each
with its settings, results, figures and the flags of the run before it, listed newest first and
found by run id; a record of an earlier parm is still read; damaged or foreign files give a
message."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import replace

import numpy as np
import pytest
from helpers import one_item_session, synthetic_result

from engine.audit.queue.duplicates import NearDuplicate
from engine.audit.queue.evidence import Neighbour
from engine.core.errors import ResumeError
from engine.core.files import atomic_write_files, file_digest
from engine.input.items import Items
from engine.outputs.report.item_content import report_dict
from engine.outputs.report.markdown import markdown_report
from engine.outputs.tables import prediction_table, tuning_table
from engine.results.item import AuditResult
from engine.results.session import session_result
from engine.saved.archive import load_result, result_files
from engine.saved.store import (
    find_run,
    find_session,
    list_runs,
    load_results,
    restore_session,
    save_review_row,
    save_session,
)


@pytest.fixture(scope="module")
def result():
    """A result with every optional part: second rater, intervals, cross-fitting, a grid, a
    near-duplicate pair and an evidence neighbour whose raw similarity is unknown (NaN)."""
    base = synthetic_result(240, top_k=(5, 10), power=[1.0, 2.0])
    evidence = [list(row) for row in base.evidence]
    first = evidence[3][0]
    evidence[3][0] = Neighbour(first.index, first.weight, float("nan"))
    return replace(base, near_duplicates=[NearDuplicate(2, 9, 0.97)], evidence=evidence)


def same(a, b, where="result") -> None:
    """Deep equality for results: dataclasses field by field, arrays exactly, NaN equal NaN."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            if f.name == "item_features":  # the graph's features: not kept, as the graph
                continue
            same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True), where
        assert np.asarray(a).dtype.kind == np.asarray(b).dtype.kind, where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for n, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{n}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), where
    else:
        assert a == b, where


def saved(result, folder, name="r"):
    atomic_write_files(result_files(result, folder, name))
    return load_result(folder, name, result.responses)


def test_a_saved_result_comes_back_field_for_field(result, tmp_path):
    back = saved(result, tmp_path)
    assert back.graph is None and back.tuning.item_features is None
    for f in dataclasses.fields(AuditResult):
        if f.name != "graph":
            same(getattr(result, f.name), getattr(back, f.name), f.name)


def test_a_restored_result_writes_the_same_outputs(result, tmp_path):
    back = saved(result, tmp_path)
    assert prediction_table(back) == prediction_table(result)
    assert tuning_table(back) == tuning_table(result)
    first, again = report_dict(result), report_dict(back)
    first.pop("created"), again.pop("created")
    assert json.dumps(first, default=str) == json.dumps(again, default=str)
    assert markdown_report(back) == markdown_report(result)


def test_a_result_loads_only_onto_the_responses_it_was_computed_on(result, tmp_path):
    atomic_write_files(result_files(result, tmp_path, "r"))
    rescored = replace(result.responses, scores=(result.responses.scores + 1) % 3)
    with pytest.raises(ResumeError, match="other responses"):
        load_result(tmp_path, "r", rescored)


def damage(folder, how: str) -> None:
    manifest_path, arrays_path = folder / "r.json", folder / "r.npz"
    manifest = json.loads(manifest_path.read_text())
    with np.load(arrays_path) as stored:
        arrays = {key: stored[key] for key in stored.files}
    if how == "not json":
        manifest_path.write_text("{ this is not json")
    elif how == "another program's json":
        manifest_path.write_text(json.dumps({"name": "something else"}))
    elif how == "a newer schema":
        manifest_path.write_text(json.dumps({**manifest, "schema": 99}))
    elif how == "arrays missing":
        arrays_path.unlink()
    elif how == "arrays truncated":
        arrays_path.write_bytes(arrays_path.read_bytes()[:500])
    elif how == "an array of the wrong shape":
        np.savez(arrays_path, **{**arrays, "severity": arrays["severity"][:-1]})
    elif how == "a neighbour outside the responses":
        index = arrays["evidence_index"].copy()
        index[0] = 10**6
        np.savez(arrays_path, **{**arrays, "evidence_index": index})
    elif how == "a pickled array":
        np.savez(arrays_path, **{**arrays, "predicted": np.array([{"x": 1}], dtype=object)})
    elif how == "no selected configuration":
        rows = [{**row, "selected": False} for row in manifest["tuning"]["rows"]]
        manifest["tuning"]["rows"] = rows
        manifest_path.write_text(json.dumps(manifest))


DAMAGE = {
    "not json": "cannot be read",
    "another program's json": "not a parm result file",
    "a newer schema": "newer parm",
    "arrays missing": "r.npz is missing",
    "arrays truncated": "damaged",
    "an array of the wrong shape": "'severity' has shape",
    "a neighbour outside the responses": "'evidence_index' holds positions outside",
    "a pickled array": "damaged",
    "no selected configuration": "0 tuning rows are marked selected",
}


@pytest.mark.parametrize("how", DAMAGE)
def test_damaged_or_foreign_files_give_a_message_naming_them(result, tmp_path, how):
    atomic_write_files(result_files(result, tmp_path, "r"))
    damage(tmp_path, how)
    with pytest.raises(ResumeError, match=DAMAGE[how]) as raised:
        load_result(tmp_path, "r", result.responses)
    assert str(tmp_path) in str(raised.value)


def test_a_session_keeps_the_settings_and_results_of_a_file(result, tmp_path):
    session = save_session("d1", "answers.csv", one_item_session(result), base=tmp_path)
    found = find_session("d1", base=tmp_path)
    assert found == session
    assert found.config() == result.config
    [entry] = found.results
    assert entry.run_id == result.run_id and entry.item is None
    assert entry.flagged == int(result.flagged.sum())
    assert entry.previous_flagged_rows is None
    [back] = load_results(found, [result.responses])
    same(result.predicted, back.predicted)
    assert find_session("another file", base=tmp_path) is None


def test_a_new_run_is_the_newest_and_remembers_which_rows_the_last_one_flagged(result, tmp_path):
    first = save_session("d1", "answers.csv", one_item_session(result), base=tmp_path)
    # Every severity 0 and a lead asking for precision 1: no answer is flagged.
    second_run = replace(
        result,
        run_id="second",
        severity=np.zeros_like(result.severity),
        config=result.config.updated(flag_precision=1.0),
    )
    second = save_session("d1", "answers.csv", one_item_session(second_run), base=tmp_path)
    [entry] = find_session("d1", base=tmp_path).results
    assert entry.run_id == "second" and entry.flagged == 0
    assert entry.previous_flagged_rows == first.results[0].flagged_rows
    # Both runs are kept, each with its own files.
    assert [run.run_id for run in list_runs("d1", base=tmp_path)] == ["second", result.run_id]
    names = sorted(p.name for p in second.folder.iterdir())
    stems = sorted([first.results[0].name, entry.name])
    assert names == sorted(["session.json"] + [f"{s}.{x}" for s in stems for x in ("json", "npz")])


def test_a_session_holds_one_result_per_item(result, tmp_path):
    first = replace(result, responses=replace(result.responses, item="Q1"))
    other = replace(result, run_id="item-two", responses=replace(result.responses, item="Q2"))
    parts = [first.responses, other.responses]
    items = Items("f.csv", parts, [], 2 * len(result.responses), ())
    save_session("d1", "f.csv", session_result(items, [first, other], result.config), tmp_path)
    session = find_session("d1", base=tmp_path)
    assert [e.item for e in session.results] == ["Q1", "Q2"]
    loaded = load_results(session, parts)
    assert [r.run_id for r in loaded] == [result.run_id, "item-two"]
    with pytest.raises(ResumeError, match="2 result"):
        load_results(session, [first.responses])


def test_the_review_row_is_remembered(result, tmp_path):
    session = save_session("d1", "answers.csv", one_item_session(result), base=tmp_path)
    save_review_row(session, 17)
    assert find_session("d1", base=tmp_path).review_row == 17


def test_the_folder_the_outputs_went_to_is_remembered_beside_the_review_row(
    result, tmp_path, monkeypatch
):
    """Where `parm audit --out` (or an export) wrote: the folder the app's Export offers
    next, made absolute; a run saved before this field existed reads as None."""
    from engine.saved.store import save_out_folder

    monkeypatch.chdir(tmp_path)
    session = save_session("d1", "answers.csv", one_item_session(result), base=tmp_path)
    assert session.out_folder is None
    save_out_folder(session, "audit-out")
    save_review_row(session, 17)  # a copy read before the folder was kept loses nothing
    kept = find_session("d1", base=tmp_path)
    assert (kept.out_folder, kept.review_row) == (str(tmp_path / "audit-out"), 17)
    path = session.folder / "session.json"
    values = json.loads(path.read_text())
    del values["runs"][0]["out_folder"]
    path.write_text(json.dumps(values))
    assert find_session("d1", base=tmp_path).out_folder is None


@pytest.mark.parametrize(
    "content, expected",
    [
        ("not json at all", "cannot be read"),
        (json.dumps({"format": "parm-session", "schema": 7}), "schema 7"),
        (json.dumps(["a", "list"]), "not a parm session file"),
        (json.dumps({"format": "parm-session", "schema": 1}), "damaged"),
        (json.dumps({"format": "parm-session", "schema": 2, "runs": [{}]}), "damaged"),
    ],
)
def test_a_damaged_session_file_gives_a_message(tmp_path, content, expected):
    folder = tmp_path / "sessions" / "d1"
    folder.mkdir(parents=True)
    (folder / "session.json").write_text(content)
    with pytest.raises(ResumeError, match=expected):
        find_session("d1", base=tmp_path)


def test_a_result_name_cannot_point_outside_the_session_folder(result, tmp_path):
    session = save_session("d1", "answers.csv", one_item_session(result), base=tmp_path)
    path = session.folder / "session.json"
    values = json.loads(path.read_text())
    values["runs"][0]["results"][0]["name"] = "../../elsewhere"
    path.write_text(json.dumps(values))
    with pytest.raises(ResumeError, match="not a plain file name"):
        find_session("d1", base=tmp_path)


def test_saved_settings_this_parm_refuses_are_reported(result, tmp_path):
    session = save_session("d1", "answers.csv", one_item_session(result), base=tmp_path)
    broken = replace(session, settings={**session.settings, "seed": "abc"})
    with pytest.raises(ResumeError, match="seed"):
        broken.config()


def test_the_file_digest_is_of_the_bytes(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_bytes(b"id,answer,score\n1,x,0\n")
    b.write_bytes(b"id,answer,score\n1,x,0\n")
    assert file_digest(a) == file_digest(b)
    b.write_bytes(b"id,answer,score\n1,x,1\n")
    assert file_digest(a) != file_digest(b)


def test_a_decision_records_the_settings_its_item_was_run_with(tmp_path):
    """An item too small for every K of the grid runs without the largest; a decision on it
    records the settings digest that session.json records for that item, so a re-run can tell
    whether a decision was made with the settings of the run it is compared with."""
    from helpers import run_frame, session_config, session_frame

    frame, vectors = session_frame(items=(("A", 60, 3), ("B", 14, 3)), seed=2)
    settings = session_config(similarity_top_k=[5, 10, 20])
    session = run_frame(frame, vectors, settings)
    saved = save_session("digest", "session.csv", session, tmp_path)
    assert session.results[1].config.similarity_top_k == (5, 10)
    review = session.review
    for k, entry in enumerate(saved.results):
        first = int(review.starts[k])
        assert review.run_context(first).settings_digest == entry.settings_digest


def runs_of(result, n: int) -> list:
    """n runs of the same result, each under its own (sortable) run id."""
    return [replace(result, run_id=f"2026112{k}T000000Z-00000{k}") for k in range(n)]


def test_the_newest_saved_runs_are_kept_and_the_files_of_older_ones_removed(result, tmp_path):
    config = replace(result.config, saved_runs=3)
    runs = [replace(run, config=config) for run in runs_of(result, 5)]
    for run in runs:
        save_session("d1", "answers.csv", one_item_session(run), base=tmp_path)
    kept = list_runs("d1", base=tmp_path)
    assert [run.run_id for run in kept] == [run.run_id for run in reversed(runs[2:])]
    folder = kept[0].folder
    stems = {p.stem for p in folder.glob("result-*")}
    assert stems == {run.results[0].name for run in kept}
    # `keep` overrides the setting.
    save_session("d1", "answers.csv", one_item_session(runs[0]), base=tmp_path, keep=1)
    assert [run.run_id for run in list_runs("d1", base=tmp_path)] == [runs[0].run_id]
    assert len(list(folder.glob("result-*"))) == 2


def test_an_earlier_run_is_found_by_its_id_and_restored(result, tmp_path):
    first, second = runs_of(result, 2)
    second = replace(second, predicted=result.responses.scores.copy())
    for run in (first, second):
        save_session("d1", "answers.csv", one_item_session(run), base=tmp_path)
    earlier = find_run("d1", first.run_id, base=tmp_path)
    assert earlier.run_id == first.run_id and earlier.results[0].previous_flagged_rows is None
    responses = result.responses
    items = Items("answers.csv", [responses], [], responses.file_rows, ())
    restored = restore_session(earlier, items, earlier.config())
    same(restored.results[0].predicted, first.predicted)
    with pytest.raises(ResumeError, match=f"kept runs: {second.run_id}, {first.run_id}"):
        find_run("d1", "no-such-run", base=tmp_path)


def test_a_run_keeps_its_figures(result, tmp_path):
    saved = save_session("d1", "answers.csv", one_item_session(result), base=tmp_path)
    figures = find_session("d1", base=tmp_path).figures
    assert figures == saved.figures
    assert figures.kappa == result.metrics["kappa"] and figures.qwk == result.metrics["qwk"]
    assert figures.flagged == int(result.flagged.sum()) == saved.results[0].flagged
    assert figures.selected == (result.selected.top_k, result.selected.power)


def test_the_review_row_of_one_run_leaves_the_others_alone(result, tmp_path):
    first, second = runs_of(result, 2)
    older = save_session("d1", "answers.csv", one_item_session(first), base=tmp_path)
    newer = save_session("d1", "answers.csv", one_item_session(second), base=tmp_path)
    save_review_row(older, 5)
    save_review_row(newer, 9)
    rows = {run.run_id: run.review_row for run in list_runs("d1", base=tmp_path)}
    assert rows == {first.run_id: 5, second.run_id: 9}


def test_a_session_saved_by_an_earlier_parm_is_a_history_of_one_run(result, tmp_path):
    """Schema 1 (one run per file, no figures) is read, and the next save keeps that run."""
    saved = save_session("d1", "answers.csv", one_item_session(result), base=tmp_path)
    path = saved.folder / "session.json"
    values = json.loads(path.read_text())
    [run] = values.pop("runs")
    run.pop("figures")
    path.write_text(json.dumps({**values, **run, "schema": 1}))
    [old] = list_runs("d1", base=tmp_path)
    assert old.run_id == result.run_id and old.figures is None
    assert old.results == saved.results
    [newer] = runs_of(result, 1)
    save_session("d1", "answers.csv", one_item_session(newer), base=tmp_path)
    assert [r.run_id for r in list_runs("d1", base=tmp_path)] == [newer.run_id, result.run_id]
    assert json.loads(path.read_text())["schema"] == 2
