"""A run's warnings as data (engine/core/run_warnings.py): each of a declared kind and about an
item; grouped into one line per kind for the CLI and the app; every one in report.json and
warnings.txt; `--quiet` prints errors only; item names from the data stay inert."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import cli, run_frame, session_config, session_frame

from engine.core.run_warnings import KINDS, WARNING_KINDS, RunWarning, grouped, kind_of
from engine.outputs.names import WARNINGS_FILE

SMALL = "Only 30 usable responses: the estimates and agreement figures are imprecise"


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("Score '2.5' in column 'score' has a single response (row 9): its ...", "single_response"),
        ("Score '3' appears only in the second rater's column and has no ...", "second_rater_only"),
        (SMALL + " (parm is meant for 50 or more).", "small_item"),
        ("Not audited: 6 usable response(s).", "not_audited"),
        (
            "Setting 'similarity_top_k': left out K = 40, 45, not smaller than the number of "
            "responses (36).",
            "grid_cut",
        ),
        ("Embedding cache: 2 cached vector(s) in /x were damaged", "embedding_cache"),
        ("File a.csv is gzip-compressed; it was decompressed in memory.", "file"),
        ("Something no kind describes.", "other"),
    ],
)
def test_each_sentence_gets_its_declared_kind(sentence, kind):
    assert kind_of(sentence) == kind


def test_kinds_are_declared_once_with_other_last():
    assert len(KINDS) == len(WARNING_KINDS) and WARNING_KINDS[-1].key == "other"
    assert all(kind.summary and "\n" not in kind.summary for kind in WARNING_KINDS)


def test_groups_count_each_kind_and_name_the_first_items():
    warnings = [RunWarning.about(f"{SMALL}.", f"q{i}") for i in range(40)]
    warnings += [RunWarning.about("Score 'a' in column 's' has a single response (row 1).", "q7")]
    warnings += [RunWarning.about("Score 'b' in column 's' has a single response (row 2).", "q7")]
    groups = grouped(warnings)
    assert [g.kind.key for g in groups] == ["single_response", "small_item"]  # declared order
    single, small = groups
    assert (single.count, single.items) == (2, ("q7",))
    assert small.count == 40 and small.items[:2] == ("q0", "q1")
    assert small.line() == (
        f"40 x {KINDS['small_item'].summary}: items 'q0', 'q1', 'q2' and 37 more"
    )
    assert single.line() == f"2 x {KINDS['single_response'].summary}: item 'q7'"


ITEMS = tuple((name, 30, 3) for name in ("A", "B", "C", "D", "E"))


def test_a_session_gives_each_item_its_warnings_and_the_skipped_ones_theirs():
    frame, vectors = session_frame(items=(("tiny", 6, 2), *ITEMS))
    session = run_frame(frame, vectors, session_config())
    small = [w for w in session.warnings if w.kind == "small_item"]
    assert [w.item for w in small] == list(dict.fromkeys(frame["item"]))[:5]  # file order
    assert all(w.message.startswith("Only 30 usable responses") for w in small)
    (skipped,) = [w for w in session.warnings if w.kind == "not_audited"]
    assert skipped.item == "tiny" and skipped.text.startswith("Item 'tiny': Not audited: ")


@pytest.fixture(scope="module")
def many_items(tmp_path_factory):
    """A file of five small items, one named with a terminal escape and Rich markup."""
    folder = tmp_path_factory.mktemp("warnings")
    frame, vectors = session_frame(items=ITEMS)
    frame["item"] = frame["item"].replace("E", "E\x1b[31m[bold]red[/bold]")
    frame.to_csv(folder / "items.csv", index=False)
    np.save(folder / "items.npy", vectors)
    args = [folder / "items.csv", "--embeddings", folder / "items.npy", "--item-col", "item"]
    args += ["--set", "similarity_top_k=[5,10]", "--set", "bootstrap_samples=0"]
    # The items in file order, as read: the escape replaced (engine.input.table).
    order = [item.replace("\x1b", "\ufffd") for item in dict.fromkeys(frame["item"])]
    return folder, args, order


def test_the_cli_prints_one_line_per_kind_and_where_the_full_list_is(many_items, tmp_path):
    folder, args, order = many_items
    code, output = cli(*args, "--out", tmp_path / "out")
    assert code == 0, output
    first = ", ".join(f"'{item}'" for item in order[:3])
    lines = output.splitlines()
    small = [line for line in lines if KINDS["small_item"].summary in line]
    assert small == [f"Warning: 5 x {KINDS['small_item'].summary}: items {first} and 2 more"]
    assert not any(line.startswith("Warning: Item") for line in lines)  # no line per warning
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    n = len(report["warnings"])
    assert f"All {n} warnings, one a line: {tmp_path / 'out' / WARNINGS_FILE}" in output
    small = [(w["kind"], w["item"]) for w in report["warnings"] if w["kind"] == "small_item"]
    assert [item for _, item in small] == order
    text = (tmp_path / "out" / WARNINGS_FILE).read_text().splitlines()
    assert len(text) == n + 1
    assert f"[small_item] Item '{order[0]}': {SMALL} (parm is meant for 50 or more)." in text
    # The file's own warning (the replaced escapes) once, not once per item.
    assert sum(line.startswith("[file] File ") for line in text) == 1


def test_item_names_from_the_data_stay_inert(many_items, tmp_path):
    folder, args, _ = many_items
    code, output = cli(*args, "--out", tmp_path / "out")
    assert code == 0 and "\x1b" not in output
    assert "\x1b" not in (tmp_path / "out" / WARNINGS_FILE).read_text()
    html = (tmp_path / "out" / "report.html").read_text()
    assert "\x1b" not in html and "[bold]red[/bold]" in html and "<bold>" not in html
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    named = {w["item"] for w in report["warnings"]}
    assert "E\ufffd[31m[bold]red[/bold]" in named  # the escape replaced when the file was read


def test_quiet_prints_errors_only(many_items, tmp_path):
    folder, args, _ = many_items
    code, output = cli(*args, "--out", tmp_path / "out", "--quiet")
    assert code == 0 and output == ""
    assert (tmp_path / "out" / WARNINGS_FILE).is_file()
    code, output = cli(*args, "--out", tmp_path / "out", "--quiet")  # the outputs exist
    assert code == 2 and output.startswith("Error: ") and "--force" in output
