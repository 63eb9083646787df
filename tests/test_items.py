"""A file split into items (engine/input/items.py): each item coded on its own scale, small and
single-score items skipped with their reason, rows without an item, the item column named."""

from __future__ import annotations

import pytest
from helpers import run_frame, session_config, session_frame

from engine.core.errors import DataError
from engine.input.items import load_items, split_items
from engine.outputs.session import (
    items_table,
)


def test_each_item_gets_its_own_responses_coded_on_its_own_scale():
    frame, _ = session_frame()
    items = split_items(frame, session_config(), "session.csv")
    assert [r.item for r in items.audited] == list(dict.fromkeys(frame["item"]))
    by_name = {r.item: r for r in items.audited}
    assert by_name["A"].labels == ("0", "1", "2") and by_name["B"].labels == ("0", "1", "2", "3")
    for responses in items.audited:
        # Rows are the file's own data rows, so outputs and decisions point into the file.
        assert set(frame.iloc[responses.rows - 1]["item"]) == {responses.item}
        assert responses.texts == frame.iloc[responses.rows - 1]["answer"].tolist()


def test_small_and_single_score_items_are_skipped_with_their_reason():
    frame, vectors = session_frame(items=(("A", 60, 3), ("tiny", 6, 2), ("same", 20, 1)))
    session = run_frame(frame, vectors, session_config())
    assert [r.responses.item for r in session.results] == ["A"]
    reasons = {s.item: s.reason for s in session.items.skipped}
    assert "6 usable response(s)" in reasons["tiny"]
    assert "two score categories" in reasons["same"]
    assert any(w.item == "same" and w.kind == "not_audited" for w in session.warnings)
    header, rows = items_table(session)
    status = {row[0]: row[header.index("status")] for row in rows}
    assert status == {"A": "audited", "tiny": f"skipped: {reasons['tiny']}",
                      "same": f"skipped: {reasons['same']}"}  # fmt: skip


def test_a_file_where_no_item_can_be_audited_is_an_error():
    frame, _ = session_frame(items=(("x", 5, 2), ("y", 4, 2)))
    with pytest.raises(DataError, match="no item can be audited"):
        split_items(frame, session_config(), "session.csv")


def test_rows_without_an_item_stop_the_load_or_are_skipped():
    frame, _ = session_frame()
    frame.loc[frame.index[[3, 7]], "item"] = " "
    with pytest.raises(DataError, match="2 row\\(s\\) have no item in column 'item'"):
        split_items(frame, session_config(), "session.csv")
    items = split_items(frame, session_config(on_bad_rows="skip"), "session.csv")
    assert sum(len(r) for r in items.audited) == len(frame) - 2
    assert any("no item" in w for w in items.warnings)


def test_a_missing_item_column_names_the_columns_there_are():
    frame, _ = session_frame()
    with pytest.raises(DataError, match="item column 'question' does not exist.*answer"):
        split_items(frame, session_config(item_column="question"), "session.csv")


def test_a_warning_every_item_shares_is_given_once():
    frame, _ = session_frame()
    items = split_items(frame, session_config(id_column="id"), "session.csv")
    about_ids = [w for w in items.warnings if "id column 'id' does not exist" in w]
    order = ", ".join(f"'{name}'" for name in dict.fromkeys(frame["item"]))
    assert len(about_ids) == 1 and about_ids[0].startswith(f"Items {order}: ")


def test_load_items_reads_the_file(tmp_path):
    frame, _ = session_frame()
    path = tmp_path / "session.csv"
    frame.to_csv(path, index=False)
    items = load_items(path, session_config())
    assert items.source == str(path) and items.file_rows == len(frame)
    assert sorted(r.item for r in items.audited) == ["A", "B"]
