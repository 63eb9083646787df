"""Today's severity of one item without the rest of run_audit: the same stages up to the tuned
fit (embedding given, blanks, the neighbour graph, tuning) and the same severity call, skipping
cross-fitting, intervals and the read and rater checks, which do not change it.
bench_severity_visible.py checks it equals run_audit's severity on the items both have cached."""

from __future__ import annotations

import dataclasses

import numpy as np

from engine.core.progress import Reporter
from engine.embedding.vectors import Embedded
from engine.input.settings.config import fit_top_k
from engine.model.features import ItemFeatures
from engine.model.tuning import tune
from engine.pipeline import _graph, _severity, embed_responses, with_blank_answers


def fast_severity(item, scores: np.ndarray, config) -> dict[str, np.ndarray]:
    responses = dataclasses.replace(item.responses, scores=scores)
    reporter = Reporter()
    config, _ = fit_top_k(config, len(responses))
    given = Embedded.precomputed(item.vectors)
    embedded = with_blank_answers(embed_responses(responses, config, reporter, given), responses)
    graph, _, tune_config = _graph(embedded, config, reporter)
    features = ItemFeatures(
        graph, responses.scores, responses.n_classes, tune_config.similarity_top_k_symmetric
    )
    tuned = tune(features, tune_config, reporter, responses.ordered)
    ranked, _ = _severity(embedded.single_vectors(), tuned, responses, config, reporter)
    return {"parm/severity": ranked}
