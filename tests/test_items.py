"""Whole scoring sessions: a file of many items, each audited on its own (engine/input/items.py,
engine/session.py, engine/outputs/session.py)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pandas as pd
import pytest

from engine.core.errors import Cancelled, DataError
from engine.core.progress import CancelToken
from engine.input.config import config_from_dict
from engine.input.items import load_items, split_items
from engine.outputs.session import (
    ITEM_COLUMNS,
    items_table,
    prediction_table,
    session_dict,
    session_markdown,
    tuning_table,
    write_session,
)
from engine.session import run_session

FAST = {"similarity_top_k": [5, 10], "bootstrap_samples": 0, "cross_fit_folds": 0}


def session_frame(items=(("A", 60, 3), ("B", 50, 4)), seed=0, same_texts=False):
    """A table of items (name, answers, score levels) with clustered unit vectors per item, one
    row per answer, rows of the items interleaved; and the vectors, one per file row."""
    rng = np.random.default_rng(seed)
    rows, vectors = [], []
    for name, n, levels in items:
        centres = rng.normal(size=(levels, 12))
        for i in range(n):
            score = i % levels
            vector = centres[score] + 0.7 * rng.normal(size=12)
            vectors.append(vector / np.linalg.norm(vector))
            text = f"answer {i}" if same_texts else f"{name} answer {i}"
            rows.append({"item": name, "answer": text, "score": str(score), "rater": f"r{i % 4}"})
    order = rng.permutation(len(rows))
    frame = pd.DataFrame([rows[k] for k in order]).astype(str)
    return frame, np.asarray(vectors, dtype=np.float32)[order]


def config(**changes):
    return config_from_dict({"item_column": "item", "id_column": None, **FAST, **changes})


def run(frame, vectors, cfg, **kwargs):
    items = split_items(frame, cfg, source="session.csv")
    return run_session(
        items, cfg, embeddings=[vectors[r.rows - 1] for r in items.audited], **kwargs
    )


def test_each_item_gets_its_own_responses_coded_on_its_own_scale():
    frame, _ = session_frame()
    items = split_items(frame, config(), "session.csv")
    assert [r.item for r in items.audited] == list(dict.fromkeys(frame["item"]))
    by_name = {r.item: r for r in items.audited}
    assert by_name["A"].labels == ("0", "1", "2") and by_name["B"].labels == ("0", "1", "2", "3")
    for responses in items.audited:
        # Rows are the file's own data rows, so outputs and decisions point into the file.
        assert set(frame.iloc[responses.rows - 1]["item"]) == {responses.item}
        assert responses.texts == frame.iloc[responses.rows - 1]["answer"].tolist()


def test_items_never_share_neighbours_even_with_identical_answers():
    """Both items hold the same texts and similar vectors: pooled, each answer's nearest
    neighbour would be its twin in the other item."""
    frame, vectors = session_frame(items=(("A", 40, 3), ("B", 40, 3)), same_texts=True)
    session = run(frame, vectors, config())
    for result in session.results:
        own = set(result.responses.rows.tolist())
        assert result.graph.n == len(result.responses)
        for neighbours in result.evidence:
            assert {int(result.responses.rows[nb.index]) for nb in neighbours} <= own


def test_an_item_audited_in_a_session_equals_that_item_audited_alone():
    frame, vectors = session_frame()
    session = run(frame, vectors, config())
    for result in session.results:
        alone_rows = frame["item"] == result.responses.item
        alone = frame[alone_rows]
        single = run(alone.reset_index(drop=True), vectors[alone_rows.to_numpy()], config())
        other = single.results[0]
        np.testing.assert_allclose(result.fitted.proba, other.fitted.proba, rtol=1e-9)
        np.testing.assert_array_equal(result.predicted, other.predicted)
        assert result.selected.top_k == other.selected.top_k
        assert result.metrics == pytest.approx(other.metrics)


def test_small_and_single_score_items_are_skipped_with_their_reason():
    frame, vectors = session_frame(items=(("A", 60, 3), ("tiny", 6, 2), ("same", 20, 1)))
    session = run(frame, vectors, config())
    assert [r.responses.item for r in session.results] == ["A"]
    reasons = {s.item: s.reason for s in session.items.skipped}
    assert "6 usable response(s)" in reasons["tiny"]
    assert "two score categories" in reasons["same"]
    assert any("'same' was not audited" in w for w in session.warnings)
    header, rows = items_table(session)
    status = {row[0]: row[header.index("status")] for row in rows}
    assert status == {"A": "audited", "tiny": f"skipped: {reasons['tiny']}",
                      "same": f"skipped: {reasons['same']}"}  # fmt: skip


def test_a_file_where_no_item_can_be_audited_is_an_error():
    frame, _ = session_frame(items=(("x", 5, 2), ("y", 4, 2)))
    with pytest.raises(DataError, match="no item can be audited"):
        split_items(frame, config(), "session.csv")


def test_rows_without_an_item_stop_the_load_or_are_skipped():
    frame, _ = session_frame()
    frame.loc[frame.index[[3, 7]], "item"] = " "
    with pytest.raises(DataError, match="2 row\\(s\\) have no item in column 'item'"):
        split_items(frame, config(), "session.csv")
    items = split_items(frame, config(on_bad_rows="skip"), "session.csv")
    assert sum(len(r) for r in items.audited) == len(frame) - 2
    assert any("no item" in w for w in items.warnings)


def test_a_missing_item_column_names_the_columns_there_are():
    frame, _ = session_frame()
    with pytest.raises(DataError, match="item column 'question' does not exist.*answer"):
        split_items(frame, config(item_column="question"), "session.csv")


def test_a_warning_every_item_shares_is_given_once():
    frame, _ = session_frame()
    items = split_items(frame, config(id_column="id"), "session.csv")
    about_ids = [w for w in items.warnings if "id column 'id' does not exist" in w]
    order = ", ".join(f"'{name}'" for name in dict.fromkeys(frame["item"]))
    assert len(about_ids) == 1 and about_ids[0].startswith(f"Items {order}: ")


def test_worker_processes_give_the_same_results_as_one_process():
    frame, vectors = session_frame()
    one = run(frame, vectors, config())
    two = run(frame, vectors, config(jobs=2))
    for a, b in zip(one.results, two.results):
        assert a.responses.item == b.responses.item
        np.testing.assert_array_equal(a.fitted.proba, b.fitted.proba)
        assert a.metrics == b.metrics


def test_progress_names_each_item_and_counts_items():
    frame, vectors = session_frame()
    events = []
    run(frame, vectors, config(), progress=events.append)
    items = [e for e in events if e.stage == "items"]
    assert (items[0].done, items[-1].done, items[-1].total) == (0, 2, 2)
    tuning = [e.message for e in events if e.stage == "tuning"]
    assert any(m.startswith("item A: ") for m in tuning)
    assert any(m.startswith("item B: ") for m in tuning)
    assert events[-1].stage == "done"


@pytest.mark.parametrize("jobs", [1, 2])
def test_cancelling_a_session_stops_it(jobs):
    frame, vectors = session_frame()
    token = CancelToken()

    def cancel_at_first_tuning(event):
        if event.stage == "tuning":
            token.cancel()

    with pytest.raises(Cancelled):
        run(frame, vectors, config(jobs=jobs), progress=cancel_at_first_tuning, cancel=token)


def test_outputs_carry_the_item_and_every_score_on_any_scale():
    frame, vectors = session_frame()
    session = run(frame, vectors, config())
    header, rows = prediction_table(session)
    assert header[:3] == ["row", "id", "item"]
    assert [h for h in header if h.startswith("p_")] == ["p_0", "p_1", "p_2", "p_3"]
    assert [row[0] for row in rows] == list(range(1, len(frame) + 1))
    for row in rows:
        assert row[2] == frame.iloc[row[0] - 1]["item"]
        # Item A's scale has no 3: its probability column stays empty.
        assert (row[header.index("p_3")] == "") == (row[2] == "A")
    tuning_header, tuning_rows = tuning_table(session)
    assert tuning_header[0] == "item" and {r[0] for r in tuning_rows} == {"A", "B"}


def test_report_puts_the_overview_first_and_every_item_after_it():
    frame, vectors = session_frame()
    session = run(frame, vectors, config())
    text = session_markdown(session)
    assert text.startswith("# parm audit report\n\n## Items\n")
    for name in ("A", "B"):
        assert f"\n## Item {name}\n" in text
    assert text.index("## Items") < text.index("## Item A") and "\n### Data\n" in text
    data = session_dict(session)
    assert [row["item"] for row in data["items_overview"]] == list(dict.fromkeys(frame["item"]))
    assert len(data["items"]) == 2 and data["input"]["items_audited"] == 2
    json.dumps(data, allow_nan=False)


def test_write_session_writes_items_csv_with_the_documented_columns(tmp_path):
    frame, vectors = session_frame()
    session = run(frame, vectors, config())
    written = write_session(session, tmp_path)
    assert {p.name for p in written} == {
        "predictions.csv", "tuning.csv", "report.json", "report.md", "items.csv",
        "parm-manifest.json",
    }  # fmt: skip
    with (tmp_path / "items.csv").open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0]) == [*ITEM_COLUMNS, "run_id"]
    for row in table:
        result = next(r for r in session.results if r.responses.item == row["item"])
        assert float(row["kappa"]) == pytest.approx(result.metrics["kappa"], abs=1e-6)
        assert int(row["flagged"]) == int(result.flagged.sum())


def test_a_file_without_items_writes_what_a_single_audit_writes(tmp_path):
    from engine.outputs.write import write_outputs

    frame, vectors = session_frame(items=(("A", 60, 3),))
    session = run(frame, vectors, config(item_column=None))
    assert not session.by_item and session.results[0].responses.item is None
    write_session(session, tmp_path / "session")
    write_outputs(session.results[0], tmp_path / "audit")
    for name in ("predictions.csv", "tuning.csv", "report.md"):
        session_text = (tmp_path / "session" / name).read_text(encoding="utf-8")
        assert session_text == (tmp_path / "audit" / name).read_text(encoding="utf-8")


def test_load_items_reads_the_file(tmp_path):
    frame, _ = session_frame()
    path = tmp_path / "session.csv"
    frame.to_csv(path, index=False)
    items = load_items(path, config())
    assert items.source == str(path) and items.file_rows == len(frame)
    assert sorted(r.item for r in items.audited) == ["A", "B"]


def test_parm_audit_with_items_and_raters_writes_the_session(tmp_path):
    from typer.testing import CliRunner

    from parm_tui.cli import app

    frame, vectors = session_frame()
    frame.to_csv(tmp_path / "session.csv", index=False)
    np.save(tmp_path / "session.npy", vectors)
    args = ["audit", str(tmp_path / "session.csv"), "--embeddings", str(tmp_path / "session.npy"),
            "--item-col", "item", "--rater-col", "rater", "--out", str(tmp_path / "out"),
            "--quiet", "--set", "similarity_top_k=[5,10]", "--set", "bootstrap_samples=0"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    for name in ("predictions.csv", "tuning.csv", "report.json", "report.md", "items.csv",
                 "raters.csv"):  # fmt: skip
        assert (tmp_path / "out" / name).is_file()
    assert (
        "Item A: Selected K=" in result.output and "2 item(s) audited, 0 skipped" in result.output
    )
    assert "rater(s), farthest from the rest:" in result.output
    missing = CliRunner().invoke(app, [*args[:2], "--item-col", "question", "--out",
                                       str(tmp_path / "o2"), "--quiet"])  # fmt: skip
    assert missing.exit_code == 2 and "item column 'question' does not exist" in missing.output


def test_the_review_set_lists_every_item_on_one_scale():
    frame, vectors = session_frame()
    session = run(frame, vectors, config(rater_column="rater"))
    review = session.review
    assert review.responses.labels == ("0", "1", "2", "3")
    assert len(review.responses) == len(frame) and review.by_item
    for position in (0, 7, len(frame) - 1):
        result, i = review.locate(position)
        assert review.items[position] == result.responses.item
        assert review.responses.rows[position] == result.responses.rows[i]
        assert (
            review.responses.labels[review.responses.scores[position]]
            == (result.responses.labels[result.responses.scores[i]])
        )
        assert review.severity[position] == result.severity[i]
        np.testing.assert_allclose(
            review.fitted.proba[position][review.on_scale[position]], result.fitted.proba[i]
        )
        assert review.labels_of(position) == result.responses.labels
        for neighbour in review.evidence[position]:  # evidence stays within the item
            assert review.items[neighbour.index] == review.items[position]
    order = review.review_order()
    flagged = review.flagged[order]
    assert not np.any(flagged[1:] & ~flagged[:-1])  # flagged ones first


def test_a_review_set_of_one_item_is_that_item():
    frame, vectors = session_frame(items=(("A", 60, 3),))
    session = run(frame, vectors, config(item_column=None))
    result, review = session.results[0], session.review
    assert not review.by_item and review.responses.labels == result.responses.labels
    np.testing.assert_array_equal(review.responses.scores, result.responses.scores)
    np.testing.assert_array_equal(review.predicted, result.predicted)
    np.testing.assert_array_equal(review.review_order(), result.review_order())
    np.testing.assert_array_equal(review.fitted.proba, result.fitted.proba)


def test_the_review_queue_filters_by_item_and_by_rater():
    from engine.audit.queue import review_view

    frame, vectors = session_frame()
    review = run(frame, vectors, config(rater_column="rater")).review
    only_b = review_view(review, show_all=True, item="B")
    assert len(only_b) == (frame["item"] == "B").sum()
    assert {review.items[i] for i in only_b} == {"B"}
    only_r1 = review_view(review, show_all=True, rater="r1")
    assert {review.responses.raters[i] for i in only_r1} == {"r1"}
    assert len(only_r1) == (frame["rater"] == "r1").sum()


def test_a_change_decision_takes_only_a_score_on_the_items_scale(tmp_path):
    from engine.audit.decisions import open_store
    from engine.core.errors import ReviewError

    frame, vectors = session_frame()
    review = run(frame, vectors, config()).review
    store = open_store(tmp_path / "s.csv", review.responses, tmp_path / "d.db", review.on_scale)
    a = next(i for i, item in enumerate(review.items) if item == "A")
    row, rid, text = (
        int(review.responses.rows[a]),
        review.responses.ids[a],
        review.responses.texts[a],
    )
    human = review.responses.labels[review.responses.scores[a]]
    with pytest.raises(ReviewError, match="not one of the labels 0, 1, 2"):
        store.record(row, rid, text, "change", "3")
    other = next(label for label in ("0", "1", "2") if label != human)
    assert store.record(row, rid, text, "change", other).new_score == other
    store.close()
