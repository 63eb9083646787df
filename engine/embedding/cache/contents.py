"""What the embedding cache holds, and emptying it (`parm cache`, `parm cache clear`): the answer
cache (engine.embedding.cache.answers), the entries of earlier versions and of token vectors
(engine.embedding.cache.entries) and report.html's kept plots (engine.outputs.report.plots.kept),
in the folder engine.core.places.cache_dir gives."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from engine.core.errors import EmbeddingError
from engine.core.files import reason, remove_stale_temporaries
from engine.embedding.cache.answers import ANSWERS_FILE
from engine.embedding.cache.entries import PLOTS_FOLDER, PLOTS_LIMIT, cache_folder, legacy_entries


@dataclass(frozen=True)
class CacheContents:
    """The cache folder; the answer cache's entries and bytes on disk (its side files included);
    the earlier versions' and token entries (one file per list of texts) and their bytes; the
    kept plots, their bytes and how many are kept at most."""

    folder: Path
    answers: int
    answer_bytes: int
    lists: int
    list_bytes: int
    plots: int = 0
    plot_bytes: int = 0
    plot_limit: int = PLOTS_LIMIT

    @property
    def total_bytes(self) -> int:
        return self.answer_bytes + self.list_bytes + self.plot_bytes


def _folder() -> Path:
    folder, problem = cache_folder()
    if folder is None:
        raise EmbeddingError(f"There is no embedding cache: {problem}. Set PARM_CACHE_DIR.")
    return folder


def _answer_files(folder: Path) -> list[Path]:
    base = folder / ANSWERS_FILE
    names = [base, *(Path(f"{base}{suffix}") for suffix in ("-wal", "-shm", ".damaged"))]
    return [path for path in names if path.is_file()]


def _answer_count(path: Path) -> int:
    """Entries in the answer cache; 0 when there is none or SQLite cannot read it."""
    if not path.is_file():
        return 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10.0)
        try:
            return int(conn.execute("SELECT count(*) FROM answers").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def cache_contents() -> CacheContents:
    """What the cache holds now (nothing is created or changed)."""
    folder = _folder()
    answer_bytes = sum(path.stat().st_size for path in _answer_files(folder))
    lists = legacy_entries(folder)
    plots = _plot_files(folder)
    return CacheContents(
        folder,
        _answer_count(folder / ANSWERS_FILE),
        answer_bytes,
        len(lists),
        sum(size for _, size, _ in lists),
        len(plots),
        sum(size for _, size in plots),
    )


def _plot_files(folder: Path) -> list[tuple[Path, int]]:
    """The kept plots (and any a run left half written) with their sizes."""
    found = []
    for path in (folder / PLOTS_FOLDER).glob("*"):
        try:
            if path.is_file() and path.suffix in (".svg", ".part"):
                found.append((path, path.stat().st_size))
        except OSError:
            continue
    return found


def clear_cache() -> CacheContents:
    """Empty the cache; what it held before. The answer cache is emptied through SQLite, so a
    run using it at the same time is not disturbed (it waits, then finds nothing); one SQLite
    cannot read is removed. Raises ParmError naming the cause when something cannot go."""
    before = cache_contents()
    folder = before.folder
    base = folder / ANSWERS_FILE
    try:
        if base.is_file() and not _emptied(base):
            for path in _answer_files(folder):
                os.unlink(path)
        damaged = Path(f"{base}.damaged")
        if damaged.is_file():
            os.unlink(damaged)
        for path, _, _ in legacy_entries(folder):
            os.unlink(path)
        for path, _ in _plot_files(folder):
            os.unlink(path)
    except OSError as exc:
        why = reason(exc)
        raise EmbeddingError(f"The embedding cache in {folder} cannot be emptied: {why}.") from None
    remove_stale_temporaries(folder)
    return before


def _emptied(path: Path) -> bool:
    """Delete every entry and give the space back; False when SQLite cannot read the file."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    except sqlite3.Error:
        return False
    try:
        conn.execute("DELETE FROM answers")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return True
    except sqlite3.DatabaseError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise EmbeddingError(
                f"The embedding cache {path} is in use by another parm run; try again when it "
                "has finished."
            ) from None
        return False
    finally:
        conn.close()
