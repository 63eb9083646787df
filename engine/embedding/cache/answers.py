"""The answer cache: one vector (or token matrix) per distinct answer text, shared by every file,
session and item, in one SQLite database in the cache folder (engine.core.places.cache_dir).

An entry is addressed by its key, SHA-256 over the cache version, the kind of vectors, the
model's identity (engine.embedding.models.model_identity) and the text, and by how the model
read the text (engine.embedding.reading: the whole text, or a long one truncated or in
windows). It holds the array's bytes, dtype and shape and a SHA-256 over all of them and the
key; every entry is checked before it is used (checksum, shape, dtype, finite values), and a
damaged one is deleted and embedded again, never used. A database SQLite cannot read at all is
moved aside and a new one started.

One database, not one file per answer: at 100,000 answers SQLite wrote them in about 2 s and
read and verified them in about 1.3 s, where a file per answer took 9 s to write (without
syncing) and 2.8 s to read (tests/benchmarks/bench_cache_store.py). SQLite also gives what a
cache shared by processes needs: writes are transactions (a crash or a full disk leaves no half
entry), two processes writing at once wait for each other (WAL, busy timeout), and the
least-recently-used entries are found by an index. Each entry's last use is kept to the hour,
so a re-run within the hour writes nothing.

The size is bounded (`embedding_cache_mb`): after a write, the least recently used entries are
deleted until the cache is under nine tenths of the bound, and the freed pages returned to the
file system. Entries of earlier parm versions (one .npz per list of texts, engine.embedding.cache.entries)
count towards the bound and go first.
"""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.core.files import reason, storage_code
from engine.embedding.cache.entries import legacy_entries

