"""`run_audit`: one item's audit (engine.session.run_session runs it for every item of a file). It
runs the stages in the order the data flows: embedding, the neighbour graph (found once), tuning
K and p, then the checks of the selected fit and the review queue's severity (for an item of
engine.core.machine.helper.MIN_ANSWERS answers or more on two cores, side by side: the checks on a
helper process, cross-fitting from the moment the graph is found, beside tuning; the same
bits)."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import replace

import numpy as np

from engine.audit import intervals
from engine.audit.queue import duplicates, evidence, severity
from engine.audit.queue.calibration import calibrated
from engine.audit.queue.second_rater import second_rater
from engine.audit.raters.every_read import every_read
from engine.audit.raters.expectation import rater_left_out_proba
from engine.audit.reads.session_reads import read_evidence, several_reads
from engine.core.errors import ConfigError, EmbeddingError
from engine.core.machine.helper import Helper, helper_wanted, offered_result
from engine.core.progress import DONE, CancelToken, ProgressCallback, Reporter
from engine.core.stages import EMBEDDING, LOADING, TOTAL, StageTimer
from engine.embedding.blank import with_blanks
from engine.embedding.sentence import Reading, embed_text_lists
from engine.embedding.tokens import embed_tokens
from engine.embedding.vectors import Embedded, TokenEmbeddings
from engine.graph.late_interaction import late_interaction_graph, tuning_config
from engine.graph.neighbour_graph import NeighbourGraph
from engine.graph.search import build_graph
from engine.input.responses import Responses
from engine.input.settings.config import SINGLE_VECTOR, AuditConfig, fit_top_k
from engine.input.several_reads import rater_column_given
from engine.model.cross_fit import cross_fit
from engine.model.features import ItemFeatures
from engine.model.metrics import ORDINAL_METRICS
from engine.model.tuning import TuningResult, tune
from engine.results.item import AuditResult, new_run_id


def run_audit(
    responses: Responses,
    config: AuditConfig,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
    embedded: Embedded | None = None,
    run_id: str | None = None,
) -> AuditResult:
    """Run the whole PARM audit on `responses` (one item) with `config`.

    embedded: the embedding stage's output computed elsewhere (engine.session embeds every item
    before the items run; `Embedded.precomputed` wraps vectors handed in); None embeds here.
    run_id: the run this item belongs to (engine.session gives every item of a session the
    same); None: a new one.
    Raises Cancelled when `cancel` is set; ParmError subclasses for problems a user can fix.
    """
    reporter = Reporter(progress, cancel)
    check_selection_metric(config, responses)
    wanted = helper_wanted(len(responses), config.jobs, config.scheduler)
    helper = Helper((__name__,)) if wanted else None  # its imports run while this item works
    try:
        return _audit(responses, config, reporter, embedded, run_id, helper)
    finally:
        if helper is not None:
            helper.close()


def _audit(responses, config, reporter, embedded, run_id, helper) -> AuditResult:
    # K values not below N are dropped with a warning (none left: ConfigError), see config.py.
    config, k_notes = fit_top_k(config, len(responses))
    warnings = list(config.warnings) + list(responses.warnings) + k_notes
    timer = StageTimer()
    given = embedded
    with timer.stage(EMBEDDING):
        embedded = embed_responses(responses, config, reporter, given)
    earlier = 0.0
    if embedded is given:
        # Embedded before this call (in the session's parent process): its facts say how long.
        earlier = embedded.facts.seconds
        timer.timings[EMBEDDING] = earlier
    else:
        timer.move(EMBEDDING, LOADING, embedded.facts.loading_seconds)
    embedded = with_blank_answers(embedded, responses)
    with timer.stage("neighbours"):
        graph, graph_facts, tune_config = _graph(embedded, config, reporter)
    warnings += list(embedded.facts.warnings) + list(graph_facts.warnings if graph_facts else ())
    if embedded.facts.truncated:
        warnings.append(
            f"{embedded.facts.truncated} response(s) were longer than the model's input "
            "limit and were truncated before embedding."
        )
    # Cross-fitting tunes on its own folds from the graph alone: on the helper it runs beside
    # tuning (the checks that need the tuned model follow it there).
    crossing = None if helper is None else helper.submit(_cross_fit, graph, responses, tune_config)
    with timer.stage("tuning"):
        features = _item_features(graph, responses, tune_config)
        result = tune(features, tune_config, reporter, responses.ordered)
    warnings += result.warnings
    predicted = result.fitted.predicted
    # While the item's features still hold the selected graph's weights (the standard errors'):
    # cross-fitting asks them for other configurations.
    found = _evidence(graph, result)
    vectors = embedded.single_vectors()
    inputs = (graph, result, responses, tune_config, predicted)
    pending = None
    if helper is not None:
        pending = helper.submit(_tuned_checks_elsewhere, graph, responses, tune_config, predicted)
    if pending is None:
        with timer.stage("checks"):
            checks = _checks(*inputs, reporter)
    # The severity's embedding fits, then the rater expectation and the reads' evidence (which
    # need neither the severity nor the checks) are offered to the helper in that order: it
    # takes each once its checks are done, if this process has not begun it by then (the same
    # bits either way). The embedding fits first: this process fits the lexical model meanwhile
    # and needs them next; the extras it comes to only after the severity.
    with timer.stage("severity"):
        started = severity.start_severity(
            vectors, responses.scores, responses.n_classes, config.seed, reporter, helper
        )
    offered = _offer_extras(helper, vectors, graph, responses, config)
    with timer.stage("severity"):
        raw, note = _severity(vectors, result, responses, config, reporter, started)
    if pending is not None:
        assert helper is not None and crossing is not None  # both came from it
        checks = _checks_from(helper, (crossing, pending), inputs, timer, reporter)
    warnings += note
    rater_proba = _offered(
        offered["raters"], lambda: _rater_expectation(vectors, responses, reporter), timer,
        "raters", reporter,
    )  # fmt: skip
    with timer.stage("severity"):
        ranked = _on_the_scale(raw, not note, rater_proba, responses, config)
    evidence_of_text = _offered(
        offered["reads"],
        lambda: read_evidence(vectors, graph.indices, graph.similarities, responses, config.seed),
        timer, "reads", reporter,
    )  # fmt: skip
    for stage, made in (("raters", rater_proba), ("reads", evidence_of_text)):
        if made is None:
            timer.forget(stage)
    timer.timings[TOTAL] = timer.elapsed() + earlier
    reporter(DONE, 1, 1, "audit finished")
    return AuditResult(
        responses=responses,
        config=config,
        mode=graph.mode,
        graph=graph,
        tuning=result,
        predicted=predicted,
        severity=ranked,
        evidence=found,
        timings=timer.rounded(),
        embedding=embedded.facts,
        late_interaction=graph_facts,
        warnings=warnings,
        rater_proba=rater_proba,
        read_evidence=evidence_of_text,
        run_id=run_id or new_run_id(),
        **checks,
    )


def _graph(embedded: Embedded, config: AuditConfig, reporter: Reporter):
    """The neighbour graph (found once), the late-interaction graph's facts (None for
    single-vector) and the config tuning uses: similarity_top_k null means "all colbert_top_k
    candidates" in late-interaction mode (it has no dense graph)."""
    if config.late_interaction:
        # Late interaction embeds every answer's tokens (embed_responses), never one vector.
        assert isinstance(embedded.vectors, TokenEmbeddings)
        graph, facts = late_interaction_graph(embedded.vectors, config, reporter)
        return graph, facts, tuning_config(config, graph)
    return _neighbour_graph(embedded.vectors, config, reporter), None, config


