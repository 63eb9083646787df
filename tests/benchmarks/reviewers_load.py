"""Several reviewers deciding one review at once: each a process with its own decision store on
one database, each deciding its own shuffled share of the responses (so every reviewer decides a
response at most once, and many responses are decided by several), then the check that every
decision made is in the database exactly once, with its reviewer. Used by
tests/test_reviewers_at_once.py (a few processes) and bench_reviewers.py (ten reviewers, 1,000
decisions each)."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
import time
from pathlib import Path

import numpy as np

CONTEXT = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
ACTIONS = ("keep", "unsure", "change")


def responses_of(n: int):
    from engine.input.responses import Responses

    return Responses(texts=[f"answer {i}" for i in range(n)], scores=np.arange(n) % 3,
                     labels=("0", "1", "2"), ids=[f"S{i:05d}" for i in range(n)],
                     rows=np.arange(1, n + 1))  # fmt: skip


def decide(source: str, database: str, reviewer: str, n: int, count: int, seed: int, out) -> None:
    """One reviewer: `count` decisions on distinct responses of `n`, drawn at random; what was
    made ((row, action, new score, decided_at) each) goes to the queue `out`."""
    from engine.saved.decisions import open_store

    rng = np.random.default_rng(seed)
    responses = responses_of(n)
    made = []
    with open_store(source, responses, Path(database), reviewer=reviewer) as store:
        for i in rng.permutation(n)[:count].tolist():
            action = ACTIONS[int(rng.integers(3))]
            score = str((int(responses.scores[i]) + 1) % 3) if action == "change" else None
            row = int(responses.rows[i])
            store.here(row)
            found = store.record(row, responses.ids[i], responses.texts[i], action, score)
            made.append((row, action, score, found.decided_at))
            store.changed_elsewhere()  # as the review does every few seconds
    out.put((reviewer, made))


def run(folder: Path, reviewers: int, count: int, n: int) -> dict:
    """Every reviewer at once; returns what was made, what the database holds and the seconds."""
    source, database = folder / "answers.csv", folder / "decisions.sqlite3"
    source.write_text("id,answer,score\n")
    queue = CONTEXT.Queue()
    started = time.perf_counter()
    workers = [CONTEXT.Process(target=decide, args=(str(source), str(database), f"reviewer{k}",
                                                    n, count, k, queue))
               for k in range(reviewers)]  # fmt: skip
    for worker in workers:
        worker.start()
    made = dict(queue.get(timeout=600) for _ in workers)
    for worker in workers:
        worker.join(timeout=60)
    seconds = time.perf_counter() - started
    return {"made": made, "held": held(database), "seconds": seconds,
            "codes": [w.exitcode for w in workers]}  # fmt: skip


def held(database: Path) -> list[tuple]:
    """(reviewer, row, action, new score, decided_at) of every decision the database holds, the
    current ones and those kept beside them."""
    with sqlite3.connect(database) as conn:
        query = "SELECT reviewer, row, action, new_score, decided_at FROM {}"
        return (conn.execute(query.format("decisions")).fetchall()
                + conn.execute(query.format("conflicts")).fetchall())  # fmt: skip


def problems(found: dict) -> list[str]:
    """What the check finds wrong: a decision missing, one held twice, one held under another
    reviewer, a process that failed."""
    out = [f"a reviewer process ended with {code}" for code in found["codes"] if code != 0]
    held_rows = found["held"]
    keys = [(who, row, at) for who, row, _, _, at in held_rows]
    if len(keys) != len(set(keys)):
        out.append(f"{len(keys) - len(set(keys))} decision(s) held twice")
    index = {(who, row, at): (action, score) for who, row, action, score, at in held_rows}
    for reviewer, made in found["made"].items():
        for row, action, score, at in made:
            kept = index.get((reviewer, row, at))
            if kept is None:
                out.append(f"{reviewer}'s decision on row {row} at {at} is missing")
            elif kept != (action, score):
                out.append(f"{reviewer}'s decision on row {row} is held as {kept}")
    extra = len(held_rows) - sum(len(m) for m in found["made"].values())
    if extra > 0:
        out.append(f"{extra} decision(s) held that no reviewer made (or another's)")
    return out
