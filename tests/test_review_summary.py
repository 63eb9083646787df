"""The review's decisions in the reports (engine/outputs/report/review_summary.py): counts of the flagged
and of the whole queue, by score, the changes, and the model's agreement with the final scores
beside its agreement with the original ones, checked against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import record, run_frame, session_config, session_frame
from markdown_it import MarkdownIt
from sklearn.metrics import cohen_kappa_score

from engine.core.numbers import signed
from engine.outputs.report.review_summary import (
    NO_DECISIONS,
    NO_REVIEW,
    NO_STORE,
    final_codes,
    review_markdown,
    review_summary,
)
from engine.saved.decisions import open_store


@pytest.fixture(scope="module")
def session():
    table, vectors = session_frame()
    # Every sixth score moved one point (on both items' scales), so some are flagged.
    table.loc[::6, "score"] = [str((int(s) + 1) % 3) for s in table.loc[::6, "score"]]
    return run_frame(table, vectors, session_config())


@pytest.fixture()
def decided(session, tmp_path):
    """Four decisions on flagged responses (two changes to the model's score, a keep, an
    unsure) and one keep on a response that is not flagged."""
    review = session.review
    responses = review.responses
    # Changes go to the model's score, so on flagged answers where it differs from the human's.
    differs = review.predicted != responses.scores
    changed = np.flatnonzero(review.flagged & differs)[:2]
    flagged = np.setdiff1d(np.flatnonzero(review.flagged), changed)
    calm = np.flatnonzero(~review.flagged)
    with open_store(
        tmp_path / "s.csv", responses, tmp_path / "d.sqlite3", review.on_scale
    ) as store:
        for i in changed:
            record(store, responses, i, "change", responses.labels[review.predicted[i]])
        record(store, responses, flagged[0], "keep")
        record(store, responses, flagged[1], "unsure")
        record(store, responses, calm[0], "keep")
        return store.all()


def test_without_a_store_or_decisions_there_is_no_review_yet(session):
    assert review_summary(session, None) == {"status": NO_REVIEW, "why": NO_STORE}
    assert review_summary(session, {}) == {"status": NO_REVIEW, "why": NO_DECISIONS}
    assert "No review yet: no decision has been recorded" in review_markdown(
        review_summary(session, {})
    )


def test_counts_of_the_flagged_and_the_whole_queue(session, decided):
    summary = review_summary(session, decided)
    flagged = int(session.review.flagged.sum())
    assert summary["decisions"] == 5 and summary["scores_changed"] == 2
    assert summary["counts"]["flagged"] == {
        "responses": flagged, "decided": 4, "keep": 1, "change": 2, "unsure": 1,
        "undecided": flagged - 4,
    }  # fmt: skip
    queue = summary["counts"]["queue"]
    assert (queue["responses"], queue["decided"], queue["keep"]) == (session.n_responses, 5, 2)
    by_score = summary["by_score"]
    assert sum(s["decided"] for s in by_score) == 5
    assert sum(s["responses"] for s in by_score) == session.n_responses
    assert sum(c["n"] for c in summary["changes"]) == 2


def test_agreement_before_and_after_matches_scikit_learn(session, decided):
    review = session.review
    summary = review_summary(session, decided)
    final = final_codes(review, decided)
    assert int(np.sum(final != review.responses.scores)) == 2
    before = cohen_kappa_score(review.responses.scores, review.predicted)
    after = cohen_kappa_score(final, review.predicted)
    agreement = summary["agreement"]
    assert agreement["model_vs_original"]["kappa"] == pytest.approx(before, abs=1e-6)
    assert agreement["model_vs_final"]["kappa"] == pytest.approx(after, abs=1e-6)
    assert agreement["kappa_change"] == pytest.approx(after - before, abs=1e-6)
    assert after > before  # both changes took the model's score
    assert "not how accurate the model is" in agreement["definition"]
    # Each item on its own scale.
    items = {i["item"]: i for i in summary["items"]}
    assert sum(i["decided"] for i in items.values()) == 5
    for result in session.results:
        own = items[result.responses.item]
        assert own["kappa_original"] == pytest.approx(result.metrics["kappa"], abs=1e-6)


def test_the_markdown_section_is_labelled_and_renders_as_tables(session, decided):
    text = review_markdown(review_summary(session, decided))
    assert text.startswith(
        "## Review decisions\n\n5 decisions recorded; the review changed 2 scores."
    )
    assert "| flagged |" in text and "| whole queue |" in text
    assert "model vs original scores" in text and "model vs final scores" in text
    # The change as engine.results.compare states it: before → after (difference of the two shown).
    summary = review_summary(session, decided)
    before = summary["agreement"]["model_vs_original"]["kappa"]
    after = summary["agreement"]["model_vs_final"]["kappa"]
    difference = signed(round(after, 3) - round(before, 3), 3).replace("-", "−")
    assert (f"The model's kappa, against the original scores then the final ones: {before:.3f} → "
            f"{after:.3f} ({difference})") in text  # fmt: skip
    assert "pooled over the items, on one scale" in text
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    assert sum(t.type == "table_open" for t in tokens) == 5