def _severity(vectors, tuned: TuningResult, responses: Responses, config, reporter, started):
    """The review queue's raw severity (engine.audit.queue.severity), and a note when it had to
    fall back to 1 - p(human score) from the PARM fit because two folds were not possible.
    started: `severity.start_severity`'s (its folds, and its embedding fits as offered to the
    item's helper process), None when two folds were not possible."""
    scores = responses.scores
    ranked = None
    if started is not None:
        ranked = severity.review_severity(
            vectors, responses.texts, tuned.features, scores, responses.n_classes, config.seed,
            reporter, started=started,
        )  # fmt: skip
    if ranked is not None:
        return ranked, []
    note = (
        "Too few responses per score to cross-fit the severity: it is 1 - p(human score) "
        "from the PARM fit instead."
    )
    return severity.severity(tuned.fitted.proba, scores), [note]


def _on_the_scale(raw, crossed: bool, rater_proba, responses: Responses, config: AuditConfig):
    """The queue's severity on the one scale of every item (engine.audit.queue.calibration):
    the cross-fitted raw severity of an answer read once joined, where a column of the file
    says who gave each score and names two raters or more, by the rater expectation's
    (severity.with_rater_expectation; rater_proba: one row per read), weighted more where the
    answer's rater read more of the item than the others (severity.expectation_share). Not an
    answer read twice: the other raters' model was fitted on its other read, which would vouch
    for or against it in the queue and in the figures that test the queue against the reads
    (engine.audit.queue.read_severity learns from them instead). Not where the raters are a
    wide file's score columns: every audited read is then the first column's, and the "other
    raters" are the second reads, which read_severity already learns from."""
    scores = responses.scores
    if crossed and rater_proba is not None and rater_column_given(config):
        reads, rows = every_read(responses), audited_reads(responses)
        once = np.bincount(reads.answer, minlength=len(responses)) == 1
        _, rater = np.unique(reads.rater.astype(str), return_inverse=True)
        own = np.bincount(rater)[rater[rows]]
        share = severity.expectation_share(own, len(reads) - own)
        joined = severity.with_rater_expectation(raw, np.asarray(rater_proba)[rows], scores, share)
        raw = np.where(once, joined, raw)
    return calibrated(raw, scores, responses.n_classes)


