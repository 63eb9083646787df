"""Items that did not change, not audited again (issue 49): every item's audit, as
`engine.pipeline.run_audit` returned it (before the session relearns the severity from the reads
and fits its model), is kept under a key of everything it was computed from, so a run of a file
with a few answers added audits only the items those answers are in.

The key: the item's responses (engine.saved.archive.responses_digest: texts, ids, rows, labels,
scores, second scores) and everything else a result reads from them (raters, reads, times,
expert scores, the question and reference answer), the settings digest
(engine.input.settings.config.settings_digest: every setting that changes what is computed,
the model's name among them, but not the settings an item's audit never reads: AFTER_ITEMS)
and what computed it (engine.saved.method: parm's version and its engine's sources), so a changed
answer, score, read, setting or parm is another key. A kept
audit comes back under the run's own settings, so a lead who changes only the session model,
the flagged count's precision or the worker processes reuses every item. A result is kept as
engine.saved.archive keeps a run's (two files, no pickle, every array checked when read) plus
its neighbour lists (`<key>.graph.npz`, for the session model; the vectors are not kept: a
reused item's dense products are not needed by the session model, which uses the top-K
lists). Where: `<data dir>/items/`; the newest ITEMS_KEPT keys are kept (an item used again is
the newest), the rest removed after each save. A key whose files cannot be read is audited
again, never an error.

The session model's figures (engine.model.session.figures.SessionModelFigures, plain data) are
kept beside them under a key of every item's key and the settings the model reads
(`model_key`), so a run whose items are all reused and whose session model settings are the
same (another flagged count's precision, another number of worker processes) fits no model.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.core.errors import ResumeError
from engine.core.files import atomic_write_files
from engine.core.places import data_dir
from engine.saved.method import method_version

if TYPE_CHECKING:
    from engine.input.responses import Responses
    from engine.input.settings.config import AuditConfig
    from engine.model.session.figures import SessionModelFigures
    from engine.results.item import AuditResult

FOLDER = "items"
# Keys kept: a session of 200 items re-run under five settings fits; about 2 MB a key for an
# item of 2,000 answers (its arrays and neighbour lists).
ITEMS_KEPT = 1000
GRAPH = ".graph.npz"
MODEL = ".model.json"
# Settings engine.pipeline.run_audit never reads: the session model (fitted over the items
# after them), the flagged count's precision (read from the run's settings when asked,
# engine.results.item.AuditResult.flagged) and the worker processes. tests/test_item_reuse.py
# audits an item under other values of each and finds the same audit. The session model reads
# neither of the last two (AFTER_MODEL).
AFTER_MODEL = ("flag_precision", "jobs")
AFTER_ITEMS = ("session_model", *AFTER_MODEL)


def item_key(responses: Responses, config: AuditConfig) -> str:
    """The key of one item's audit: everything it is computed from (module docstring)."""
    from engine.input.settings.config import settings_digest
    from engine.saved.archive import responses_digest

    digest = hashlib.sha256()
    settings = settings_digest(config, leave_out=AFTER_ITEMS)
    for part in (responses_digest(responses), settings, method_version()):
        digest.update(part.encode("utf-8") + b"\0")
    text = [responses.raters, responses.second_raters, responses.question, responses.reference]
    digest.update(json.dumps(text, ensure_ascii=True).encode("ascii"))
    for array in (responses.times, responses.expert):
        digest.update(b"-" if array is None else np.ascontiguousarray(array).tobytes())
    reads = responses.reads
    if reads is not None:
        digest.update(json.dumps(list(reads.rater), ensure_ascii=True).encode("ascii"))
        for array in (reads.answer, reads.score, reads.time, reads.row, reads.first):
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:40]


def model_key(keys: list[str], config: AuditConfig) -> str:
    """The key of a session model fitted over items of these keys (in the session's order)
    under `config`: the settings that count but for the flagged count's precision and the
    worker processes (the items' keys hold the rest)."""
    from engine.input.settings.config import settings_digest

    digest = hashlib.sha256()
    for part in (*keys, settings_digest(config, leave_out=AFTER_MODEL)):
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()[:40]


