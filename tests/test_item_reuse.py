"""Items that did not change, not audited again (engine.saved.items, issue 49): an item's audit
kept under a key of its inputs and settings comes back whole (its arrays and neighbour lists),
a changed answer, score, read or setting is another key, a damaged file is audited again; a run
of a file with one item changed audits that item only and writes what a run from nothing writes;
--rerun audits everything. Embedding uses helpers.FakeEncoder (no model loaded)."""

from __future__ import annotations

import csv
import json
from dataclasses import replace

import numpy as np
import pytest
from helpers import FakeEncoder, run_frame, session_config, session_frame, use_fake_model
from typer.testing import CliRunner

import engine.session
from engine.embedding.vectors import Embedded
from engine.input.items import split_items
from engine.pipeline import run_audit
from engine.saved import items as store
from parm_tui.cli import app

QUICK = ["--set", "bootstrap_samples=0", "--set", "similarity_top_k=[5, 10]"]


@pytest.fixture(scope="module")
def fresh():
    """A session of two items (A: 60 answers on 3 scores, B: 50 on 4) audited from nothing."""
    frame, vectors = session_frame()
    config = session_config()
    return frame, vectors, config, run_frame(frame, vectors, config)


def same_audit(a, b) -> None:
    """Two audits of one item equal in everything the outputs read (run ids and timings aside)."""
    for name in ("severity", "predicted", "flagged", "confirmed", "model_differs"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.allclose(a.fitted.proba, b.fitted.proba, rtol=0, atol=0)
    assert a.selected == b.selected and a.metrics == b.metrics
    assert np.array_equal(a.graph.indices, b.graph.indices)
    assert np.array_equal(a.graph.similarities, b.graph.similarities)


def test_an_audit_kept_comes_back_whole(fresh, tmp_path):
    _, _, config, session = fresh
    result = session.results[0]
    key = store.item_key(result.responses, config)
    store.keep(key, result, tmp_path)
    back = store.kept(key, result.responses, tmp_path)
    same_audit(result, back)
    assert back.graph.embeddings is None  # the session model reads the top-K lists only
    assert store.kept("0" * 40, result.responses, tmp_path) is None
    # A damaged file: audited again, no error.
    (tmp_path / store.FOLDER / f"{key}{store.GRAPH}").write_bytes(b"not a zip")
    assert store.kept(key, result.responses, tmp_path) is None


def test_every_input_and_setting_is_in_the_key(fresh):
    frame, vectors, config, session = fresh
    responses = session.results[0].responses
    key = store.item_key(responses, config)
    scores = responses.scores.copy()
    scores[0] = (scores[0] + 1) % 3
    texts = [*responses.texts[:-1], responses.texts[-1] + "!"]
    raters = ("r1",) * len(responses)  # a rater column where there was none
    assert len({
        key,
        store.item_key(replace(responses, scores=scores), config),
        store.item_key(replace(responses, texts=texts), config),
        store.item_key(replace(responses, raters=raters), config),
        store.item_key(responses, config.updated(seed=1)),
        store.item_key(responses, config.updated(similarity_top_k=[5])),
    }) == 6  # fmt: skip
    # Settings that change nothing computed (how many runs are kept, who reviews) keep the key.
    assert store.item_key(responses, config.updated(saved_runs=3, reviewer="Ann")) == key


@pytest.mark.parametrize(
    "changes", [{"session_model": "off"}, {"flag_precision": 0.6}, {"jobs": 2}], ids=str
)
def test_a_setting_the_item_audit_never_reads_keeps_its_key_and_its_audit(fresh, tmp_path, changes):
    """store.AFTER_ITEMS: the item audited afresh under the changed setting is the kept audit
    given back under it (the flagged count included, read from the run's settings)."""
    frame, vectors, config, session = fresh
    assert set(changes) <= set(store.AFTER_ITEMS)
    other = config.updated(**changes)
    items = split_items(frame, config, source="session.csv")
    responses = items.audited[0]
    embedded = Embedded.precomputed(vectors[responses.rows - 1])
    first = run_audit(responses, config, embedded=embedded)
    key = store.item_key(responses, config)
    assert store.item_key(responses, other) == key
    store.keep(key, first, tmp_path)
    afresh = run_audit(responses, other, embedded=embedded)
    back = store.kept(key, responses, tmp_path, config=other)
    same_audit(afresh, back)
    assert back.config == other
    if "flag_precision" in changes:  # the count follows the setting: a different one here
        assert not np.array_equal(first.flagged, afresh.flagged)


def test_a_session_with_items_kept_audits_only_the_others_and_gives_the_same_results(
    fresh, monkeypatch
):
    frame, vectors, config, session = fresh
    calls = []
    real = engine.session.run_audit

    def counted(responses, *args, **kwargs):
        calls.append(responses.item)
        return real(responses, *args, **kwargs)

    monkeypatch.setattr(engine.session, "run_audit", counted)
    items = split_items(frame, config, source="session.csv")
    kept_audits = []
    # B as kept (run_audit's result: the file has no reads, so the session relearned nothing).
    again = engine.session.run_session(
        items, config, embeddings=[vectors[r.rows - 1] for r in items.audited],
        reused=[None, session.results[1]], keep=lambda k, result: kept_audits.append(k),
    )  # fmt: skip
    assert calls == ["A"] and kept_audits == [0]
    for a, b in zip(session.results, again.results):
        same_audit(a, b)
        assert b.run_id == again.results[0].run_id != a.run_id
    assert again.results[1].timings == {}


def write_file(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["item", "answer", "score"], *rows])
    return path


