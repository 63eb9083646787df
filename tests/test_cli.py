"""The command line (parm_tui/cli.py): `parm --version`, help that shows `parm FILE`, examples
and readable types, and "did you mean" for a mistyped setting or column."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import FAST_CLI, SAMPLE_CSV, cli
from typer.testing import CliRunner

from parm_tui.cli import app


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_parm_version_prints_the_version():
    from importlib.metadata import version

    result = run("--version")
    assert result.exit_code == 0
    assert result.output.strip() == f"parm {version('parm')}"


def test_parm_help_shows_how_to_open_a_file_and_examples():
    result = run("--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "parm FILE" in text and "parm audit FILE" in text
    assert "parm sample_data/plant_growth.csv" in text


def test_audit_help_has_readable_types_and_examples():
    result = run("audit", "--help")
    assert result.exit_code == 0
    text = result.output
    for unreadable in ("<list[str]>", "<int range>", "<str>"):
        assert unreadable not in text
    assert "--set KEY=VALUE" in text and "--jobs N" in text and "--text-col COLUMN" in text
    assert "Examples" in text and "parm audit answers.csv --text-col response" in text


def test_a_mistyped_setting_gets_a_suggestion():
    code, output = cli(SAMPLE_CSV, "--set", "similarity_topk=10", *FAST_CLI)
    assert code == 2
    assert "Unknown setting 'similarity_topk'" in output
    assert "Did you mean 'similarity_top_k'?" in output
    assert "near_duplicate_threshold" not in output  # not every setting on one line


def test_a_mistyped_column_gets_a_suggestion(tmp_path):
    code, output = cli(SAMPLE_CSV, "--text-col", "answr", "--out", tmp_path / "o", *FAST_CLI)
    assert code == 2
    assert "the text column 'answr' does not exist" in output
    assert "Did you mean 'answer'?" in output


def test_existing_outputs_name_the_flag_that_replaces_them(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "predictions.csv").write_text("x\n")
    code, output = cli(SAMPLE_CSV, "--out", out, *FAST_CLI)
    assert code == 2
    assert "add --force to replace them" in " ".join(output.split())
    assert "in the CLI" not in output


# Column settings `parm audit` leaves to --set (or a settings file): shown in the review
# (question, reference) or read by a live session (kind), not needed to audit a file.
AUDIT_LEAVES_TO_SET = {"question_column", "reference_column", "kind_column"}


def _column_flags(command) -> dict[str, str]:
    """flag -> help of every column flag (--...-col, --...-cols) of a click command."""
    return {
        opt: param.help
        for param in command.params
        for opt in getattr(param, "opts", [])
        if opt.endswith(("-col", "-cols"))
    }


def test_every_column_flag_is_a_column_setting_with_the_tables_help():
    import typer.main

    from engine.input.settings.declared import BY_NAME, COLUMN_KEYS
    from parm_tui.cli import app, column_flag

    by_flag = {column_flag(name): name for name in COLUMN_KEYS}
    assert len(by_flag) == len(COLUMN_KEYS)  # one flag per setting, none shared
    group = typer.main.get_command(app)
    seen = 0
    for name, command in group.commands.items():
        for flag, help_text in _column_flags(command).items():
            assert flag in by_flag, (name, flag)  # no flag without its setting
            assert help_text == BY_NAME[by_flag[flag]].help, (name, flag)
            seen += 1
    assert seen >= 20  # audit's, monitor's and embed's
    audit = set(_column_flags(group.commands["audit"]))
    assert {by_flag[f] for f in audit} == set(COLUMN_KEYS) - AUDIT_LEAVES_TO_SET


# What `parm --help` and a file's first error must not wait for: each takes a second or more
# to import (issue 49: start-up off the critical path).
HEAVY = ("torch", "sentence_transformers", "transformers", "sklearn", "scipy.stats")
STARTUP_CHILD = """
import json, sys
from parm_tui.cli import main
heavy = lambda: [m for m in {heavy!r} if m in sys.modules]
imported = heavy()
try:
    main(["audit", sys.argv[1], "--score-col", "nope", "--out", sys.argv[2]])
except SystemExit as exc:
    code = exc.code
print(json.dumps({{"imported": imported, "code": code, "read": heavy()}}))
"""


def test_the_cli_and_a_files_error_import_nothing_heavy(tmp_path):
    """Importing the CLI loads none of HEAVY; nor does reading the file, choosing its columns
    and stopping at a missing column (exit 2 with the one-line error)."""
    code = STARTUP_CHILD.format(heavy=HEAVY)
    child = [sys.executable, "-c", code, str(SAMPLE_CSV), str(tmp_path / "out")]
    done = subprocess.run(child, capture_output=True, text=True, timeout=120, check=False)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"imported": [], "code": 2, "read": []}, done.stderr
    assert "the score column 'nope' does not exist" in done.stderr
    assert not (tmp_path / "out").exists()
