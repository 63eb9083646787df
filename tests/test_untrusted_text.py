"""Untrusted text stays inert: the hostile file (tests/hostile.py) through the table reader, the
real CLI in a subprocess, report.md rendered by a Markdown library, every CSV opened with the
csv module, and the app driven by Pilot with its rendered screens checked."""

from __future__ import annotations

import html
import io
import json
import os
import re
import subprocess
import sys

import pytest
from helpers import ROOT, cli, record
from hostile import (
    FORMULAS,
    HTML,
    ID_COLUMN,
    LABELS,
    MARKUP,
    OSC52,
    SECOND_COLUMN,
    UNSAFE,
    N,
    check_csv_inert,
    check_html_inert,
    unsafe_characters,
    write_hostile,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from engine.core.text import PLACEHOLDER, is_safe, safe_text, sanitise
from engine.input.table import read_table
from engine.outputs.write import guard_cell
from engine.saved.decisions import open_store

SAFE_ID = safe_text(ID_COLUMN)
SAFE_SECOND = safe_text(SECOND_COLUMN)


# -- the one sanitising function ---------------------------------------------------------------
def test_safe_text_replaces_every_control_but_tab_and_newline():
    controls = [chr(c) for c in range(0x20)] + [chr(c) for c in range(0x7F, 0xA0)]
    bidi = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
    for char in controls + bidi:
        expected = {"\t": "\t", "\n": "\n", "\r": "\n"}.get(char, PLACEHOLDER)
        assert safe_text(f"a{char}b") == f"a{expected}b", repr(char)
    assert safe_text("line\r\nnext\rlast") == "line\nnext\nlast"
    assert safe_text("tab\tand\nnewline", one_line=True) == "tab and newline"
    kept = "Lumière, 日本語, emoji 🌱, Arabic مرحبا, U+200F\u200f and U+FFFD \ufffd"
    assert safe_text(kept) == kept and is_safe(kept)
    assert sanitise("\x1b]52;c;x\x07\r\n\x9b") == ("\ufffd]52;c;x\ufffd\n\ufffd", 3)


def test_the_table_reader_makes_every_cell_and_column_name_inert(tmp_path):
    path, _ = write_hostile(tmp_path)
    frame = read_table(path)
    assert list(frame.columns)[:3] == [SAFE_ID, "answer", "score"]
    cells = [str(c) for c in frame.columns] + [str(v) for v in frame.to_numpy().ravel()]
    assert all(not UNSAFE.search(cell) for cell in cells)
    assert sorted(set(frame["score"])) == [safe_text(label) for label in LABELS]
    assert frame["answer"][0].endswith("\nsecond line\nthird")  # CR LF and CR: line ends
    (warning,) = frame.attrs["warnings"]
    assert "control character(s)" in warning and "U+FFFD" in warning


def test_progress_shows_a_model_name_with_markup_and_escapes_as_text():
    from rich.console import Console

    from engine.core.progress import ProgressEvent
    from parm_tui.headless import StageBars, progress_bars

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=200, color_system=None)
    with progress_bars(console, quiet=False) as progress:
        bars = StageBars(progress)
        bars(ProgressEvent("embedding", 0, 10, "loading model [/]odd[bold]\x1b]52;c;eA==\x07"))
        progress.refresh()
    shown = buffer.getvalue()
    assert "loading model [/]odd[bold]\ufffd]52;c;eA==\ufffd" in shown
    assert "\x1b]" not in shown and "\x07" not in shown  # Rich's own cursor moves only


# -- the CLI, as a subprocess, on the hostile file ---------------------------------------------
@pytest.fixture(scope="module")
def hostile_audit(tmp_path_factory):
    """`parm audit` on the hostile file (with an id and second-rater column of hostile names);
    returns (completed process, output folder)."""
    folder = tmp_path_factory.mktemp("hostile")
    path, embeddings = write_hostile(folder)
    command = [
        sys.executable, "-c", "from parm_tui.launch import main; main()", "audit", path.name,
        "--embeddings", embeddings.name, "--id-col", SAFE_ID, "--second-score-col", SAFE_SECOND,
        "--set", "similarity_top_k=[5,10]", "--set", "bootstrap_samples=20", "--out", "out",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, timeout=300)
    return done, folder / "out"


def test_cli_output_on_hostile_input_has_no_control_bytes(hostile_audit):
    done, _ = hostile_audit
    stdout, stderr = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert done.returncode == 0, stderr
    assert unsafe_characters(stdout + stderr) == []
    assert "control character(s)" in stderr and "Traceback" not in stderr


def test_every_exported_csv_is_inert_and_numbers_stay_numbers(hostile_audit):
    _, out = hostile_audit
    predictions = check_csv_inert(out / "predictions.csv")
    check_csv_inert(out / "tuning.csv")
    header, rows = predictions[0], predictions[1:]
    assert len(rows) == N
    severity = [row[header.index("severity")] for row in rows]
    # Numbers, not text guarded by a leading ' (severity is in [0, 1]).
    assert all(0.0 <= float(value) <= 1.0 for value in severity)
    assert {row[header.index("score")] for row in rows} == {
        guard_cell(safe_text(label)) for label in LABELS
    }
    texts = [row[header.index("text")] for row in rows]
    assert any("\n=2+2" in text for text in texts)  # after a newline: text inside a quoted cell
    assert any(text.startswith("'\"=HYPERLINK") for text in texts)
    assert any(text.startswith("' =1+1") for text in texts)


