"""The reads typed in a review (engine.results.added_reads), kept with its decisions.

They live in the decision database beside the decisions (table added_reads, schema 4; their kind,
resolution or backread, since schema 5), under
the same review key, so they follow the file's bytes as decisions do, and each is committed
before it is shown. An added read belongs to one answer (its data row, id and a hash of its
text) and one rater; one whose row no longer holds that answer is reported as stale and never
counted for another answer.
"""

from __future__ import annotations

from engine.core.errors import ReviewError
from engine.results.added_reads import KINDS, RESOLUTION, AddedRead, check_read
from engine.results.decision import text_hash
from engine.saved.decision_db import now


class AddedReads:
    """The reads typed in the review of one file (DecisionStore.reads); every `add`, `remove`
    and `restore` is committed before it returns."""

    def __init__(self, store) -> None:
        self._store = store
        self._reads: dict[tuple[int, str], AddedRead] = {}
        self.stale: list[AddedRead] = []
        self.load()

    def load(self) -> None:
        """Read them again from the database (another parm may have written)."""
        self._reads, self.stale = {}, []
        store = self._store
        query = (
            "SELECT row, response_id, text_hash, rater, score, added_at, reviewer, kind FROM "
            "added_reads WHERE source=? ORDER BY row, added_at, rater"
        )
        for row, rid, digest, rater, score, at, who, kind in store._query(query, (store.key,)):
            read = AddedRead(row, rid, rater, score, at, who or "", kind or RESOLUTION)
            i = store._index.get(row)
            if i is not None and store._matches(i, rid, digest):
                self._reads[(row, rater)] = read
            else:
                self.stale.append(read)

    def all(self) -> list[AddedRead]:
        """The added reads of the loaded responses, by row, then in the order they were added."""
        return sorted(self._reads.values(), key=lambda r: (r.row, r.added_at, r.rater))

    def raters(self) -> list[str]:
        """Everyone who gave an added read, in the order first added."""
        ordered = sorted(self._reads.values(), key=lambda r: r.added_at)
        return list(dict.fromkeys(read.rater for read in ordered))

    def _check(self, read: AddedRead, text: str) -> None:
        store = self._store
        i = store.position(read.row)
        if not store._matches(i, read.response_id, text_hash(text)):
            raise ReviewError(
                f"Row {read.row} of {store.source} holds a different response than the one the "
                f"read was typed for (id {read.response_id!r}); reload the file."
            )
        check_read(read.row, read.rater, read.score, store.scale(i),
                   (read.row, read.rater) in self._reads)  # fmt: skip

    def add(self, row: int, response_id: str, text: str, rater: str, score: str,
            kind: str = RESOLUTION) -> AddedRead:  # fmt: skip
        """Keep `rater`'s read `score` (a label of the item's scale) of the answer at data row
        `row`, of `kind`, typed in now by this store's reviewer; ReviewError when the answer
        there is another, the score is off its scale, or the rater already has a read of it
        here. (engine.results.added_reads.check_added also checks the file's reads.)"""
        read = AddedRead(int(row), response_id, rater, str(score), now(), self._store.reviewer,
                         kind)  # fmt: skip
        return self.restore(read, text)

    def restore(self, read: AddedRead, text: str | None = None) -> AddedRead:
        """Keep `read` as it was made (its time and reviewer): an add, or an undone removal."""
        store = self._store
        if text is None:
            text = store.responses.texts[store.position(read.row)]
        self._check(read, text)
        if read.kind not in KINDS:
            raise ReviewError(f"Row {read.row}: a typed read is one of {', '.join(KINDS)}, "
                              f"not {read.kind!r}.")  # fmt: skip
        store._write((
            "INSERT INTO added_reads (source, row, response_id, text_hash, rater, score, "
            "added_at, reviewer, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (store.key, read.row, read.response_id, text_hash(text), read.rater, read.score,
             read.added_at, read.reviewer, read.kind),
        ))  # fmt: skip
        self._reads[(read.row, read.rater)] = read
        return read

    def remove(self, row: int, rater: str) -> None:
        """Forget `rater`'s added read of the answer at data row `row` (no-op when none)."""
        store = self._store
        store._write((
            "DELETE FROM added_reads WHERE source=? AND row=? AND rater=?",
            (store.key, int(row), rater),
        ))  # fmt: skip
        self._reads.pop((int(row), rater), None)

    def stale_message(self) -> str | None:
        """A sentence about added reads that no longer match the file, or None."""
        if not self.stale:
            return None
        rows = ", ".join(str(read.row) for read in self.stale[:5])
        more = "…" if len(self.stale) > 5 else ""
        return (
            f"{len(self.stale)} read(s) typed in the review of {self._store.source} are not "
            f"counted because the response at that row changed (rows {rows}{more})."
        )
