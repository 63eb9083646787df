"""`run_session`: the one call both front ends make. A scoring session is a file of one or many
items (questions); each item is audited on its own by `engine.pipeline.run_audit` (its own
graph, tuning and parameters: answers to different questions are never neighbours), in turn or
on worker processes; where answers were read twice, every item's severity is then relearned
from what those reads teach (engine.audit.queue.read_severity, pooled over the items), the session
model is fitted once over every item's reads where the settings call for it
(engine.model.session.figures), and the raters are compared across items.

Each item is a unit of plain, picklable inputs (`ItemTask`, run by `audit_item`), run where
the settings say (engine.runners: this process, worker processes, a Dask cluster). Running
here or on worker processes, the answers are embedded in the parent first, each distinct answer
of all items once (kept in the answer cache), so worker processes never load a model; on a Dask
cluster each unit embeds its own answers on its worker (on the worker's GPU when it has one), so
the parent never loads a model. With items run here, on two cores, a run with several items to
audit shares them with a helper process (engine.core.machine.helper, started before the
embedding so that its imports run while the model loads): about half the items' answers are
audited there, the rest here, and the session model sends it half its folds; the results are
the same bits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import cast

import numpy as np

from engine.audit.queue.read_severity import learned_severity
from engine.core.machine.helper import Helper, helper_wanted
from engine.core.progress import DONE, ITEMS, CancelToken, ProgressCallback, ProgressEvent, Reporter
from engine.core.stages import EMBEDDING, LOADING, SESSION_MODEL, TOTAL, StageTimer, in_order
from engine.embedding.sentence import Reading, embed_text_lists
from engine.embedding.vectors import Embedded
from engine.input.items import Items
from engine.input.responses import Responses
from engine.input.settings.config import AuditConfig
from engine.input.several_reads import LONG
from engine.model.session.cross_fit import SessionOptions
from engine.model.session.figures import (
    HELPER_READS,
    SessionModelFigures,
    check_session_memory,
    session_model_figures,
    wanted,
)
from engine.pipeline import check_selection_metric, embed_responses, run_audit
from engine.results.item import AuditResult, new_run_id
from engine.results.session import SessionResult, reused_words, session_result
from engine.runners import runner_for


@dataclass(frozen=True)
class ItemTask:
    """One item's audit as a unit of plain, picklable inputs: its responses, their embedding
    (done in the parent, or given) and the session's settings. embedded None: the unit embeds
    the answers itself, where it runs (a cluster's worker)."""

    responses: Responses
    embedded: Embedded | None
    config: AuditConfig
    run_id: str


def audit_item(task: ItemTask, progress: ProgressCallback, cancel: CancelToken) -> AuditResult:
    """One item's audit. Runs in this process or in a worker process."""
    return run_audit(task.responses, task.config, progress, cancel, task.embedded, task.run_id)


def run_session(
    items: Items,
    config: AuditConfig,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
    embeddings: list[np.ndarray] | None = None,
    reused: Sequence[AuditResult | None] | None = None,
    keep: Callable[[int, AuditResult], None] | None = None,
    reused_model: SessionModelFigures | None = None,
    keep_model: Callable[[SessionModelFigures], None] | None = None,
) -> SessionResult:
    """Audit every item of `items` with `config`, then compare the raters.

    embeddings: optional precomputed unit vectors, one array per audited item (see
    engine.embedding.precomputed.load_for_items). `config.jobs` > 1 audits items on that many
    worker processes; a scheduler (`config.scheduler`, else DASK_SCHEDULER_ADDRESS) on that
    Dask cluster. Progress: each item's own stages (messages name the item when there are
    several), stage "items" (items finished of all) and, on a cluster, stage "cluster";
    Cancelled when `cancel` is set; ClusterError when the cluster cannot be used.
    reused: per audited item, its audit kept from an earlier run of the same inputs and
    settings (engine.saved.items, looked up by engine.workspace.run), or None: those items are
    not audited again (nor embedded); keep(k, result) is called with each item audited here.
    reused_model: the session model's figures kept from an earlier run of these items under the
    same session model settings, used when every item is reused; keep_model(figures) is called
    with a session model fitted here.
    """
    reporter = Reporter(progress, cancel)
    timer = StageTimer()
    run_id = new_run_id()  # one run: decisions and saved sessions name it once
    audited = items.audited
    for responses in audited:  # before any embedding: a setting that cannot work stops at once
        check_selection_metric(config, responses)
    check_session_memory(audited, config.session_model, config.cross_fit_folds, config.score_order)
    runner = runner_for(config)
    kept = _as_this_run(reused, run_id) if reused is not None else [None] * len(audited)
    todo = [k for k, result in enumerate(kept) if result is None]
    # Started before the embedding: its imports run while the model loads.
    helper = _helper_for(runner, config, [len(audited[k]) for k in todo])
    try:
        return _run(items, config, reporter, timer, run_id, embeddings, runner, kept, todo,
                    keep, reused_model, keep_model, helper)  # fmt: skip
    finally:
        if helper is not None:
            helper.close()


def _run(items, config, reporter, timer, run_id, embeddings, runner, kept, todo, keep,
         reused_model, keep_model, helper) -> SessionResult:  # fmt: skip
    audited = items.audited
    if len(todo) < len(audited):
        reporter(
            ITEMS, 0, len(audited), f"reused {reused_words(len(audited) - len(todo), len(audited))}"
        )
    if runner.embeds_here:
        with timer.stage(EMBEDDING):
            tasks, loading = _embedded_here(items, config, reporter, embeddings, run_id, todo)
        timer.move(EMBEDDING, LOADING, loading)
    else:  # the units embed where they run (or get the given vectors)
        tasks = [
            ItemTask(audited[k], None if embeddings is None
                     else Embedded.precomputed(embeddings[k]), config, run_id)
            for k in todo
        ]  # fmt: skip
    finished = [len(audited) - len(todo)]

    def forward(t: int, event: ProgressEvent) -> None:
        k = todo[t]
        if event.stage == DONE:
            finished[0] += 1
            reporter(ITEMS, finished[0], len(audited), f"{_name(items, k)} done")
        elif reporter.callback is not None:
            reporter.callback(_named(event, items, k))

    reporter(ITEMS, finished[0], len(audited), f"{len(audited)} item(s)")
    names = [_name(items, k) for k in todo]
    sizes = [len(task.responses) for task in tasks]
    if helper is not None and len(tasks) >= 2:
        audits = _shared(helper, tasks, sizes, reporter, forward)
    else:
        audits = runner.run(audit_item, tasks, reporter, forward, names, sizes) if tasks else []
    for k, result in zip(todo, audits):
        kept[k] = result
        if keep is not None:
            keep(k, result)
    # Every place is filled now: reused, or audited above.
    results = learn_from_reads(cast("list[AuditResult]", kept))
    loading = timer.timings.get(LOADING, 0.0)
    timings = runner.timings(results, loading, timer.timings.get(EMBEDDING, 0.0))
    if runner.embeds_here and not items.by_item:  # the item's own timings say the whole run's
        own = results[0].timings
        results[0] = replace(results[0], timings=in_order(
            {**own, LOADING: round(loading, 3), TOTAL: round(own.get(TOTAL, 0.0) + loading, 3)}))  # fmt: skip
    with timer.stage(SESSION_MODEL):
        if reused_model is not None and not todo:
            modelled = reused_model
        else:
            modelled = _session_model(results, config, reporter, helper)
            if modelled is not None and keep_model is not None:
                keep_model(modelled)
    if modelled is not None:
        timings[SESSION_MODEL] = round(timer.timings[SESSION_MODEL], 3)
    session = session_result(items, results, config, timings, modelled)
    session.reused_items = tuple(audited[k].item for k in range(len(audited)) if k not in todo)
    session.reused_model = modelled is not None and modelled is reused_model
    session.timings = in_order({**session.timings, TOTAL: round(timer.elapsed(), 3)})
    reporter(DONE, 1, 1, "audit finished")
    return session


def _as_this_run(reused: Sequence[AuditResult | None], run_id: str) -> list[AuditResult | None]:
    """Audits kept from an earlier run, as this run's (its run id; no stage timed: nothing
    ran)."""
    return [None if r is None else replace(r, run_id=run_id, timings={}) for r in reused]


def learn_from_reads(results: list[AuditResult]) -> list[AuditResult]:
    """The items' results with each severity learned from what the session's answers read twice
    teach about disagreement (engine.audit.queue.read_severity), pooled over the items so the
    queue's severities are on one scale; as they were where too few answers were read twice
    (single-read sessions)."""
    read, differs = [], []
    for result in results:
        n, reads = len(result.responses), result.responses.reads
        twice = np.zeros(n, bool) if reads is None else reads.per_answer(n) >= 2
        read.append(twice)
        differs.append(twice & ~result.confirmed)
    learned = learned_severity(
        [r.severity for r in results],
        [r.responses.scores for r in results],
        read,
        differs,
        results[0].config.seed,
    )
    if not learned:
        return list(results)
    return [replace(result, severity=severity) for result, severity in zip(results, learned)]


def _session_model(
    results: list[AuditResult], config: AuditConfig, reporter: Reporter, helper=None
):
    """The session model's figures over every item's reads (engine.model.session.figures), or
    None where the settings or the file do not call for it."""
    responses = [result.responses for result in results]
    if not wanted(config.session_model, responses, config.cross_fit_folds):
        return None
    graphs = [result.graph for result in results if result.graph is not None]
    if len(graphs) < len(results):
        return None
    top_k = tuple(k for k in config.top_k_values if k is not None) or SessionOptions.top_k_values
    reads = sum(len(r.reads) if r.reads is not None else len(r) for r in responses)
    return session_model_figures(
        responses,
        graphs,
        top_k,
        config.cross_fit_folds,
        config.seed,
        reporter,
        config.score_order,
        wide=config.reads != LONG,
        helper=helper or helper_wanted(reads, config.jobs, config.scheduler, HELPER_READS),
    )


# A session's items share a helper process (engine.core.machine.helper) when this many of them
# are audited, or fewer with this many answers between them: below that the items take a few
# seconds and the helper's imports would cost about what it saves.
HELPER_ITEMS, HELPER_ITEM_ANSWERS = 8, 2000


def _helper_for(runner, config: AuditConfig, sizes: list[int]) -> Helper | None:
    """A helper process for this run: half the items to audit (`_shared`) and half the session
    model's folds, on two cores where items run here one after another."""
    enough = len(sizes) >= HELPER_ITEMS or sum(sizes) >= HELPER_ITEM_ANSWERS
    if runner.name != "here" or len(sizes) < 2 or not enough:
        return None
    # The size was judged just above: helper_wanted is asked about the machine and the settings.
    if not helper_wanted(sum(sizes), config.jobs, config.scheduler, smallest=0):
        return None
    return Helper(("engine.session", "engine.model.session.summary"))


def audit_items(tasks: list[ItemTask]) -> list[AuditResult]:
    """`audit_item` of each task in turn, in the helper process (no progress: the parent says
    when they are done)."""
    return [audit_item(task, lambda event: None, CancelToken()) for task in tasks]


def their_share(sizes: list[int]) -> list[int]:
    """The tasks the helper audits: the largest first, each to whichever side has fewer answers
    so far (about half the work each way), in the tasks' order."""
    loads, theirs = [0, 0], []
    for t in sorted(range(len(sizes)), key=lambda t: (-sizes[t], t)):
        side = 0 if loads[0] <= loads[1] else 1
        loads[side] += sizes[t]
        if side == 1:
            theirs.append(t)
    return sorted(theirs)


def _shared(helper: Helper, tasks: list[ItemTask], sizes: list[int], reporter: Reporter,
            forward) -> list[AuditResult]:  # fmt: skip
    """Every task's audit, the helper's share there (`their_share`) while this process audits
    the rest: the same results, bit for bit, as one after another here."""
    there = their_share(sizes)
    pending = helper.submit(audit_items, [tasks[t] for t in there])
    results: list[AuditResult | None] = [None] * len(tasks)
    theirs_set = set(there)
    for t in (t for t in range(len(tasks)) if t not in theirs_set):
        results[t] = audit_item(tasks[t], partial(forward, t), reporter.token)
    # Audited here instead where the helper died (e.g. out of memory), with their progress.
    found, seconds = helper.result_or(
        pending,
        lambda: [audit_item(tasks[t], partial(forward, t), reporter.token) for t in there],
        reporter.check,
    )
    if seconds is not None:  # made there: said done now
        for t in there:
            forward(t, ProgressEvent(DONE, 1, 1, "audit finished"))
    for t, result in zip(there, cast("list[AuditResult]", found)):
        results[t] = result
    return cast("list[AuditResult]", results)


def _embedded_here(items: Items, config: AuditConfig, reporter: Reporter, embeddings,
                   run_id: str, todo: list[int]):  # fmt: skip
    """The ItemTask of every item in `todo`, embedded in this process (or with the given
    vectors), and the seconds spent loading the model (once, for the first item that needs it:
    stage "model"). Sentence vectors of all those items are made in one call, so an answer
    that several items share is embedded once even when the cache cannot be written."""
    audited = items.audited
    if not todo:
        return [], 0.0
    if embeddings is None and not config.late_interaction:
        lists = [audited[k].texts for k in todo]
        made = embed_text_lists(lists, Reading.of(config), reporter)
        tasks = [ItemTask(audited[k], Embedded(*made[t]), config, run_id)
                 for t, k in enumerate(todo)]  # fmt: skip
        return tasks, sum(facts.loading_seconds for _, facts in made)
    tasks, loading = [], 0.0
    for k in todo:
        responses = audited[k]
        given = None if embeddings is None else Embedded.precomputed(embeddings[k])
        embedded = embed_responses(responses, config, _for_item(reporter, items, k), given)
        loading += embedded.facts.loading_seconds
        tasks.append(ItemTask(responses, embedded, config, run_id))
    return tasks, loading


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
