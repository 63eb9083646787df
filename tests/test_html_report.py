"""report.html (engine/outputs/report/report_html.py, html_items.py and templates/report.html.j2): one
self-contained page with the director's summary, the RSMTool-style sections and the plots; every
value from the data inert (autoescaped, no element, attribute, handler or URL from it); no
script and nothing loaded, as its Content-Security-Policy says."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from helpers import audit_planted, one_item_session, planted_session, record, synthetic_result
from hostile import FORMULAS, HTML, MARKDOWN, MARKUP, check_html_inert

from engine.outputs.report.report_html import CONTENT_SECURITY_POLICY, html_report
from engine.outputs.report.report_json import session_dict
from engine.saved.decisions import open_store

HOSTILE_ITEMS = {"I0": HTML, "I1": MARKDOWN[:40]}
HOSTILE_RATERS = {"r4": '=HYPERLINK("http://x")' + HTML[:10], "r6": MARKUP[:20], "r1": "$x$ & co"}


@pytest.fixture(scope="module")
def hostile_session():
    frame, vectors = planted_session(seed=3, items=2, per_item=300)
    frame["item"] = frame["item"].replace(HOSTILE_ITEMS)
    frame["rater"] = frame["rater"].replace(HOSTILE_RATERS)
    frame.loc[::9, "answer"] = [FORMULAS[i % len(FORMULAS)] + " " + HTML
                                for i in range(len(frame.loc[::9]))]  # fmt: skip
    return audit_planted(frame, vectors)


@pytest.fixture(scope="module")
def decisions(hostile_session, tmp_path_factory):
    review = hostile_session.review
    responses = review.responses
    folder = tmp_path_factory.mktemp("store")
    with open_store(folder / "s.csv", responses, folder / "d.sqlite3", review.on_scale) as store:
        flagged = [int(i) for i in review.review_order() if review.flagged[i]][:3]
        record(store, responses, flagged[0], "change", responses.labels[review.predicted[flagged[0]]],
               note=HTML)  # fmt: skip
        record(store, responses, flagged[1], "keep", note=MARKUP)
        record(store, responses, flagged[2], "unsure")
        return store.all()


def test_a_session_page_has_every_section_and_plot(hostile_session, decisions):
    page = html_report(hostile_session, decisions)
    for anchor in ("summary", "review", "data", "items", "raters", "item-1", "item-2", "method"):
        assert f'id="{anchor}"' in page, anchor
    # The items and raters plots, then per item the distribution, confusion and tuning plots.
    assert page.count("<svg ") == 2 + 3 * len(hostile_session.results)
    assert page.count('class="axes"') >= page.count("<svg ")
    assert "The review changed 1 score (3 decisions: 1 kept, 1 changed, 1 unsure)" in page
    assert "Verdicts and the rules behind them" in page
    assert "Pairs of raters" not in page  # no second rater in this session
    assert "Human-human agreement" not in page  # no second score in this session


def test_the_page_loads_nothing_and_runs_nothing():
    page = html_report(one_item_session(synthetic_result(150)), None)
    meta = f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
    assert meta in html.unescape(page)
    assert CONTENT_SECURITY_POLICY.startswith("default-src 'none'; style-src 'unsafe-inline';")
    assert "<script" not in page.lower() and "<link" not in page and "@import" not in page
    assert "No review yet: no decision store was open" in page
    assert "Human-human agreement" in page and "limit on degradation of 0.10" in page
    # The raters against the model's cross-fitted agreement with the first, never in-sample.
    assert "The model&#39;s cross-fitted QWK against score is" in page
    assert "@media print" in page and "overflow-x: auto" in page
    text = check_html_inert(page)
    assert "How consistent the raters are" in text and "What to do first" in text


def test_hostile_names_answers_and_notes_are_text(hostile_session, decisions):
    page = html_report(hostile_session, decisions)
    text = check_html_inert(page)
    assert HTML in text  # an item name, shown as written
    assert "$x$ & co" in text  # a rater's name, in the tables and (as SVG text) in the plot
    assert re.search(r"<text[^>]*>\$x\$ &amp; co</text>", page)
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<img" not in page


def test_the_data_section_counts_blank_answers_apart_from_missing_second_scores():
    import dataclasses

    result = synthetic_result(120)
    texts = list(result.responses.texts)
    texts[3], texts[11] = "", "   "
    blanked = dataclasses.replace(
        result, responses=dataclasses.replace(result.responses, texts=texts)
    )
    text = check_html_inert(html_report(one_item_session(blanked), None))
    assert "blank answers2 (audited, all alike)" in " ".join(text.split())  # th, then td
    assert "Second scores: every audited response has one." in text
    assert "Blanks:" not in text


# -- a page that scales ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def many_items():
    frame, vectors = planted_session(seed=5, items=7, per_item=80)
    return audit_planted(frame, vectors)


def test_many_items_give_five_in_the_summary_and_plots_only_for_them(many_items):
    from engine.outputs.report.report_html import SHOWN

    page = html_report(many_items, None)
    summary = page[page.index('id="summary"') : page.index('id="review"')]
    assert summary.count("<li>") <= 3 * SHOWN + 4  # agreement, attention, raters: five each
    assert 'The 2 other items: <a href="#items">the items table</a>' in summary
    # The items and raters plots, then the distribution, confusion and tuning of five items.
    assert page.count("<svg ") == 2 + 3 * SHOWN
    assert page.count("Plots are drawn for the 5 items that need attention most") == 2
    assert "dots the in-sample figure with its 95% bootstrap interval, diamonds the" in page
    assert "Every item is too small for an in-sample figure." not in page
    for k in range(1, 8):  # every item is still there, linked from the items table
        assert f'<a href="#item-{k}">' in page and f'id="item-{k}"' in page


def test_the_parameters_are_in_an_appendix_only(many_items):
    page = html_report(many_items, None)
    appendix = page[page.index('id="appendix"') :]
    reports = session_dict(many_items)["items"]
    names = [p["name"] for report in reports for p in report["parameters"]]
    assert appendix.count("<tr>") - 1 == len(names)  # every item's, in one table
    before = page[: page.index('id="appendix"')]
    assert not any(f"<td>{name}</td>" in before for name in set(names))


def test_wide_tables_say_they_scroll_on_a_phone(many_items):
    page = html_report(many_items, None)
    # Every table but the Data section's two columns.
    assert page.count('<p class="hint"') == page.count('<div class="wrap">') - 1
    assert ".hint { display: block; }" in page  # shown under the phone-width media query only


def test_the_top_of_the_queue_shows_the_decision_taken(hostile_session, decisions):
    page = html_report(hostile_session, decisions)
    assert "<th>decision</th>" in page and "<th>other reads</th>" in page
    assert page.count("<td>kept</td>") == 1 and page.count("<td>unsure</td>") == 1
    assert page.count("<td>changed to ") == 1


@pytest.mark.parametrize(
    ("raters", "model", "says"),
    [
        (0.859, 0.69, "The raters agree well: the model, not the scores, is at odds here."),
        (0.690, 0.66, "The raters themselves disagree here: the scores are uncertain"),
        (0.90, 0.85, ""),
        (0.096, 1.0, "The raters themselves disagree here"),  # the model far above: no shortfall
    ],
)
def test_a_shortfall_from_two_raters_says_who_disagrees(raters, model, says):
    from engine.outputs.report.conclusions import DEGRADATION
    from engine.outputs.report.html_items import _who_disagrees
    from engine.results.compare import compare, minimum

    agree = minimum("the raters' QWK", raters, 0.70, "the field's minimum")
    short = compare("the model's cross-fitted QWK", model, "the raters'", raters, DEGRADATION)
    line = _who_disagrees(agree, short)
    assert line.startswith(says) if says else line == ""
    assert short.within is (raters - model <= 0.10)


# -- the first screen: what a lead concludes --------------------------------------------------------
def _section(page: str, anchor: str, after: str) -> str:
    """The text of the page from one section's anchor to another's (tags dropped)."""
    check_html_inert(page)
    part = page[page.index(f'id="{anchor}"') : page.index(f'id="{after}"')]
    return html.unescape(re.sub(r"<[^>]+>", " ", part.split(">", 1)[1]))


def test_the_first_screen_says_what_the_lead_concludes_before_any_model_figure(
    small_items_read_twice,
):
    from engine.audit.reads.agreement import ALL
    from engine.results.figures import run_figures
    from engine.results.lead import session_wrong, wrong_phrase

    session = small_items_read_twice
    page = html_report(session, None)
    summary = " ".join(_section(page, "summary", "evidence").split())
    pair = next(p for p in session.reads.agreement.pairs if p.item == ALL)
    qwk = pair.figures["qwk"].estimate
    assert qwk < 0.70  # the raters' own agreement, under the field's minimum
    flagged = int(session.flagged.sum())
    cross_qwk = run_figures(session).cross_qwk
    assert summary.startswith(
        f"Summary The raters agree less than the field requires (QWK {qwk:.3f}, minimum "
        f"0.70). parm flags {flagged} of 180 scores ({flagged / 180:.1%}) as likely wrong, "
        f"{wrong_phrase(session_wrong(session.results))}, but its model is under the field's "
        f"minimum (cross-fitted QWK {cross_qwk:.3f})"
    )
    headings = ["How consistent the raters are", "Scores that look wrong, and how sure parm is",
                "Who and what needs attention", "What to do first", "Review so far."]  # fmt: skip
    places = [summary.index(heading) for heading in headings]
    assert places == sorted(places)
    assert "6 of 6 item(s) have fewer than 10 answers per score value" in summary
    assert "Go over the rubric with the raters, starting with items Q" in summary
    # The model's own fit is further down: no in-sample figure, no memorised on the first screen.
    for word in ("in-sample", "memorised", "1.000"):
        assert word not in summary, word
    order = [page.index(f'id="{a}"') for a in ("summary", "evidence", "items", "agreement",
                                                "model-fit", "item-1", "method")]  # fmt: skip
    assert order == sorted(order)
    fit = " ".join(_section(page, "model-fit", "item-1").split())
    assert "in-sample" in fit and "fewer than 10 answers per score value" in fit


def test_the_flags_check_counts_the_second_reads_that_dispute_each_flagged_score(
    small_items_read_twice,
):
    """disputed() against the second score column read directly, over the flags the severity
    alone sets (the queue's own flags put agreeing reads last: checked against the same reads
    they would be right by construction); the review step follows the two checks' verdicts."""
    from engine.audit.queue.flagging import flagged
    from engine.outputs.report.conclusions import conclusions, model_comparison
    from engine.outputs.report.flag_check import disputed, flags_check

    session = small_items_read_twice
    flags, disputes = disputed(session)
    expected_flags, expected = [], []
    for result in session.results:
        second = result.responses.second_scores
        twice = second >= 0
        by_severity = np.argsort(-result.severity, kind="stable")
        own = flagged(by_severity, result.severity, result.wrong_estimate, None)
        expected_flags.append(own[twice])
        expected.append((second != result.responses.scores)[twice])
    assert np.array_equal(flags, np.concatenate(expected_flags))
    assert np.array_equal(disputes, np.concatenate(expected))
    check, model = flags_check(session), model_comparison(session)
    assert check.value == round(100 * disputes[flags].mean(), 1)
    assert check.other_value == round(100 * disputes[~flags].mean(), 1)
    assert check.value < 100.0  # not the disputed answers by construction
    step = conclusions(session).steps[-1]
    assert model.within is False
    if check.within:  # a weak model whose severity still finds disputes
        assert step.endswith("though another read disputes the scores its severity alone "
                             "flags more often than the other scores.")  # fmt: skip
    else:
        assert step.startswith("Read only the top of the review queue")


