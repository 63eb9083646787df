"""The answer cache (engine.embedding.cache.answers): one entry per text, verified before use; a
damaged entry or database is never used; a full disk, a folder that cannot be written and two
processes writing at once cost at most the cache, never the run; the size stays bounded, least
recently used first."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from engine.embedding.cache import answers as answer_cache
from engine.embedding.cache.answers import (
    ANSWERS_FILE,
    CacheUnavailable,
    answer_key,
    open_answer_cache,
)

READINGS = ("whole", "truncate")


def vectors(n: int, seed: int = 0, d: int = 8) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


def keys(n: int, prefix: str = "answer") -> list[bytes]:
    return [answer_key("model@1", f"{prefix} {i}") for i in range(n)]


def test_the_key_separates_model_kind_and_text_and_cannot_be_spliced():
    assert answer_key("m", "ab") != answer_key("m", "ab", kind="token")
    assert answer_key("m", "ab") != answer_key("n", "ab")
    # Length prefixes: moving a character between the model's identity and the text matters.
    assert answer_key("ma", "b") != answer_key("m", "ab")
    assert len(answer_key("m", "x")) == 32


def test_entries_read_back_exactly_in_the_reading_asked_for(tmp_path):
    store = open_answer_cache(tmp_path)
    arrays = vectors(5)
    entries = [(key, "whole", a) for key, a in zip(keys(5), arrays)]
    store.keep(entries[:3] + [(k, "truncate", a) for k, _, a in entries[3:]], 1 << 30)
    found, damaged = store.find(keys(5), READINGS)
    assert damaged == 0 and len(found) == 5
    for k, key in enumerate(keys(5)):
        np.testing.assert_array_equal(found[key].array, arrays[k])
    assert [found[key].reading for key in keys(5)] == ["whole"] * 3 + ["truncate"] * 2
    # A text read in windows is not what a truncating run asks for, and the other way round.
    found, _ = store.find(keys(5), ("whole", "windows"))
    assert set(found) == set(keys(5)[:3])


def test_a_token_matrix_in_float16_is_kept_with_its_shape(tmp_path):
    store = open_answer_cache(tmp_path)
    matrix = vectors(7, d=4).astype(np.float16)
    store.keep([(keys(1)[0], "whole", matrix)], 1 << 30)
    found, _ = store.find(keys(1), READINGS)
    assert found[keys(1)[0]].array.dtype == np.float16
    np.testing.assert_array_equal(found[keys(1)[0]].array, matrix)


def _corrupt(path: Path, sql: str, params=()) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "how",
    [
        "UPDATE answers SET data = zeroblob(length(data)) WHERE rowid = 1",
        "UPDATE answers SET data = substr(data, 1, 16) WHERE rowid = 1",
        "UPDATE answers SET shape = '4' WHERE rowid = 1",
        "UPDATE answers SET dtype = '<f8' WHERE rowid = 1",
        "UPDATE answers SET checksum = zeroblob(32) WHERE rowid = 1",
        "UPDATE answers SET data = 'text' WHERE rowid = 1",
    ],
)
def test_a_damaged_entry_is_never_used_and_is_deleted(tmp_path, how):
    store = open_answer_cache(tmp_path)
    store.keep([(key, "whole", a) for key, a in zip(keys(3), vectors(3))], 1 << 30)
    store.close()
    _corrupt(tmp_path / ANSWERS_FILE, how)
    store = open_answer_cache(tmp_path)
    found, damaged = store.find(keys(3), READINGS)
    assert damaged == 1 and set(found) == set(keys(3)[1:])
    assert store.count() == 2  # deleted, so the next run makes it again


def test_values_that_are_not_finite_are_damage_even_with_a_matching_checksum(tmp_path):
    store = open_answer_cache(tmp_path)
    bad = vectors(1)[0]
    bad[2] = np.nan
    store.keep([(keys(1)[0], "whole", bad)], 1 << 30)
    found, damaged = store.find(keys(1), READINGS)
    assert found == {} and damaged == 1


def test_a_database_that_is_not_one_is_set_aside_and_a_new_one_started(tmp_path):
    (tmp_path / ANSWERS_FILE).write_bytes(b"not a database at all" * 100)
    store = open_answer_cache(tmp_path)
    assert store.count() == 0
    assert (tmp_path / (ANSWERS_FILE + ".damaged")).exists()
    store.keep([(keys(1)[0], "whole", vectors(1)[0])], 1 << 30)
    assert store.find(keys(1), READINGS)[0]


def test_a_full_disk_keeps_nothing_of_the_write_and_says_so(tmp_path):
    store = open_answer_cache(tmp_path)
    store.keep([(keys(1)[0], "whole", vectors(1)[0])], 1 << 30)
    # SQLite's own limit on the database's pages gives exactly the error of a full disk.
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(CacheUnavailable, match=r"cannot be written \(the disk is full"):
        store.keep([(key, "whole", a) for key, a in zip(keys(200, "new"), vectors(200))], 1 << 30)
    assert store.count() == 1  # the transaction left nothing half written
    assert len(store.find(keys(1), READINGS)[0]) == 1


def test_a_folder_that_cannot_be_made_says_why(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "mkdir", full)
    with pytest.raises(CacheUnavailable, match=r"cannot be written \(the disk is full"):
        open_answer_cache(tmp_path / "cache")


def test_the_size_is_bounded_least_recently_used_first(tmp_path, monkeypatch):
    store = open_answer_cache(tmp_path)
    clock = [1_000_000]
    monkeypatch.setattr(answer_cache.time, "time", lambda: clock[0])
    old, new = keys(300, "old"), keys(300, "new")
    store.keep([(k, "whole", a) for k, a in zip(old, vectors(300, d=256))], 1 << 30)
    clock[0] += 10 * 3600
    store.find(old[:50], READINGS)  # used again: now among the most recent
    clock[0] += 10 * 3600
    limit = store.size_bytes() * 3 // 2  # room for about 400 of the 600 entries
    store.keep([(k, "whole", a) for k, a in zip(new, vectors(300, 1, d=256))], limit)
    assert store.size_bytes() <= limit
    kept, _ = store.find(old + new, READINGS)
    assert set(new) <= set(kept) and set(old[:50]) <= set(kept)
    assert len(set(old[50:]) & set(kept)) < 250  # the least recently used went


def test_older_entries_of_earlier_versions_go_first(tmp_path):
    store = open_answer_cache(tmp_path)
    earlier = tmp_path / ("a" * 64 + ".npz")
    earlier.write_bytes(b"x" * 400_000)
    store.keep([(keys(1)[0], "whole", vectors(1)[0])], store.size_bytes() + 300_000)
    assert not earlier.exists() and store.count() == 1


def _writer(folder: str, prefix: str, seed: int, done) -> None:
    store = open_answer_cache(Path(folder))
    for start in range(0, 400, 40):  # many small transactions, interleaved with the other's
        batch = [
            (answer_key("model@1", f"{prefix} {i}"), "whole", a)
            for i, a in zip(range(start, start + 40), vectors(40, seed + start))
        ]
        store.keep(batch, 1 << 30)
    store.close()
    done.put(prefix)


def test_two_processes_writing_at_once_lose_nothing_and_damage_nothing(tmp_path):
    context = multiprocessing.get_context("spawn")
    done = context.Queue()
    writers = [
        context.Process(target=_writer, args=(str(tmp_path), name, seed, done))
        for name, seed in (("shared", 0), ("shared", 0), ("first", 1000), ("second", 2000))
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
    assert all(writer.exitcode == 0 for writer in writers)
    store = open_answer_cache(tmp_path)
    every = keys(400, "shared") + keys(400, "first") + keys(400, "second")
    found, damaged = store.find(every, READINGS)
    assert damaged == 0 and len(found) == 1200 and store.count() == 1200


def test_a_re_read_within_the_hour_writes_nothing(tmp_path):
    store = open_answer_cache(tmp_path)
    store.keep([(key, "whole", a) for key, a in zip(keys(20), vectors(20))], 1 << 30)
    before = store.conn.total_changes
    store.find(keys(20), READINGS)
    assert store.conn.total_changes == before


def test_a_cache_file_written_by_a_killed_process_is_read(tmp_path):
    """A process killed in the middle of a write leaves its transaction unfinished in the
    write-ahead log; the next one sees the entries written before it and nothing of it."""
    code = (
        "import os, sys, numpy as np\n"
        "from pathlib import Path\n"
        "from engine.embedding.cache.answers import open_answer_cache, answer_key\n"
        "store = open_answer_cache(Path(sys.argv[1]))\n"
        "v = np.ones(8, np.float32)\n"
        "store.keep([(answer_key('model@1', 'kept'), 'whole', v)], 1 << 30)\n"
        "store.conn.execute('BEGIN IMMEDIATE')\n"
        "store.conn.execute(\"INSERT INTO answers VALUES (x'00', 'whole', '<f4', '8', "
        'zeroblob(32), zeroblob(32), 0)")\n'
        "os._exit(9)\n"
    )
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=False, timeout=60)
    store = open_answer_cache(tmp_path)
    assert store.count() == 1
    assert len(store.find([answer_key("model@1", "kept")], READINGS)[0]) == 1


def test_opening_a_cache_in_use_by_a_slow_writer_waits_rather_than_failing(tmp_path):
    store = open_answer_cache(tmp_path)
    other = sqlite3.connect(tmp_path / ANSWERS_FILE, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    started = time.perf_counter()

    def release() -> None:
        time.sleep(0.5)
        other.execute("COMMIT")

    import threading

    threading.Thread(target=release).start()
    store.keep([(keys(1)[0], "whole", vectors(1)[0])], 1 << 30)
    assert store.count() == 1 and time.perf_counter() - started >= 0.4
    assert os.path.exists(tmp_path / ANSWERS_FILE)
