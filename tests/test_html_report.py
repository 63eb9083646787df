"""report.html (engine/outputs/html_report.py, html_items.py and templates/report.html.j2): one
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

from engine.outputs.html_report import CONTENT_SECURITY_POLICY, html_report
from engine.outputs.session_report import session_dict
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
    assert "Human-human agreement" in page and "Degradation" in page
    assert "@media print" in page and "overflow-x: auto" in page
    text = check_html_inert(page)
    assert "How well the scores hold together." in text


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
    from engine.outputs.html_report import SHOWN

    page = html_report(many_items, None)
    summary = page[page.index('id="summary"') : page.index('id="review"')]
    assert summary.count("<li>") <= 3 * SHOWN + 4  # agreement, attention, raters: five each
    assert 'The 2 other items: <a href="#items">the items table</a>' in summary
    # The items and raters plots, then the distribution, confusion and tuning of five items.
    assert page.count("<svg ") == 2 + 3 * SHOWN
    assert page.count("Plots are drawn for the 5 items that need attention most") == 2
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


def _pair(qwk, exact=0.8):
    return {"exact": exact, "adjacent": 0.97, "kappa": qwk - 0.05, "qwk": qwk}


@pytest.mark.parametrize(
    ("raters", "model", "says", "marked"),
    [
        (0.859, 0.69, "the model, not the scores, is at odds", ["model's QWK"]),
        (0.690, 0.66, "The raters themselves agree below 0.70", ["raters' QWK", "model's QWK"]),
        (0.90, 0.85, "", []),
    ],
)
def test_a_shortfall_from_two_raters_says_who_disagrees(raters, model, says, marked):
    from engine.outputs import html_items

    report = {
        "second_rater": {
            "rater1_vs_rater2": _pair(raters),
            "model_vs_rater1": _pair(model),
            "model_vs_rater2": _pair(model),
            "rows_with_both_scores": 120,
        },
        "metrics": {"accuracy": 0.7, "kappa": 0.6, "qwk": model},
    }

    from engine.input.reads import Reads

    # 120 answers read by Ana and then Ben: the sentence names them (never "rater 1").
    reads = Reads(np.repeat(np.arange(120), 2), ("Ana", "Ben") * 120, np.zeros(240, int),
                  np.full(240, np.nan), np.arange(240), np.tile([True, False], 120))  # fmt: skip

    class Named:
        responses = type("R", (), {"item": "volcano", "__len__": lambda s: 120, "reads": reads})()
        flagged = np.zeros(120, bool)

    line = html_items._human_line(Named, report)
    assert line["text"].startswith("volcano: Ana and Ben agree with QWK")
    assert "the model's QWK against Ana is" in line["text"]
    assert (says in line["text"]) if says else "at odds" not in line["text"]
    assert [tag.rsplit(" ", 3)[0] for tag in line["below"]] == marked
    attention = html_items.attention(Named, report)
    if raters < 0.70:
        assert "the raters agree with QWK 0.690 only" in attention
    elif raters - model > 0.10:
        assert "the model, not the scores, is at odds" in attention


def test_report_md_of_many_items_lists_in_full_only_the_five_that_need_attention(many_items):
    from engine.outputs.html_items import SHOWN, attention_order
    from engine.outputs.markdown import BRIEF_TOP
    from engine.outputs.session_markdown import session_markdown

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