def test_items_too_small_show_no_in_sample_figure_and_compare_the_model_cross_fitted(
    small_items_read_twice,
):
    page = html_report(small_items_read_twice, None)
    evidence = " ".join(_section(page, "evidence", "review").split())
    assert evidence.count("(in-sample: too small)") >= 6  # kappa and QWK of the items shown
    assert re.search(r"too small to judge: 30 answers, \d+ of them outside the most common "
                     r"score, for 3 other score values, under the 30 a fit needs", evidence)  # fmt: skip
    # Too small to judge the model: the raters are compared with the minimum only.
    assert evidence.count("the model is not compared with them: the item is too small") == 5
    assert "model's QWK against rater 1" not in evidence
    items = " ".join(_section(page, "items", "agreement").split())
    # The in-sample kappa of each item, and the plot's caption: diamonds only.
    assert items.count("too small") == 7
    assert "Every item is too small for an in-sample figure." in items


def test_three_raters_are_each_named_in_the_first_screen():
    from helpers import MULTI_READ_SETTINGS, multi_read_frame, run_frame, session_config

    from engine.audit.reads.agreement import ALL
    from engine.outputs.report.conclusions import conclusions

    frame, vectors, _ = multi_read_frame(raters={"Ana": 0.95, "Ben": 0.8, "Cleo": 0.6})
    session = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS))
    found = conclusions(session)
    raters = found.points[0]
    pairs = [p for p in session.reads.agreement.pairs if p.item == ALL and not p.too_few]
    assert len(pairs) == 3
    below = sum(p.figures["qwk"].estimate < 0.70 for p in pairs)
    assert 0 < below < 3  # Cleo's pairs under the minimum, Ana and Ben's above it
    text = " ".join(raters.sentences)
    assert f"({below} of 3 pairs of raters under its minimum)" in text
    assert found.short.startswith(f"The raters agree less than the field requires ({below} of 3 ")
    names = session.reads.raters
    for p in pairs:
        assert (
            f"The QWK of {names[p.rater_a]} and {names[p.rater_b]} on the {p.n:,} answers" in text
        )
    assert "two raters" not in text.lower()


