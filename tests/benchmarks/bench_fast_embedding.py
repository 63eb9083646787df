"""The fast embedding path (`embedding_model: static`) against the bundled model, on every dataset
of the shared data, audited as parm audits them.

    PARM_DATA_ROOT=/path/to/shared/data PARM_CACHE_DIR=/path/to/cache \\
        python tests/benchmarks/bench_fast_embedding.py [--datasets asap-sas mohler] [--seeds 5]

Data: $PARM_DATA_ROOT (default ../shared/data beside the repository): ASAP-SAS prompts 1, 2, 3,
4, 7, 8, 9, 10 (train files; Score1, second score Score2), SciEntsBank (train.csv, per question,
nominal text labels, no second score), ASAP-AES sets 1, 2, 7, 8 (rater1_domain1, second score
rater2_domain1), Mohler (answers.csv, per question, score_grader1, second score score_grader2).

Each file's answers are embedded once per model, the whole answer column as parm does it
(`engine.embedding.sentence.embed_texts`; the bundled model's vectors come from the embedding
cache, $PARM_CACHE_DIR, when it holds them; the static model is made on first use in
$PARM_MODEL_DIR and its vectors are not cached), then split by item exactly as `parm audit`
does (`engine.input.items`), and every audit is one `engine.session.run_session` with those
embeddings and the default settings (bootstrap and cross-fitting off: they change neither the
selection nor the severity). What it reads is whatever `run_audit` ships as `severity`, so the
script measures a new severity unchanged.

Per file and model:
- selected kappa: the kappa of the selected configuration on the file's own scores (the mean
  over items for a file of items);
- severity AUROC, real: positives the responses whose two human scores differ (pooled over the
  file's items, as the session's review queue pools them);
- severity AUROC, injected: 5% of the scores (over the whole file) moved by one point within the
  file's scale (ordered scores; down at the top, up at the bottom, else either way at random) or
  to another label of the same item (nominal labels), the file audited again, positives the
  moved responses; mean over the seeds;
- near-duplicates: pairs scored differently above `near_duplicate_threshold` (rows of the file),
  how many, and how many the two models share.
The rule of issue 27: the static model may be the default only if no dataset loses more than
0.005 in any of kappa, AUROC real, AUROC injected (dataset = the mean over its files).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DATA_ROOT = Path(os.environ.get("PARM_DATA_ROOT", ROOT.parent / "shared" / "data"))
BUNDLED, STATIC = "sentence-transformers/all-MiniLM-L6-v2", "static"
MODELS = {"bundled": BUNDLED, "static": STATIC}
TOLERANCE = 0.005
INJECTED_SHARE = 0.05


@dataclass(frozen=True)
class Dataset:
    name: str
    files: list[str]
    text: str
    score: str
    second: str | None
    id: str
    item: str | None = None


DATASETS = {
    "asap-sas": Dataset(
        "asap-sas",
        [f"prompt{p}-train.csv" for p in (1, 2, 3, 4, 7, 8, 9, 10)],
        "EssayText",
        "Score1",
        "Score2",
        "Id",
    ),
    "scientsbank": Dataset(
        "scientsbank", ["train.csv"], "answer", "label", None, "id", "question_id"
    ),
    "asap-aes": Dataset(
        "asap-aes",
        [f"set{s}.csv" for s in (1, 2, 7, 8)],
        "essay",
        "rater1_domain1",
        "rater2_domain1",
        "essay_id",
    ),
    "mohler": Dataset(
        "mohler", ["answers.csv"], "answer", "score_grader1", "score_grader2", "id", "question_id"
    ),
}


def settings(dataset: Dataset, model: str):
    from engine.input.settings.config import build_config

    columns = {
        "text_column": dataset.text,
        "score_column": dataset.score,
        "id_column": dataset.id,
        "second_score_column": dataset.second,
        "item_column": dataset.item,
    }
    overrides = ["bootstrap_samples=0", "cross_fit_folds=0", "on_bad_rows=skip"]
    return build_config(None, overrides + [f"embedding_model={model}"], columns)


def file_vectors(frame, dataset: Dataset, model: str) -> tuple[np.ndarray, float]:
    """(rows of the file, d) unit vectors of the whole answer column, and seconds it took."""
    from engine.embedding.sentence import embed_texts

    texts = [str(t) for t in frame[dataset.text]]
    started = time.perf_counter()
    vectors, _ = embed_texts(texts, model, use_cache=model != STATIC)
    return vectors, time.perf_counter() - started


def audit(frame, dataset: Dataset, model: str, vectors: np.ndarray):
    """One session on `frame` (the file's table, maybe with moved scores): per response (file
    row order) its severity, and the session."""
    from engine.input.items import split_items
    from engine.session import run_session

    config = settings(dataset, model)
    items = split_items(frame, config, source=dataset.name)
    given = [vectors[responses.rows - 1] for responses in items.audited]
    session = run_session(items, config, embeddings=given)
    severity = np.full(len(frame), np.nan)
    for result in session.results:
        severity[result.responses.rows - 1] = result.severity
    return severity, session


def auroc(positive: np.ndarray, severity: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    keep = ~np.isnan(severity)
    if positive[keep].all() or not positive[keep].any():
        return float("nan")
    return float(roc_auc_score(positive[keep], severity[keep]))


def moved_scores(frame, dataset: Dataset, seed: int):
    """The frame with INJECTED_SHARE of its scores moved, and which rows were moved."""
    rng = np.random.default_rng(seed)
    scores = frame[dataset.score].astype(str).to_numpy().copy()
    usable = np.flatnonzero(scores != "")
    moved = np.zeros(len(frame), dtype=bool)
    picked = rng.choice(usable, size=int(round(INJECTED_SHARE * usable.size)), replace=False)
    numeric = dataset.name != "scientsbank"
    if numeric:
        values = scores[usable].astype(float)
        low, high = values.min(), values.max()
    for row in picked:
        if numeric:
            value = float(scores[row])
            step = -1.0 if value + 1 > high else 1.0 if value - 1 < low else rng.choice([-1, 1])
            scores[row] = _label(value + step)
        else:
            item = frame[dataset.item].to_numpy()
            labels = sorted(set(scores[(item == item[row]) & (scores != "")]) - {scores[row]})
            if not labels:
                continue
            scores[row] = labels[rng.integers(len(labels))]
        moved[row] = True
    changed = frame.copy()
    changed[dataset.score] = scores
    return changed, moved


def _label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def duplicate_pairs(session) -> set[tuple[int, int]]:
    pairs = set()
    for result in session.results:
        rows = result.responses.rows
        for pair in result.near_duplicates:
            a, b = int(rows[pair.first]), int(rows[pair.second])
            pairs.add((min(a, b), max(a, b)))
    return pairs


def selected_kappa(session) -> float:
    return float(np.nanmean([result.metrics["kappa"] for result in session.results]))


def measure_file(dataset: Dataset, name: str, seeds: int) -> dict:
    from engine.input.table import read_table

    frame = read_table(DATA_ROOT / dataset.name / name)
    out: dict = {"file": name, "n": len(frame)}
    for label, model in MODELS.items():
        vectors, seconds = file_vectors(frame, dataset, model)
        started = time.perf_counter()
        severity, session = audit(frame, dataset, model, vectors)
        figures = {"embed_s": seconds, "kappa": selected_kappa(session)}
        if dataset.second is not None:
            first = frame[dataset.score].astype(str).to_numpy()
            second = frame[dataset.second].astype(str).to_numpy()
            both = (first != "") & (second != "")
            disagree = both & (_numbers(first) != _numbers(second))
            figures["real"] = auroc(disagree[both], severity[both])
        injected = []
        for seed in range(seeds):
            changed, moved = moved_scores(frame, dataset, seed)
            severity_moved, _ = audit(changed, dataset, model, vectors)
            injected.append(auroc(moved, severity_moved))
        figures["injected"] = float(np.nanmean(injected))
        figures["pairs"] = duplicate_pairs(session)
        figures["audit_s"] = time.perf_counter() - started
        out[label] = figures
    return out


def _numbers(labels: np.ndarray) -> np.ndarray:
    return np.array([float(v) if v != "" else np.nan for v in labels])


def shared_pairs(row: dict) -> str:
    a, b = row["bundled"]["pairs"], row["static"]["pairs"]
    union = a | b
    return f"{len(a & b)} ({len(a & b) / len(union):.0%} of the union)" if union else "-"


def table(rows: list[dict], dataset: Dataset) -> list[str]:
    lines = [
        f"### {dataset.name}",
        "",
        "| file (N) | kappa bundled / static | AUROC real bundled / static | AUROC injected "
        "bundled / static | near-dup. pairs bundled / static, shared | static embed s |",
        "| --- | --- | --- | --- | --- | ---: |",
    ]
    for row in rows + [_mean_row(rows)]:
        b, s = row["bundled"], row["static"]
        pairs = (
            ""
            if "pairs" not in b
            else (f"{len(b['pairs'])} / {len(s['pairs'])}, {shared_pairs(row)}")
        )
        lines.append(
            f"| {row['file']} ({row['n']:,}) | {_pair(b, s, 'kappa')} | {_pair(b, s, 'real')} | "
            f"{_pair(b, s, 'injected')} | {pairs} | {s.get('embed_s', float('nan')):.1f} |"
        )
    return lines


def _pair(b: dict, s: dict, key: str) -> str:
    if key not in b:
        return "-"
    return f"{b[key]:.3f} / {s[key]:.3f} ({s[key] - b[key]:+.3f})"


def _mean_row(rows: list[dict]) -> dict:
    mean: dict = {"file": "**mean**", "n": sum(r["n"] for r in rows)}
    for label in MODELS:
        keys = [k for k in ("kappa", "real", "injected") if k in rows[0][label]]
        mean[label] = {k: float(np.nanmean([r[label][k] for r in rows])) for k in keys}
    return mean


def verdict(results: dict[str, list[dict]]) -> list[str]:
    lines, worst = ["", "## The rule (a loss above 0.005 anywhere: not the default)", ""], []
    for name, rows in results.items():
        mean = _mean_row(rows)
        for key in ("kappa", "real", "injected"):
            if key in mean["bundled"]:
                loss = mean["bundled"][key] - mean["static"][key]
                worst.append((loss, name, key))
                lines.append(f"- {name} {key}: loss {loss:+.3f}")
    loss, name, key = max(worst)
    role = "default" if loss <= TOLERANCE else "documented fast choice, not the default"
    lines += ["", f"Largest loss: {loss:+.3f} ({name}, {key}). Role: {role}."]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--files", nargs="+", help="only these files (e.g. prompt1-train.csv)")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Data: {DATA_ROOT}; {os.cpu_count()} cores, load average {load:.1f}", flush=True)
    results: dict[str, list[dict]] = {}
    for name in args.datasets:
        dataset = DATASETS[name]
        rows = []
        for file in dataset.files:
            if args.files and file not in args.files:
                continue
            rows.append(measure_file(dataset, file, args.seeds))
            row = rows[-1]
            print(
                f"{name}/{file}: "
                + "; ".join(
                    f"{m} "
                    + ", ".join(f"{k} {v:.3f}" for k, v in row[m].items() if isinstance(v, float))
                    for m in MODELS
                ),
                flush=True,
            )
        results[name] = rows
        print("\n".join(table(rows, dataset)), flush=True)
    print("\n".join(verdict(results)), flush=True)


if __name__ == "__main__":
    main()
