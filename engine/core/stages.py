"""The stages of a run, as report.json's `timings_seconds` names them, and `StageTimer`, the one
way a stage's wall seconds are taken: `with timer.stage("severity"): ...`.

A run's stages happen one after another, so the named stages of a run made in one process add
up to at most its total (what they leave over is the glue between them: warnings, the rater
table, the figures of several reads). Where items run on several worker processes each stage is
summed over the items (engine.runners), so the stages can add up to more than the wall total;
so can an item whose checks ran on a helper process beside its severity (engine.core.machine.helper:
each stage is its own seconds).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

# Every stage of a run, in the order it happens. ITEM_STAGES: each item's own (the session
# sums them over its items); WHERE_RUN: named only where the run had them to do.
READING, LOADING, EMBEDDING, OUTPUTS, TOTAL = (
    "reading",
    "loading_model",
    "embedding",
    "outputs",
    "total",
)
ITEM_STAGES = ("neighbours", "tuning", "checks", "severity", "raters", "reads")
SESSION_MODEL = "session_model"
STAGES = (READING, LOADING, EMBEDDING, *ITEM_STAGES, SESSION_MODEL, OUTPUTS, TOTAL)
WHERE_RUN = ("raters", "reads", SESSION_MODEL)
# What each stage holds, for the report.json schema and the docs.
MEANINGS = {
    READING: "reading the file and checking it under the settings (its items and scores)",
    LOADING: "loading the embedding model (0 when it was loaded already or not needed)",
    EMBEDDING: "embedding the answers (the cache's hits cost nearly nothing)",
    "neighbours": "finding each answer's nearest neighbours (the graph)",
    "tuning": "the paper's search over K and p",
    "checks": "near-duplicates, the bootstrap intervals and the cross-fitted figures",
    "severity": "the review queue's out-of-fold severity",
    "raters": "each read's expected score from the other raters (with a rater column)",
    "reads": "the text's evidence on answers read more than once",
    SESSION_MODEL: "the session model, fitted once over every item's reads (where it is fitted)",
    OUTPUTS: "making the output set's files (report.json itself excepted)",
    TOTAL: "the whole run, from reading the file to its outputs",
}


class StageTimer:
    """Wall seconds per stage of one run, kept in `timings` (a stage timed twice adds up)."""

    def __init__(self, timings: dict[str, float] | None = None):
        self.timings: dict[str, float] = {} if timings is None else timings
        self.started = time.perf_counter()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage `name` (also when it raises: the seconds it took)."""
        mark = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - mark)

    def add(self, name: str, seconds: float) -> None:
        self.timings[name] = self.timings.get(name, 0.0) + seconds

    def move(self, source: str, target: str, seconds: float) -> None:
        """Count `seconds` of stage `source` as stage `target` (the model's loading happens
        inside the embedding call, which says how long it took)."""
        self.add(source, -seconds)
        self.add(target, seconds)

    def forget(self, name: str) -> None:
        """Leave out a stage the run had nothing to do in (a WHERE_RUN stage)."""
        self.timings.pop(name, None)

    def elapsed(self) -> float:
        """Seconds since the timer started."""
        return time.perf_counter() - self.started

    def rounded(self) -> dict[str, float]:
        """The timings to the millisecond, the named stages in the order they happen first."""
        return in_order({name: round(max(0.0, s), 3) for name, s in self.timings.items()})


def in_order(timings: dict[str, float]) -> dict[str, float]:
    """The same timings, the named stages in STAGES' order, then any others."""
    known = [name for name in STAGES if name in timings]
    return {name: timings[name] for name in known + [n for n in timings if n not in STAGES]}


def with_stage(timings: dict[str, float], name: str, seconds: float) -> dict[str, float]:
    """A run's timings with a stage that came after its total was taken (the outputs), the
    total grown by it; as they are for a run without a total (one restored from its saved
    run, whose stages are not kept)."""
    if TOTAL not in timings:
        return timings
    total = round(timings[TOTAL] + seconds, 3)
    return in_order({**timings, name: round(seconds, 3), TOTAL: total})