def test_the_first_line_says_which_items_raters_agree_under_the_minimum_when_pooled_they_do_not(
    monkeypatch,
):
    """Powergrading: "The raters agree as the field requires (0 of 3 pairs under the minimum of
    0.70)" while items 3 and 13 had a pair under it, said only further down; now the first line
    names them, the first three at most; a pooled verdict that already says less adds nothing."""
    from types import SimpleNamespace

    from engine.outputs.report import conclusions

    worst = [("3", None, "G1 and G3"), ("13", None, "G1 and G2")]
    monkeypatch.setattr(conclusions, "items_below", lambda session: worst)
    session = SimpleNamespace(results=[None] * 5)
    caveat = conclusions._items_caveat(session, below=[])
    assert caveat == ", but on 2 of 5 item(s) a pair agrees under it (3, 13)"
    assert conclusions._items_caveat(session, below=["a pooled pair under it"]) == ""
    worst += [("7", None, ""), ("20", None, "")]
    assert conclusions._items_caveat(session, []).endswith("(3, 13, 7, …)")
    worst.clear()
    assert conclusions._items_caveat(session, []) == ""


def test_report_md_of_many_items_lists_in_full_only_the_five_that_need_attention(many_items):
    from engine.outputs.report.html_items import SHOWN, attention_order
    from engine.outputs.report.markdown import BRIEF_TOP
    from engine.outputs.report.report_md import session_markdown

    text = session_markdown(many_items, None)
    assert text.count("## What the uncertainty figures mean") == 1  # said once, at the end
    reports = session_dict(many_items)["items"]
    first = set(attention_order(many_items.results, reports)[:SHOWN])
    sections = text.split("\n## Item ")[1:]
    assert len(sections) == len(many_items.results)
    for k, (section, result) in enumerate(zip(sections, many_items.results)):
        queue = section.split("responses to review\n")[1].split("\n### ")[0]
        rows = [line for line in queue.splitlines() if line.startswith("| ") and "---" not in line]
        flagged = int(result.flagged.sum())
        listed = min(flagged, 20 if k in first else BRIEF_TOP)
        assert len(rows) - 1 == listed, (k, len(rows), listed)
        assert ("### Parameters" in section) == (k in first)
