"""The answer cache and duplicate answers (issue 39): what a run embeds, and what it costs.

    python tests/benchmarks/bench_answer_cache.py --rerun       # 15,000 ASAP answers, then +1%
    python tests/benchmarks/bench_answer_cache.py --duplicates  # Powergrading; three reads each
    python tests/benchmarks/bench_answer_cache.py --essays 150  # essays: truncate vs windows
    python tests/benchmarks/bench_answer_cache.py --store 100000  # SQLite vs files vs a pack

--rerun: the 15,000-answer session of bench_first_run.py (all ASAP-SAS files, topped up by
drawn rows, 8 items) audited by the real `parm audit` with an empty embedding cache, then the
same file with 1% new answers (150 rows whose texts are answers of the file with one word
changed, so no cache holds them) audited again with that cache: the embedding stage of each
(report.json) and the share of the second in the first (goal: under 5%).
--duplicates: in this process, each with a fresh, empty cache: Powergrading's five questions
(698 answers each, 52-581 distinct) as a session's items, against encoding every row as parm
did before (sentence-transformers' encode per item); and one ASAP-SAS prompt in long form, each
answer on three rows (three reads), against its distinct answers alone (goal: at most 1.1x).
Two rounds, the second in the opposite order; the best of two is printed.
--essays N: the first N essays of each ASAP-AES set embedded with `long_answers` truncate and
windows (fresh caches): seconds and pieces (windows) encoded.
--items TREE...: the embedding stage of a 135-item session (SciEntsBank's questions) with every
answer cached, for each source tree (e.g. the main branch's checkout and this one): one entry
per item's list of texts before, one per distinct answer now (random vectors: the model is not
needed). Best and median of 5, in a subprocess per tree.
--store N: N vectors of 384 float32 written, read back with their checksums verified and marked
used, in one SQLite database, one file per answer (256 folders, no fsync) and one pack file
with an index: the measurement behind engine.embedding.cache.answers's design.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
DATA = Path(os.environ.get("PARM_DATA_ROOT", ROOT.parent / "shared" / "data"))


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


@contextmanager
def fresh_cache():
    with tempfile.TemporaryDirectory(prefix="parm-cache-") as folder:
        old = os.environ.get("PARM_CACHE_DIR")
        os.environ["PARM_CACHE_DIR"] = folder
        try:
            yield Path(folder)
        finally:
            if old is None:
                os.environ.pop("PARM_CACHE_DIR")
            else:
                os.environ["PARM_CACHE_DIR"] = old


# -- --rerun ----------------------------------------------------------------------------------
def edited_session(table: Path, share: float = 0.01) -> Path:
    """The session file with `share` new rows: answers of the file with one word changed."""
    frame = pd.read_csv(table, dtype=str, keep_default_na=False)
    rng = np.random.default_rng(1)
    extra = frame.iloc[rng.choice(len(frame), round(share * len(frame)), replace=False)].copy()
    texts = []
    for k, text in enumerate(extra["EssayText"]):
        words = text.split() or [""]
        words[rng.integers(len(words))] = f"edited{k}"
        texts.append(" ".join(words))
    extra["EssayText"] = texts
    extra["Id"] = [f"{i}-late" for i in extra["Id"]]
    path = table.with_name(table.stem + "-edited.csv")
    pd.concat([frame, extra], ignore_index=True).to_csv(path, index=False)
    return path


def rerun() -> None:
    from bench_first_run import COLUMNS, session_file
    from machine import timed

    parm = Path(sys.executable).with_name("parm")
    with tempfile.TemporaryDirectory(prefix="parm-rerun-") as tmp:
        base = Path(tmp)
        env = dict(os.environ, PARM_CACHE_DIR=str(base / "cache"), PARM_DATA_DIR=str(base / "d"))
        first_table = session_file(base, 15_000)
        tables = {"first run": first_table, "+1% new answers": edited_session(first_table)}
        rows = {}
        for label, table in tables.items():
            print(f"{label}: {load()}", flush=True)
            out = base / label.replace(" ", "-")
            command = [str(parm), "audit", str(table), *COLUMNS, "--out", str(out), "-q"]
            measured = timed(command, env=env)
            report = json.loads((out / "report.json").read_text(encoding="utf-8"))
            rows[label] = (measured, report["timings_seconds"], len(pd.read_csv(table)))
        print("| run | rows | wall s | CPU s | loading the model, s | embedding, s |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for label, (measured, stages, n) in rows.items():
            print(
                f"| {label} | {n:,} | {measured['wall']:.1f} | {measured['cpu']:.0f} | "
                f"{stages.get('loading_model', 0):.1f} | {stages.get('embedding', 0):.2f} |"
            )
        first, second = (rows[label][1].get("embedding", 0.0) for label in tables)
        print(f"re-run embedding / first run embedding: {second / first:.3%} ({load()})")


# -- --duplicates -----------------------------------------------------------------------------
def timed_call(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def duplicates() -> None:
    from engine.embedding.loading import model_for
    from engine.embedding.sentence import Reading, embed_text_lists, embed_texts

    model, _ = model_for("sentence-transformers/all-MiniLM-L6-v2")
    power = pd.read_csv(DATA / "powergrading" / "answers.csv", dtype=str, keep_default_na=False)
    questions = [group["answer"].tolist() for _, group in power.groupby("question_id", sort=True)]
    prompt = pd.read_csv(DATA / "asap-sas" / "prompt1-train.csv", dtype=str, keep_default_na=False)
    answers = prompt["EssayText"].tolist()
    long_form = [text for text in answers for _ in range(3)]

    def every_row():
        for texts in questions:
            model.encode(texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False)

    def deduplicated():
        with fresh_cache():
            embed_text_lists(questions, Reading())

    def three_reads():
        with fresh_cache():
            embed_texts(long_form)

    def distinct_only():
        with fresh_cache():
            embed_texts(answers)

    runs = {"every": every_row, "dedup": deduplicated, "three": three_reads,
            "distinct": distinct_only}  # fmt: skip
    best = {name: [] for name in runs}
    for round_ in range(2):  # the second round in the opposite order: a load that drifts
        for name in list(runs)[:: 1 if round_ == 0 else -1]:  # favours neither side
            best[name].append(timed_call(runs[name]))
        print({k: [round(s, 1) for s in v] for k, v in best.items()}, load(), flush=True)
    rows = sum(len(t) for t in questions)
    distinct = [len(set(t)) for t in questions]
    every, dedup = min(best["every"]), min(best["dedup"])
    three, alone = min(best["three"]), min(best["distinct"])
    print("| file | rows | distinct | before: every row, s | now, s | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| Powergrading, 5 questions as items | {rows:,} | {sum(distinct):,} "
        f"({', '.join(map(str, distinct))}) | {every:.1f} | {dedup:.1f} | {dedup / every:.2f} |"
    )
    print(
        f"| ASAP-SAS prompt 1 in long form, three reads per answer | {len(long_form):,} | "
        f"{len(set(answers)):,} | distinct answers alone: {alone:.1f} | {three:.1f} | "
        f"{three / alone:.2f} |"
    )


# -- --essays ---------------------------------------------------------------------------------
def essays(count: int) -> None:
    from engine.core.text import safe_text
    from engine.embedding.loading import model_for
    from engine.embedding.reading import plan_reading
    from engine.embedding.sentence import embed_texts

    model, _ = model_for("sentence-transformers/all-MiniLM-L6-v2")
    print("| set | essays | longer than the window | truncate: s | windows: s | windows read |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for number in (1, 2, 7, 8):
        frame = pd.read_csv(DATA / "asap-aes" / f"set{number}.csv", dtype=str)
        texts = [safe_text(t) for t in frame["essay"].fillna("").tolist()[:count]]
        plan = plan_reading(model, texts, "windows")
        seconds = {}
        for setting in ("truncate", "windows"):
            with fresh_cache():
                seconds[setting] = timed_call(
                    lambda s=setting, t=texts: embed_texts(t, long_answers=s)
                )
        long_count = sum(r != "whole" for r in plan.readings)
        print(
            f"| set {number} | {len(texts)} | {long_count} | {seconds['truncate']:.1f} | "
            f"{seconds['windows']:.1f} | {len(plan.pieces):,} pieces | ({load()})",
            flush=True,
        )


# -- --items ---------------------------------------------------------------------------------
ITEMS_SNIPPET = """
import os, sys, time, numpy as np
from engine.core.progress import Reporter
from engine.input.settings.config import build_config
from engine.input.items import split_items
from engine.input.table import read_table
from engine import session
columns = {"text_column": "answer", "score_column": "label", "id_column": "id",
           "item_column": "question_id"}
