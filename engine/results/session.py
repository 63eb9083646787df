"""`SessionResult`: what a run of a file produced, the one type front ends, outputs and saved
sessions hand around. engine.session.run_session makes it; engine.saved restores it."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

import numpy as np

from engine.audit.raters.table import RaterReport, rater_report
from engine.audit.reads.reads_audit import ReadsAudit, audit_reads
from engine.core.run_warnings import RunWarning
from engine.embedding.cache.entries import CACHE_NOTE
from engine.input.items import Items
from engine.input.settings.config import AuditConfig
from engine.model.session.figures import SessionModelFigures
from engine.results.item import AuditResult
from engine.results.lead import lead_warnings
from engine.results.overview import ItemSummary, item_overview
from engine.results.review import ReviewSet, review_set


def reused_words(reused: int, items: int) -> str:
    """'2 of 3 items unchanged since an earlier run' (the progress line and the CLI say it)."""
    return f"{reused:,} of {items:,} item{'s' if items != 1 else ''} unchanged since an earlier run"


@dataclass
class SessionResult:
    """Every audited item's `AuditResult` (in the order of `items.audited`), the items that were
    skipped and why, and the rater table (None without a rater column). A file without an item
    column is a session of one item. reads: the agreement, consensus and third-read queue of a
    file whose answers are read more than once (None where every answer is read once). config:
    the settings the session was run with (each item's own, with K values its size does not
    allow left out, is its result's config); session_model: the session model's figures (None
    where the run did not fit it)."""

    items: Items
    results: list[AuditResult]
    config: AuditConfig
    raters: RaterReport | None = None
    timings: dict[str, float] = field(default_factory=dict)
    # Each with its kind and item (engine.core.run_warnings): front ends print one line per
    # kind, report.json and the output set's warnings file have them all.
    warnings: list[RunWarning] = field(default_factory=list)
    reads: ReadsAudit | None = None
    session_model: SessionModelFigures | None = None
    # The items whose audit an earlier run with the same inputs and settings had made, used
    # again instead of audited (engine.saved.items); empty where every item was audited.
    reused_items: tuple[str | None, ...] = ()
    # The session model's figures were an earlier run's over the same items and settings.
    reused_model: bool = False

    @property
    def by_item(self) -> bool:
        """Whether the file was split by an item column (else it is one item)."""
        return self.items.by_item

    @functools.cached_property
    def overview(self) -> list[ItemSummary]:
        """Each item's summary, made once (report.html asks for it twice an item: on Mohler's
        80 items 160 times at 6.7 ms). A changed session is a new one (dataclasses.replace),
        made with its own."""
        return item_overview(self.results, self.items.skipped, self.session_model)

    @property
    def second_reads(self) -> bool:
        """Whether some item has its audited read compared with a second read (its overview's
        human_exact and human_kappa): the items tables' reads column is there only then."""
        return any(s.human_kappa is not None for s in self.overview)

    @functools.cached_property
    def review(self) -> ReviewSet:
        """One review queue over every audited item (one item: a set of that item)."""
        return review_set(self.results, self.config.score_order, self.reads)

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


def session_result(
    items: Items,
    results: list[AuditResult],
    config: AuditConfig,
    timings: dict | None = None,
    session_model: SessionModelFigures | None = None,
) -> SessionResult:
    """A session from its items' results (a run's, or results restored from a saved session)
    and the session model's figures where it was fitted: the rater table, the warnings and the
    figures of several reads (engine.audit.reads.reads_audit, from the reads and each result's text
    evidence, so a restored session gets the run's figures) are worked out from them."""
    raters = rater_report(results)
    reads = audit_reads(
        [result.responses for result in results],
        [None if r.cross_fit is None else r.cross_fit.proba for r in results],
        [result.read_evidence for result in results],
        config.seed,
    )
    if raters is not None and reads is not None:
        raters = dataclasses.replace(raters, reliability=reads.reliability())
    return SessionResult(
        items,
        results,
        config,
        raters,
        dict(timings or {}),
        _warnings(items, results),
        reads,
        session_model,
    )


def single_item_session(result: AuditResult) -> SessionResult:
    """The session of a file of one item (no item column) whose audit is `result`, as
    run_session gives it: the rater table and the warnings are worked out from the result."""
    responses = result.responses
    items = Items(responses.source, [responses], [], responses.file_rows, responses.warnings)
    return session_result(items, [result], result.config, result.timings)


def _lead_row(result: AuditResult) -> tuple:
    responses = result.responses
    crossed = None if result.cross_fit is None else result.cross_fit.metrics["kappa"]
    name = None if responses.item is None else str(responses.item)
    return name, responses.score_counts.tolist(), result.metrics["kappa"], crossed


def _warnings(items: Items, results: list[AuditResult]) -> list[RunWarning]:
    """One item: its own warnings. Many: the settings' and the file's warnings once, then each
    item's own, with its item. Then the headline's: a figure that leads memorised, items too
    small for their scores (engine.results.lead)."""
    lead = [RunWarning.about(w) for w in lead_warnings([_lead_row(r) for r in results])]
    if not items.by_item:
        return [RunWarning.about(w) for w in results[0].warnings] + lead
    notes = [RunWarning.about(w) for w in results[0].config.warnings] + list(items.notes)
    for result in results:
        given = set(result.responses.warnings) | set(result.config.warnings)
        item = result.responses.item
        for w in result.warnings:
            # The embedding cache's warnings name their folder or file: said once, not per item.
            note = RunWarning.about(w, None if w.startswith(CACHE_NOTE) else item)
            if w not in given and note not in notes:
                notes.append(note)
    notes += [RunWarning.about(f"Not audited: {s.reason}", s.item) for s in items.skipped]
    return notes + lead
