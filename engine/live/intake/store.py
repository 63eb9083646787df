"""The session's database: one SQLite file in the session's folder, WAL, every statement
waiting while another parm holds it (engine.saved.decision_db's busy wait).

Reads are keyed by item, answer, rater and time (the time as the file gives it; none without a
time column), so adding a file twice, or a cumulative export that repeats yesterday's reads,
changes nothing. A read whose score differs from the one kept, an answer whose text (or expert
score) differs, is kept as a conflict and reported, and the first stays. Each file goes in
within one transaction: a run killed at any point leaves the session with whole files only, and
its run record (alerts, statuses, figures) is one more transaction at its end. A database that
cannot be read is reported, never rebuilt.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.core.errors import SessionError
from engine.core.files import reason, storage_code
from engine.live.intake.reading import FileReads
from engine.saved.decision_db import BUSY_WAIT_SECONDS, busy_wait, is_busy, now

DATABASE_NAME = "parm-session.sqlite3"
SCHEMA_VERSION = 1
# PRAGMA application_id of a session database ("parm" in ASCII): another program's is refused.
APPLICATION_ID = 0x7061726D
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)",
    """CREATE TABLE IF NOT EXISTS answers (
        item TEXT NOT NULL, answer TEXT NOT NULL, text TEXT NOT NULL, expert TEXT NOT NULL,
        run_id TEXT NOT NULL, PRIMARY KEY (item, answer))""",
    """CREATE TABLE IF NOT EXISTS reads (
        item TEXT NOT NULL, answer TEXT NOT NULL, rater TEXT NOT NULL, time_key TEXT NOT NULL,
        time REAL, day TEXT NOT NULL, half TEXT NOT NULL, score TEXT NOT NULL,
        kind TEXT NOT NULL, file TEXT NOT NULL, row INTEGER NOT NULL, run_id TEXT NOT NULL,
        PRIMARY KEY (item, answer, rater, time_key))""",
    """CREATE TABLE IF NOT EXISTS conflicts (
        what TEXT NOT NULL, item TEXT NOT NULL, answer TEXT NOT NULL, rater TEXT NOT NULL,
        time_key TEXT NOT NULL, kept TEXT NOT NULL, offered TEXT NOT NULL, file TEXT NOT NULL,
        row INTEGER NOT NULL, run_id TEXT NOT NULL,
        PRIMARY KEY (what, item, answer, rater, time_key, offered))""",
    """CREATE TABLE IF NOT EXISTS files (
        digest TEXT NOT NULL, path TEXT NOT NULL, run_id TEXT NOT NULL, added_at TEXT NOT NULL,
        reads_added INTEGER NOT NULL, answers_added INTEGER NOT NULL,
        PRIMARY KEY (digest, run_id))""",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT PRIMARY KEY, at TEXT NOT NULL, record TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS figure_cache (
        cell TEXT PRIMARY KEY, digest TEXT NOT NULL, figures TEXT NOT NULL)""",
)


@dataclass(frozen=True)
class Added:
    """What adding one file did: reads and answers new, reads already there, conflicts."""

    path: str
    reads: int
    answers: int
    repeated: int
    conflicts: int
    dating: str


