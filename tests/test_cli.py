"""The command line (parm_tui/cli.py): `parm --version`, help that shows `parm FILE`, examples
and readable types, and "did you mean" for a mistyped setting or column."""

from __future__ import annotations

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