def kept_model(key: str, base: Path | None = None) -> SessionModelFigures | None:
    """The session model's figures kept under `key`; None where there are none or they cannot
    be read (the model is fitted again)."""
    from engine.model.session.figures import SessionModelFigures

    path = folder(base) / f"{key}{MODEL}"
    try:
        figures = SessionModelFigures.from_dict(json.loads(path.read_text(encoding="utf-8")))
        os.utime(path)  # used again: the newest
    except (OSError, KeyError, TypeError, ValueError, AttributeError):
        return None
    return figures


def keep_model(key: str, figures: SessionModelFigures, base: Path | None = None) -> None:
    """Keep the session model's figures under `key` (a disk that refuses keeps nothing)."""
    where = folder(base)
    text = json.dumps(figures.to_dict(), ensure_ascii=True, allow_nan=False)
    try:
        where.mkdir(parents=True, exist_ok=True)
        atomic_write_files({where / f"{key}{MODEL}": text})
        _prune(where, ITEMS_KEPT)
    except (OSError, ValueError):
        return


def folder(base: Path | None = None) -> Path:
    return (base or data_dir()) / FOLDER


def kept(
    key: str, responses: Responses, base: Path | None = None, config: AuditConfig | None = None
) -> AuditResult | None:
    """The audit kept under `key`, bound to `responses` with its neighbour lists and to `config`
    (the run's settings, where given: they differ from the kept ones in AFTER_ITEMS at most);
    None where there is none or its files cannot be used (the item is audited again)."""
    from engine.saved.archive import load_result

    where = folder(base)
    try:
        result = load_result(where, key, responses)
        graph = _read_graph(where / f"{key}{GRAPH}", len(responses))
    except (ResumeError, OSError, KeyError, ValueError):
        return None
    for path in (where / f"{key}.json", where / f"{key}.npz", where / f"{key}{GRAPH}"):
        try:
            os.utime(path)  # used again: the newest
        except OSError:
            pass
    return replace(result, graph=graph, config=config or result.config)


def keep(key: str, result: AuditResult, base: Path | None = None) -> None:
    """Keep `result` (with its neighbour lists) under `key`, then the newest ITEMS_KEPT keys
    only. A result without neighbour lists, or a disk that refuses, keeps nothing."""
    from engine.saved.archive import result_files

    if result.graph is None:
        return
    where = folder(base)
    files = result_files(result, where, key)
    files[where / f"{key}{GRAPH}"] = _graph_bytes(result.graph)
    try:
        where.mkdir(parents=True, exist_ok=True)
        atomic_write_files(files)
        _prune(where, ITEMS_KEPT)
    except OSError:
        return


def _graph_bytes(graph) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, indices=graph.indices, similarities=graph.similarities,
             scalars=np.array([graph.low, graph.high, float(graph.normalize)]),
             mode=np.array(graph.mode))  # fmt: skip
    return buffer.getvalue()


def _read_graph(path: Path, n: int):
    from engine.graph.neighbour_graph import NeighbourGraph

    with np.load(path, allow_pickle=False) as stored:
        indices, similarities = stored["indices"], stored["similarities"]
        low, high, normalize = (float(v) for v in stored["scalars"])
        mode = str(stored["mode"])
    if indices.shape != similarities.shape or indices.ndim != 2 or indices.shape[0] != n:
        raise ValueError("neighbour lists of another shape")
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise ValueError("neighbour index out of range")
    return NeighbourGraph(indices.astype(np.int32), similarities.astype(np.float32), low, high,
                          bool(normalize), None, mode)  # fmt: skip


def _prune(where: Path, most: int) -> None:
    """Remove the files of all but the `most` most recently used keys."""
    stamps: dict[str, float] = {}
    for path in where.glob("*.json"):
        try:
            stamps[path.stem] = path.stat().st_mtime
        except OSError:
            continue
    for key in sorted(stamps, key=stamps.__getitem__, reverse=True)[most:]:
        for suffix in (".json", ".npz", GRAPH):
            try:
                (where / f"{key}{suffix}").unlink()
            except OSError:
                pass