class SessionStore:
    """An open session database (`open_store`); close it when done."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path, self.conn = path, conn

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- statements, with the busy wait and the true cause of a failure -----------------------
    def run(self, action: Callable):
        """`action()` in the busy wait; an sqlite3 error becomes a SessionError saying why."""
        try:
            return busy_wait(action, undo=self._rollback)
        except sqlite3.Error as exc:
            self._rollback()
            raise _session_error(self.path, exc) from None

    def _rollback(self) -> None:
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def transaction(self, body: Callable[[sqlite3.Connection], object]):
        """`body(conn)` inside one IMMEDIATE transaction: all of it is kept, or none."""

        def attempt():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                result = body(self.conn)
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
            return result

        return self.run(attempt)

    def query(self, sql: str, args=()) -> list[tuple]:
        return self.run(lambda: self.conn.execute(sql, args).fetchall())

    # -- adding a file -------------------------------------------------------------------------
    def add(self, reads: FileReads, path: str, digest: str, run_id: str) -> Added:
        """The file's reads and answers, in one transaction (see the module docstring)."""
        return self.transaction(lambda conn: _add(conn, reads, path, digest, run_id))

    # -- runs ------------------------------------------------------------------------------------
    def runs(self) -> list[dict]:
        """Every run kept, oldest first, as recorded (engine.live.monitor.RunRecord's dict)."""
        rows = self.query("SELECT record FROM runs ORDER BY rowid")
        return [json.loads(record) for (record,) in rows]

    def record_run(self, record: dict, cache: dict[str, tuple[str, str]]) -> None:
        """The run's record and the figures it computed, in one transaction."""

        def body(conn):
            conn.execute(
                "INSERT INTO runs (run_id, at, record) VALUES (?, ?, ?)",
                (record["run_id"], record["at"], json.dumps(record, sort_keys=True)),
            )
            conn.executemany(
                "INSERT OR REPLACE INTO figure_cache (cell, digest, figures) VALUES (?, ?, ?)",
                [(cell, digest, figures) for cell, (digest, figures) in cache.items()],
            )

        self.transaction(body)

    def figure_cache(self) -> dict[str, tuple[str, str]]:
        return {cell: (d, f) for cell, d, f in self.query("SELECT * FROM figure_cache")}

    def conflicts(self, run_id: str | None = None) -> list[tuple]:
        sql = "SELECT what, item, answer, rater, kept, offered, file, row, run_id FROM conflicts"
        if run_id is None:
            return self.query(sql + " ORDER BY rowid")
        return self.query(sql + " WHERE run_id = ? ORDER BY rowid", (run_id,))

    def counts(self) -> tuple[int, int]:
        """(reads, answers) in the session."""
        (reads,), = self.query("SELECT count(*) FROM reads")  # fmt: skip
        (answers,), = self.query("SELECT count(*) FROM answers")  # fmt: skip
        return int(reads), int(answers)


def _add(conn: sqlite3.Connection, reads: FileReads, path: str, digest: str, run_id: str) -> Added:
    conn.execute("DROP TABLE IF EXISTS temp.incoming")
    conn.execute(
        "CREATE TEMP TABLE incoming (item, answer, rater, time_key, time, day, half, score, "
        "kind, row, PRIMARY KEY (item, answer, rater, time_key))"
    )
    conn.executemany(
        "INSERT OR IGNORE INTO incoming VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        zip(reads.item, reads.answer, reads.rater, reads.time_key,
            [None if t != t else t for t in reads.time], reads.day, reads.half, reads.score,
            reads.kind, reads.row),
    )  # fmt: skip
    differ = (
        "FROM incoming i JOIN reads r USING (item, answer, rater, time_key) "
        "WHERE r.score != i.score"
    )
    score_conflicts = conn.execute("SELECT count(*) " + differ).fetchone()[0]
    conn.execute(
        "INSERT OR IGNORE INTO conflicts SELECT 'score', i.item, i.answer, i.rater, "
        "i.time_key, r.score, i.score, ?, i.row, ? " + differ,
        (path, run_id),
    )
    # A kind first declared by a later export fills in a guessed one.
    conn.execute(
        "UPDATE reads SET kind = (SELECT i.kind FROM incoming i WHERE i.item = reads.item AND "
        "i.answer = reads.answer AND i.rater = reads.rater AND i.time_key = reads.time_key) "
        "WHERE kind = '' AND (item, answer, rater, time_key) IN (SELECT item, answer, rater, "
        "time_key FROM incoming WHERE kind != '')"
    )
    total = conn.execute("SELECT count(*) FROM incoming").fetchone()[0]
    new_reads = conn.execute(
        "INSERT INTO reads SELECT i.item, i.answer, i.rater, i.time_key, i.time, i.day, i.half, "
        "i.score, i.kind, ?, i.row, ? FROM incoming i WHERE NOT EXISTS (SELECT 1 FROM reads r "
        "WHERE r.item = i.item AND r.answer = i.answer AND r.rater = i.rater AND "
        "r.time_key = i.time_key)",
        (path, run_id),
    ).rowcount
    new_answers, answer_conflicts = _add_answers(conn, reads, path, run_id)
    conn.execute(
        "INSERT OR IGNORE INTO files VALUES (?, ?, ?, ?, ?, ?)",
        (digest, path, run_id, now(), new_reads, new_answers),
    )
    conn.execute("DROP TABLE temp.incoming")
    conflicts = score_conflicts + answer_conflicts
    return Added(path, new_reads, new_answers, total - new_reads, conflicts, reads.dating)


