"""engine.model.session.figures: the session model fitted once in a run (setting
`session_model`), its figures in items.csv, report.json and saved runs, deterministic, and a run
that can be cancelled while it fits."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from helpers import run_frame, session_config, session_frame

from engine.core.errors import Cancelled
from engine.core.progress import SESSION_MODEL, CancelToken
from engine.input.items import split_items
from engine.input.settings.config import config_from_dict
from engine.model.session.figures import SessionModelFigures
from engine.outputs.report.report_json import session_dict
from engine.outputs.session import write_session
from engine.results.figures import run_figures
from engine.results.lead import session_model_lead
from engine.saved.store import find_session, restore_session, save_session
from engine.session import run_session

# Cross-fitting on (the session model's figure is the cross-fitted one), a short K grid.
MODELLED = {"cross_fit_folds": 3, "similarity_top_k": [5, 10]}


def modelled_session(**changes):
    frame, vectors = session_frame(seed=3)
    config = session_config(**{**MODELLED, **changes})
    return frame, vectors, config, run_frame(frame, vectors, config)


def items_csv(folder) -> list[dict]:
    with (folder / "items.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_a_session_of_items_shows_the_session_models_figures_in_items_csv_and_report_json(
    tmp_path,
):
    _, _, _, session = modelled_session()
    modelled = session.session_model
    assert modelled is not None and modelled.metric == "qwk"
    assert set(modelled.items) == {"A", "B"}
    # Read once: the in-sample figure is given no read of the answer, and is compared as such.
    assert not modelled.pooled.given_reads and not run_figures(session).session_model_given_reads
    for figures in [*modelled.items.values(), modelled.pooled]:
        assert -1 <= figures.cross_fitted <= 1 and -1 <= figures.in_sample <= 1
    write_session(session, tmp_path)
    rows = items_csv(tmp_path)
    header = list(rows[0])
    # The cross-fitted figure comes before the in-sample one.
    assert header.index("cross_fit_kappa") < header.index("kappa")
    assert header.index("cross_fit_qwk") < header.index("qwk")
    for row in rows:
        assert float(row["session_model"]) == pytest.approx(
            modelled.items[row["item"]].cross_fitted, abs=1e-6
        )
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    headline = data["headline"]
    figures = run_figures(session)
    assert headline["lead"] == "cross_fitted"
    assert headline["kappa"]["cross_fitted"] == pytest.approx(figures.cross_kappa, abs=1e-6)
    assert headline["session_model"]["pooled"]["cross_fitted"] == pytest.approx(
        modelled.pooled.cross_fitted
    )
    assert [r["session_model"] for r in data["items_overview"]] == [
        pytest.approx(modelled.items[n].cross_fitted, abs=1e-6) for n in ("A", "B")
    ]
    assert "session_model" in data["timings_seconds"]


def test_the_session_models_figures_are_the_same_run_after_run():
    frame, vectors, config, first = modelled_session()
    second = run_frame(frame, vectors, config)
    one, other = first.session_model.to_dict(), second.session_model.to_dict()
    assert one["top_k"] == other["top_k"] and one["metric"] == other["metric"]
    pairs = [(one["pooled"], other["pooled"]), *zip(one["items"], other["items"])]
    for a, b in pairs:
        for key in ("in_sample", "cross_fitted"):
            assert a[key] == pytest.approx(b[key], abs=1e-9)
    assert [r.warning for r in first.overview] == [r.warning for r in second.overview]


def test_the_session_model_is_left_out_when_off_without_cross_fitting_or_for_one_read():
    frame, vectors = session_frame(items=(("A", 60, 3), ("B", 50, 3)), seed=3)
    assert (
        run_frame(frame, vectors, session_config(**MODELLED, session_model="off")).session_model
        is None
    )
    assert run_frame(frame, vectors, session_config(similarity_top_k=[5, 10])).session_model is None
    one = frame[frame["item"] == "A"].drop(columns="item").reset_index(drop=True)
    config = config_from_dict({"id_column": None, **MODELLED})
    items = split_items(one, config, "one.csv")
    embeddings = [vectors[(frame["item"] == "A").to_numpy()][r.rows - 1] for r in items.audited]
    assert run_session(items, config, embeddings=embeddings).session_model is None


def test_one_item_read_twice_is_a_session_model_of_that_item(tmp_path):
    frame, vectors = session_frame(items=(("A", 80, 3),), seed=4)
    rng = np.random.default_rng(0)
    frame["score2"] = [
        str(int(s) if rng.random() < 0.8 else (int(s) + 1) % 3) for s in frame["score"]
    ]
    frame = frame.drop(columns="item")
    config = config_from_dict({"id_column": None, "second_score_column": "score2", **MODELLED})
    items = split_items(frame, config, "one.csv")
    session = run_session(items, config, embeddings=[vectors[r.rows - 1] for r in items.audited])
    assert session.session_model is not None and list(session.session_model.items) == [None]
    # Its in-sample figure was given each answer's second read: said so, not "memorised".
    assert (
        session.session_model.pooled.given_reads and session.session_model.items[None].given_reads
    )
    figures = run_figures(session)
    assert figures.session_model_given_reads
    lead = session_model_lead(figures)
    assert "given each answer's other reads" in lead and "memorised" not in lead
    data = session_dict(session)
    assert data["headline"]["session_model"]["items"][0]["item"] is None
    write_session(session, tmp_path)
    assert "session model QWK" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_a_run_is_cancelled_while_the_session_model_fits():
    frame, vectors = session_frame(seed=3)
    config = session_config(**MODELLED)
    token, seen = CancelToken(), []

    def progress(event):
        if event.stage == SESSION_MODEL:
            seen.append(event.done)
            if event.done >= 2:
                token.cancel()

    with pytest.raises(Cancelled):
        run_frame(frame, vectors, config, progress=progress, cancel=token)
    assert seen[:3] == [0, 1, 2]


def test_a_saved_run_restores_the_session_models_figures(tmp_path):
    frame, _, config, session = modelled_session()
    save_session("d" * 64, "session.csv", session, base=tmp_path)
    saved = find_session("d" * 64, base=tmp_path)
    items = split_items(frame, config, source="session.csv")
    restored = restore_session(saved, items, config)
    assert restored.session_model == session.session_model
    assert [r.session_model for r in restored.overview] == [
        r.session_model for r in session.overview
    ]
    assert saved.figures.session_model == session.session_model.pooled.cross_fitted
    assert SessionModelFigures.from_dict(saved.session_model) == session.session_model


def test_a_wide_files_unrecorded_raters_are_its_columns_and_a_long_files_stay_unknown():
    from engine.graph.search import build_graph
    from engine.input.responses import Responses
    from engine.input.several_reads import Reads
    from engine.model.session.figures import session_items

    answer = np.array([0, 0, 1, 2, 2])
    reads = Reads(answer, ("", "", "", "ann", ""), np.array([0, 1, 1, 0, 0]), np.full(5, np.nan),
                  np.arange(1, 6), np.array([True, False, True, True, False]))  # fmt: skip
    responses = Responses(["a", "b", "c"], np.array([0, 1, 0]), ("0", "1"), ["1", "2", "3"],
                          np.arange(1, 4), reads=reads)  # fmt: skip
    vectors = np.eye(3, dtype=np.float32)
    graph = build_graph(vectors, 2)
    (wide,), scale = session_items([responses], [graph], wide=True)
    assert scale == ("0", "1")
    # column 1, column 2, column 1, ann, column 2: three raters numbered in order of appearance.
    assert wide.rater.tolist() == [0, 1, 0, 2, 1]
    (long,), _ = session_items([responses], [graph], wide=False)
    assert long.rater.tolist() == [-1, -1, -1, 0, -1]
    assert wide.score.tolist() == [0, 1, 1, 0, 0] and wide.audited.tolist() == reads.first.tolist()
