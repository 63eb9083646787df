"""The rater-lead's review decisions, saved the moment they are made.

Decisions live in one SQLite database under the user data folder (engine.core.places.data_dir),
in WAL mode with one committed transaction per decision, so a crash or a killed terminal never
loses a decision that was shown as saved.

A decision belongs to a file (its resolved absolute path) and to one response in it: the
1-based data row, the response id and a hash of its text. When the file changes, a decision
whose row no longer holds the same id and text is reported as stale and never applied to a
different answer.

Each decision also records the run it was made on (`RunContext`: the run id, the settings
digest, and the model's predicted score and severity for that response at that moment; the
review set makes it, engine.results.review.ReviewSet.run_context), so a later run with other
settings cannot silently change what the decision was based on.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
import threading
from dataclasses import astuple, dataclass
from datetime import datetime, timezone
from pathlib import Path

from engine.core.errors import ReviewError
from engine.core.files import reason, storage_code
from engine.core.places import data_dir

SCHEMA_VERSION = 2
DATABASE_NAME = "decisions.sqlite3"
ACTIONS = ("keep", "change", "unsure")
DECISION_COLUMNS = [
    "row",
    "id",
    "text",
    "score",
    "predicted",
    "severity",
    "action",
    "new_score",
    "note",
    "decided_at",
    # The run the decision was made on; predicted and severity above are the exported run's.
    "decided_run_id",
    "decided_settings",
    "decided_predicted",
    "decided_severity",
]
# Columns added after the first release, with their SQL types: (schema version, name, type).
_ADDED_COLUMNS = (
    (1, "note", "TEXT NOT NULL DEFAULT ''"),
    (2, "run_id", "TEXT"),
    (2, "settings_digest", "TEXT"),
    (2, "predicted", "TEXT"),
    (2, "severity", "REAL"),
)

_CREATE_DECISIONS = """
CREATE TABLE IF NOT EXISTS decisions (
    source TEXT NOT NULL,
    row INTEGER NOT NULL,
    response_id TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    action TEXT NOT NULL,
    new_score TEXT,
    note TEXT NOT NULL DEFAULT '',
    decided_at TEXT NOT NULL,
    run_id TEXT,
    settings_digest TEXT,
    predicted TEXT,
    severity REAL,
    PRIMARY KEY (source, row)
)
"""


@dataclass(frozen=True)
class RunContext:
    """What the rater-lead saw when deciding: the run (its id and settings digest) and the
    model's predicted score (label) and severity for the response in that run."""

    run_id: str
    settings_digest: str
    predicted: str
    severity: float


