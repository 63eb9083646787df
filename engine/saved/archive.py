"""One `AuditResult` as two files: `<name>.json` (settings, tuning rows, metrics, checks, every
scalar) and `<name>.npz` (the per-response arrays), in a format parm owns and versions.

No pickle: the data folder is read back into the app, so a damaged or foreign file must give a
message, never run code or crash a screen later. Every array is checked for its shape and every
index for its range when it is read. The responses themselves are not stored: the result is
bound to the `Responses` read again from the input file, and a digest of them must match.
The neighbour graph is not kept either (a restored result has graph None); the evidence
neighbours, with their weights and raw similarities, are.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from engine.audit.intervals import Interval
from engine.audit.queue.duplicates import NearDuplicate
from engine.audit.queue.evidence import Neighbour
from engine.audit.queue.second_rater import SecondRater
from engine.audit.raters.every_read import every_read
from engine.audit.reads.consensus_layout import TextEvidence
from engine.core.errors import ConfigError, ResumeError
from engine.embedding.vectors import EmbeddingFacts
from engine.graph.late_interaction import LateInteractionFacts
from engine.input.responses import Responses
from engine.input.settings.config import config_from_dict
from engine.model.cross_fit import CrossFit, FoldFit
from engine.model.pseudo_likelihood import FittedPARM
from engine.model.tuning import TuningResult, TuningRow
from engine.results.item import AuditResult

FORMAT = "parm-result"
# 2: the cross-fit's held-out probabilities are kept, and severity is 1 - p(human score).
SCHEMA_VERSION = 2


def responses_digest(responses: Responses) -> str:
    """SHA-256 over everything a result depends on in the responses: texts, ids, rows, labels
    (and whether they are ordered), the item, first and second scores (not the file's path, so a
    moved file still matches)."""
    digest = hashlib.sha256()
    for part in (responses.texts, responses.ids, list(responses.labels), [responses.item]):
        digest.update(json.dumps(part, ensure_ascii=True).encode("ascii"))
    second = responses.second_scores
    arrays: tuple = (responses.rows, responses.scores, [] if second is None else second)
    for array in arrays:
        digest.update(np.asarray(array, dtype=np.int64).tobytes())
    digest.update(b"second" if second is not None else b"none")
    if not responses.ordered:
        # Nominal labels leave out QWK and near agreement: a result computed on them is not one
        # on the same labels in a stated order (ordered responses keep their earlier digests).
        digest.update(b"nominal")
    return digest.hexdigest()


def _plain(value):
    """JSON-ready: numpy scalars become Python numbers; other unknown values their text."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def _row_dict(row: TuningRow) -> dict:
    return {
        "top_k": row.top_k,
        "power": row.power,
        "metrics": row.metrics,
        "converged": row.converged,
        "selected": row.selected,
    }


def _manifest(result: AuditResult) -> dict:
    fitted, second, crossed = result.fitted, result.second_rater, result.cross_fit
    return {
        "format": FORMAT,
        "schema": SCHEMA_VERSION,
        "run_id": result.run_id,
        "responses": len(result.responses),
        "responses_digest": responses_digest(result.responses),
        "config": result.config.to_dict(),
        "mode": result.mode,
        "embedding_info": _plain(result.embedding_record),
        "warnings": list(result.warnings),
        "timings": _plain(result.timings),
        "tuning": {
            "rows": [_row_dict(r) for r in result.tuning.rows],
            "warnings": list(result.tuning.warnings),
        },
        "fitted": {
            "objective": fitted.objective,
            "converged": fitted.converged,
            "message": fitted.message,
            "iterations": fitted.iterations,
            "at_bounds": fitted.at_bounds,
            "se_method": fitted.se_method,
        },
        "second_rater": None
        if second is None
        else {
            "rows_with_both": second.rows_with_both,
            "human_human": second.human_human,
            "model_vs_first": second.model_vs_first,
            "model_vs_second": second.model_vs_second,
        },
        "intervals": {
            m: {"estimate": iv.estimate, "low": iv.low, "high": iv.high, "level": iv.level}
            for m, iv in result.intervals.items()
        },
        "cross_fit": None
        if crossed is None
        else {
            "metrics": crossed.metrics,
            "folds": [
                {"fold": f.fold, "top_k": f.top_k, "power": f.power, "digest": f.training_digest}
                for f in crossed.folds
            ],
        },
    }


