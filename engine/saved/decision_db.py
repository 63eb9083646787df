"""The decision database: where it lies, its schema and its migrations, and opening it with
the true cause of a failure (engine.saved.decisions keeps the decisions in it)."""

from __future__ import annotations

import sqlite3
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

from engine.core.errors import ReviewError
from engine.core.files import reason, storage_code

SCHEMA_VERSION = 6
DATABASE_NAME = "decisions.sqlite3"
# Columns added after the first release, with their SQL types: (schema version, name, type).
_ADDED_COLUMNS = (
    (1, "note", "TEXT NOT NULL DEFAULT ''"),
    (2, "run_id", "TEXT"),
    (2, "settings_digest", "TEXT"),
    (2, "predicted", "TEXT"),
    (2, "severity", "REAL"),
    (3, "reviewer", "TEXT NOT NULL DEFAULT ''"),
)
# The same for the reads typed in the review: schema 5 keeps each one's kind (resolution or
# backread); those typed before were the review's resolutions (third reads).
_ADDED_READ_COLUMNS = ((5, "kind", "TEXT NOT NULL DEFAULT 'resolution'"),)
# The column `source` names the review: a file's resolved path for reviews begun before schema
# 3, "sha256:<digest of the file's bytes when it began>" since.

# A decision's columns, in the decisions table and (an imported one kept beside it) conflicts.
_DECISION_COLUMNS = """
    source TEXT NOT NULL,
    row INTEGER NOT NULL,
    response_id TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    action TEXT NOT NULL,
    new_score TEXT,
    note TEXT NOT NULL DEFAULT '',
    decided_at TEXT NOT NULL,"""
_CREATE_DECISIONS = f"""
CREATE TABLE IF NOT EXISTS decisions ({_DECISION_COLUMNS}
    run_id TEXT,
    settings_digest TEXT,
    predicted TEXT,
    severity REAL,
    PRIMARY KEY (source, row)
)
"""
# Schema 3: which files (bytes and path) each review was opened for, and imported decisions of
# other reviewers that differ from the one made (settled: when a later decision settled them).
_CREATE_REVIEW_FILES = """
CREATE TABLE IF NOT EXISTS review_files (
    digest TEXT NOT NULL,
    path TEXT NOT NULL,
    review TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (digest, path)
)
"""
_CREATE_CONFLICTS = f"""
CREATE TABLE IF NOT EXISTS conflicts ({_DECISION_COLUMNS}
    reviewer TEXT NOT NULL DEFAULT '',
    imported_from TEXT NOT NULL,
    settled_at TEXT,
    PRIMARY KEY (source, row, reviewer, decided_at)
)
"""

# Schema 4: reads typed in the review (engine.saved.added_reads), one per rater and answer.
_CREATE_ADDED_READS = """
CREATE TABLE IF NOT EXISTS added_reads (
    source TEXT NOT NULL,
    row INTEGER NOT NULL,
    response_id TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    rater TEXT NOT NULL,
    score TEXT NOT NULL,
    added_at TEXT NOT NULL,
    reviewer TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT 'resolution',
    PRIMARY KEY (source, row, rater)
)
"""

# Schema 6: where each reviewer is in a review (the response their cursor is on, and when they
# were last seen there), so that several reviewers at once see who is on which response.
_CREATE_PRESENCE = """
CREATE TABLE IF NOT EXISTS presence (
    source TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    row INTEGER NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (source, reviewer)
)
"""


# How long a statement waits for another parm's lock before giving up. sqlite3's own `timeout`
# (the busy handler) is not asked in every case: a connection that turns a new database to WAL
# while another creates it fails at once with "database is locked", so every statement is also
# retried here, with backoff, until this many seconds have passed.
BUSY_WAIT_SECONDS = 10.0
_FIRST_DELAY, _LONGEST_DELAY = 0.005, 0.25
_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (an extended code carries its primary)


