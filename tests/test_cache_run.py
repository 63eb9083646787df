"""`parm cache` and `parm cache clear` (parm_tui.cache_run over
engine.embedding.cache.contents): where the cache is, what it holds, its bound; emptying it
while leaving nothing else in the folder touched."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import parm_command

from engine.embedding.cache import entries as cache
from engine.embedding.cache.answers import ANSWERS_FILE, answer_key, open_answer_cache
from engine.embedding.cache.contents import cache_contents, clear_cache
from engine.embedding.cache.entries import PLOTS_FOLDER


@pytest.fixture
def filled(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("PARM_CACHE_DIR", str(folder))
    store = open_answer_cache(folder)
    vectors = np.random.default_rng(0).normal(size=(25, 8)).astype(np.float32)
    store.keep([(answer_key("m", f"a {i}"), "whole", v) for i, v in enumerate(vectors)], 1 << 30)
    store.close()
    cache.write_arrays("e" * 64, {"vectors": vectors, "truncated": np.array([0])})
    (folder / "notes.txt").write_text("someone else's file")
    (folder / PLOTS_FOLDER).mkdir()
    for name in ("a.svg", "b.svg", "c.part"):  # two kept plots, one a run left half written
        (folder / PLOTS_FOLDER / name).write_text("<svg/>")
    return folder


def test_the_contents_count_answers_and_older_entries(filled):
    held = cache_contents()
    assert held.folder == filled and held.answers == 25 and held.lists == 1
    assert held.plots == 3 and held.plot_bytes == 18
    assert held.answer_bytes >= (filled / ANSWERS_FILE).stat().st_size > 0
    assert held.total_bytes == held.answer_bytes + held.list_bytes + held.plot_bytes


def test_parm_cache_shows_the_place_the_count_and_the_limit(filled):
    code, output = parm_command("cache", "--set", "embedding_cache_mb=300")
    assert code == 0
    assert str(filled) in output and "25 cached" in output
    assert "300 MB (embedding_cache_mb)" in output and "1 files" in output
    assert "report plots: 3 kept, 0.0 MB (at most 4,000;" in output


def test_parm_cache_clear_empties_it_and_leaves_other_files(filled):
    code, output = parm_command("cache", "clear")
    assert code == 0 and "25 answers, 1 older entries and 3 report plots" in output
    held = cache_contents()
    assert held.answers == 0 and held.lists == 0 and held.plots == 0
    assert (filled / "notes.txt").exists()
    store = open_answer_cache(filled)  # still a working cache
    assert store.count() == 0


def test_a_cache_sqlite_cannot_read_is_removed_by_clear(filled):
    for path in filled.glob(ANSWERS_FILE + "*"):
        path.unlink()
    (filled / ANSWERS_FILE).write_bytes(b"garbage" * 1000)
    assert cache_contents().answers == 0
    clear_cache()
    assert not (filled / ANSWERS_FILE).exists()


def test_a_cache_that_is_not_there_is_shown_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path / "none"))
    code, output = parm_command("cache")
    assert code == 0 and "0 cached" in output
    assert not (tmp_path / "none").exists()  # looking creates nothing


def test_a_bad_limit_is_refused_like_any_setting(filled):
    code, output = parm_command("cache", "--set", "embedding_cache_mb=-1")
    assert code == 2 and "embedding_cache_mb" in output
