"""`run_session`: the one call both front ends make. A scoring session is a file of one or many
items (questions); each item is audited on its own by `engine.pipeline.run_audit` (its own
graph, tuning and parameters: answers to different questions are never neighbours), in turn or
on worker processes, and then the raters are compared across items.

Embedding happens here, in the parent, once per item (cached per item), so worker processes
never load a model; each item is then a unit of plain, picklable inputs
(`audit_item`), which is the seam where a cluster engine could later take the items.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass, field

import numpy as np

from engine.audit.combined import ReviewSet, review_set
from engine.audit.items import ItemSummary, item_overview
from engine.audit.raters import RaterReport, rater_report
from engine.core.progress import CancelToken, ProgressCallback, ProgressEvent, Reporter
from engine.core.workers import run_units
from engine.input.config import AuditConfig
from engine.input.items import Items
from engine.pipeline import AuditResult, check_selection_metric, embed_responses, run_audit


@dataclass
class SessionResult:
    """Every audited item's `AuditResult` (in the order of `items.audited`), the items that were
    skipped and why, and the rater table (None without a rater column)."""

    items: Items
    results: list[AuditResult]
    config: AuditConfig
    raters: RaterReport | None = None
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def by_item(self) -> bool:
        """Whether the file was split by an item column (else it is one item)."""
        return self.items.by_item

    @property
    def overview(self) -> list[ItemSummary]:
        return item_overview(self.results, self.items.skipped)

    @functools.cached_property
    def review(self) -> ReviewSet:
        """One review queue over every audited item."""
        return review_set(self.results, self.config)

    @property
    def flagged(self) -> np.ndarray:
        """(N,) over every item's responses, in the order of `review`."""
        return self.review.flagged

    @property
    def n_responses(self) -> int:
        return sum(len(result.responses) for result in self.results)

    @property
    def run_id(self) -> str:
        return self.results[0].run_id


def audit_item(task: tuple, progress: ProgressCallback, cancel: CancelToken) -> AuditResult:
    """One item's audit from plain inputs: (responses, embedded vectors or tokens, the facts
    about their embedding, config). Runs in this process or in a worker process."""
    responses, embedded, info, config = task
    return run_audit(responses, config, progress, cancel, embedded, info)


def run_session(
    items: Items,
    config: AuditConfig,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
    embeddings: list[np.ndarray] | None = None,
) -> SessionResult:
    """Audit every item of `items` with `config`, then compare the raters.

    embeddings: optional precomputed unit vectors, one array per audited item (see
    engine.embedding.precomputed.load_for_items). `config.jobs` > 1 audits items on that many
    worker processes. Progress: each item's own stages (messages name the item when there are
    several) and stage "items" (items finished of all); Cancelled when `cancel` is set.
    """
    reporter = Reporter(progress, cancel)
    started = time.perf_counter()
    audited = items.audited
    for responses in audited:  # before any embedding: a setting that cannot work stops at once
        check_selection_metric(config, responses)
    tasks, loading = [], 0.0
    for k, responses in enumerate(audited):
        given = None if embeddings is None else embeddings[k]
        embedded, info = embed_responses(responses, config, _for_item(reporter, items, k), given)
        # The model loads once, for the first item that needs it (stage "model").
        loading += info.pop("loading_seconds", 0.0)
        tasks.append((responses, embedded, info, config))
    embedding_seconds = time.perf_counter() - started - loading
    finished = [0]

    def forward(k: int, event: ProgressEvent) -> None:
        if event.stage == "done":
            finished[0] += 1
            reporter("items", finished[0], len(audited), f"{_name(items, k)} done")
        elif reporter.callback is not None:
            reporter.callback(_named(event, items, k))

    reporter("items", 0, len(audited), f"{len(audited)} item(s)")
    results = run_units(audit_item, tasks, config.jobs, reporter, forward)
    for result in results[1:]:  # one run: decisions and saved sessions name it once
        result.run_id = results[0].run_id
    timings = {"loading_model": round(loading, 3), "embedding": round(embedding_seconds, 3)}
    if not items.by_item:  # report.json of a one-item file is that item's report
        results[0].timings["loading_model"] = round(loading, 3)
        results[0].timings["total"] = round(results[0].timings["total"] + loading, 3)
    session = session_result(items, results, config, timings)
    session.timings["total"] = round(time.perf_counter() - started, 3)
    reporter("done", 1, 1, "audit finished")
    return session


def session_result(
    items: Items, results: list[AuditResult], config: AuditConfig, timings: dict | None = None
) -> SessionResult:
    """A session from its items' results (a run's, or results restored from a saved session):
    the rater table and the warnings are worked out from them."""
    raters = rater_report(results)
    return SessionResult(
        items, results, config, raters, dict(timings or {}), _warnings(items, results)
    )


def _name(items: Items, k: int) -> str:
    item = items.audited[k].item
    return f"item {item}" if item is not None else "the file"


def _named(event: ProgressEvent, items: Items, k: int) -> ProgressEvent:
    """An item's event, its message prefixed with the item when the file has several."""
    if not items.by_item or len(items.audited) == 1:
        return event
    return dataclasses.replace(event, message=f"{_name(items, k)}: {event.message}")


def _for_item(reporter: Reporter, items: Items, k: int) -> Reporter:
    """A reporter for item k's embedding, whose messages name the item."""
    if reporter.callback is None:
        return reporter
    outer = reporter.callback
    return Reporter(lambda event: outer(_named(event, items, k)), reporter.token)


def _warnings(items: Items, results: list[AuditResult]) -> list[str]:
    """One item: its own warnings. Many: the settings' and the file's warnings once, then each
    item's own, named."""
    if not items.by_item:
        return list(results[0].warnings)
    notes = list(results[0].config.warnings) + list(items.warnings)
    for result in results:
        given = set(result.responses.warnings) | set(result.config.warnings)
        own = [f"Item '{result.responses.item}': {w}" for w in result.warnings if w not in given]
        notes += [w for w in own if w not in notes]
    for skipped in items.skipped:
        notes.append(f"Item '{skipped.item}' was not audited: {skipped.reason}")
    return notes


def as_session(result) -> SessionResult:
    """A SessionResult as it is; one item's AuditResult as a session of that one item."""
    if isinstance(result, SessionResult):
        return result
    responses = result.responses
    items = Items(responses.source, [responses], [], responses.file_rows, responses.warnings)
    return session_result(items, [result], result.config, result.timings)
