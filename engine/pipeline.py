"""`run_audit`: the one call both front ends make. It runs the stages in the order the data flows:
embedding, the neighbour graph (found once), tuning K and p, then the audit of the selected fit."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from engine.audit import duplicates, evidence, intervals, severity
from engine.audit.duplicates import NearDuplicate
from engine.audit.evidence import Neighbour
from engine.audit.intervals import Interval
from engine.audit.second_rater import SecondRater, second_rater
from engine.core.errors import ConfigError, EmbeddingError
from engine.core.progress import CancelToken, ProgressCallback, Reporter
from engine.embedding.blank import with_blanks
from engine.embedding.sentence import embed_texts
from engine.embedding.tokens import embed_tokens
from engine.embedding.vectors import TokenEmbeddings
from engine.graph.late_interaction import late_interaction_graph, tuning_config
from engine.graph.neighbour_graph import NeighbourGraph
from engine.graph.search import build_graph
from engine.input.config import AuditConfig, fit_top_k
from engine.input.responses import Responses
from engine.model.cross_fit import CrossFit, cross_fit
from engine.model.metrics import ORDINAL_METRICS
from engine.model.pseudo_likelihood import FittedPARM
from engine.model.tuning import TuningResult, TuningRow, tune


def new_run_id() -> str:
    """A run's identifier: the UTC time to the second and 6 random hex digits (sortable)."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@dataclass
class AuditResult:
    """Everything a run produced. Arrays are (N,) in the order of `responses`.

    graph is None for a result restored from a saved session (engine.saved), which keeps
    what the screens and outputs read, not the neighbour lists; run_id names the run in review
    decisions and sessions.
    """

    responses: Responses
    config: AuditConfig
    mode: str
    graph: NeighbourGraph | None
    tuning: TuningResult
    predicted: np.ndarray
    severity: np.ndarray
    evidence: list[list[Neighbour]]
    timings: dict[str, float]
    embedding_info: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # Second rater (None without a second score column); near-duplicates scored differently.
    second_rater: SecondRater | None = None
    near_duplicates: list[NearDuplicate] = field(default_factory=list)
    # Bootstrap intervals {metric: Interval} (empty when bootstrap_samples = 0) and the
    # cross-fitted agreement (None when cross_fit_folds = 0).
    intervals: dict[str, Interval] = field(default_factory=dict)
    cross_fit: CrossFit | None = None
    run_id: str = field(default_factory=new_run_id)

    @property
    def fitted(self) -> FittedPARM:
        return self.tuning.fitted

    @property
    def selected(self) -> TuningRow:
        return self.tuning.best

    @property
    def metrics(self) -> dict[str, float]:
        return self.tuning.best.metrics

    @property
    def raters_disagree(self) -> np.ndarray | None:
        """(N,) bool where both raters scored a response differently, or None."""
        return None if self.second_rater is None else self.second_rater.disagree

    @property
    def flagged(self) -> np.ndarray:
        return severity.flags(self.predicted, self.responses.scores)

    def review_order(self) -> np.ndarray:
        """The review queue: most severe first (ties in input order). Flagged or not does not
        change the order; the flag says whether the PARM fit prefers another score."""
        return severity.queue_order(self.severity)


def run_audit(
    responses: Responses,
    config: AuditConfig,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
    embeddings: np.ndarray | TokenEmbeddings | None = None,
    embedding_info: dict | None = None,
) -> AuditResult:
    """Run the whole PARM audit on `responses` (one item) with `config`.

    embeddings: optional (N, d) unit vectors (one per response) to skip embedding, or, with
    `embedding_info` (what `embed_responses` returned with them), the embedding stage's output
    computed elsewhere (token embeddings in late-interaction mode).
    Raises Cancelled when `cancel` is set; ParmError subclasses for problems a user can fix.
    """
    reporter = Reporter(progress, cancel)
    timings: dict[str, float] = {}
    check_selection_metric(config, responses)
    # K values not below N are dropped with a warning (none left: ConfigError), see config.py.
    config, k_notes = fit_top_k(config, len(responses))
    warnings = list(config.warnings) + list(responses.warnings) + k_notes
    started = time.perf_counter()
    if embedding_info is None:
        embedded, info = embed_responses(responses, config, reporter, embeddings)
        timings["embedding"] = time.perf_counter() - started
    else:
        embedded, info = embeddings, dict(embedding_info)
        timings["embedding"] = float(info.get("seconds", 0.0))
    mark = time.perf_counter()
    tune_config = config
    if config.late_interaction:
        graph, facts = late_interaction_graph(embedded, config, reporter)
        info.update(facts)
        # similarity_top_k null means "all colbert_top_k candidates" here (no dense graph).
        tune_config = tuning_config(config, graph)
    else:
        graph = _neighbour_graph(embedded, config, reporter)
    warnings += info.pop("warnings", [])
    timings["neighbours"] = time.perf_counter() - mark
    if info.get("truncated"):
        warnings.append(
            f"{info['truncated']} response(s) were longer than the model's input "
            "limit and were truncated before embedding."
        )
    mark = time.perf_counter()
    result = tune(
        graph, responses.scores, responses.n_classes, tune_config, reporter, responses.ordered
    )
    timings["tuning"] = time.perf_counter() - mark
    warnings += result.warnings
    fitted = result.fitted
    predicted = fitted.predicted
    checks = _checks(graph, responses, tune_config, predicted, reporter, timings)
    vectors = embedded.mean_pooled() if config.late_interaction else embedded
    ranked, note = _severity(vectors, result, responses, config, reporter, timings)
    warnings += note
    timings["total"] = (
        time.perf_counter()
        - started
        + (timings["embedding"] if embedding_info is not None else 0.0)
    )
    reporter("done", 1, 1, "audit finished")
    return AuditResult(
        responses=responses,
        config=config,
        mode=graph.mode,
        graph=graph,
        tuning=result,
        predicted=predicted,
        severity=ranked,
        evidence=_evidence(graph, result.best, config),
        timings={k: round(v, 3) for k, v in timings.items()},
        embedding_info=info,
        warnings=warnings,
        **checks,
    )