config = build_config(None, [], columns)
items = split_items(read_table(sys.argv[1]), config, source=sys.argv[1])
rng = np.random.default_rng(0)
def unit(n):
    v = rng.normal(size=(n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)
try:  # this tree has the answer cache: every distinct answer kept once
    from engine.embedding.cache.run_cache import RunCache
    texts = list(dict.fromkeys(t for r in items.audited for t in r.texts))
    run = RunCache(config.embedding_model, 2048)
    run.keep(texts, list(unit(len(texts))), ["whole"] * len(texts))
    run.close()
except ImportError:  # an earlier tree: one entry per item's list of texts
    from engine.embedding import cache
    for r in items.audited:
        cache.write_arrays(cache.cache_key(config.embedding_model, r.texts),
                           {"vectors": unit(len(r.texts)), "truncated": np.array([0])})
best = []
for _ in range(int(sys.argv[2])):
    started = time.perf_counter()
    tasks, _ = session._embedded_here(items, config, Reporter(), None)
    best.append(time.perf_counter() - started)
    assert all(task.embedded.facts.cached for task in tasks)
print(len(items.audited), min(best), sorted(best)[len(best) // 2])
"""


def items(trees: list[str], rounds: int = 5) -> None:
    """The embedding stage of a fully cached 135-item session (SciEntsBank), per source tree."""
    import subprocess

    source = DATA / "scientsbank" / "train.csv"
    print("| source tree | items | embedding stage, cached: best s / median s |")
    print("| --- | ---: | --- |")
    for tree in trees:
        with tempfile.TemporaryDirectory(prefix="parm-items-") as folder:
            env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()), PARM_CACHE_DIR=folder)
            done = subprocess.run(
                [sys.executable, "-c", ITEMS_SNIPPET, str(source), str(rounds)],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
        count, best, median = done.stdout.split()[-3:]
        print(f"| {tree} | {count} | {float(best):.3f} / {float(median):.3f} | ({load()})")


# -- --store ----------------------------------------------------------------------------------
def store(n: int) -> None:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, 384)).astype(np.float32)
    keys = [hashlib.sha256(f"answer {i}".encode()).digest() for i in range(n)]
    print(f"| layout, N = {n:,} | write s | read and verify s | mark used s |")
    print("| --- | ---: | ---: | ---: |")
    for name, layout in (("one SQLite database", _sqlite), ("a file per answer", _files),
                         ("one pack file and an index", _pack)):  # fmt: skip
        with tempfile.TemporaryDirectory(dir=Path.home()) as folder:
            write, read, mark = layout(Path(folder), keys, vectors)
        print(f"| {name} | {write:.2f} | {read:.2f} | {mark:.2f} | ({load()})", flush=True)


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _sqlite(folder: Path, keys, vectors):
    from engine.embedding.cache.answers import open_answer_cache

    cache = open_answer_cache(folder)
    entries = [(key, "whole", vector) for key, vector in zip(keys, vectors)]
    write = timed_call(lambda: cache.keep(entries, 1 << 40))
    cache.conn.execute("UPDATE answers SET used = 0")
    started = time.perf_counter()
    found, _ = cache.find(keys, ("whole",))
    both = time.perf_counter() - started
    mark = timed_call(lambda: cache.conn.execute("UPDATE answers SET used = 1"))
    assert len(found) == len(keys)
    cache.close()
    return write, both - mark, mark


def _files(folder: Path, keys, vectors):
    def write_all():
        for key, vector in zip(keys, vectors):
            name = key.hex()
            sub = folder / name[:2]
            sub.mkdir(exist_ok=True)
            data = vector.tobytes()
            (sub / f"{name}.tmp").write_bytes(_sha(data) + data)
            os.replace(sub / f"{name}.tmp", sub / name)

    def read_all():
        for key in keys:
            raw = (folder / key.hex()[:2] / key.hex()).read_bytes()
            assert _sha(raw[32:]) == raw[:32]
            np.frombuffer(raw[32:], np.float32)

    def mark_all():
        for key in keys:
            os.utime(folder / key.hex()[:2] / key.hex())

    return timed_call(write_all), timed_call(read_all), timed_call(mark_all)


def _pack(folder: Path, keys, vectors):
    def write_all():
        with open(folder / "pack.bin", "wb") as handle:
            handle.write(vectors.tobytes())
        conn = sqlite3.connect(folder / "index.sqlite")
        conn.execute("CREATE TABLE k (key BLOB PRIMARY KEY, row INT, sha BLOB)")
        rows = ((key, k, _sha(v.tobytes())) for k, (key, v) in enumerate(zip(keys, vectors)))
        conn.executemany("INSERT INTO k VALUES (?,?,?)", rows)
        conn.commit()
        conn.close()

    def read_all():
        packed = np.fromfile(folder / "pack.bin", np.float32).reshape(-1, 384)
        conn = sqlite3.connect(folder / "index.sqlite")
        for row, sha in conn.execute("SELECT row, sha FROM k"):
            assert _sha(packed[row].tobytes()) == sha
        conn.close()

    return timed_call(write_all), timed_call(read_all), 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rerun", action="store_true")
    parser.add_argument("--duplicates", action="store_true")
    parser.add_argument("--essays", type=int, default=0)
    parser.add_argument("--store", type=int, default=0)
    parser.add_argument("--items", nargs="+", metavar="TREE", help="source trees to compare")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, {load()} at start", flush=True)
    if args.store:
        store(args.store)
    if args.items:
        items(args.items)
    if args.duplicates:
        duplicates()
    if args.essays:
        essays(args.essays)
    if args.rerun:
        rerun()


if __name__ == "__main__":
    main()