def test_report_json_is_valid_and_inert(hostile_audit):
    _, out = hostile_audit
    text = (out / "report.json").read_text(encoding="utf-8")
    assert unsafe_characters(text) == []
    data = json.loads(text)
    assert data["config"]["id_column"] == SAFE_ID


def tokens_of(markdown: str):
    """Every token markdown-it makes of the text, children included."""
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        yield token
        yield from token.children or ()


HEADINGS = {
    "parm audit report", "Data", "Settings",
    "Agreement between the model and the human scores", "Second rater",
    "Confusion matrix (rows: human score, columns: model)", "Top 20 responses to review",
    "Consistency: near-duplicates with different scores", "Parameters",
    "What the uncertainty figures mean", "Warnings", "Review decisions", "Agreement between raters",
    # The two score columns are two raters (named by the columns): the rater section.
    "Raters", "Verdicts",
    "Summary",
    "Today's lists",
}  # fmt: skip


def test_report_md_renders_no_html_link_heading_or_column_from_data(hostile_audit):
    _, out = hostile_audit
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert unsafe_characters(markdown) == []
    tokens = list(tokens_of(markdown))
    kinds = {token.type for token in tokens}
    assert not kinds & {"html_inline", "html_block", "link_open", "image", "em_open"}
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert set(headings) <= HEADINGS and len(headings) == len(set(headings))
    assert {t.content for t in tokens if t.type == "code_inline"} <= {"raters_disagree"}
    widths, row = [], 0
    for token in tokens:
        if token.type == "tr_open":
            row = 0
        elif token.type in ("th_open", "td_open"):
            row += 1
        elif token.type == "tr_close":
            widths.append(row)
        elif token.type == "table_close":
            assert len(set(widths)) == 1, widths  # no row has an extra column
            widths = []
    rendered = MarkdownIt("commonmark").enable("table").render(markdown)
    assert "<img" not in rendered and "<script" not in rendered and "<b>" not in rendered
    assert "&lt;img src=x onerror=alert(1)&gt;" in rendered  # shown, as text


def test_report_html_holds_no_element_attribute_or_url_from_the_data(hostile_audit):
    _, out = hostile_audit
    page = (out / "report.html").read_text(encoding="utf-8")
    text = check_html_inert(page)
    assert "<img src=x onerror=alert(1)><script>alert(2)</script>" in text  # shown, as text
    assert "[link](javascript:alert(3))" in text and SAFE_ID in text
    assert "<script" not in page and "<img" not in page


