"""report.md's text (engine/outputs/report/markdown.py and session_markdown.py): untrusted text inert with
no escape noise where nothing would act, the threshold sentence only when something is marked,
singular and plural, and each pair of raters once."""

from __future__ import annotations

import pytest
from helpers import FAST_SETTINGS, audit_planted, planted_session, synthetic_result
from markdown_it import MarkdownIt

from engine.outputs.report.item_content import FIELD_THRESHOLDS
from engine.outputs.report.markdown import (
    below_minimum,
    markdown_report,
    md_cell,
    md_item,
    md_text,
    plural,
)
from engine.outputs.report.report_md import MIN_PAIR, TOO_FEW, session_markdown


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


@pytest.mark.parametrize(
    "text",
    ["sample_data/plant_growth.csv", "Lumière's answer: 2+2 = 4", "C:/data/x.csv", "R1 > R2",
     "rater-1", "Q&A", "it's 50% right!"],
)  # fmt: skip
def test_plain_text_is_written_as_it_is(text):
    assert md_text(text) == text
    assert rendered(md_text(text)) == f"<p>{text.replace('&', '&amp;').replace('>', '&gt;')}</p>\n"


@pytest.mark.parametrize(
    "text",
    ["_emphasis_ and *strong*", "[link](javascript:x) ![i](y)", "<img src=x onerror=y>",
     "`code`", "a\\*b", "~~gone~~", "&lt;b&gt;", "<http://x>", "end\\"],
)  # fmt: skip
def test_what_would_act_is_escaped_and_shown_as_written(text):
    html = rendered(md_text(text))
    for tag in ("<em", "<strong", "<a ", "<img", "<code", "<del", "<s>", "<br"):
        assert tag not in html, (text, html)
    shown = html.removeprefix("<p>").removesuffix("</p>\n")
    expected = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert shown == expected


def test_a_pipe_ends_no_cell_and_a_list_item_starts_no_block():
    assert md_cell("a|b") == "a\\|b" and md_text("a|b") == "a|b"
    for start in ("- x", "# x", "> x", "1. x", "+ x", "= x"):
        html = rendered(f"- {md_item(start)}")
        assert html.count("<li>") == 1 and "<h1>" not in html and "<blockquote>" not in html
        assert "<ol" not in html


def test_singular_and_plural():
    assert plural(1, "configuration") == "1 configuration"
    assert plural(2, "configuration") == "2 configurations"
    assert plural(1200, "response") == "1,200 responses"


@pytest.mark.parametrize("noise", [0.3, 2.5])
def test_the_threshold_sentence_comes_only_with_a_mark(noise):
    result = synthetic_result(150, noise=noise, second=False)
    text = markdown_report(result)
    marked = [m for m in FIELD_THRESHOLDS if below_minimum(m, result.metrics.get(m))]
    assert ("Marked:" in text) == bool(marked) and ("**below" in text) == bool(marked)
    assert "is marked" not in text
    assert (noise == 2.5) == bool(marked)  # clean clusters agree well; noisy ones do not
    assert "1 configuration tried" in text and "configurations tried" not in text
    assert "human \\ model" in text and "human \\\\ model" not in text


def test_each_pair_of_raters_once_with_n_and_too_few_below_twenty():
    frame, vectors = planted_session(seed=4, items=2, per_item=300)
    second = frame.sample(frac=0.4, random_state=1).index
    frame["score2"] = ""
    frame.loc[second, "score2"] = frame.loc[second, "score"]
    frame["rater2"] = ""
    raters = sorted(frame["rater"].unique())
    frame.loc[second, "rater2"] = [
        raters[(raters.index(r) + 1) % len(raters)] for r in frame.loc[second, "rater"]
    ]
    session = audit_planted(
        frame, vectors, second_score_column="score2", second_rater_column="rater2",
        **{k: v for k, v in FAST_SETTINGS.items() if k != "similarity_top_k"},
    )  # fmt: skip
    pairs = session.raters.pairs
    assert len({frozenset((p.first, p.second)) for p in pairs}) == len(pairs)
    assert all(p.first <= p.second for p in pairs)
    text = session_markdown(session)
    section = text[text.index("Pairs of raters") :]
    for p in pairs:
        line = next(line for line in section.splitlines()
                    if line.startswith(f"| {p.first} | {p.second} | {p.n} |"))  # fmt: skip
        assert (TOO_FEW in line) == (p.n < MIN_PAIR)
    assert any(p.n >= MIN_PAIR for p in pairs)


def test_report_md_opens_with_what_the_lead_concludes_in_report_htmls_order(
    small_items_read_twice,
):
    from engine.outputs.report.conclusions import conclusions

    session = small_items_read_twice
    text = session_markdown(session)
    found = conclusions(session, {"status": "none", "why": "x"})
    assert text.startswith(f"# parm audit report\n\n## Summary\n\n**{md_text(found.short)}**")
    order = [text.index(h) for h in ("## Summary", "**⚠ How consistent the raters are.**",
                                      "Scores that look wrong", "Who and what needs attention",
                                      "**What to do first:**", "## Items", "## Agreement between "
                                      "raters", "## The model's own fit", "## Item Q")]  # fmt: skip
    assert order == sorted(order)
    first = text[: text.index("## Items")]
    for word in ("in-sample", "memorised", "1.000"):
        assert word not in first, word
    assert "1. Go over the rubric with the raters" in first
    fit = text[text.index("## The model's own fit") : text.index("## Item Q")]
    assert "in-sample" in fit and "answers per score value" in fit
    table = text[text.index("## Items") : text.index("## Agreement between raters")]
    assert table.count("| too small |") == 6  # each item's in-sample kappa
    assert rendered(first).count("<li>") == len(found.steps)