def audit(path, out, *args):
    result = CliRunner().invoke(app, ["audit", str(path), "--out", str(out), *QUICK, *args])
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text()), result.output


def test_a_file_with_one_item_changed_audits_that_item_only(tmp_path, monkeypatch):
    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path / "cache"))
    use_fake_model(monkeypatch, FakeEncoder())
    rng = np.random.default_rng(4)
    rows = [[item, f"{item} answer about {w} {i}", str(int(rng.integers(0, 3)))]
            for item in ("A", "B", "C") for i, w in enumerate(rng.choice(
                ["light", "water", "soil", "air", "heat"], 40))]  # fmt: skip
    first, said = audit(write_file(tmp_path / "one.csv", rows), tmp_path / "a")
    assert "Reused" not in said
    rows[0][1] += " and more light"  # item A changed
    changed = write_file(tmp_path / "two.csv", rows)
    calls = []
    real = engine.session.run_audit
    monkeypatch.setattr(engine.session, "run_audit",
                        lambda r, *a, **k: calls.append(r.item) or real(r, *a, **k))  # fmt: skip
    again, said = audit(changed, tmp_path / "b")
    assert calls == ["A"]
    monkeypatch.setattr(engine.session, "run_audit", real)
    assert "Reused the audits of 2 of 3 items unchanged since an earlier run" in said
    # A run from nothing of the changed file (--rerun: no item reused) writes the same figures.
    scratch, said = audit(changed, tmp_path / "c", "--rerun")
    assert "Reused" not in said
    for key in ("headline", "items_overview", "flagged", "raters"):
        assert again[key] == scratch[key], key
    for a, b in zip(again["items"], scratch["items"]):
        for key in ("selected", "metrics", "severity", "flagged", "wrong_estimate", "parameters"):
            assert a[key] == b[key], (a["item"], key)


@pytest.fixture(scope="module")
def modelled():
    """`fresh`'s session with cross-fitting, so with its session model."""
    frame, vectors = session_frame()
    config = session_config(cross_fit_folds=3)
    session = run_frame(frame, vectors, config)
    assert session.session_model is not None
    return frame, vectors, config, session


def test_the_session_model_kept_is_keyed_by_its_items_and_settings(modelled, tmp_path):
    _, _, config, session = modelled
    keys = [store.item_key(r.responses, config) for r in session.results]
    key = store.model_key(keys, config)
    assert len({
        key,
        store.model_key(keys[::-1], config),
        store.model_key([keys[0], "0" * 40], config),
        store.model_key(keys, config.updated(session_model="off")),
        store.model_key(keys, config.updated(cross_fit_folds=4)),
    }) == 5  # fmt: skip
    assert store.model_key(keys, config.updated(flag_precision=0.6, jobs=2)) == key
    store.keep_model(key, session.session_model, tmp_path)
    assert store.kept_model(key, tmp_path) == session.session_model
    assert store.kept_model("0" * 40, tmp_path) is None
    (tmp_path / store.FOLDER / f"{key}{store.MODEL}").write_text("{not json")
    assert store.kept_model(key, tmp_path) is None  # damaged: fitted again, no error


def test_a_session_model_kept_is_used_only_when_every_item_is_reused(modelled, monkeypatch):
    frame, vectors, config, session = modelled
    items = split_items(frame, config, source="session.csv")
    embeddings = [vectors[r.rows - 1] for r in items.audited]
    fitted = []
    real = engine.session._session_model
    monkeypatch.setattr(engine.session, "_session_model",
                        lambda *a, **k: fitted.append(1) or real(*a, **k))  # fmt: skip
    kept_model = session.session_model
    again = engine.session.run_session(items, config, embeddings=embeddings,
                                       reused=list(session.results), reused_model=kept_model)  # fmt: skip
    assert fitted == [] and again.reused_model and again.session_model == kept_model
    made = []
    partly = engine.session.run_session(items, config, embeddings=embeddings,
                                        reused=[None, session.results[1]], reused_model=kept_model,
                                        keep_model=made.append)  # fmt: skip
    assert fitted == [1] and not partly.reused_model and made == [partly.session_model]


def test_another_flagged_precision_reuses_the_items_and_the_session_model(tmp_path, monkeypatch):
    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path / "cache"))
    use_fake_model(monkeypatch, FakeEncoder())
    rng = np.random.default_rng(5)
    rows = [[item, f"{item} answer about {w} {i}", str(int(rng.integers(0, 3)))]
            for item in ("A", "B") for i, w in enumerate(rng.choice(
                ["light", "water", "soil", "air"], 40))]  # fmt: skip
    path = write_file(tmp_path / "one.csv", rows)
    first, said = audit(path, tmp_path / "a")
    assert first["headline"]["session_model"] is not None and "Reused" not in said
    second, said = audit(path, tmp_path / "b", "--set", "flag_precision=0.6")
    assert "Reused the audits of 2 of 2 items unchanged since an earlier run and the session " \
        "model" in said  # fmt: skip
    assert second["headline"]["session_model"] == first["headline"]["session_model"]
    third, said = audit(path, tmp_path / "c", "--set", "session_model=off")
    assert "Reused the audits of 2 of 2 items" in said and "session model (" not in said
    assert third["headline"]["session_model"] is None
    for a, b in zip(first["items"], third["items"]):
        assert a["severity"] == b["severity"] and a["selected"] == b["selected"]