def _add_answers(conn, reads: FileReads, path: str, run_id: str) -> tuple[int, int]:
    """New answers inserted; an answer's other text, or other expert score, kept as a conflict
    (an expert score given for the first time fills the blank)."""
    new = conflicts = 0
    rows: dict[tuple, int] = {}
    for item, answer, row in zip(reads.item, reads.answer, reads.row):
        rows.setdefault((item, answer), row)
    for (item, answer), (text, expert) in reads.answers.items():
        found = conn.execute(
            "SELECT text, expert FROM answers WHERE item = ? AND answer = ?", (item, answer)
        ).fetchone()
        if found is None:
            conn.execute("INSERT INTO answers VALUES (?, ?, ?, ?, ?)",
                         (item, answer, text, expert, run_id))  # fmt: skip
            new += 1
            continue
        row = rows.get((item, answer), 0)
        if found[0] != text:
            _conflict(conn, "text", item, answer, found[0], text, path, row, run_id)
            conflicts += 1
        if expert and not found[1]:
            conn.execute("UPDATE answers SET expert = ? WHERE item = ? AND answer = ?",
                         (expert, item, answer))  # fmt: skip
        elif expert and found[1] != expert:
            _conflict(conn, "expert", item, answer, found[1], expert, path, row, run_id)
            conflicts += 1
    return new, conflicts


def _conflict(conn, what, item, answer, kept, offered, path, row, run_id) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO conflicts VALUES (?, ?, ?, '', '', ?, ?, ?, ?, ?)",
        (what, item, answer, kept, offered, path, row, run_id),
    )


# -- opening ---------------------------------------------------------------------------------
def session_exists(folder: str | Path) -> bool:
    """Whether `folder` holds a session database (the app opens such a folder as a session)."""
    return (Path(folder).expanduser() / DATABASE_NAME).is_file()


def open_store(folder: str | Path, create: bool = True) -> SessionStore:
    """The session in `folder` (made, with its database, when `create` and there is none).
    SessionError: the folder cannot be made, the database is damaged, in use past the wait,
    not a session's, or of a newer schema; nothing is ever rebuilt."""
    folder = Path(folder).expanduser()
    path = folder / DATABASE_NAME
    if not path.exists() and not create:
        raise SessionError(f"{folder} is not a parm session: it has no {DATABASE_NAME}.")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                               timeout=BUSY_WAIT_SECONDS / 2)  # fmt: skip
    except (OSError, sqlite3.Error) as exc:
        raise SessionError(f"The session {folder} cannot be opened: {reason(exc)}.") from None
    store = SessionStore(path, conn)
    try:
        store.run(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone())
        store.run(lambda: conn.execute("PRAGMA synchronous=FULL"))
        store.run(lambda: _check_or_create(conn, path))
    except BaseException:
        conn.close()
        raise
    return store


def _check_or_create(conn: sqlite3.Connection, path: Path) -> None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    if tables and app != APPLICATION_ID:
        raise SessionError(
            f"{path} is not a parm session's database (another program's file by that name); "
            "move it aside, or follow the session in another folder."
        )
    if tables:
        found = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = int(found[0]) if found and str(found[0]).isdigit() else -1
        if version != SCHEMA_VERSION:
            raise SessionError(
                f"The session database {path} has schema {found[0] if found else 'none'}; this "
                f"parm reads schema {SCHEMA_VERSION}: a newer parm wrote it, or it is damaged. "
                "It is left as it is."
            )
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                     (str(SCHEMA_VERSION),))  # fmt: skip
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('created_at', ?)", (now(),))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _session_error(path: Path, exc: sqlite3.Error) -> SessionError:
    if is_busy(exc):
        return SessionError(
            f"The session database {path} is in use: another parm held it longer than the "
            f"{BUSY_WAIT_SECONDS:g} seconds parm waits ({exc}). Try again when it is done; the "
            "session is not damaged."
        )
    if storage_code(exc) is not None:
        return SessionError(
            f"The session database {path} cannot be written: {reason(exc)}. The session is "
            "as it was before this file."
        )
    return SessionError(
        f"The session database {path} is damaged ({exc}). parm does not rebuild it: restore "
        "it from a backup (or its folder's copy), or start a new session in another folder "
        "and add the day files again."
    )
