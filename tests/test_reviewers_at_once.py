"""Several reviewers on one review at once (issue 47, point 4; engine.saved.decisions): a
decision that replaces another reviewer's keeps theirs beside it (an open conflict where it
differs, settled where it is the same), each store sees the others' decisions when the database
changes, who is on which response now, and several processes deciding at once lose nothing,
duplicate nothing and attribute nothing to the wrong reviewer."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from helpers import Host, make_responses, one_item_session, synthetic_result

from engine.saved.decisions import AT_THE_SAME_TIME, open_store
from parm_tui.widgets.review_list import ReviewTable

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
from reviewers_load import problems, run  # noqa: E402


def stores(source, database, *names):
    responses = make_responses()
    return responses, [open_store(source, responses, database, reviewer=n) for n in names]


def decide(store, responses, i, action, score=None):
    return store.record(int(responses.rows[i]), responses.ids[i], responses.texts[i], action,
                        score)  # fmt: skip


def test_a_decision_replacing_another_reviewers_keeps_theirs_beside_it(source, database):
    responses, (ana, bo) = stores(source, database, "Ana", "Bo")
    row = int(responses.rows[0])
    decide(ana, responses, 0, "keep")
    decide(bo, responses, 0, "change", "2")  # Bo had not seen Ana's: both decided at once
    assert bo.get(row).reviewer == "Bo"
    (kept,) = bo.conflicts(row)
    assert (kept.reviewer, kept.action) == ("Ana", "keep")
    assert ana.changed_elsewhere()
    assert ana.get(row).reviewer == "Bo" and [c.reviewer for c in ana.conflicts(row)] == ["Ana"]
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT imported_from FROM conflicts").fetchall() == [
            (AT_THE_SAME_TIME,)
        ]
    for store in (ana, bo):
        store.close()


def test_the_same_decision_by_two_reviewers_is_kept_settled(source, database):
    responses, (ana, bo) = stores(source, database, "Ana", "Bo")
    decide(ana, responses, 1, "keep")
    decide(bo, responses, 1, "keep")
    assert bo.conflicts(int(responses.rows[1])) == []
    with sqlite3.connect(database) as conn:
        rows = conn.execute("SELECT reviewer, settled_at IS NOT NULL FROM conflicts").fetchall()
    assert rows == [("Ana", 1)]
    for store in (ana, bo):
        store.close()


def test_a_reviewers_own_second_decision_replaces_their_first(source, database):
    responses, (ana,) = stores(source, database, "Ana")
    decide(ana, responses, 2, "keep")
    decide(ana, responses, 2, "unsure")
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM conflicts").fetchone() == (0,)
    ana.close()


def test_each_reviewer_sees_who_else_is_on_which_response(source, database):
    responses, (ana, bo, cy) = stores(source, database, "Ana", "Bo", "Cy")
    ana.here(int(responses.rows[3]))
    bo.here(int(responses.rows[3]))
    cy.here(int(responses.rows[5]))
    assert ana.others_here(60) == {int(responses.rows[3]): ["Bo"], int(responses.rows[5]): ["Cy"]}
    with sqlite3.connect(database) as conn:  # Cy was last seen an hour ago
        conn.execute("UPDATE presence SET seen_at='2000-01-01T00:00:00+00:00' WHERE reviewer='Cy'")
    assert ana.others_here(60) == {int(responses.rows[3]): ["Bo"]}
    for store in (ana, bo, cy):
        store.close()


def test_reviewers_deciding_at_once_lose_nothing(tmp_path):
    """Four processes, 40 decisions each on 60 responses: most responses decided by two or
    more reviewers within the same seconds."""
    found = run(tmp_path, reviewers=4, count=40, n=60)
    assert problems(found) == []
    assert sum(len(m) for m in found["made"].values()) == 160 == len(found["held"])


def test_the_check_finds_a_lost_a_doubled_and_a_misattributed_decision(tmp_path):
    found = run(tmp_path, reviewers=2, count=5, n=10)
    held = list(found["held"])
    who, row, action, score, at = held[0]
    other = "reviewer1" if who == "reviewer0" else "reviewer0"
    assert any("missing" in p for p in problems({**found, "held": held[1:]}))
    assert any("twice" in p for p in problems({**found, "held": held + held[:1]}))
    moved = [(other, row, action, score, at)] + held[1:]
    assert any("missing" in p for p in problems({**found, "held": moved}))


async def test_the_review_shows_who_decided_and_who_is_on_a_response_now(tmp_path):
    """Ana's review, Bo in another window: Bo's decision on the response Ana is on shows as
    his, with ◉ in its list cell and "now on it: Bo" in the detail; Ana's own decisions say no
    name."""
    review = one_item_session(synthetic_result(60)).review
    source = tmp_path / "synthetic.csv"
    source.write_text("placeholder\n")
    database = tmp_path / "decisions.sqlite3"
    responses = review.responses
    with (
        open_store(source, responses, database, reviewer="Ana") as mine,
        open_store(source, responses, database, reviewer="Bo") as other,
    ):
        async with Host(review, mine).run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            screen = pilot.app.screen
            i = screen.current()
            row = int(responses.rows[i])
            other.here(row)
            other.record(row, responses.ids[i], responses.texts[i], "keep")
            screen.check_other_writers()
            await pilot.pause()
            cell = str(screen.query_one(ReviewTable).get_cell(str(i), "decision"))
            assert "keep" in cell and "◉" in cell
            detail = str(screen.query_one("#detail-header").render())
            assert "by Bo" in detail and "now on it: Bo" in detail
            messages = " ".join(n.message for n in pilot.app._notifications)
            assert "saved by Bo" in messages
            assert mine.others_here(60) == {row: ["Bo"]}
            assert other.others_here(60) == {row: ["Ana"]}  # Ana's review said where she is