def _arrays(result: AuditResult) -> dict[str, np.ndarray]:
    fitted = result.fitted
    t, s = result.tuning.features
    flat = [nb for row in result.evidence for nb in row]
    arrays = {
        "predicted": np.asarray(result.predicted, dtype=np.int64),
        "severity": np.asarray(result.severity, dtype=np.float64),
        "proba": fitted.proba,
        "beta": fitted.beta,
        "gamma": fitted.gamma,
        "mu": fitted.mu,
        "se": fitted.se,
        "features_t": t,
        "features_s": s,
        "evidence_counts": np.array([len(row) for row in result.evidence], dtype=np.int64),
        "evidence_index": np.array([nb.index for nb in flat], dtype=np.int64),
        "evidence_weight": np.array([nb.weight for nb in flat], dtype=np.float64),
        "evidence_similarity": np.array([nb.similarity for nb in flat], dtype=np.float64),
        "duplicates": np.array(
            [(p.first, p.second) for p in result.near_duplicates], dtype=np.int64
        ).reshape(-1, 2),
        "duplicate_similarity": np.array(
            [p.similarity for p in result.near_duplicates], dtype=np.float64
        ),
    }
    if result.rater_proba is not None:
        arrays["rater_proba"] = np.asarray(result.rater_proba, dtype=np.float64)
    if result.read_evidence is not None:
        arrays.update(_read_evidence_arrays(result.read_evidence))
    if result.second_rater is not None:
        arrays["raters_disagree"] = np.asarray(result.second_rater.disagree, dtype=bool)
    if result.cross_fit is not None:
        folds = result.cross_fit.folds
        arrays["cross_predicted"] = np.asarray(result.cross_fit.predicted, dtype=np.int64)
        arrays["cross_proba"] = np.asarray(result.cross_fit.proba, dtype=np.float64)
        arrays["fold_sizes"] = np.array([f.held_out.size for f in folds], dtype=np.int64)
        arrays["fold_held_out"] = np.concatenate(
            [np.asarray(f.held_out, dtype=np.int64) for f in folds] or [np.zeros(0, np.int64)]
        )
        arrays["fold_theta"] = np.array([f.theta for f in folds], dtype=np.float64)
    return arrays


def result_files(result: AuditResult, folder: Path, name: str) -> dict[Path, str | bytes]:
    """The two files of `result` as {path: content}, for engine.core.files.atomic_write_files."""
    buffer = io.BytesIO()
    np.savez(buffer, **_arrays(result))  # type: ignore[arg-type]  # numpy's stub: names as kwargs
    manifest = json.dumps(_manifest(result), ensure_ascii=False, indent=1)
    return {folder / f"{name}.npz": buffer.getvalue(), folder / f"{name}.json": manifest + "\n"}


def load_result(folder: Path, name: str, responses: Responses) -> AuditResult:
    """The result saved as `name` in `folder`, bound to `responses` (which must be the ones it
    was computed on). Raises ResumeError, naming the file, for anything it cannot use."""
    path = Path(folder) / f"{name}.json"
    manifest = _read_manifest(path)
    if manifest.get("responses_digest") != responses_digest(responses):
        raise ResumeError(
            f"The saved results in {path} were computed on other responses than the ones loaded "
            "(the file's rows or the chosen columns differ); run the audit again."
        )
    try:
        with np.load(path.with_suffix(".npz"), allow_pickle=False) as stored:
            arrays = {key: stored[key] for key in stored.files}
        return _rebuild(manifest, arrays, responses)
    except FileNotFoundError:
        raise ResumeError(f"{path.with_suffix('.npz')} is missing; run the audit again.") from None
    except ConfigError as exc:
        raise ResumeError(f"The settings saved in {path} are no longer valid: {exc}") from None
    except (OSError, KeyError, TypeError, ValueError, IndexError, zipfile.BadZipFile) as exc:
        raise ResumeError(
            f"The saved results in {path} are damaged ({type(exc).__name__}: {exc}); run the "
            "audit again."
        ) from None