@dataclass(frozen=True)
class Decision:
    """One decision on one response. row: the 1-based data row in the input file;
    new_score: the original label chosen for "change", else None; decided_at: UTC ISO 8601;
    context: the run it was made on (None for decisions saved before schema 2)."""

    row: int
    response_id: str
    action: str
    new_score: str | None
    note: str
    decided_at: str
    context: RunContext | None = None


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def source_key(source_path: str | Path) -> str:
    return str(Path(source_path).expanduser().resolve())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating or migrating) the decision database; problems name the path."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode: every write below opens and commits its own transaction.
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=5.0)
    except (OSError, sqlite3.Error) as exc:
        if isinstance(exc, sqlite3.Error) and storage_code(exc) is not None:
            raise ReviewError(_cannot_write(path, exc)) from None
        raise ReviewError(f"Cannot open the decision database {path}: {reason(exc)}") from None
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        # FULL syncs the WAL at every commit, so a decision survives a power cut too.
        conn.execute("PRAGMA synchronous=FULL")
        _migrate(conn, path)
    except ReviewError:
        conn.close()
        raise
    except sqlite3.DatabaseError as exc:
        conn.close()
        if storage_code(exc) is not None:
            raise ReviewError(_cannot_write(path, exc)) from None
        raise ReviewError(
            f"The decision database {path} cannot be read ({exc}). Move it aside to start "
            "a new one; your input files are not affected."
        ) from None
    return conn


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
    note column, version 1 no run columns; -1 is an empty database. Earlier decisions keep
    NULL in the columns added since (their run is unknown)."""
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
        columns = {r[1] for r in conn.execute("PRAGMA table_info(decisions)")}
        for added_in, name, sql_type in _ADDED_COLUMNS:
            if version < added_in and name not in columns:
                conn.execute(f"ALTER TABLE decisions ADD COLUMN {name} {sql_type}")
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class DecisionStore:
    """Decisions for the responses of one file. Every `record`/`clear` is committed before it
    returns. Safe to call from any one thread at a time (a lock guards the connection)."""

    def __init__(
        self, conn: sqlite3.Connection, path: Path, source: str, responses, on_scale=None
    ) -> None:
        self.path = path
        self.source = source
        self.responses = responses
        # (N, C) which labels are on each response's item's scale (a file of several items
        # pools their labels); None: every label is.
        self.on_scale = on_scale
        self._conn = conn
        self._lock = threading.Lock()
        self._index = {int(r): i for i, r in enumerate(responses.rows)}
        self._decisions: dict[int, Decision] = {}
        self.stale: list[Decision] = []
        self._seen_version = self._data_version()
        self._load()

    def _data_version(self) -> int:
        """SQLite's data_version: it changes when another connection (another parm) commits,
        never for this connection's own writes."""
        return int(self._query("PRAGMA data_version")[0][0])

    def changed_elsewhere(self) -> bool:
        """Whether another connection wrote to the database since this store last looked; if
        so, the decisions are read again (the other writer's decision wins, as it is on disk)."""
        version = self._data_version()
        if version == self._seen_version:
            return False
        self._seen_version = version
        self._decisions, self.stale = {}, []
        self._load()
        return True

    def _load(self) -> None:
        query = (
            "SELECT row, response_id, text_hash, action, new_score, note, decided_at, run_id, "
            "settings_digest, predicted, severity FROM decisions WHERE source=? ORDER BY row"
        )
        for row, rid, digest, action, new_score, note, decided_at, *run in self._query(
            query, (self.source,)
        ):
            context = None if run[0] is None else RunContext(*run)
            decision = Decision(row, rid, action, new_score, note or "", decided_at, context)
            i = self._index.get(row)
            if i is not None and self._matches(i, rid, digest):
                self._decisions[row] = decision
            else:
                self.stale.append(decision)

    def _matches(self, i: int, response_id: str, digest: str) -> bool:
        return self.responses.ids[i] == response_id and text_hash(self.responses.texts[i]) == digest

    def _query(self, sql: str, params=()) -> list:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise ReviewError(
                    f"Cannot read the decision database {self.path}: {reason(exc)}"
                ) from None

    def _write(self, sql: str, params) -> None:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute(sql, params)
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise ReviewError(
                    f"Could not save the decision to {self.path}: {reason(exc)}. It was not "
                    "recorded."
                ) from None

    def _rollback(self) -> None:
        try:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # a closed or broken connection has nothing to roll back

    def _position(self, row: int) -> int:
        i = self._index.get(int(row))
        if i is None:
            raise ReviewError(f"Row {row} is not one of the responses loaded from {self.source}.")
        return i

    def _validate(self, row: int, response_id: str, text: str, action: str, new_score) -> None:
        i = self._position(row)
        if not self._matches(i, response_id, text_hash(text)):
            raise ReviewError(
                f"Row {row} of {self.source} holds a different response than the one decided on "
                f"(id {response_id!r}); reload the file."
            )
        if action not in ACTIONS:
            raise ReviewError(f"Unknown action {action!r} for row {row}; use one of {ACTIONS}.")
        labels = self.responses.labels
        human = labels[self.responses.scores[i]]
        if self.on_scale is not None:
            labels = tuple(label for label, on in zip(labels, self.on_scale[i]) if on)
        if action == "change":
            if new_score is None or str(new_score) not in labels:
                raise ReviewError(
                    f"Row {row}: the new score {new_score!r} is not one of the labels "
                    f"{', '.join(labels)}."
                )
            if str(new_score) == human:
                raise ReviewError(
                    f"Row {row}: the new score {new_score} is the human score already; "
                    "use keep instead."
                )
        elif new_score is not None:
            raise ReviewError(f"Row {row}: only a 'change' decision takes a new score.")

    def record(
        self,
        row: int,
        response_id: str,
        text: str,
        action: str,
        new_score: str | None = None,
        note: str = "",
        context: RunContext | None = None,
    ) -> Decision:
        """Save a decision for the response at data row `row` (replacing an earlier one) and
        return it. Committed to disk before this returns. context: the run it is made on."""
        self._validate(row, response_id, text, action, new_score)
        new_score = None if new_score is None else str(new_score)
        decision = Decision(int(row), response_id, action, new_score, note, _now(), context)
        run = (None,) * 4 if context is None else astuple(context)
        self._write(
            "INSERT OR REPLACE INTO decisions (source, row, response_id, text_hash, action, "
            "new_score, note, decided_at, run_id, settings_digest, predicted, severity) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.source,
                decision.row,
                response_id,
                text_hash(text),
                action,
                new_score,
                note,
                decision.decided_at,
                *run,
            ),
        )
        self._decisions[decision.row] = decision
        return decision

    def get(self, row: int) -> Decision | None:
        return self._decisions.get(int(row))

    def all(self) -> dict[int, Decision]:
        """Decisions that apply to the loaded responses, by data row, in row order."""
        return dict(sorted(self._decisions.items()))

    def clear(self, row: int) -> None:
        """Forget the decision for data row `row` (no-op when there is none)."""
        self._position(row)
        self._write("DELETE FROM decisions WHERE source=? AND row=?", (self.source, int(row)))
        self._decisions.pop(int(row), None)

    def stale_message(self) -> str | None:
        """A sentence about decisions that no longer match the file, or None."""
        if not self.stale:
            return None
        rows = ", ".join(str(d.row) for d in self.stale[:5])
        more = "…" if len(self.stale) > 5 else ""
        return (
            f"{len(self.stale)} earlier decision(s) on {self.source} were not applied because "
            f"the response at that row changed (rows {rows}{more})."
        )

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> DecisionStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_store(
    source_path: str | Path, responses, database: Path | None = None, on_scale=None
) -> DecisionStore:
    """The decisions for `responses` loaded from `source_path`; earlier ones come back.
    on_scale: for the pooled responses of several items, which labels each one may take."""
    path = Path(database) if database is not None else data_dir() / DATABASE_NAME
    conn = connect(path)
    return DecisionStore(conn, path, source_key(source_path), responses, on_scale)