def is_busy(exc: BaseException) -> bool:
    """Whether an sqlite3 error says another connection holds the database (busy or locked): a
    database in use, never a damaged one."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    text = str(exc).lower()  # Python 3.10 has no sqlite_errorcode
    return "database is locked" in text or "database table is locked" in text or "busy" in text


def busy_wait(action: Callable, undo: Callable | None = None):
    """`action()`, tried again with growing pauses while another connection holds the database,
    until BUSY_WAIT_SECONDS have passed (then its error is raised). undo: run before each retry
    (a rollback of a half-done transaction)."""
    deadline = time.monotonic() + BUSY_WAIT_SECONDS
    delay = _FIRST_DELAY
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() + delay > deadline:
                raise
        if undo is not None:
            undo()
        time.sleep(delay)
        delay = min(delay * 2, _LONGEST_DELAY)


def in_use(path: Path, exc: sqlite3.Error) -> str:
    """A database another program holds past the wait: in use, not damaged."""
    return (
        f"The decision database {path} is in use: another parm (or another program) held it "
        f"longer than the {BUSY_WAIT_SECONDS:g} seconds parm waits ({exc}). Try again when it is "
        "done; the database is not damaged, and your input files are not affected."
    )


def now() -> str:
    """The time a decision is made: UTC, ISO 8601, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def ago(seconds: float) -> str:
    """The time `seconds` ago, written as `now` writes times (so the two compare as text)."""
    return (datetime.now(timezone.utc) - timedelta(seconds=seconds)).isoformat(timespec="seconds")


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating or migrating) the decision database; problems name the path."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode: every write below opens and commits its own transaction.
        conn = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=BUSY_WAIT_SECONDS / 2
        )
    except (OSError, sqlite3.Error) as exc:
        if isinstance(exc, sqlite3.Error) and storage_code(exc) is not None:
            raise ReviewError(_cannot_write(path, exc)) from None
        raise ReviewError(f"Cannot open the decision database {path}: {reason(exc)}") from None
    try:
        busy_wait(lambda: conn.execute("PRAGMA journal_mode=WAL"))
        # FULL syncs the WAL at every commit, so a decision survives a power cut too.
        busy_wait(lambda: conn.execute("PRAGMA synchronous=FULL"))
        busy_wait(lambda: _migrate(conn, path), undo=lambda: _rollback(conn))
    except ReviewError:
        conn.close()
        raise
    except sqlite3.DatabaseError as exc:
        conn.close()
        if is_busy(exc):
            raise ReviewError(in_use(path, exc)) from None
        if storage_code(exc) is not None:
            raise ReviewError(_cannot_write(path, exc)) from None
        raise ReviewError(
            f"The decision database {path} cannot be read ({exc}). Move it aside to start "
            "a new one; your input files are not affected."
        ) from None
    return conn


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _cannot_write(path: Path, exc: sqlite3.Error) -> str:
    """A database that cannot be written because of where it lies (a full disk, a read-only
    folder) is not damaged: say the cause, not "cannot be read"."""
    return (
        f"The decision database {path} cannot be written: {_cause(path, exc)}. Free some "
        "space or make its folder writable (PARM_DATA_DIR moves it); the database itself is "
        "not damaged, and your input files are not affected."
    )


def _cause(path: Path, exc: sqlite3.Error) -> str:
    """SQLite says "read-only" or "unable to open" without the reason: ask the file system."""
    if storage_code(exc) in (8, 14):  # SQLITE_READONLY, SQLITE_CANTOPEN
        try:
            with tempfile.TemporaryFile(dir=path.parent):
                pass
        except OSError as probe:
            return reason(probe)
    return reason(exc)


def _schema_version(conn: sqlite3.Connection, path: Path) -> int:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" in tables:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            return 0
        try:
            return int(str(row[0]).strip())
        except ValueError:
            raise ReviewError(
                f"The decision database {path} has an unknown schema_version {row[0]!r} (this "
                f"parm reads versions 0 to {SCHEMA_VERSION}). Move it aside to start a new one; "
                "your input files are not affected."
            ) from None
    return 0 if "decisions" in tables else -1


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to SCHEMA_VERSION. Version 0 (first release) had no meta table and no
    note column, version 1 no run columns, version 2 no reviewer, file digests or conflicts,
    version 3 no reads typed in the review, version 4 no kind of typed read, version 5 no
    presence; -1
    is an empty database. Earlier decisions keep NULL (or "") in the columns added since (their
    run and reviewer are unknown) and their review keeps its key, the file's path."""
    version = _schema_version(conn, path)
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION or version < -1:
        raise ReviewError(
            f"The decision database {path} has schema_version {version}, which this parm "
            f"cannot read (it reads 0 to {SCHEMA_VERSION}); a newer parm wrote it: update parm, "
            "or move the file aside to start a new one."
        )
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute(_CREATE_DECISIONS)
        conn.execute(_CREATE_REVIEW_FILES)
        conn.execute(_CREATE_CONFLICTS)
        conn.execute(_CREATE_ADDED_READS)
        conn.execute(_CREATE_PRESENCE)
        columns = {r[1] for r in conn.execute("PRAGMA table_info(decisions)")}
        for added_in, name, sql_type in _ADDED_COLUMNS:
            if version < added_in and name not in columns:
                conn.execute(f"ALTER TABLE decisions ADD COLUMN {name} {sql_type}")
        typed = {r[1] for r in conn.execute("PRAGMA table_info(added_reads)")}
        for added_in, name, sql_type in _ADDED_READ_COLUMNS:
            if version < added_in and name not in typed:
                conn.execute(f"ALTER TABLE added_reads ADD COLUMN {name} {sql_type}")
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise
