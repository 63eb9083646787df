"""The rater-lead's review decisions, saved the moment they are made.

Decisions live in one SQLite database under the user data folder (engine.core.places.data_dir),
in WAL mode with one committed transaction per decision, so a crash or a killed terminal never
loses a decision that was shown as saved.

A decision belongs to a review and to one response in it: the 1-based data row, the response
id and a hash of its text. A review follows its file's bytes, not its path: the files a review
was opened for are kept by the SHA-256 of their bytes and their path (table review_files), so a
copy or a move of the file (another folder, a shared drive, a colleague's machine with the
database) opens the same review, and a file edited in place keeps the review of its path. A
review first opened before parm kept file digests is known by the file's resolved path, as it
was then. When the file changes, a decision whose row no longer holds the same id and text is
reported as stale and never applied to a different answer.

Each decision names its reviewer (the `reviewer` setting, by default the login name). Decisions
of another reviewer brought in from their decisions.csv (engine.saved.review_import) that differ
from one already made are kept beside it as conflicts, for the lead to settle in the review:
the next decision on that response settles them (they stay in the database, marked settled).

Several reviewers may work on one review at once (terminals or browsers, `parm serve`): every
decision is committed at once, each store reads the others' when the database changes
(`changed_elsewhere`), and a decision that replaces another reviewer's on the same response
keeps theirs beside it in the same transaction: as an open conflict for the lead where it
differs, settled at once where it is the same, so no reviewer's decision is ever lost. Each
reviewer's place (`here`: the response their cursor is on) is kept too, and `others_here` says
which responses someone else is on now.

Each decision also records the run it was made on (`RunContext`: the run id, the settings
digest, and the model's predicted score and severity for that response at that moment; the
review set makes it, engine.results.review.ReviewSet.run_context), so a later run with other
settings cannot silently change what the decision was based on.
"""

from __future__ import annotations

import getpass
import sqlite3
import threading
from dataclasses import astuple, dataclass
from pathlib import Path

from engine.core.errors import ReviewError
from engine.core.files import reason
from engine.core.places import data_dir
from engine.core.text import before_repair
from engine.results.decision import ACTIONS, Decision, RunContext, text_hash
from engine.saved.added_reads import AddedReads
from engine.saved.decision_db import (
    DATABASE_NAME,
    ago,
    busy_wait,
    connect,
    in_use,
    is_busy,
    now,
)


def source_key(source_path: str | Path) -> str:
    return str(Path(source_path).expanduser().resolve())


def login_name() -> str:
    """The default reviewer: the login name ("" where the system has none)."""
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name (a container without a passwd entry)
        return ""


@dataclass(frozen=True)
class ReviewFound:
    """Which review a file opened: its key, and the other path whose review it is when the file
    was found by its bytes under another name (a copy or a move), else None."""

    key: str
    other_path: str | None = None


def find_review(conn, path: str, digest: str | None) -> ReviewFound:
    """The review of the file at `path` whose bytes have this digest, in this order: the one
    opened for these bytes at this path; one begun at this path before parm kept digests (keyed
    by the path); the newest opened for the same bytes at another path (a copy or a move); the
    newest opened at this path (the file was edited since); else a new one, keyed by the bytes."""

    def first(sql: str, params: tuple):
        return conn.execute(sql, params).fetchone()

    if digest is not None:
        found = first("SELECT review FROM review_files WHERE digest=? AND path=?", (digest, path))
        if found is not None:
            return ReviewFound(found[0])
    if first("SELECT 1 FROM review_files WHERE path=? LIMIT 1", (path,)) is None:
        if first("SELECT 1 FROM decisions WHERE source=? LIMIT 1", (path,)) is not None:
            return ReviewFound(path)
    if digest is not None:
        found = first(
            "SELECT review, path FROM review_files WHERE digest=? ORDER BY seen_at DESC, path "
            "LIMIT 1",
            (digest,),
        )
        if found is not None:
            return ReviewFound(found[0], found[1])
    found = first(
        "SELECT review FROM review_files WHERE path=? ORDER BY seen_at DESC LIMIT 1", (path,)
    )
    if found is not None:
        return ReviewFound(found[0])
    return ReviewFound(path if digest is None else f"sha256:{digest}")


