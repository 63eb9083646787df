"""The review screen on its own (pushed onto a tiny host app): the list, the filters, paging
through thousands of rows, the detail pane (rater disagreements, severity and its legend),
decisions saved the moment they are made, and decisions another parm window saved."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from helpers import (
    MARKUP_TEXT,
    Host,
    one_item_session,
    shown_rows,
    synthetic_result,
    text_of,
)
from textual.widgets import Checkbox, Input, Select

from engine.saved.decisions import open_store
from parm_tui.screens.review import NO_STORE
from parm_tui.widgets.neighbours import NeighbourList, neighbour_rows
from parm_tui.widgets.review_detail import LEGEND
from parm_tui.widgets.review_dialogs import NoteModal, ScoreModal
from parm_tui.widgets.review_list import PAGE_SIZE, ReviewTable, review_view


@pytest.fixture(scope="module")
def review():
    return one_item_session(synthetic_result(300)).review


def assert_queue_order(review, view):
    """Most severe first, answers whose reads all agree after the others (each part by
    severity)."""
    result = review.results[0]
    confirmed = result.responses.reads.confirmed(len(result.responses))[view]
    assert not np.any(np.diff(confirmed.astype(int)) < 0)  # unconfirmed, then confirmed
    for part in (~confirmed, confirmed):
        assert np.all(np.diff(review.severity[view][part]) <= 0)


async def test_the_list_starts_with_the_flagged_responses_most_severe_first(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        flagged = np.flatnonzero(review.flagged)
        assert len(screen.view) == flagged.size
        assert_queue_order(review, screen.view)
        top = int(review.responses.rows[screen.view[0]])
        assert shown_rows(screen)[0] == top
        assert f"Row {top}" in text_of(screen, "#detail-header")


async def test_keep_is_saved_at_once_and_shown_in_the_list(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        first = screen.current()
        row = int(review.responses.rows[first])
        await pilot.press("o")
        await pilot.pause()
        assert store.get(row).action == "keep"
        table = screen.query_one(ReviewTable)
        assert str(table.get_cell(str(first), "decision")) == "keep"
        # Deciding moves on to the next response.
        assert screen.current() == int(screen.view[1])


async def test_change_asks_for_the_new_score_and_saves_it(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        i = screen.current()
        labels = review.responses.labels
        human = labels[review.responses.scores[i]]
        new = next(label for label in labels if label != human)
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ScoreModal)
        assert human not in pilot.app.screen.choices
        await pilot.press(new)
        await pilot.pause()
        assert store.all() == {}  # a key only chooses
        await pilot.press("enter")
        await pilot.pause()
        decision = store.get(int(review.responses.rows[i]))
        assert (decision.action, decision.new_score) == ("change", new)
        table = screen.query_one(ReviewTable)
        # At 100 columns the list is compact: the new score as →2.
        assert str(table.get_cell(str(i), "decision")) == f"→{new}"


async def test_a_cancelled_change_records_nothing(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert store.all() == {}


async def test_a_note_is_saved_with_the_decision_and_shown(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        i = screen.current()
        row = int(review.responses.rows[i])
        await pilot.press("question_mark", "up", "e")
        await pilot.pause()
        assert isinstance(pilot.app.screen, NoteModal)
        await pilot.press(*"ask [b]Sam[/b]", "enter")
        await pilot.pause()
        decision = store.get(row)
        assert (decision.action, decision.note) == ("unsure", "ask [b]Sam[/b]")
        await pilot.pause()
        assert "ask [b]Sam[/b]" in text_of(screen, "#detail-header")
        await pilot.press("x")
        await pilot.pause()
        assert store.get(row) is None


async def test_typing_a_search_narrows_the_list(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        before = len(screen.view)
        await pilot.press("a")  # all responses, so the searched answer is listed
        await pilot.press("slash", *"answer 12", "enter")
        await pilot.pause()
        texts = review.responses.texts
        assert 0 < len(screen.view) < before
        assert all("answer 12" in texts[i] for i in screen.view)
        # While typing in the search box, o, u and c are letters, not decisions.
        await pilot.press("slash", "o", "u", "c")
        await pilot.pause()
        assert screen.query_one("#review-search", Input).value == "ouc"
        assert store.all() == {}


async def test_filters_by_scores_and_distance(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        screen.query_one("#filter-human", Select).value = 0
        await pilot.pause()
        assert len(screen.view) and all(review.responses.scores[screen.view] == 0)
        screen.query_one("#filter-off2", Checkbox).value = True
        await pilot.pause()
        gap = np.abs(review.predicted[screen.view] - review.responses.scores[screen.view])
        assert np.all(gap >= 2)
        screen.query_one("#filter-view", Select).value = "all"
        screen.query_one("#filter-human", Select).clear()
        screen.query_one("#filter-off2", Checkbox).value = False
        await pilot.pause()
        assert len(screen.view) == len(review.responses)


def test_review_view_lists_the_whole_queue_by_severity_when_showing_all(review):
    view = review_view(review, show_all=True)
    np.testing.assert_array_equal(view, review.review_order())
    assert_queue_order(review, view)
    flagged = review_view(review)
    np.testing.assert_array_equal(flagged, view[review.flagged[view]])


async def test_students_markup_is_shown_as_typed(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        screen.query_one("#filter-view", Select).value = "all"
        screen.query_one("#review-search", Input).value = "not markup"
        screen.refresh_view()
        await pilot.pause()
        assert screen.current() == 7
        assert MARKUP_TEXT in text_of(screen, "#detail-text")


async def test_the_detail_shows_scores_probabilities_second_rater_and_neighbours(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        i = screen.current()
        header = text_of(screen, "#detail-header")
        labels = review.responses.labels
        assert f"model {labels[review.predicted[i]]}" in header
        assert f"human {labels[review.responses.scores[i]]}" in header
        # No rater column: each score column names its reads (as raters.csv and agreement.csv do).
        assert "reads: score " in header and " · score2 " in header
        scores = text_of(screen, "#detail-scores")
        for p in review.proba[i]:
            assert f"{p:.3f}" in scores
        neighbours = str(screen.query_one(NeighbourList).render())
        for nb in neighbour_rows(review, i):
            assert f"row {nb['row']}" in neighbours


async def test_the_evidence_names_each_neighbour_and_says_what_weight_means(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        i = screen.current()
        neighbours = " ".join(str(screen.query_one(NeighbourList).render()).split())
        for nb in neighbour_rows(review, i):
            assert f"row {nb['row']} · id {nb['id']} · score {nb['score']}" in neighbours
            assert f"weight {nb['weight']:.2f}" in neighbours
        await pilot.press("f1")  # what the figures mean: once, on F1, not under every answer
        await pilot.pause()
        said = text_of(pilot.app.screen, "#keys-extra")
        assert "weight: how much the neighbour's score counts" in " ".join(said.split())


def test_neighbour_similarities_come_from_the_graph(review):
    i = int(review.review_order()[0])
    rows = neighbour_rows(review, i)
    assert len(rows) == len(review.evidence[i]) > 0
    embeddings = review.results[0].graph.embeddings
    for nb, evidence in zip(rows, review.evidence[i]):
        j = evidence.index
        if nb["similarity"] is not None:
            assert nb["similarity"] == pytest.approx(float(embeddings[i] @ embeddings[j]), abs=1e-4)


async def test_without_a_store_decisions_are_off_and_say_so(review):
    async with Host(review, None).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        await pilot.press("o")
        await pilot.pause()
        messages = [n.message for n in pilot.app._notifications]
        assert NO_STORE in messages
        assert "decisions off" in text_of(screen, "#review-status")
        table = screen.query_one(ReviewTable)
        assert str(table.get_cell(str(screen.current()), "decision")) == ""


async def test_y_copies_the_answer_to_the_clipboard(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        i = pilot.app.screen.current()
        await pilot.press("y")
        assert pilot.app.clipboard == review.responses.texts[i]


async def test_decisions_made_earlier_show_when_the_screen_opens(review, store):
    i = int(review_view(review)[0])  # the first flagged answer, the one listed first
    responses = review.responses
    store.record(int(responses.rows[i]), responses.ids[i], responses.texts[i], "unsure")
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        table = pilot.app.screen.query_one(ReviewTable)
        assert str(table.get_cell(str(i), "decision")) == "?"
        assert "1 decided" in text_of(pilot.app.screen, "#review-status")


@pytest.fixture(scope="module")
def large_review():
    return one_item_session(synthetic_result(6000, second=False)).review


async def test_thousands_of_rows_are_paged_and_stay_usable(large_review, tmp_path):
    review = large_review
    source = tmp_path / "large.csv"
    source.write_text("x\n")
    with open_store(source, review.responses, tmp_path / "d.sqlite3") as store:
        async with Host(review, store).run_test(size=(100, 30)) as pilot:
            screen = pilot.app.screen
            await pilot.press("a")
            await pilot.pause()
            table = screen.query_one(ReviewTable)
            assert len(screen.view) == 6000
            assert table.row_count == PAGE_SIZE
            assert screen.model.pages == 30
            await pilot.press("pagedown")  # a screenful down, on the same page
            assert screen.model.page == 0 and screen.current() == int(
                screen.view[screen.screenful()]
            )
            screen.go_to(PAGE_SIZE - 1)
            await pilot.press("down")  # across the page edge
            assert screen.model.page == 1 and screen.current() == int(screen.view[PAGE_SIZE])
            await pilot.press("up")  # and back to the end of page 1
            assert screen.model.page == 0 and screen.current() == int(screen.view[PAGE_SIZE - 1])
            await pilot.press("G")
            assert screen.model.page == 29 and screen.current() == int(screen.view[-1])
            await pilot.press("j")  # the last row stays the last row
            assert screen.current() == int(screen.view[-1])
            await pilot.press("o")
            await pilot.pause()
            assert store.get(int(review.responses.rows[screen.view[-1]])).action == "keep"
            await pilot.press("g")
            assert screen.model.page == 0 and screen.current() == int(screen.view[0])
            assert "page 1/30" in text_of(screen, "#review-status")


async def test_decisions_on_changed_answers_are_reported_not_shown(review, tmp_path):

    responses = review.responses
    source = tmp_path / "answers.csv"
    source.write_text("x\n")
    database = tmp_path / "d.sqlite3"
    edited = replace(responses, texts=["an earlier answer"] + list(responses.texts[1:]))
    with open_store(source, edited, database) as before:
        before.record(int(edited.rows[0]), edited.ids[0], edited.texts[0], "keep")
    with open_store(source, responses, database) as store:
        async with Host(review, store).run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            messages = " ".join(n.message for n in pilot.app._notifications)
            assert "were not applied" in messages and f"rows {int(responses.rows[0])}" in messages
            assert "0 decided" in text_of(pilot.app.screen, "#review-status")


async def test_review_marks_rows_where_the_raters_disagree(review, tmp_path):
    disagree = review.raters_disagree
    # Wide enough for the full set of columns, the second rater's among them.
    async with Host(review, None).run_test(size=(160, 40)) as pilot:
        screen = pilot.app.screen
        table = screen.query_one(ReviewTable)
        labels = review.responses.labels
        for key in table.rows:
            i = int(key.value)
            cell = str(table.get_cell(key, "second"))
            assert cell == labels[review.responses.second_scores[i]] + ("≠" if disagree[i] else "")
        i = next(int(j) for j in screen.view if disagree[int(j)])
        screen.go_to(int(np.flatnonzero(screen.view == i)[0]))
        await pilot.pause()
        assert "raters disagree" in text_of(screen, "#detail-header")


async def test_severity_shows_its_value_and_a_legend_of_what_it_means(review):
    async with Host(review, None).run_test(size=(160, 40)) as pilot:
        screen = pilot.app.screen
        i = screen.current()
        header = " ".join(text_of(screen, "#detail-scores").split())
        assert f"severity {review.severity[i]:.3f}" in header
        assert f"severity {review.severity[i]:.3f}: " in header
        assert "PARM's probabilities:" in header
        legend = " ".join(LEGEND.plain.split())
        assert "how much the evidence doubts the human score, 0 not at all, 1 most" in legend
        assert "severity also weighs the classifiers" in legend
        assert str(screen.query_one(ReviewTable).get_cell(str(i), "severity")) == (
            f"{review.severity[i]:.2f}"
        )


async def test_the_review_screen_shows_another_windows_decision_and_says_so(tmp_path):
    review = one_item_session(synthetic_result(120)).review
    source = tmp_path / "synthetic.csv"
    source.write_text("placeholder\n")
    database = tmp_path / "decisions.sqlite3"
    with (
        open_store(source, review.responses, database) as mine,
        open_store(source, review.responses, database) as other,
    ):
        async with Host(review, mine).run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            screen = pilot.app.screen
            i = screen.current()
            responses = review.responses
            other.record(int(responses.rows[i]), responses.ids[i], responses.texts[i], "keep")
            screen.check_other_writers()
            await pilot.pause()
            assert mine.get(int(responses.rows[i])).action == "keep"
            cell = screen.query_one(ReviewTable).get_cell(str(i), "decision")
            assert "keep" in str(cell)
            messages = " ".join(n.message for n in pilot.app._notifications)
            assert "in another parm window or browser on this file" in messages


async def test_a_write_for_another_file_in_the_same_database_is_not_news(tmp_path):
    """The database holds the reviews of every file: another file's decision, written by
    another parm, changes nothing here and says nothing."""
    review = one_item_session(synthetic_result(120)).review
    (tmp_path / "mine.csv").write_text("mine\n")
    (tmp_path / "theirs.csv").write_text("theirs\n")
    database = tmp_path / "decisions.sqlite3"
    with (
        open_store(tmp_path / "mine.csv", review.responses, database) as mine,
        open_store(tmp_path / "theirs.csv", review.responses, database) as theirs,
    ):
        async with Host(review, mine).run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            responses = review.responses
            theirs.record(int(responses.rows[0]), responses.ids[0], responses.texts[0], "keep")
            pilot.app.screen.check_other_writers()
            await pilot.pause()
            assert mine.all() == {} and list(pilot.app._notifications) == []


@pytest.mark.parametrize(
    ("size", "columns"),
    [
        ((80, 24), ["row", "scores", "decision", "answer"]),
        ((120, 40), ["row", "human", "second", "model", "severity", "decision", "answer"]),
    ],
)
async def test_from_120_columns_the_list_shows_severity_and_the_second_rater(
    review, store, size, columns
):
    async with Host(review, store).run_test(size=size) as pilot:
        await pilot.pause()
        table = pilot.app.screen.query_one(ReviewTable)
        assert [key.value for key in table.columns] == columns
        # Every column fits whole: the answer keeps some room beside them.
        assert table.answer_width >= 8 and table.virtual_size.width <= size[0]


async def test_a_resize_keeps_the_response_on_show(review, store):
    async with Host(review, store).run_test(size=(120, 40)) as pilot:
        screen = pilot.app.screen
        await pilot.press("j", "j", "j")
        await pilot.pause()
        before = screen.current()
        assert before == int(screen.view[3])
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert screen.query_one(ReviewTable).compact  # the columns did change
        assert screen.current() == screen.shown() == before


async def test_t_lists_the_answers_that_need_a_third_read_and_the_pane_shows_the_consensus():
    from helpers import MULTI_READ_SETTINGS, multi_read_frame, run_frame, session_config

    frame, vectors, _ = multi_read_frame()
    review = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS)).review
    ranked = np.flatnonzero(review.third_read_rank > 0)
    assert ranked.size
    async with Host(review, None).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        await pilot.press("T")
        await pilot.pause()
        assert screen.view.tolist() == ranked[np.argsort(review.third_read_rank[ranked])].tolist()
        # The answer on show stays on show when the T list holds it (else the list's first).
        first = int(screen.shown())
        assert first in ranked
        header = text_of(screen, "#detail-header")
        label = review.responses.labels[int(review.consensus[first])]
        assert f"consensus {label} (p {review.consensus_p[first]:.2f})" in header
        assert f"third read #{review.third_read_rank[first]}" in header
        await pilot.press("T")
        await pilot.pause()
        assert len(screen.view) == int(review.flagged.sum())  # back to the flagged


async def test_r_adds_a_read_and_the_consensus_and_third_read_view_follow(tmp_path):
    from helpers import MULTI_READ_SETTINGS, multi_read_frame, run_frame, session_config, wait_for

    from parm_tui.widgets.review_dialogs import ReadModal

    frame, vectors, _ = multi_read_frame()
    review = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS)).review
    first = int(np.flatnonzero(review.third_read_rank == 1)[0])
    label = review.responses.labels[int(review.consensus[first])]
    row = int(review.responses.rows[first])
    store = open_store(tmp_path / "reads.csv", review.responses, tmp_path / "db.sqlite3",
                       review.on_scale, reviewer="lead")  # fmt: skip
    async with Host(review, store).run_test(size=(80, 24)) as pilot:
        screen = pilot.app.screen
        await pilot.press("T")
        await pilot.pause()
        screen.go_to(0)  # the list's first (the answer on show stays when the list holds it)
        await pilot.pause()
        assert screen.shown() == first
        before = text_of(screen, "#detail-header")
        assert "third read #1" in before
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReadModal)
        # Each score the answer was read as is marked with who read it so.
        result, j = review.locate(first)
        reads = result.responses.reads
        given = {(reads.rater[k], result.responses.labels[reads.score[k]])
                 for k in np.flatnonzero(reads.answer == j)}  # fmt: skip
        marks = pilot.app.screen.marks
        assert all(rater in marks[label].split(", ") for rater, label in given)
        await pilot.press("enter", label, "enter")  # the rater offered is the reviewer, "lead"
        await wait_for(pilot, lambda: screen.review is not screen.model.run_review, "the recount")
        await pilot.pause()
        assert [(r.row, r.rater, r.score) for r in store.added_reads()] == [(row, "lead", label)]
        assert screen.review.consensus_p[first] > review.consensus_p[first]
        header = text_of(screen, "#detail-header")
        ranked = np.flatnonzero(screen.review.third_read_rank > 0)
        if screen.review.third_read_rank[first] == 0:  # sure now: it left the third-read list
            assert first not in screen.view.tolist()
            # ... and the pane shows the answer now in its place, not the one that left.
            shown = screen.current()
            assert shown != first and f"Row {int(review.responses.rows[shown])} " in header
            said = " ".join(n.message for n in pilot.app._notifications)
            assert "sure: off the third-read list" in said
            assert sorted(screen.view.tolist()) == sorted(ranked.tolist())
            await pilot.press("a")  # the whole queue, where it still is
            await pilot.pause()
            screen.go_to(int(np.flatnonzero(screen.view == first)[0]))
            await pilot.pause()
            header = text_of(screen, "#detail-header")
        else:
            assert sorted(screen.view.tolist()) == sorted(ranked.tolist())
        assert f"lead {label} (added)" in header
        assert f"(p {screen.review.consensus_p[first]:.2f})" in header
        screen.go_to(0)
        await pilot.pause()
        await pilot.press("u")
        await wait_for(pilot, lambda: not screen.review.added_reads(first), "the undo")
        await pilot.pause()
        assert store.added_reads() == []
        np.testing.assert_array_equal(screen.review.third_read_rank, review.third_read_rank)
    store.close()


async def test_a_read_typed_before_shows_on_the_first_response_at_once(tmp_path):
    """After a resume or a re-run the screen opens on a store that holds typed reads: the first
    response shows its typed read at once (the recount of the consensus follows), not only
    after moving away and back."""
    from helpers import MULTI_READ_SETTINGS, multi_read_frame, run_frame, session_config, wait_for

    from engine import workspace

    frame, vectors, _ = multi_read_frame()
    review = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS)).review
    store = open_store(tmp_path / "reads.csv", review.responses, tmp_path / "db.sqlite3",
                       review.on_scale, reviewer="lead")  # fmt: skip
    first = int(review.review_order()[0])
    label = review.labels_of(first)[-1]
    workspace.add_read(store, review, first, "lead", label)
    async with Host(review, store).run_test(size=(80, 24)) as pilot:
        screen = pilot.app.screen
        assert screen.shown() == first
        header = " ".join(text_of(screen, "#detail-header").split())
        assert f"lead {label} (added)" in header
        assert "counting" in header or screen.review is not screen.model.run_review
        await wait_for(pilot, lambda: screen.review is not screen.model.run_review, "the recount")
        await pilot.pause()
        header = " ".join(text_of(screen, "#detail-header").split())
        assert f"lead {label} (added)" in header and "counting" not in header
        assert f"(p {screen.review.consensus_p[first]:.2f})" in header


async def test_the_backread_view_lists_todays_backreads_and_a_read_there_is_a_backread(tmp_path):
    """The view of today's backreads (engine.actions) lists the answers on the list; `r` there
    asks for the supervisor's read and keeps it as a backread, saying whether it accepts or
    fixes the rater's score."""
    from helpers import (
        MULTI_READ_SETTINGS,
        PARM_CSS,
        multi_read_frame,
        run_frame,
        session_config,
        wait_for,
    )
    from textual.app import App

    from engine import workspace
    from parm_tui.screens.review import ReviewScreen
    from parm_tui.widgets.review_dialogs import ReadModal
    from parm_tui.widgets.review_filters import VIEW_BACKREADS, ReviewFilters

    frame, vectors, _ = multi_read_frame()
    session = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS))
    review = session.review
    targets = workspace.backread_rows(workspace.todays_lists(session))
    store = open_store(tmp_path / "reads.csv", review.responses, tmp_path / "db.sqlite3",
                       review.on_scale, reviewer="lead")  # fmt: skip

    class BackreadHost(App):
        CSS_PATH = PARM_CSS

        def on_mount(self) -> None:
            self.push_screen(ReviewScreen(review, store, backreads=targets))

    async with BackreadHost().run_test(size=(80, 24)) as pilot:
        screen = pilot.app.screen
        screen.query_one(ReviewFilters).set_view(VIEW_BACKREADS)
        await pilot.pause()
        listed = {int(review.responses.rows[i]) for i in screen.view}
        assert listed == set(targets) and listed
        i = int(screen.view[0])
        row = int(review.responses.rows[i])
        rater, given = targets[row][0]
        screen.go_to(0)
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReadModal)
        assert f"Backread of row {row} ({rater} gave {given}" in pilot.app.screen.title_text
        # the supervisor, "lead", offered as the rater: Enter, then the rater's score, Enter
        await pilot.press("enter", given, "enter")
        await wait_for(pilot, lambda: store.added_reads(), "the backread")
        await pilot.pause()
        read = store.added_reads()[0]
        assert (read.row, read.rater, read.score, read.kind) == (row, "lead", given, "backread")
        said = " ".join(n.message for n in pilot.app._notifications)
        assert f"accepts {rater}'s {given}" in said
    store.close()