# The database's file name carries the format: another format is another file.
ANSWERS_FILE = "answers-1.sqlite"
ANSWER_CACHE_VERSION = "answers-1"
_SIDE_FILES = ("-wal", "-shm", "-journal")
_CHUNK = 500  # keys per query: well under SQLite's limit on bound parameters
_USE_GRANULARITY = 3600  # seconds: a last use is rewritten at most once an hour
_BUSY_SECONDS = 30.0  # another process writing: wait this long before giving up (no cache)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key BLOB NOT NULL,
    reading TEXT NOT NULL,
    dtype TEXT NOT NULL,
    shape TEXT NOT NULL,
    data BLOB NOT NULL,
    checksum BLOB NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (key, reading)
);
CREATE INDEX IF NOT EXISTS answers_used ON answers (used);
"""
_DTYPES = ("<f4", "<f2")


class CacheUnavailable(Exception):
    """The answer cache cannot be used this time; the message says why (a full disk, ...)."""


@dataclass(frozen=True)
class Found:
    """A verified entry: the array and how the model read its text."""

    array: np.ndarray
    reading: str


def answer_key(identity: str, text: str, kind: str = "sentence") -> bytes:
    """SHA-256 over the cache version, `kind`, the model's identity and the text, each part
    prefixed by its length so that no two different inputs give the same bytes."""
    digest = hashlib.sha256()
    for part in (ANSWER_CACHE_VERSION, kind, identity, text):
        encoded = part.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
    return digest.digest()


def _checksum(key: bytes, reading: str, dtype: str, shape: str, data: bytes) -> bytes:
    digest = hashlib.sha256(key)
    for part in (reading, dtype, shape):
        digest.update(part.encode() + b"\0")
    digest.update(data)
    return digest.digest()


class AnswerCache:
    """An open answer cache (`open_answer_cache`). Not shared between threads."""

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self.conn = conn
        self.path = path

    def find(self, keys: list[bytes], readings: tuple[str, ...]) -> tuple[dict[bytes, Found], int]:
        """The verified entries of `keys` read in one of `readings` (the first reading listed
        wins when a key has several), and how many damaged entries were found (and deleted)."""
        rank = {reading: k for k, reading in enumerate(readings)}
        found: dict[bytes, Found] = {}
        damaged: list[tuple[bytes, str]] = []
        marks = ",".join("?" * len(readings))
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            rows = self.conn.execute(
                f"SELECT key, reading, dtype, shape, data, checksum FROM answers "
                f"WHERE key IN ({','.join('?' * len(chunk))}) AND reading IN ({marks})",
                (*chunk, *readings),
            ).fetchall()
            for key, reading, array in _verified_rows(rows, damaged):
                if key not in found or rank[reading] < rank[found[key].reading]:
                    found[key] = Found(array, reading)
        if damaged:
            self._delete(damaged)
        self._mark_used(list(found))
        return found, len(damaged)

    def held(self, keys: list[bytes], readings: tuple[str, ...]) -> int:
        """How many of `keys` have an entry in one of `readings` (not verified: a quick look)."""
        held = 0
        marks = ",".join("?" * len(readings))
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            held += self.conn.execute(
                f"SELECT count(DISTINCT key) FROM answers "
                f"WHERE key IN ({','.join('?' * len(chunk))}) AND reading IN ({marks})",
                (*chunk, *readings),
            ).fetchone()[0]
        return int(held)

    def _delete(self, entries: list[tuple[bytes, str]]) -> None:
        try:
            with _write(self.conn):
                self.conn.executemany("DELETE FROM answers WHERE key=? AND reading=?", entries)
        except sqlite3.Error:
            pass  # not used either way; the next write replaces them

    def _mark_used(self, keys: list[bytes]) -> None:
        """Best effort: a cache that cannot be written now only forgets which entries are new."""
        now = int(time.time())
        try:
            with _write(self.conn):
                for start in range(0, len(keys), _CHUNK):
                    chunk = keys[start : start + _CHUNK]
                    self.conn.execute(
                        f"UPDATE answers SET used=? WHERE used<? "
                        f"AND key IN ({','.join('?' * len(chunk))})",
                        (now, now - _USE_GRANULARITY, *chunk),
                    )
        except sqlite3.Error:
            pass

    def keep(self, entries: list[tuple[bytes, str, np.ndarray]], limit_bytes: int) -> None:
        """Store `entries` (key, reading, array) in one transaction, then keep the cache under
        `limit_bytes` (least recently used first). Raises CacheUnavailable saying why not."""
        now = int(time.time())
        rows = [_row(key, reading, array, now) for key, reading, array in entries]
        try:
            with _write(self.conn):
                self.conn.executemany(
                    "INSERT OR REPLACE INTO answers "
                    "(key, reading, dtype, shape, data, checksum, used) VALUES (?,?,?,?,?,?,?)",
                    rows,
                )
            self.bound(limit_bytes)
        except sqlite3.Error as exc:
            raise CacheUnavailable(f"{self.path.parent} cannot be written ({reason(exc)})") from exc

    def bound(self, limit_bytes: int) -> None:
        """Delete the least recently used entries (entries of earlier versions first) until the
        cache takes at most nine tenths of `limit_bytes`, when it takes more than the limit."""
        older = sorted(legacy_entries(self.path.parent), key=lambda entry: entry[2])
        older_bytes = sum(size for _, size, _ in older)
        if self.size_bytes() + older_bytes <= limit_bytes:
            return
        target = limit_bytes * 9 // 10
        for path, size, _ in older:
            if self.size_bytes() + older_bytes <= target:
                return
            _unlink(path)
            older_bytes -= size
        while self.size_bytes() > target and self.count() > 0:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            per_entry = max(1, self.used_bytes() // self.count())
            excess = (self.size_bytes() - target) // per_entry + 1
            with _write(self.conn):
                self.conn.execute(
                    "DELETE FROM answers WHERE rowid IN "
                    "(SELECT rowid FROM answers ORDER BY used, rowid LIMIT ?)",
                    (int(excess),),
                )
            # As a script: run to its end (one execute() frees a single page).
            self.conn.executescript("PRAGMA incremental_vacuum;")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def set_aside(self) -> None:
        """Close and move aside a database SQLite found damaged; the next run starts anew."""
        self.close()
        _set_aside(self.path)

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM answers").fetchone()[0])

    def size_bytes(self) -> int:
        """The database's pages, free ones included (its write-ahead log is folded into it at
        every bound and kept short by SQLite's automatic checkpoints)."""
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        page = self.conn.execute("PRAGMA page_size").fetchone()[0]
        return int(pages) * int(page)

    def used_bytes(self) -> int:
        """The pages that hold entries (free pages left out)."""
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        free = self.conn.execute("PRAGMA freelist_count").fetchone()[0]
        return (int(pages) - int(free)) * int(self.conn.execute("PRAGMA page_size").fetchone()[0])

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass


def _row(key: bytes, reading: str, array: np.ndarray, now: int) -> tuple:
    array = np.ascontiguousarray(array)
    if array.dtype.str not in _DTYPES:
        raise ValueError(f"the answer cache keeps float32 or float16 arrays, not {array.dtype}")
    shape = ",".join(str(n) for n in array.shape)
    data = array.tobytes()
    return (key, reading, array.dtype.str, shape, data, _checksum(key, reading, array.dtype.str,
            shape, data), now)  # fmt: skip


def _verified_rows(rows: list[tuple], damaged: list) -> list[tuple[bytes, str, np.ndarray]]:
    """(key, reading, array) of the rows whose checksum, dtype, shape and values all check out;
    the others are added to `damaged`. Arrays of one dtype and shape are checked for finite
    values together (one numpy pass, not one per row)."""
    groups: dict[tuple[str, str], list] = {}
    sizes: dict[tuple[str, str], tuple[int, ...]] = {}
    for key, reading, dtype, shape, data, checksum in rows:
        dims = _dims(dtype, shape, data)
        if dims is None or _checksum(key, reading, dtype, shape, data) != checksum:
            damaged.append((key, reading))
            continue
        groups.setdefault((dtype, shape), []).append((key, reading, data))
        sizes[dtype, shape] = dims
    out = []
    for (dtype, shape), members in groups.items():
        dims = sizes[dtype, shape]
        stacked = np.frombuffer(b"".join(m[2] for m in members), dtype=np.dtype(dtype))
        stacked = stacked.reshape(len(members), *dims)
        finite = np.isfinite(stacked.reshape(len(members), -1)).all(axis=1)
        for (key, reading, _), array, ok in zip(members, stacked, finite):
            if ok:
                out.append((key, reading, array))
            else:
                damaged.append((key, reading))
    return out


def _dims(dtype, shape, data) -> tuple[int, ...] | None:
    """The entry's shape when its dtype, shape and byte count agree; None otherwise."""
    if dtype not in _DTYPES or not isinstance(data, bytes) or not isinstance(shape, str):
        return None
    try:
        dims = tuple(int(n) for n in shape.split(","))
    except ValueError:
        return None
    if not dims or min(dims) < 1 or math.prod(dims) * np.dtype(dtype).itemsize != len(data):
        return None
    return dims


class _write:
    """A write transaction taken at once (BEGIN IMMEDIATE: a second writer waits for the busy
    timeout instead of failing), committed on success, rolled back on any error."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, exc, trace) -> None:
        if kind is None:
            self.conn.execute("COMMIT")
        else:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass


def open_answer_cache(folder: Path) -> AnswerCache:
    """The answer cache in `folder` (created when missing). Raises CacheUnavailable saying why
    not; a database SQLite cannot read is moved aside (`<name>.damaged`) and a new one made."""
    path = folder / ANSWERS_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheUnavailable(f"{folder} cannot be written ({reason(exc)})") from None
    try:
        return AnswerCache(_connect(path), path)
    except sqlite3.DatabaseError as exc:
        if storage_code(exc) is not None:
            raise CacheUnavailable(f"{folder} cannot be written ({reason(exc)})") from None
        _set_aside(path)
    try:
        return AnswerCache(_connect(path), path)
    except sqlite3.Error as exc:
        raise CacheUnavailable(f"{path} cannot be used ({reason(exc)})") from None


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=_BUSY_SECONDS)
    try:
        # Before the first table: a database whose freed pages can be given back (bound).
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL: a power cut can lose the last entries written, never damage the others.
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(_SCHEMA)
        conn.execute("SELECT count(*) FROM answers WHERE rowid=0").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def _set_aside(path: Path) -> None:
    """Move a database SQLite cannot read out of the way (kept once, for a look; replaced by
    the next one), with its side files."""
    try:
        os.replace(path, path.with_name(path.name + ".damaged"))
    except OSError:
        _unlink(path)
    for suffix in _SIDE_FILES:
        _unlink(Path(f"{path}{suffix}"))


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
