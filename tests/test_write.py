"""Writing outputs (engine/outputs/write.py): decisions.csv has the documented columns, guards
formula cells and is never overwritten silently."""

from __future__ import annotations

import csv

import pytest
from helpers import (
    PartialResult,
    make_responses,
    record,
)

from engine.core.errors import ParmError
from engine.outputs.tables import decisions_table
from engine.outputs.write import write_decisions
from engine.results.decision import DECISION_COLUMNS, RunContext
from engine.saved.decisions import open_store


def test_decisions_csv_has_the_columns_and_guards_formulas(source, database, tmp_path):
    texts = [f"answer {i}" for i in range(6)]
    texts[2] = '=HYPERLINK("http://evil")'
    responses = make_responses(texts)
    result = PartialResult(responses)
    with open_store(source, responses, database) as store:
        record(store, responses, 2, "change", "1", note="+1 from me")
        store.record(
            1, responses.ids[0], texts[0], "keep", context=RunContext("r1", "d1", "1", 0.25)
        )
        header, rows = decisions_table(store, result)
        assert header == DECISION_COLUMNS
        assert [r[0] for r in rows] == [1, 3]
        out = tmp_path / "out"
        written = write_decisions(store, result, out)
    with written.open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0]) == [*DECISION_COLUMNS, "run_id"]
    assert {row["run_id"] for row in table} == {result.run_id}
    change = table[1]
    assert change["text"] == '\'=HYPERLINK("http://evil")'
    assert change["note"] == "'+1 from me"
    assert (change["score"], change["predicted"], change["new_score"]) == ("2", "0", "1")
    assert table[0]["action"] == "keep" and table[0]["new_score"] == ""
    # The run each decision was made on; empty when it was not recorded.
    decided = ("decided_run_id", "decided_settings", "decided_predicted", "decided_severity")
    assert [table[0][c] for c in decided] == ["r1", "d1", "1", "0.250000"]
    assert [change[c] for c in decided] == ["", "", "", ""]


def test_decisions_csv_is_not_overwritten_silently(source, database, tmp_path):
    responses = make_responses()
    result = PartialResult(responses)
    out = tmp_path / "out"
    out.mkdir()
    (out / "decisions.csv").write_text("earlier export\n")
    with open_store(source, responses, database) as store:
        record(store, responses, 0, "keep")
        with pytest.raises(ParmError, match="decisions.csv"):
            write_decisions(store, result, out)
        assert (out / "decisions.csv").read_text() == "earlier export\n"
        write_decisions(store, result, out, overwrite=True)
    assert "keep" in (out / "decisions.csv").read_text()
