"""Sentence embedding (engine.embedding.sentence) with the answer cache: each distinct text of a
call embedded once, nothing embedded again that the cache holds (across files, items and
settings that do not change its vector), earlier versions' entries read, and every problem with
the cache a warning, never a wrong vector or a failed run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import FakeEncoder, use_fake_model

from engine.embedding.cache import entries as cache
from engine.embedding.cache.answers import ANSWERS_FILE
from engine.embedding.sentence import Reading, embed_text_lists, embed_texts
from engine.embedding.vectors import unit_rows

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PARM_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def model(monkeypatch, cache_dir) -> FakeEncoder:
    return use_fake_model(monkeypatch, FakeEncoder())


def answers(n: int, prefix: str = "answer") -> list[str]:
    return [f"{prefix} {i}" for i in range(n)]


def test_each_distinct_text_is_embedded_once_and_duplicates_share_the_vector(model):
    texts = ["b", "a", "b", "c", "a", "b"]
    vectors, facts = embed_texts(texts)
    assert sorted(model.encoded) == ["a", "b", "c"]
    np.testing.assert_array_equal(vectors, unit_rows(model.encode(texts)))
    assert not facts.cached and facts.truncated == 0


def test_a_second_run_embeds_nothing_and_never_loads_the_model(model, monkeypatch):
    first, _ = embed_texts(answers(50))
    import engine.embedding.sentence as sentence

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(sentence, "model_for", no_model)
    again, facts = embed_texts(answers(50))
    assert facts.cached and facts.seconds == 0.0
    np.testing.assert_array_equal(first, again)


def test_a_re_run_with_some_new_answers_embeds_only_those(model):
    embed_texts(answers(200))
    model.encoded.clear()
    edited = answers(200)[5:] + answers(2, "late") + ["answer 7"]
    vectors, facts = embed_texts(edited)
    assert sorted(model.encoded) == ["late 0", "late 1"]
    np.testing.assert_array_equal(vectors, unit_rows(model.encode(edited)))
    assert not facts.cached


def test_the_progress_says_how_many_answers_came_from_the_cache(model):
    """'357 of 357 new, 1,916 from the cache': the count embedded now is not all there is."""
    from engine.core.progress import EMBEDDING, Reporter

    said = []
    embed_texts(answers(1916), reporter=Reporter(said.append))
    assert said[-1].message == "1,916 of 1,916 distinct answers"
    said.clear()
    embed_texts(answers(1916) + answers(357, "late") + answers(10), reporter=Reporter(said.append))
    embedding = [event for event in said if event.stage == EMBEDDING]
    assert embedding[-1].message == "357 of 357 new, 1,916 from the cache"
    assert (embedding[-1].done, embedding[-1].total) == (357, 357)
    said.clear()
    embed_texts(answers(20), reporter=Reporter(said.append))
    assert said[-1].message == "all 20 from the cache"


def test_lists_share_their_texts_and_each_says_whether_it_was_embedded(model):
    embed_texts(["cached one"])
    model.encoded.clear()
    made = embed_text_lists(
        [["x", "y", "cached one"], ["y", "z"], ["cached one"]], Reading(MODEL), None
    )
    assert sorted(model.encoded) == ["x", "y", "z"]
    np.testing.assert_array_equal(made[0][0][1], made[1][0][0])  # "y" in both lists
    assert [facts.cached for _, facts in made] == [False, False, True]
    assert [len(vectors) for vectors, _ in made] == [3, 2, 1]


def test_without_the_cache_nothing_is_read_or_written(model, cache_dir):
    embed_texts(answers(5), use_cache=False)
    assert not (cache_dir / ANSWERS_FILE).exists()
    embed_texts(answers(5))
    model.encoded.clear()
    embed_texts(answers(5), cache_mb=0)  # a bound of 0 keeps nothing: nothing is read either
    assert len(model.encoded) == 5


def test_an_entry_of_an_earlier_version_is_read_and_copied_into_the_answer_cache(model, cache_dir):
    texts = answers(30) + ["answer 3"]
    earlier = FakeEncoder(seed_salt="earlier").encode(texts)
    truncated = np.array([0], dtype=np.int64)
    assert (
        cache.write_arrays(
            cache.cache_key(MODEL, texts), {"vectors": earlier, "truncated": truncated}
        )
        is None
    )
    vectors, facts = embed_texts(texts)
    assert model.encoded == [] and facts.cached
    np.testing.assert_array_equal(vectors, earlier)
    for path in cache_dir.glob("*.npz"):  # copied: the earlier entry is no longer needed
        path.unlink()
    again, facts = embed_texts(answers(10))
    assert model.encoded == [] and facts.cached
    np.testing.assert_array_equal(again, earlier[:10])


def test_an_earlier_entry_of_cut_texts_is_not_used_to_read_them_whole(model, cache_dir):
    texts = answers(4)
    earlier = {"vectors": model.encode(texts) * 0 + 0.5, "truncated": np.array([1])}
    cache.write_arrays(cache.cache_key(MODEL, texts), earlier)
    model.encoded.clear()
    _, facts = embed_texts(texts)  # truncating: the earlier entry is what it would compute
    assert facts.cached and facts.truncated == 4 and model.encoded == []
    _, facts = embed_texts(texts, long_answers="windows")
    assert sorted(model.encoded) == texts and not facts.cached


def test_a_damaged_answer_entry_is_embedded_again_with_one_warning(model, cache_dir):
    import sqlite3

    first, _ = embed_texts(answers(12))
    conn = sqlite3.connect(cache_dir / ANSWERS_FILE)
    conn.execute("UPDATE answers SET data = zeroblob(length(data)) WHERE rowid IN (2, 5)")
    conn.commit()
    conn.close()
    model.encoded.clear()
    again, facts = embed_texts(answers(12))
    assert len(model.encoded) == 2 and not facts.cached
    assert len(facts.warnings) == 1 and "2 cached vector(s)" in facts.warnings[0]
    np.testing.assert_array_equal(first, again)
    _, facts = embed_texts(answers(12))
    assert facts.cached and not facts.warnings


def test_a_cache_folder_that_cannot_be_written_costs_only_the_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("PARM_CACHE_DIR", str(blocker / "cache"))
    model = use_fake_model(monkeypatch, FakeEncoder())
    vectors, facts = embed_texts(answers(3))
    assert len(vectors) == 3 and len(model.encoded) == 3
    assert len(facts.warnings) == 1 and "cannot be written" in facts.warnings[0]
    assert "PARM_CACHE_DIR" in facts.warnings[0]


def test_a_full_disk_is_named_and_the_run_goes_on(model, cache_dir, monkeypatch):
    import sqlite3

    from engine.embedding.cache import answers as answer_cache

    def full(self, entries, limit_bytes):
        error = sqlite3.OperationalError("database or disk is full")
        error.sqlite_errorcode = 13
        raise answer_cache.CacheUnavailable(
            f"{cache_dir} cannot be written ({answer_cache.reason(error)})"
        )

    monkeypatch.setattr(answer_cache.AnswerCache, "keep", full)
    vectors, facts = embed_texts(answers(3))
    assert len(vectors) == 3
    assert "cannot be written (the disk is full" in facts.warnings[0]


def test_an_empty_list_gives_no_vectors(model):
    vectors, facts = embed_texts([])
    assert vectors.shape[0] == 0 and model.encoded == []
