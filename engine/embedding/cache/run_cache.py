"""What one embedding call finds in the cache and what it adds to it (`RunCache`): the answer
cache (engine.embedding.cache.answers) first, then, for the texts it lacks, an entry of an
earlier parm version for exactly the same list of texts (engine.embedding.cache.entries; its vectors are
copied into the answer cache, so an upgrade re-embeds nothing). Every problem becomes one
warning starting with CACHE_NOTE; none stops a run: a cache that cannot be used costs time.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import numpy as np

from engine.core.files import reason, storage_code
from engine.embedding.cache import entries as cache
from engine.embedding.cache.answers import (
    AnswerCache,
    CacheUnavailable,
    Found,
    answer_key,
    open_answer_cache,
)
from engine.embedding.models import model_identity
from engine.embedding.reading import READ_WHOLE, TRUNCATE

MEGABYTE = 1 << 20


@dataclass
class RunCache:
    """The cache as one call to embed sees it. `limit_mb` 0: nothing is read or written."""

    model_name: str
    limit_mb: int
    kind: str = "sentence"
    notes: list[str] = field(default_factory=list)
    _store: AnswerCache | None = None
    _opened: bool = False

    @property
    def used(self) -> bool:
        return self.limit_mb > 0

    def _open(self) -> AnswerCache | None:
        if not self._opened:
            self._opened = True
            folder, problem = cache.cache_folder()
            if folder is None:
                self.notes.append(cache.unwritable(problem or ""))
                return None
            try:
                self._store = open_answer_cache(folder)
            except CacheUnavailable as exc:
                self.notes.append(cache.unwritable(str(exc)))
        return self._store

    def keys(self, texts: list[str]) -> list[bytes]:
        identity = model_identity(self.model_name)
        return [answer_key(identity, text, self.kind) for text in texts]

    def find(self, texts: list[str], long_answers: str) -> dict[int, Found]:
        """The verified entries of `texts` (by position) read as `long_answers` reads them: a
        text the model read whole is the same vector in every setting."""
        store = self._open() if self.used else None
        if store is None or not texts:
            return {}
        keys = self.keys(texts)
        try:
            found, damaged = store.find(keys, (READ_WHOLE, long_answers))
        except sqlite3.Error as exc:
            self._failed(store, exc, "read")
            return {}
        if damaged:
            self.notes.append(
                f"{cache.CACHE_NOTE}{damaged:,} cached vector(s) in {store.path} were damaged; "
                "they were removed and those answers were embedded again."
            )
        return {k: found[key] for k, key in enumerate(keys) if key in found}

    def keep(self, texts: list[str], arrays, readings: list[str]) -> None:
        """Add the texts' arrays (read as `readings` say) to the answer cache."""
        store = self._open() if self.used else None
        if store is None or not texts:
            return
        entries = list(zip(self.keys(texts), readings, arrays))
        try:
            store.keep(entries, self.limit_mb * MEGABYTE)
        except CacheUnavailable as exc:
            self.notes.append(cache.unwritable(str(exc)))
        except sqlite3.Error as exc:
            self._failed(store, exc, "written")

    def _failed(self, store: AnswerCache, exc: sqlite3.Error, doing: str) -> None:
        if storage_code(exc) is not None:
            folder = store.path.parent
            self.notes.append(cache.unwritable(f"{folder} cannot be {doing} ({reason(exc)})"))
            return
        store.set_aside()
        self._store = None
        self.notes.append(
            f"{cache.CACHE_NOTE}the answer cache {store.path} could not be read ({exc}); it "
            "was set aside and a new one is started, and the answers were embedded again."
        )

    def earlier(self, texts: list[str], long_answers: str) -> tuple[np.ndarray, str] | None:
        """The vectors of `texts` from an earlier version's entry for exactly this list, and
        how they were read; None when there is none that this setting can use."""
        if not self.used:
            return None
        arrays, note = cache.read_arrays(cache.cache_key(self.model_name, texts))
        if note:
            self.notes.append(note)
        if arrays is None:
            return None
        vectors, truncated = arrays.get("vectors"), arrays.get("truncated")
        if vectors is None or truncated is None or truncated.size != 1:
            return None
        if vectors.dtype != np.float32 or vectors.shape[:1] != (len(texts),):
            return None
        # Its vectors say only how many texts were cut: all of them read whole, or all cut.
        reading = READ_WHOLE if int(truncated.reshape(-1)[0]) == 0 else TRUNCATE
        if reading == TRUNCATE and long_answers != TRUNCATE:
            return None
        return vectors, reading

    def holds(self, text_lists: list[list[str]], long_answers: str) -> bool:
        """Whether every text of the lists is in the answer cache, or its list in an earlier
        version's entry (a quick look: entries are verified when they are read)."""
        distinct = list(dict.fromkeys(t for texts in text_lists for t in texts))
        store = self._open() if self.used else None
        if store is not None:
            try:
                if store.held(self.keys(distinct), (READ_WHOLE, long_answers)) == len(distinct):
                    return True
            except sqlite3.Error:
                pass
        return self.used and all(
            cache.entry_exists(cache.cache_key(self.model_name, texts)) for texts in text_lists
        )

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