def _read_manifest(path: Path) -> dict:
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResumeError(f"{path} is missing; run the audit again.") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResumeError(f"{path} cannot be read ({exc}); run the audit again.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ResumeError(f"{path} is not a parm result file.")
    schema = manifest.get("schema")
    if schema != SCHEMA_VERSION:
        newer = isinstance(schema, int) and schema > SCHEMA_VERSION
        raise ResumeError(
            f"{path} was written by a {'newer' if newer else 'different'} parm (result schema "
            f"{schema!r}, this parm reads {SCHEMA_VERSION}); run the audit again"
            + (" or update parm." if newer else ".")
        )
    return manifest


def _array(arrays: dict, key: str, shape: tuple, dtype=None) -> np.ndarray:
    """arrays[key] with the expected shape (None: any length); ValueError names the key."""
    value = arrays[key]
    if value.ndim != len(shape) or any(
        s is not None and s != v for s, v in zip(shape, value.shape)
    ):
        raise ValueError(f"array {key!r} has shape {value.shape}, expected {shape}")
    return value if dtype is None else value.astype(dtype, copy=False)


def _indices(arrays: dict, key: str, shape: tuple, bound: int) -> np.ndarray:
    """Integer positions in [0, bound)."""
    value = _array(arrays, key, shape)
    if value.dtype.kind not in "iu" or (value.size and (value.min() < 0 or value.max() >= bound)):
        raise ValueError(f"array {key!r} holds positions outside 0..{bound - 1}")
    return value.astype(np.int64, copy=False)


def _rebuild(manifest: dict, arrays: dict, responses: Responses) -> AuditResult:
    n, c = len(responses), responses.n_classes
    fitted = _fitted(manifest["fitted"], arrays, n, c)
    rows = [TuningRow(**row) for row in manifest["tuning"]["rows"]]
    selected = [r for r in rows if r.selected]
    if len(selected) != 1:
        raise ValueError(f"{len(selected)} tuning rows are marked selected, expected 1")
    features = (
        _array(arrays, "features_t", (n, c), np.float64),
        _array(arrays, "features_s", (n,), np.float64),
    )
    warnings = list(manifest["tuning"]["warnings"])
    tuning = TuningResult(rows, selected[0], fitted, features, warnings)
    return AuditResult(
        responses=responses,
        config=config_from_dict(manifest["config"]),
        mode=str(manifest["mode"]),
        graph=None,
        tuning=tuning,
        predicted=_indices(arrays, "predicted", (n,), c),
        severity=_array(arrays, "severity", (n,), np.float64),
        evidence=_evidence(arrays, n),
        timings=dict(manifest["timings"]),
        embedding=EmbeddingFacts.from_record(manifest["embedding_info"]),
        late_interaction=LateInteractionFacts.from_record(manifest["embedding_info"]),
        warnings=list(manifest["warnings"]),
        second_rater=_second_rater(manifest["second_rater"], arrays, n),
        near_duplicates=_duplicates(arrays, n),
        intervals={m: Interval(**iv) for m, iv in manifest["intervals"].items()},
        cross_fit=_cross_fit(manifest["cross_fit"], arrays, n, c),
        run_id=str(manifest["run_id"]),
        rater_proba=_rater_proba(arrays, responses, c),
        read_evidence=_read_evidence(arrays, n, c),
    )


def _rater_proba(arrays: dict, responses, c: int) -> np.ndarray | None:
    """One row per read (engine.audit.raters.every_read). Sessions saved before the rater-left-out
    expectation have none, and those saved before every read was counted one row per answer
    of a file with more reads than answers: the raters fall back to the fitted probabilities."""
    if "rater_proba" not in arrays:
        return None
    reads = len(every_read(responses))
    if arrays["rater_proba"].shape[0] != reads:
        return None
    return _array(arrays, "rater_proba", (reads, c), np.float64)


def _read_evidence_arrays(evidence: TextEvidence) -> dict[str, np.ndarray]:
    """The consensus's text evidence: its classifier's probabilities and the neighbours."""
    (proba,) = evidence.classifiers
    return {
        "read_classifier": np.asarray(proba, dtype=np.float64),
        "read_neighbours": np.asarray(evidence.neighbours, dtype=np.int64),
        "read_similarity": np.asarray(evidence.similarity, dtype=np.float64),
    }


def _read_evidence(arrays: dict, n: int, c: int) -> TextEvidence | None:
    """The saved text evidence (None in a result without several reads, or saved before it
    was kept: the consensus then reads the reads alone)."""
    if "read_classifier" not in arrays:
        return None
    proba = _array(arrays, "read_classifier", (n, c), np.float64)
    near = _array(arrays, "read_neighbours", (n, None))
    if near.dtype.kind not in "iu" or (near.size and (near.min() < -1 or near.max() >= n)):
        raise ValueError("array 'read_neighbours' holds positions outside -1..n-1")
    similarity = _array(arrays, "read_similarity", near.shape, np.float64)
    return TextEvidence((proba,), near.astype(np.int64, copy=False), similarity)


def _fitted(scalars: dict, arrays: dict, n: int, c: int) -> FittedPARM:
    return FittedPARM(
        beta=_array(arrays, "beta", (c,), np.float64),
        gamma=_array(arrays, "gamma", (c,), np.float64),
        mu=_array(arrays, "mu", (c,), np.float64),
        se=_array(arrays, "se", (3 * (c - 1),), np.float64),
        proba=_array(arrays, "proba", (n, c), np.float64),
        objective=float(scalars["objective"]),
        converged=bool(scalars["converged"]),
        message=str(scalars["message"]),
        iterations=int(scalars["iterations"]),
        at_bounds=bool(scalars["at_bounds"]),
        se_method=str(scalars["se_method"]),
    )


def _evidence(arrays: dict, n: int) -> list[list[Neighbour]]:
    counts = _array(arrays, "evidence_counts", (n,))
    total = int(counts.sum())
    index = _indices(arrays, "evidence_index", (total,), n).tolist()
    weight = _array(arrays, "evidence_weight", (total,), np.float64).tolist()
    similarity = _array(arrays, "evidence_similarity", (total,), np.float64).tolist()
    if counts.size and counts.min() < 0:
        raise ValueError("array 'evidence_counts' has negative counts")
    bounds = np.concatenate([[0], np.cumsum(counts)]).tolist()
    return [
        list(map(Neighbour, index[a:b], weight[a:b], similarity[a:b]))
        for a, b in zip(bounds[:-1], bounds[1:])
    ]


def _second_rater(values: dict | None, arrays: dict, n: int) -> SecondRater | None:
    if values is None:
        return None
    disagree = _array(arrays, "raters_disagree", (n,), bool)
    return SecondRater(disagree=disagree, **values)


def _duplicates(arrays: dict, n: int) -> list[NearDuplicate]:
    pairs = _indices(arrays, "duplicates", (None, 2), n).tolist()
    similarity = _array(arrays, "duplicate_similarity", (len(pairs),), np.float64).tolist()
    return [NearDuplicate(a, b, s) for (a, b), s in zip(pairs, similarity)]


def _cross_fit(values: dict | None, arrays: dict, n: int, c: int) -> CrossFit | None:
    if values is None:
        return None
    folds = values["folds"]
    sizes = _array(arrays, "fold_sizes", (len(folds),))
    held_out = _indices(arrays, "fold_held_out", (int(sizes.sum()),), n)
    theta = _array(arrays, "fold_theta", (len(folds), 3 * (c - 1)), np.float64)
    parts = np.split(held_out, np.cumsum(sizes)[:-1]) if len(folds) else []
    return CrossFit(
        folds=[
            FoldFit(f["fold"], part, f["top_k"], f["power"], theta[k], f["digest"])
            for k, (f, part) in enumerate(zip(folds, parts))
        ],
        proba=_array(arrays, "cross_proba", (n, c), np.float64),
        predicted=_indices(arrays, "cross_predicted", (n,), c),
        metrics=dict(values["metrics"]),
    )