def test_parm_export_of_hostile_decisions_is_inert(tmp_path):
    from typer.testing import CliRunner

    from engine import workspace
    from parm_tui.cli import app as cli_app

    path, embeddings = write_hostile(tmp_path)
    code, output = cli(
        path, "--embeddings", embeddings, "--id-col", SAFE_ID, "--second-score-col",
        SAFE_SECOND, "--set", "similarity_top_k=[5,10]", "--set", "bootstrap_samples=0",
        "--out", tmp_path / "audit", "-q",
    )  # fmt: skip
    assert code == 0, output
    file = workspace.open_file(path)
    responses = workspace.restore(file, workspace.saved_run(file))[0].responses
    with open_store(path, responses, digest=file.digest) as store:
        human = responses.labels[responses.scores[0]]
        new = next(label for label in responses.labels if label != human)
        record(store, responses, 0, "change", new, note=FORMULAS[0] + " " + HTML)
        record(store, responses, 1, "unsure", note=MARKUP + OSC52)
    result = CliRunner().invoke(cli_app, ["export", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    rows = check_csv_inert(out / "scores_reviewed.csv")
    header = rows[0]
    first = rows[1 + int(responses.rows[0]) - 1]
    assert first[header.index("final_score")] == guard_cell(new)
    assert first[header.index("note")].startswith("'=cmd")
    check_csv_inert(out / "decisions.csv")
    text = check_html_inert((out / "report.html").read_text(encoding="utf-8"))
    assert "The review changed 1 score" in text


# -- the app, driven by Pilot ------------------------------------------------------------------
def screen_text(app) -> str:
    """What the current screen shows: the screenshot's SVG (raw, so a control character would
    be in it) and its text lines."""
    svg = app.export_screenshot()
    lines = re.findall(r">([^<]*)</text>", svg)
    return svg + "\n" + html.unescape("".join(lines)).replace("\xa0", " ")


@pytest.mark.slow
async def test_the_app_shows_hostile_input_without_control_characters(tmp_path):
    from helpers import open_review, wait_for

    from parm_tui.app import ParmApp

    path, embeddings = write_hostile(tmp_path)
    overrides = [f"id_column={SAFE_ID}", f"second_score_column={SAFE_SECOND}"]
    overrides += ["similarity_top_k=[5,10]", "bootstrap_samples=0", "cross_fit_folds=0"]
    app = ParmApp(path=path, embeddings_path=embeddings, overrides=overrides)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.state.store is not None, "the hostile file")
        shown = screen_text(app)
        assert "control character(s)" in " ".join(n.message for n in app._notifications)
        await pilot.press("f4")
        await wait_for(pilot, lambda: app.screen.id == "run-screen", "the run screen")
        await pilot.press("s")
        await wait_for(pilot, lambda: app.state.result is not None, "the audit")
        await pilot.pause()
        shown += screen_text(app)
        for tab in "234":
            await pilot.press(tab)
            await pilot.pause()
            shown += screen_text(app)
        review = await open_review(pilot)
        await pilot.press("a")
        for _ in range(6):
            await pilot.press("j")
            await pilot.pause()
            shown += screen_text(app)
        review.notify("[/] closes nothing [bold]" + ID_COLUMN + LABELS[0])
        await pilot.pause()
        shown += screen_text(app)
        # the toast wraps its line over the screen beneath: each line's part on its own
        assert "[/] closes nothing" in shown and "[bold]id" in shown
        assert app.return_code is None  # still running: nothing crashed
    assert unsafe_characters(shown) == []
    assert "onerror=alert(1)" in shown and "[bold]bold[/bold]" in shown  # shown, as text


async def test_a_pasted_note_keeps_no_control_characters():
    from textual.app import App
    from textual.widgets import Input

    from parm_tui.widgets.review_dialogs import NoteModal

    saved = []

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(NoteModal(3, ""), saved.append)

    async with Host().run_test() as pilot:
        pilot.app.screen.query_one(Input).value = "see \x1b]52;c;eA==\x07 rubric\u202e"
        await pilot.press("enter")
        await pilot.pause()
    assert saved == ["see \ufffd]52;c;eA==\ufffd rubric\ufffd"]


@pytest.mark.parametrize("number", ["-0.250000", "+1", "-1e-3", "-2"])
def test_signed_numbers_stay_numbers_in_a_csv_cell(number):
    # A leniency of -0.25 in raters.csv is a number to a spreadsheet, not a formula; the same
    # start followed by more than a number is guarded.
    assert guard_cell(number) == number
    assert guard_cell(number + "+A1") == "'" + number + "+A1"


def test_characters_misread_as_latin_1_are_restored_before_controls_are_replaced(tmp_path):
    """ASAP's essays hold "donâ\\x80\\x99t": a right quote's UTF-8 bytes read back as Latin-1
    and saved again; the C1 bytes were replaced by U+FFFD ("donâ\\ufffd\\ufffdt") and called
    terminal escape sequences. Restored instead, counted apart; a lone C1 control, or one
    that does not finish a character, is still replaced, and a restored bidi override too."""
    from engine.core.text import repair_misread

    assert repair_misread("don\u00e2\x80\x99t and \u00f0\x9f\x98\x80") == ("don’t and 😀", 2)
    for kept in ("café, Ã©", "a\x9bb", "\u00e2\x80", "\u00e0\x80\x80"):  # overlong: not UTF-8
        assert repair_misread(kept) == (kept, 0)
    path = tmp_path / "misread.csv"
    path.write_text(
        "answer,score\n"
        "I don\u00e2\x80\x99t know \u00e2\x80\x9cwhy\u00e2\x80\x9d,1\n"
        "turn \u00e2\x80\u00aeleft,0\nplain \x9b31m,1\n",
        encoding="utf-8",
    )
    frame = read_table(path)
    assert list(frame["answer"]) == [
        "I don’t know “why”", "turn \ufffdleft", "plain \ufffd31m"
    ]  # fmt: skip
    restored, replaced = frame.attrs["warnings"]
    assert "4 character(s) whose UTF-8 bytes had been read as Latin-1" in restored
    assert "2 control character(s)" in replaced


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(
    ["a", " ", ",", "\n", "\u00e2", "\u00c3", "\u00f0", "\x80", "\x99", "\x9b", "\u00ae",
     "\u00a9", "\u00bf", "\x1b", "’", "é"]), max_size=40))  # fmt: skip
def test_restoring_misread_characters_never_leaves_anything_a_terminal_acts_on(text):
    """Whatever the restoration makes of a text, sanitising it after leaves it inert, changes
    nothing in a text without a C1 control, never touches an ASCII character, and what it
    restores is one character for each sequence counted."""
    from engine.core.text import repair_misread

    restored, count = repair_misread(text)
    assert is_safe(sanitise(restored)[0])
    if not any("\x80" <= c <= "\x9f" for c in text):
        assert (restored, count) == (text, 0)
    assert [c for c in restored if c.isascii()] == [c for c in text if c.isascii()]
    assert len(text) - len(restored) >= count  # each restored sequence is 2-4 characters -> 1