def audited_reads(responses: Responses) -> np.ndarray:
    """(N,) the row of each answer's audited read among its item's reads (engine.audit.raters.
    every_read: the rows the rater expectation has)."""
    reads = responses.reads
    if reads is None or not len(reads):
        return np.arange(len(responses))  # every_read: the answers first, in order
    first = np.flatnonzero(reads.first)
    return first[np.argsort(reads.answer[first], kind="stable")]


def _rater_expectation(vectors, responses: Responses, reporter=None):
    """(R, C+1) each read's probabilities from a model without its rater's reads, one row per
    read (engine.audit.raters.every_read.every_read; None without raters)."""
    if responses.raters is None:
        return None
    reads = every_read(responses)
    return rater_left_out_proba(
        vectors[reads.answer], reads.code, responses.n_classes, reads.rater,
        reporter or Reporter(),
    )  # fmt: skip


def _offer_extras(helper, vectors, graph, responses: Responses, config) -> dict:
    """The item's rater expectation and reads' evidence offered to its helper (engine.core.
    machine.helper.Helper.offer), where there is one and the item has them; else None."""
    offers: dict = {"raters": None, "reads": None}
    if helper is None:
        return offers
    if responses.raters is not None:
        offers["raters"] = helper.offer(_rater_expectation, vectors, responses)
    if several_reads(responses):
        offers["reads"] = helper.offer(
            read_evidence, vectors, graph.indices, graph.similarities, responses, config.seed
        )
    return offers


def _offered(offer, here, timer: StageTimer, stage: str, reporter: Reporter):
    """An offer's result (`here()`, timed as `stage`, when this process begins it first or
    there was no offer), timed by the helper's own seconds when the helper made it."""

    def timed_here():
        with timer.stage(stage):
            return here()

    made, seconds = offered_result(offer, timed_here, reporter, f"{stage}: in the helper process")
    if seconds is not None:
        timer.add(stage, seconds)
    return made


def check_selection_metric(config: AuditConfig, responses: Responses) -> None:
    """QWK and near agreement need ordered scores: selecting by them on nominal labels is an
    error the user fixes (state score_order, or choose another metric), not a silent change."""
    if responses.ordered or config.selection_metric not in ORDINAL_METRICS:
        return
    raise ConfigError(
        f"Setting 'selection_metric' = \"{config.selection_metric}\" needs ordered scores, but "
        f"the scores in column '{config.score_column}' are text labels with no stated order. "
        "Set score_order (the labels lowest first), or select by accuracy, kappa, f1 or nll.",
        "selection_metric",
    )


def embed_responses(
    responses: Responses,
    config: AuditConfig,
    reporter: Reporter,
    given: Embedded | None = None,
) -> Embedded:
    """The embedding stage: `given` when it fits (one vector per response, or token vectors in
    late-interaction mode), else one unit vector per response embedded (and cached) with the
    model, or its token embeddings in late-interaction mode. Blank answers get their shared
    representation later, in run_audit (the session embeds items in its parent process)."""
    if given is not None and given.tokens == config.late_interaction:
        if len(given) != len(responses):
            raise EmbeddingError(
                f"{len(given):,} precomputed embeddings for {len(responses):,} "
                "responses; there must be one per response."
            )
        return given
    model, batch, device = config.embedding_model, config.embedding_batch_size, config.device
    if not config.late_interaction:
        [(vectors, facts)] = embed_text_lists([responses.texts], Reading.of(config), reporter)
        return Embedded(vectors, facts)
    tokens, facts = embed_tokens(responses.texts, model, batch, reporter, device=device)
    if given is not None:
        note = (
            "Precomputed embeddings were not used: late-interaction mode needs token "
            "embeddings, which were computed with the model."
        )
        facts = replace(facts, warnings=(*facts.warnings, note))
    return Embedded(tokens, facts)


