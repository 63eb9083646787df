"""What a run produces (engine/results/): a session's review set lists every item's responses on one
pooled scale, a file of one item gives a set equal to its result, a decision's run context
is what the review showed, and a run's figures are its items' and, pooled, scikit-learn's."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_frame, session_config, session_frame, synthetic_result

from engine.input.settings.config import settings_digest
from engine.results.figures import RunFigures, run_figures
from engine.results.review import review_set


def test_the_review_set_lists_every_item_on_one_scale():
    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config(rater_column="rater"))
    review = session.review
    assert review.responses.labels == ("0", "1", "2", "3")
    assert len(review.responses) == len(frame) and review.by_item
    for position in (0, 7, len(frame) - 1):
        result, i = review.locate(position)
        assert review.items[position] == result.responses.item
        assert review.responses.rows[position] == result.responses.rows[i]
        assert (
            review.responses.labels[review.responses.scores[position]]
            == (result.responses.labels[result.responses.scores[i]])
        )
        assert review.severity[position] == result.severity[i]
        np.testing.assert_allclose(
            review.proba[position][review.on_scale[position]], result.fitted.proba[i]
        )
        assert review.labels_of(position) == result.responses.labels
        for neighbour in review.evidence[position]:  # evidence stays within the item
            assert review.items[neighbour.index] == review.items[position]
    for k, result in enumerate(session.results):  # each item flags the top of its own queue
        flagged = review.flagged[review.starts[k] : review.starts[k + 1]][result.review_order()]
        assert not np.any(flagged[1:] & ~flagged[:-1])
        assert flagged.sum() == round(result.wrong_estimate.count)


def test_a_review_set_of_one_item_is_that_item():
    frame, vectors = session_frame(items=(("A", 60, 3),))
    session = run_frame(frame, vectors, session_config(item_column=None))
    result, review = session.results[0], session.review
    assert not review.by_item and review.responses.labels == result.responses.labels
    np.testing.assert_array_equal(review.responses.scores, result.responses.scores)
    np.testing.assert_array_equal(review.predicted, result.predicted)
    np.testing.assert_array_equal(review.review_order(), result.review_order())
    np.testing.assert_array_equal(review.proba, result.fitted.proba)


def test_the_run_context_is_what_the_result_showed():
    result = synthetic_result(60)
    context = review_set([result]).run_context(4)
    labels = result.responses.labels
    assert context.run_id == result.run_id
    assert context.settings_digest == settings_digest(result.config)
    assert context.predicted == labels[result.predicted[4]]
    assert context.severity == pytest.approx(result.severity[4])


def test_a_sessions_figures_pool_its_items_as_scikit_learn_does():
    from sklearn.metrics import cohen_kappa_score

    frame, vectors = session_frame(seed=4)
    session = run_frame(frame, vectors, session_config())
    figures = run_figures(session)
    review = session.review
    human, model = review.responses.scores, review.predicted
    assert figures.kappa == pytest.approx(cohen_kappa_score(human, model))
    scale = list(range(len(review.responses.labels)))
    qwk = cohen_kappa_score(human, model, labels=scale, weights="quadratic")
    assert figures.qwk == pytest.approx(qwk)
    assert figures.flagged == int(review.flagged.sum()) and figures.responses == len(frame)
    assert figures.flagged == sum(int(r.flagged.sum()) for r in session.results)
    assert [f.item for f in figures.items] == [r.responses.item for r in session.results]
    assert figures.selected is None
    for result, item in zip(session.results, figures.items):
        assert item.kappa == result.metrics["kappa"] and item.top_k == result.selected.top_k
        assert item.flagged == int(result.flagged.sum())
    assert figures.item("A") == figures.items[[f.item for f in figures.items].index("A")]
    assert figures.item("C") is None
    assert RunFigures.from_dict(figures.to_dict()) == figures


def test_a_file_of_one_item_has_that_items_figures():
    frame, vectors = session_frame(items=(("A", 60, 3),))
    session = run_frame(frame, vectors, session_config(item_column=None))
    [result] = session.results
    figures = run_figures(session)
    assert (figures.kappa, figures.qwk) == (result.metrics["kappa"], result.metrics["qwk"])
    assert figures.selected == (result.selected.top_k, result.selected.power)
    assert figures.flagged == int(result.flagged.sum()) and figures.items[0].item is None


def test_a_rerun_is_compared_figure_by_figure():
    from engine.results.figures import ItemFigures, figure_changes

    before = ItemFigures("A", 100, 20, 0.675, 0.731, 20, 1.0)
    now = ItemFigures("A", 100, 21, 0.668, None, None, 2.0)
    changes = {c.name: c for c in figure_changes(now, before)}
    assert changes["kappa"].difference == pytest.approx(-0.007)
    assert changes["flagged"].difference == 1 and changes["power"].difference == 1.0
    assert changes["qwk"].difference is None and changes["top_k"].now is None
    one = RunFigures(100, 21, 0.668, None, (now,))
    other = RunFigures(100, 20, 0.675, 0.731, (before,))
    assert [c.name for c in figure_changes(one, other)] == [
        "kappa",
        "qwk",
        "flagged",
        "top_k",
        "power",
    ]
    two = RunFigures(200, 40, 0.6, 0.7, (now, before))
    assert [c.name for c in figure_changes(two, two)] == ["kappa", "qwk", "flagged"]
    # Nominal scores: no QWK in either run, so no "QWK in-sample — → —".
    nominal = RunFigures(200, 40, 0.6, None, (now, before))
    assert [c.name for c in figure_changes(nominal, nominal)] == ["kappa", "flagged"]