class DecisionStore:
    """Decisions for the responses of one file. Every `record`/`clear` is committed before it
    returns. Safe to call from any one thread at a time (a lock guards the connection).

    source: the file's path as the messages name it; review: which review it opened (its key,
    and the other path when found by the file's bytes); reviewer: who decides here."""

    def __init__(
        self,
        conn,
        path: Path,
        source: str,
        responses,
        on_scale=None,
        review: ReviewFound | None = None,
        reviewer: str = "",
    ) -> None:
        self.path = path
        self.source = source
        self.review = review or ReviewFound(source)
        self.reviewer = reviewer
        self.responses = responses
        # (N, C) which labels are on each response's item's scale (a file of several items
        # pools their labels); None: every label is.
        self.on_scale = on_scale
        self._conn = conn
        self._lock = threading.Lock()
        self._index = {int(r): i for i, r in enumerate(responses.rows)}
        self._decisions: dict[int, Decision] = {}
        self._conflicts: dict[int, list[Decision]] = {}
        self.stale: list[Decision] = []
        self._seen_version = self._data_version()
        self._load()
        # The reads typed in this review (engine.saved.added_reads), kept beside the decisions.
        self.reads = AddedReads(self)

    @property
    def key(self) -> str:
        return self.review.key

    def found_elsewhere(self) -> str | None:
        """A sentence when this file opened the review of another path with the same bytes."""
        if self.review.other_path is None:
            return None
        return (
            f"Opened the review of {self.review.other_path} (the same bytes as "
            f"{self.source}): {len(self._decisions)} decision(s)."
        )

    def _data_version(self) -> int:
        """SQLite's data_version: it changes when another connection (another parm) commits,
        never for this connection's own writes."""
        return int(self._query("PRAGMA data_version")[0][0])

    def changed_elsewhere(self) -> bool:
        """Whether another connection changed this review (its decisions, conflicts or added
        reads) since this store last looked; if so, they are read again (the other writer's
        decision wins, as it is on disk). Another parm writing the review of another file
        shares the database but not the review: not news."""
        version = self._data_version()
        if version == self._seen_version:
            return False
        self._seen_version = version
        before = self._review_state()
        self._decisions, self._conflicts, self.stale = {}, {}, []
        self._load()
        self.reads.load()
        return self._review_state() != before

    def _review_state(self) -> tuple:
        """What this review holds as read from disk: decisions (stale ones too), open
        conflicts, added reads."""
        reads = self.reads
        return (self._decisions, self.stale, self._conflicts, reads.all(), reads.stale)

    def _load(self) -> None:
        query = (
            "SELECT row, response_id, text_hash, action, new_score, note, decided_at, run_id, "
            "settings_digest, predicted, severity, reviewer FROM decisions WHERE source=? "
            "ORDER BY row"
        )
        for row, rid, digest, action, new_score, note, at, *run, who in self._query(
            query, (self.key,)
        ):
            context = None if run[0] is None else RunContext(*run)
            decision = Decision(row, rid, action, new_score, note or "", at, context, who or "")
            i = self._index.get(row)
            if i is not None and self._matches(i, rid, digest):
                self._decisions[row] = decision
            else:
                self.stale.append(decision)
        query = (
            "SELECT row, response_id, text_hash, action, new_score, note, decided_at, reviewer "
            "FROM conflicts WHERE source=? AND settled_at IS NULL ORDER BY row, decided_at"
        )
        for row, rid, digest, action, new_score, note, at, who in self._query(query, (self.key,)):
            i = self._index.get(row)
            if i is not None and self._matches(i, rid, digest):
                conflict = Decision(row, rid, action, new_score, note, at, None, who)
                self._conflicts.setdefault(row, []).append(conflict)

    def _matches(self, i: int, response_id: str, digest: str) -> bool:
        if self.responses.ids[i] != response_id:
            return False
        text = self.responses.texts[i]
        # Or the text as an earlier parm read it, before misread characters were restored
        # (engine.core.text.repair_misread): a decision made then is on the same answer.
        return text_hash(text) == digest or text_hash(before_repair(text)) == digest

    def _query(self, sql: str, params=()) -> list:
        with self._lock:
            try:
                return busy_wait(lambda: self._conn.execute(sql, params).fetchall())
            except sqlite3.Error as exc:
                if is_busy(exc):
                    raise ReviewError(in_use(self.path, exc)) from None
                raise ReviewError(
                    f"Cannot read the decision database {self.path}: {reason(exc)}"
                ) from None

    def _write(self, *statements: tuple[str, tuple]) -> None:
        """Run the statements in one committed transaction (again, whole, while another
        connection holds the database)."""

        def transaction() -> None:
            self._conn.execute("BEGIN IMMEDIATE")
            for sql, params in statements:
                self._conn.execute(sql, params)
            self._conn.execute("COMMIT")

        with self._lock:
            try:
                busy_wait(transaction, undo=self._rollback)
            except sqlite3.Error as exc:
                self._rollback()
                why = f": {in_use(self.path, exc)}" if is_busy(exc) else (
                    f" to {self.path}: {reason(exc)}.")  # fmt: skip
                raise ReviewError(
                    f"Could not save the decision{why} It was not recorded."
                ) from None

    def _rollback(self) -> None:
        try:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # a closed or broken connection has nothing to roll back

    def position(self, row: int) -> int:
        """The index of data row `row` among the loaded responses (ReviewError when none)."""
        i = self._index.get(int(row))
        if i is None:
            raise ReviewError(f"Row {row} is not one of the responses loaded from {self.source}.")
        return i

    def scale(self, i: int) -> tuple[str, ...]:
        """The labels response i may take (its item's scale)."""
        labels = self.responses.labels
        if self.on_scale is None:
            return tuple(labels)
        return tuple(label for label, on in zip(labels, self.on_scale[i]) if on)

    def check(self, row: int, response_id: str, text: str, action: str, new_score) -> None:
        """ReviewError when this decision cannot be made on data row `row`: another response
        there, an unknown action, or a new score off the item's scale or equal to the human's."""
        i = self.position(row)
        if not self._matches(i, response_id, text_hash(text)):
            raise ReviewError(
                f"Row {row} of {self.source} holds a different response than the one decided on "
                f"(id {response_id!r}); reload the file."
            )
        if action not in ACTIONS:
            raise ReviewError(f"Unknown action {action!r} for row {row}; use one of {ACTIONS}.")
        labels = self.scale(i)
        human = self.responses.labels[self.responses.scores[i]]
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
        """Save this reviewer's decision for the response at data row `row` (replacing an
        earlier one, settling any conflicts there) and return it. Committed to disk before this
        returns. context: the run it is made on."""
        self.check(row, response_id, text, action, new_score)
        new_score = None if new_score is None else str(new_score)
        decision = Decision(
            int(row), response_id, action, new_score, note, now(), context, self.reviewer
        )
        return self._save(decision, text, settle=True)

    def _save(self, decision: Decision, text: str, settle: bool = False) -> Decision:
        """Write one decision (committed before this returns) and hold it; `settle` marks the
        row's open conflicts settled in the same transaction."""
        run = (None,) * 4 if decision.context is None else astuple(decision.context)
        statements = [
            (
                "INSERT OR REPLACE INTO decisions (source, row, response_id, text_hash, action, "
                "new_score, note, decided_at, run_id, settings_digest, predicted, severity, "
                "reviewer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (self.key, decision.row, decision.response_id, text_hash(text),
                 decision.action, decision.new_score, decision.note, decision.decided_at,
                 *run, decision.reviewer),
            )
        ]  # fmt: skip
        if settle:
            statements[:0] = [
                (
                    "UPDATE conflicts SET settled_at=? WHERE source=? AND row=? AND "
                    "settled_at IS NULL",
                    (decision.decided_at, self.key, decision.row),
                ),
                _displaced(self.key, decision),
            ]
        self._write(*statements)
        if settle:
            self._conflicts.pop(decision.row, None)
            self._reload_conflicts(decision.row)
        self._decisions[decision.row] = decision
        return decision

    def _reload_conflicts(self, row: int) -> None:
        """The open conflicts of one row as the database holds them (another reviewer's
        decision this one displaced is one)."""
        found = self._query(
            "SELECT row, response_id, action, new_score, note, decided_at, reviewer FROM "
            "conflicts WHERE source=? AND row=? AND settled_at IS NULL ORDER BY decided_at",
            (self.key, row),
        )
        if found:
            self._conflicts[row] = [Decision(r, rid, a, n, note, at, None, who)
                                    for r, rid, a, n, note, at, who in found]  # fmt: skip

    # -- several reviewers at once -------------------------------------------------------------
    def here(self, row: int) -> None:
        """This reviewer is on the response at data row `row` now."""
        self._write(
            ("INSERT OR REPLACE INTO presence (source, reviewer, row, seen_at) VALUES (?, ?, ?, ?)",
             (self.key, self.reviewer, int(row), now())),
        )  # fmt: skip

    def others_here(self, within_seconds: float) -> dict[int, list[str]]:
        """{data row: the other reviewers on it}, of those seen in the last `within_seconds`."""
        since = ago(within_seconds)
        found: dict[int, list[str]] = {}
        for row, who in self._query(
            "SELECT row, reviewer FROM presence WHERE source=? AND reviewer != ? AND seen_at >= ? "
            "ORDER BY reviewer",
            (self.key, self.reviewer, since),
        ):
            found.setdefault(int(row), []).append(who)
        return found

    def adopt(self, decision: Decision, text: str) -> Decision:
        """Take another reviewer's decision as it was made (an import), on a response without
        one here; the caller has checked it (`check`)."""
        return self._save(decision, text)

    def known_conflict(self, decision: Decision) -> bool:
        """Whether this reviewer's decision at that time is already kept as a conflict (settled
        or not): importing it again changes nothing."""
        found = self._query(
            "SELECT 1 FROM conflicts WHERE source=? AND row=? AND reviewer=? AND decided_at=?",
            (self.key, decision.row, decision.reviewer, decision.decided_at),
        )
        return bool(found)

    def add_conflict(self, decision: Decision, text: str, imported_from: str) -> None:
        """Keep another reviewer's decision beside the one made on its row, unsettled."""
        self._write(
            (
                "INSERT OR REPLACE INTO conflicts (source, row, response_id, text_hash, action, "
                "new_score, note, decided_at, reviewer, imported_from, settled_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                (self.key, decision.row, decision.response_id, text_hash(text), decision.action,
                 decision.new_score, decision.note, decision.decided_at, decision.reviewer,
                 imported_from),
            )
        )  # fmt: skip
        known = self._conflicts.setdefault(decision.row, [])
        known[:] = [c for c in known if (c.reviewer, c.decided_at) != (
            decision.reviewer, decision.decided_at)] + [decision]  # fmt: skip

    def restore(self, decision: Decision) -> Decision:
        """Put back a decision exactly as it was (its time, reviewer and run too): undoing a
        later one. The response at its row must be the one it was made on."""
        i = self.position(decision.row)
        responses = self.responses
        if responses.ids[i] != decision.response_id:
            raise ReviewError(
                f"Row {decision.row} of {self.source} holds a different response than the one "
                f"decided on (id {decision.response_id!r}); reload the file."
            )
        return self._save(decision, responses.texts[i])

    def get(self, row: int) -> Decision | None:
        return self._decisions.get(int(row))

    def all(self) -> dict[int, Decision]:
        """Decisions that apply to the loaded responses, by data row, in row order."""
        return dict(sorted(self._decisions.items()))

    def conflicts(self, row: int) -> list[Decision]:
        """Other reviewers' imported decisions on data row `row` that differ from the one made
        there and are not settled yet."""
        return list(self._conflicts.get(int(row), ()))

    def added_reads(self) -> list:
        """The reads typed in this review (engine.saved.added_reads), by row."""
        return self.reads.all()

    def conflicted_rows(self) -> list[int]:
        return sorted(self._conflicts)

    def clear(self, row: int) -> None:
        """Forget the decision for data row `row` (no-op when there is none)."""
        self.position(row)
        self._write(("DELETE FROM decisions WHERE source=? AND row=?", (self.key, int(row))))
        self._decisions.pop(int(row), None)

    def stale_message(self) -> str | None:
        """A sentence about decisions (and added reads) that no longer match the file, or None."""
        found = [self.reads.stale_message()]
        if self.stale:
            rows = ", ".join(str(d.row) for d in self.stale[:5])
            more = "…" if len(self.stale) > 5 else ""
            found.insert(0, (
                f"{len(self.stale)} earlier decision(s) on {self.source} were not applied "
                f"because the response at that row changed (rows {rows}{more})."
            ))  # fmt: skip
        return " ".join(text for text in found if text) or None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> DecisionStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_store(
    source_path: str | Path,
    responses,
    database: Path | None = None,
    on_scale=None,
    digest: str | None = None,
    reviewer: str | None = None,
) -> DecisionStore:
    """The decisions for `responses` loaded from `source_path`, whose bytes have the SHA-256
    `digest` (None: unknown, the review then follows the path alone); earlier ones come back,
    also those made on a copy of the file elsewhere. on_scale: for the pooled responses of
    several items, which labels each response may take. reviewer: who decides (None: the login
    name)."""
    path = Path(database) if database is not None else data_dir() / DATABASE_NAME
    conn = connect(path)
    where = source_key(source_path)
    try:
        review = busy_wait(lambda: find_review(conn, where, digest))
        if digest is not None:
            busy_wait(lambda: conn.execute(
                "INSERT OR REPLACE INTO review_files (digest, path, review, seen_at) "
                "VALUES (?, ?, ?, ?)",
                (digest, where, review.key, now()),
            ))  # fmt: skip
    except sqlite3.Error as exc:
        conn.close()
        if is_busy(exc):
            raise ReviewError(in_use(path, exc)) from None
        raise ReviewError(f"Cannot read the decision database {path}: {reason(exc)}") from None
    who = login_name() if reviewer is None else reviewer
    return DecisionStore(conn, path, where, responses, on_scale, review, who)


# Where a decision replaces another reviewer's on its row, theirs is kept among the conflicts:
# open where it differs (the lead settles it), settled at once where it is the same.
_DISPLACED = (
    "INSERT OR IGNORE INTO conflicts (source, row, response_id, text_hash, action, new_score, "
    "note, decided_at, reviewer, imported_from, settled_at) SELECT source, row, response_id, "
    "text_hash, action, new_score, note, decided_at, reviewer, ?, CASE WHEN action = ? AND "
    "new_score IS ? THEN ? ELSE NULL END FROM decisions WHERE source = ? AND row = ? AND "
    "reviewer != ?"
)
# imported_from of a decision kept because another reviewer's replaced it while both worked.
AT_THE_SAME_TIME = "decided at the same time"


def _displaced(key: str, decision: Decision) -> tuple[str, tuple]:
    return _DISPLACED, (AT_THE_SAME_TIME, decision.action, decision.new_score,
                        decision.decided_at, key, decision.row, decision.reviewer)  # fmt: skip