def with_blank_answers(embedded: Embedded, responses: Responses) -> Embedded:
    """The vectors the audit uses: every blank answer given one shared vector
    (engine.embedding.blank), in every mode; unchanged when no answer is blank."""
    return replace(embedded, vectors=with_blanks(embedded.vectors, responses.blank))


def _neighbour_graph(embeddings, config: AuditConfig, reporter: Reporter) -> NeighbourGraph:
    # fit_top_k has already left out every K not below N.
    ks = [k for k in config.top_k_values if k is not None]
    k_max = max(ks + [min(evidence.EVIDENCE_COUNT, embeddings.shape[0] - 1)])
    return build_graph(
        embeddings, k_max, config.similarity_top_k_chunk, config.normalize_similarities, reporter
    )


def _evidence(graph: NeighbourGraph, tuned: TuningResult):
    """The neighbours that drove each prediction, from the selected graph."""
    best = tuned.best
    if best.top_k is None:
        weights = graph.transform(graph.similarities, best.power)
        return evidence.evidence_from_lists(graph.indices, weights, graph.similarities)
    assert tuned.item_features is not None  # tune() always keeps them
    selected = tuned.item_features.weights(best.top_k, best.power)
    return evidence.evidence_from_weights(selected, graph.indices, graph.similarities)


def _item_features(graph, responses: Responses, config: AuditConfig) -> ItemFeatures:
    return ItemFeatures(
        graph, responses.scores, responses.n_classes, config.similarity_top_k_symmetric
    )


def _cross_fit(graph, responses: Responses, config: AuditConfig, features=None, reporter=None):
    """Cross-fitting (engine.model.cross_fit) of `config`'s whole search on the item's graph:
    `features` the tuning's own (here), or new ones from the graph (in the helper, where it
    runs beside tuning; the same bits)."""
    features = _item_features(graph, responses, config) if features is None else features
    return cross_fit(features, config, reporter, responses.ordered)


def _tuned_checks_elsewhere(graph, responses: Responses, config: AuditConfig, predicted):
    """`_tuned_checks` in the helper process (no progress: the parent reports the severity's)."""
    return _tuned_checks(graph, responses, config, predicted, Reporter())


def _checks_from(
    helper: Helper, pending: tuple[Future, Future], inputs: tuple, timer: StageTimer,
    reporter: Reporter,
) -> dict:  # fmt: skip
    """The checks the helper made (`pending`: its cross-fitting and the checks of the tuned
    model), timed by its own seconds (they ran beside tuning and the severity, so the stages'
    sum exceeds the item's total); each made here if the helper died."""
    graph, tuned, responses, config, predicted = inputs

    def here(make):
        def timed():
            with timer.stage("checks"):
                return make()

        return timed

    crossing, rest = pending
    made = {}
    for future, make in (
        (crossing, lambda: _cross_fit(graph, responses, config, tuned.item_features, reporter)),
        (rest, lambda: _tuned_checks(graph, responses, config, predicted, reporter)),
    ):
        result, seconds = helper.result_or(future, here(make), reporter.check)
        if seconds is not None:
            timer.add("checks", seconds)
        made[future] = result
    checks = made[rest]
    assert isinstance(checks, dict)  # what _tuned_checks returns
    return {**checks, "cross_fit": made[crossing]}


def _checks(graph, tuned, responses: Responses, config: AuditConfig, predicted, reporter):
    """Second rater, near-duplicates, bootstrap intervals and cross-fitting for `AuditResult`.

    `config` is the configuration tuning used, so cross-fitting repeats exactly that search.
    """
    checks = _tuned_checks(graph, responses, config, predicted, reporter)
    crossed = _cross_fit(graph, responses, config, tuned.item_features, reporter)
    return {**checks, "cross_fit": crossed}


def _tuned_checks(graph, responses: Responses, config: AuditConfig, predicted, reporter) -> dict:
    """The checks of the tuned model's predictions: second rater, near-duplicates, bootstrap
    intervals."""
    scores, n_classes, ordered = responses.scores, responses.n_classes, responses.ordered
    pairs = []
    # The threshold is a cosine similarity; late-interaction scores are on another scale.
    if graph.mode == SINGLE_VECTOR:
        pairs = duplicates.near_duplicates(
            graph.indices, graph.similarities, scores, config.near_duplicate_threshold
        )
    figures = {}
    if config.bootstrap_samples > 0:
        figures = intervals.bootstrap_agreement(
            scores,
            predicted,
            n_classes,
            config.bootstrap_samples,
            config.seed,
            reporter,
            ordered=ordered,
        )
    return {
        "second_rater": second_rater(
            scores, responses.second_scores, predicted, n_classes, ordered
        ),
        "near_duplicates": pairs,
        "intervals": figures,
    }