def _severity(vectors, tuned: TuningResult, responses: Responses, config, reporter, timings):
    """The review queue's severity (engine.audit.severity), and a note when it had to fall back
    to 1 - p(human score) from the PARM fit because two folds were not possible."""
    mark = time.perf_counter()
    scores = responses.scores
    ranked = severity.review_severity(
        vectors, responses.texts, tuned.features, scores, responses.n_classes, config.seed, reporter
    )
    timings["severity"] = time.perf_counter() - mark
    if ranked is not None:
        return ranked, []
    note = (
        "Too few responses per score to cross-fit the severity: it is 1 - p(human score) "
        "from the PARM fit instead."
    )
    return severity.severity(tuned.fitted.proba, scores), [note]


def check_selection_metric(config: AuditConfig, responses: Responses) -> None:
    """QWK and near agreement need ordered scores: selecting by them on nominal labels is an
    error the user fixes (state score_order, or choose another metric), not a silent change."""
    if responses.ordered or config.selection_metric not in ORDINAL_METRICS:
        return
    raise ConfigError(
        f"Setting 'selection_metric' = \"{config.selection_metric}\" needs ordered scores, but "
        f"the scores in column '{config.score_column}' are text labels with no stated order. "
        "Set score_order (the labels lowest first), or select by accuracy, kappa, f1 or nll."
    )


def embed_responses(
    responses: Responses, config: AuditConfig, reporter: Reporter, embeddings=None
) -> tuple[np.ndarray | TokenEmbeddings, dict]:
    """The embedding stage: one unit vector per response (the precomputed ones when given,
    else embedded and cached), or token embeddings in late-interaction mode, blank answers all
    given one shared representation (engine.embedding.blank); with facts for the report
    (model, cached, seconds, truncated, and any "warnings")."""
    embedded, info = _embedded(responses, config, reporter, embeddings)
    return with_blanks(embedded, responses.blank), info


def _embedded(responses: Responses, config: AuditConfig, reporter: Reporter, embeddings):
    if config.late_interaction:
        tokens, info = embed_tokens(
            responses.texts, config.embedding_model, config.embedding_batch_size, reporter
        )
        info["warnings"] = []
        if embeddings is not None:
            info["warnings"].append(
                "Precomputed embeddings were not used: late-interaction mode needs token "
                "embeddings, which were computed with the model."
            )
        return tokens, info
    if embeddings is None:
        vectors, info = embed_texts(
            responses.texts, config.embedding_model, config.embedding_batch_size, reporter
        )
        return vectors, {"model": config.embedding_model, **info}
    if embeddings.shape[0] != len(responses):
        raise EmbeddingError(
            f"{embeddings.shape[0]:,} precomputed embeddings for {len(responses):,} "
            "responses; there must be one per response."
        )
    return embeddings, {"model": "precomputed", "cached": False, "seconds": 0.0, "truncated": 0}


def _neighbour_graph(embeddings, config: AuditConfig, reporter: Reporter) -> NeighbourGraph:
    # fit_top_k has already left out every K not below N.
    ks = [k for k in config.top_k_values if k is not None]
    k_max = max(ks + [min(evidence.EVIDENCE_COUNT, embeddings.shape[0] - 1)])
    return build_graph(
        embeddings, k_max, config.similarity_top_k_chunk, config.normalize_similarities, reporter
    )


def _evidence(graph: NeighbourGraph, best: TuningRow, config: AuditConfig):
    """The neighbours that drove each prediction, from the selected graph."""
    if best.top_k is None:
        weights = graph.transform(graph.similarities, best.power)
        found = evidence.evidence_from_lists(graph.indices, weights)
    else:
        weights = graph.weights(best.top_k, best.power, config.similarity_top_k_symmetric)
        found = evidence.evidence_from_weights(weights)
    return evidence.with_similarities(found, graph.indices, graph.similarities)


def _checks(graph, responses: Responses, config: AuditConfig, predicted, reporter, timings):
    """Second rater, near-duplicates, bootstrap intervals and cross-fitting for `AuditResult`.

    `config` is the configuration tuning used, so cross-fitting repeats exactly that search.
    """
    mark = time.perf_counter()
    scores, n_classes, ordered = responses.scores, responses.n_classes, responses.ordered
    pairs = []
    # The threshold is a cosine similarity; late-interaction scores are on another scale.
    if graph.mode == "single-vector":
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
    crossed = cross_fit(graph, scores, n_classes, config, reporter, ordered)
    timings["checks"] = time.perf_counter() - mark
    return {
        "second_rater": second_rater(
            scores, responses.second_scores, predicted, n_classes, ordered
        ),
        "near_duplicates": pairs,
        "intervals": figures,
        "cross_fit": crossed,
    }
