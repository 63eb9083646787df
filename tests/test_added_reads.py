"""Reads typed in the review (engine.results.added_reads, engine.saved.added_reads): the
consensus recomputed with them equals engine.audit.reads.consensus run on the reads with the row added,
the run's text evidence and the run's model, and no other answer moves; they are kept with the review's decisions across a reopen, undone
and put back; what is refused; and the exports count them."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from helpers import MULTI_READ_SETTINGS, multi_read_frame, run_frame, session_config

from engine import workspace
from engine.audit.reads.consensus import consensus
from engine.core.errors import ReviewError
from engine.outputs.names import CONSENSUS_FILE, DECISIONS_FILE, REVIEWED_FILE
from engine.results.added_reads import AddedRead, session_with_added
from engine.saved.decisions import open_store


@pytest.fixture(scope="module")
def planted():
    frame, vectors, _ = multi_read_frame()
    return run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS)), frame


@pytest.fixture
def store(planted, tmp_path):
    session, _ = planted
    review = session.review
    with open_store(
        tmp_path / "reads.csv", review.responses, tmp_path / "db.sqlite3", review.on_scale
    ) as opened:
        yield opened


def unsure(review) -> int:
    """The answer read first for a third read."""
    return int(np.flatnonzero(review.third_read_rank == 1)[0])


def other_rater(review, i) -> str:
    return next(r for r in review.reads.raters if r not in review.raters_of(i))


def read_of(review, i, rater, score) -> AddedRead:
    rows, ids = review.responses.rows, review.responses.ids
    return AddedRead(int(rows[i]), ids[i], rater, score, "2026-01-01T00:00:00+00:00")


@pytest.mark.parametrize("rater", ["known", "New rater"])
def test_the_recomputed_consensus_is_consensus_on_the_reads_with_the_row_added(planted, rater):
    session, _ = planted
    review = session.review
    i = unsure(review)
    k, j = int(np.searchsorted(review.starts, i, side="right") - 1), None
    j = i - int(review.starts[k])
    name = other_rater(review, i) if rater == "known" else rater
    label = review.labels_of(i)[0]
    same = workspace.with_added_reads(review, [])
    np.testing.assert_array_equal(same.consensus_p, review.consensus_p)
    from engine.results.added_reads import review_with_added

    updated = review_with_added(review, [read_of(review, i, name, label)])
    # The oracle: the same call, built here from the run's reads and text evidence.
    raters = list(session.reads.raters)
    if name not in raters:
        raters.append(name)
    items = list(session.reads.items)
    code = list(session.results[k].responses.labels).index(label)
    items[k] = items[k].with_reads([j], [raters.index(name)], [code])
    evidence = [result.read_evidence for result in session.results]
    expected = consensus(items, evidence, len(raters), model=session.reads.consensus.model)
    for found, wanted in zip(updated.reads.consensus.items, expected.items):
        np.testing.assert_array_equal(found.consensus, wanted.consensus)
        np.testing.assert_array_equal(found.third_read_rank, wanted.third_read_rank)
        np.testing.assert_array_equal(found.reads, wanted.reads)
        np.testing.assert_allclose(found.consensus_p, wanted.consensus_p, rtol=0, atol=1e-9)
    wanted_p = np.concatenate([item.consensus_p for item in expected.items])
    np.testing.assert_allclose(updated.consensus_p, wanted_p, rtol=0, atol=1e-9)
    assert (
        updated.reads.consensus.items[k].reads[j] == session.reads.consensus.items[k].reads[j] + 1
    )
    # Under the run's model only the answer read again changes.
    others = np.arange(review.consensus_p.size) != i
    np.testing.assert_array_equal(updated.consensus[others], review.consensus[others])
    np.testing.assert_allclose(updated.consensus_p[others], review.consensus_p[others], atol=1e-12)
    assert updated.added_reads(i) == [(name, label)]
    assert name in updated.raters_of(i)
    # The run's review set is untouched, and counting no reads gives the run's figures back.
    assert review.reads.added == ()
    again = review_with_added(updated, [])
    np.testing.assert_array_equal(again.consensus, review.consensus)
    np.testing.assert_array_equal(again.third_read_rank, review.third_read_rank)


def test_a_third_read_that_agrees_settles_the_answer_and_it_leaves_the_list(planted):
    session, _ = planted
    review = session.review
    i = unsure(review)
    from engine.results.added_reads import review_with_added

    # Each session rater who has not read it, giving the consensus: one of them settles it.
    label = review.responses.labels[int(review.consensus[i])]
    settled = [review_with_added(review, [read_of(review, i, name, label)])
               for name in review.reads.raters if name not in review.raters_of(i)]  # fmt: skip
    assert any(s.third_read_rank[i] == 0 and s.consensus_p[i] >= 0.95 for s in settled)
    best = max(settled, key=lambda s: s.consensus_p[i])
    assert best.consensus_p[i] > review.consensus_p[i]
    ranked = np.flatnonzero(best.third_read_rank > 0)
    assert i not in ranked
    assert sorted(best.third_read_rank[ranked].tolist()) == list(range(1, ranked.size + 1))


def test_an_added_read_is_kept_across_a_reopen_and_undone_and_put_back(planted, tmp_path):
    session, _ = planted
    review = session.review
    i = unsure(review)
    name, label = other_rater(review, i), review.labels_of(i)[-1]
    source, database = tmp_path / "reads.csv", tmp_path / "db.sqlite3"

    def opened():
        return open_store(source, review.responses, database, review.on_scale, digest="d1")

    with opened() as store:
        read = workspace.add_read(store, review, i, name, label)
        assert store.added_reads() == [read]
    with opened() as store:  # quit and reopen
        assert store.added_reads() == [read]
        shown = workspace.with_added_reads(review, store.added_reads())
        assert shown.added_reads(i) == [(name, label)]
        store.reads.remove(read.row, read.rater)  # `u` after adding
        assert store.added_reads() == []
    with opened() as store:
        assert store.added_reads() == []
        assert workspace.with_added_reads(review, []).consensus_p[i] == review.consensus_p[i]
        store.reads.restore(read)  # put back as it was made
    with opened() as store:
        assert store.added_reads() == [read]


def test_a_copy_of_the_file_opens_its_added_reads(planted, tmp_path):
    session, _ = planted
    review = session.review
    i = unsure(review)
    database = tmp_path / "db.sqlite3"
    with open_store(tmp_path / "a.csv", review.responses, database, review.on_scale,
                    digest="same") as store:  # fmt: skip
        read = workspace.add_read(store, review, i, other_rater(review, i), review.labels_of(i)[0])
    with open_store(tmp_path / "moved.csv", review.responses, database, review.on_scale,
                    digest="same") as store:  # fmt: skip
        assert store.added_reads() == [read]


def test_reads_off_the_scale_or_by_a_rater_who_read_the_answer_are_refused(planted, store):
    session, _ = planted
    review = session.review
    i = unsure(review)
    row = int(review.responses.rows[i])
    already = review.raters_of(i)[0]
    with pytest.raises(ReviewError, match=rf"Row {row}: rater '{already}' already read this"):
        workspace.add_read(store, review, i, already, review.labels_of(i)[0])
    with pytest.raises(ReviewError, match=r"is not on the item's scale \(0, 1, 2"):
        workspace.add_read(store, review, i, "Zoe", "7")
    with pytest.raises(ReviewError, match="name the rater"):
        workspace.add_read(store, review, i, "  ", review.labels_of(i)[0])
    workspace.add_read(store, review, i, "Zoe", review.labels_of(i)[0])
    shown = workspace.with_added_reads(review, store.added_reads())
    with pytest.raises(ReviewError, match="rater 'Zoe' already read this answer"):
        workspace.add_read(store, shown, i, "Zoe", review.labels_of(i)[1])
    # The store refuses a second read by the same rater on its own, too.
    with pytest.raises(ReviewError, match="rater 'Zoe' already read"):
        store.reads.add(row, review.responses.ids[i], review.responses.texts[i], "Zoe", "1")
    assert len(store.added_reads()) == 1


def test_a_session_read_once_has_no_consensus_to_update(tmp_path):
    from helpers import one_item_session, synthetic_result

    review = one_item_session(synthetic_result(40, second=False)).review
    with open_store(tmp_path / "x.csv", review.responses, tmp_path / "db.sqlite3") as store:
        with pytest.raises(ReviewError, match="No answer of this run is read twice"):
            workspace.add_read(store, review, 0, "Zoe", review.labels_of(0)[0])


def rows_of(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_exports_count_the_added_read(planted, store, tmp_path):
    session, frame = planted
    review = session.review
    i = unsure(review)
    row, rid = int(review.responses.rows[i]), review.responses.ids[i]
    label = review.responses.labels[int(review.consensus[i])]
    name = "Third reader"
    workspace.add_read(store, review, i, name, label)
    store.record(row, rid, review.responses.texts[i], "keep")
    out = tmp_path / "out"
    workspace.export(session, out, decisions=store, table=frame)
    updated = session_with_added(session, store.added_reads())
    p = float(workspace.with_added_reads(review, store.added_reads()).consensus_p[i])
    assert p != pytest.approx(float(review.consensus_p[i]))

    consensus_rows = rows_of((out / CONSENSUS_FILE).read_text())
    mine = next(r for r in consensus_rows if r["id"] == rid)
    assert mine[f"score_{name}"] == label
    assert int(mine["reads"]) == len(review.raters_of(i)) + 1
    assert float(mine["consensus_p"]) == pytest.approx(p, abs=1e-6)
    assert mine["third_read_rank"] == (
        "" if updated.review.third_read_rank[i] == 0 else str(updated.review.third_read_rank[i])
    )
    decided = next(r for r in rows_of((out / DECISIONS_FILE).read_text()) if r["id"] == rid)
    assert float(decided["consensus_p"]) == pytest.approx(p, abs=1e-6)
    reviewed = rows_of((out / REVIEWED_FILE).read_text())
    assert float(reviewed[row - 1]["consensus_p"]) == pytest.approx(p, abs=1e-6)


def test_parm_export_counts_a_read_typed_in_the_review(tmp_path):
    from helpers import parm_command

    frame, vectors, _ = multi_read_frame()
    path, embeddings = tmp_path / "reads.csv", tmp_path / "vectors.npy"
    frame.to_csv(path, index=False)
    np.save(embeddings, np.asarray(vectors, dtype=np.float32))
    code, output = parm_command(
        "audit", path, "--embeddings", embeddings, "--item-col", "item", "--id-col", "id",
        "--score-cols", "score1,score2,score3", "--rater-cols", "rater1,rater2,rater3",
        "--set", "similarity_top_k=[5,10]", "--set", "bootstrap_samples=0",
        "--set", "cross_fit_folds=0", "--out", tmp_path / "run", "--quiet",
    )  # fmt: skip
    assert code == 0, output
    file = workspace.open_file(path)
    prepared, session = workspace.restore(file, file.runs[0])
    review = session.review
    i = unsure(review)
    store = workspace.open_review(prepared).store
    read = workspace.add_read(store, review, i, "Third reader", review.labels_of(i)[0])
    expected = workspace.with_added_reads(review, store.added_reads())
    store.close()
    code, output = parm_command("export", path, "--out", tmp_path / "again")
    assert code == 0, output
    assert "1 read typed in the review counted in the consensus" in output
    mine = next(r for r in rows_of((tmp_path / "again" / CONSENSUS_FILE).read_text())
                if r["id"] == read.response_id)  # fmt: skip
    assert mine["score_Third reader"] == read.score
    assert float(mine["consensus_p"]) == pytest.approx(float(expected.consensus_p[i]), abs=1e-6)


def test_review_import_brings_in_a_colleagues_typed_reads(planted, store, tmp_path):
    session, frame = planted
    review = session.review
    i, j = (int(k) for k in np.flatnonzero(review.third_read_rank > 0)[:2])
    read = workspace.add_read(store, review, i, "Third reader", review.labels_of(i)[0])
    backread = workspace.add_read(store, review, j, "Third reader", review.labels_of(j)[1],
                                  "backread")  # fmt: skip
    assert (read.kind, backread.kind) == ("resolution", "backread")
    rows, ids, texts = review.responses.rows, review.responses.ids, review.responses.texts
    store.record(int(rows[j]), ids[j], texts[j], "keep")
    out = tmp_path / "theirs"
    workspace.export(session, out, names=[DECISIONS_FILE], decisions=store)
    written = rows_of((out / DECISIONS_FILE).read_text())
    assert [r["action"] for r in written] == ["", "keep"] or [r["action"] for r in written] == [
        "keep", ""]  # fmt: skip
    cell = next(r["added_reads"] for r in written if r["id"] == read.response_id)
    assert '"rater": "Third reader"' in cell and '"kind": "resolution"' in cell

    def mine():
        return open_store(tmp_path / "mine.csv", review.responses, tmp_path / "mine.sqlite3",
                          review.on_scale)  # fmt: skip

    with mine() as here:
        report = workspace.import_review(here, out / DECISIONS_FILE)
        assert (report.taken, report.reads_taken, report.skipped) == (1, 2, [])
        assert "Reads typed in the review: 2 taken" in report.sentence()
        assert here.added_reads() == store.added_reads()  # with their kinds
        assert here.get(int(rows[j])).action == "keep"
        again = workspace.import_review(here, out / DECISIONS_FILE)
        assert (again.already, again.reads_taken, again.reads_already) == (1, 0, 2)
    # A rater who has another read of that answer here: theirs is skipped, with why.
    with mine() as here:
        here.reads.remove(read.row, read.rater)
        other = review.labels_of(i)[1]
        here.reads.add(read.row, read.response_id, texts[i], "Third reader", other)
        clash = workspace.import_review(here, out / DECISIONS_FILE)
        assert len(clash.skipped) == 1 and "a rater reads an answer once" in clash.skipped[0][1]
        assert [r.score for r in here.added_reads() if r.row == read.row] == [other]


def posterior(review, i) -> np.ndarray:
    """The consensus' probability of each score of answer i's item."""
    k = int(np.searchsorted(review.starts, i, side="right") - 1)
    return review.reads.consensus.items[k].proba[i - int(review.starts[k])]


def test_a_new_raters_read_is_evidence_for_its_score_never_against_it(planted):
    """A rater new to the session reads as the session's typical rater (the run's model), so
    the read raises the probability of its score, whatever the score (one outside the reads'
    range had probability 0 and now has some). Judged from that one read alone, a dissent once
    gave the rater an accuracy under chance and every error of theirs its size, and a typed 0
    took an answer read 2 and 1 from 2 at p .58 to 2 at p 1.00."""
    from engine.results.added_reads import review_with_added

    session, _ = planted
    review = session.review
    for i in np.flatnonzero(review.third_read_rank > 0)[:8]:
        before = posterior(review, i)
        for code, label in enumerate(review.labels_of(i)):
            after = review_with_added(review, [read_of(review, i, "New rater", label)])
            assert posterior(after, i)[code] > before[code], (i, label)
