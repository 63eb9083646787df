"""`parm audit` (parm_tui/headless.py) end to end: on the sample data it writes the documented outputs,
consistently; on a file of items and raters it writes the session's."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import SAMPLE_CSV, clustered_embeddings, session_frame, write_rows
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score
from typer.testing import CliRunner

from engine.input.settings.config import load_defaults
from parm_tui.cli import app

PREDICTION_COLUMNS = ["row", "id", "text", "score", "predicted"]
TAIL_COLUMNS = ["severity", "flagged", "evidence"]
TUNING_COLUMNS = ["top_k", "power", "accuracy", "kappa", "qwk", "near", "f1", "nll", "selected"]
METRICS = ["accuracy", "kappa", "qwk", "near", "f1", "nll"]


def run_audit_cli(*args: str):
    result = CliRunner().invoke(app, ["audit", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def sample_rows():
    with open(SAMPLE_CSV, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def default_run(sample_embeddings_file, tmp_path_factory):
    """One audit of the sample data with the default settings and the session's embeddings."""
    out = tmp_path_factory.mktemp("audit-default")
    result = run_audit_cli(SAMPLE_CSV, "--embeddings", sample_embeddings_file, "--out", out)
    return out, result


def test_audit_writes_all_outputs_and_a_summary(default_run):
    out, result = default_run
    for name in ("predictions.csv", "tuning.csv", "report.json", "report.md"):
        assert (out / name).is_file(), name
    assert "Selected: K=" in result.output and "flagged" in result.output
    # A file of one item: the session model's figure is said once, on its own line.
    assert result.output.lower().count("session model qwk") == 1


def test_predictions_have_the_documented_columns_and_one_row_per_answer(default_run):
    out, _ = default_run
    header, rows = read_csv(out / "predictions.csv")
    labels = json.loads((out / "report.json").read_text())["items"][0]["input"]["labels"]
    assert labels == ["0", "1", "2"]
    # score2 is guessed as the second score, as the app's Load screen guesses it.
    assert header == [
        *PREDICTION_COLUMNS,
        *(f"p_{label}" for label in labels),
        *TAIL_COLUMNS,
        "score2",
        "raters_disagree",
        "run_id",
    ]
    source = sample_rows()
    assert len(rows) == len(source)
    col = {name: k for k, name in enumerate(header)}
    for k, (row, original) in enumerate(zip(rows, source)):
        assert int(row[col["row"]]) == k + 1
        assert row[col["id"]] == original["id"]
        assert row[col["score"]] == original["score"]
        # text round-trips, except for the quote that guards spreadsheet formulas
        assert row[col["text"]] in (original["answer"], "'" + original["answer"])
        p = np.array([float(row[col[f"p_{label}"]]) for label in labels])
        assert p.sum() == pytest.approx(1.0, abs=1e-5)
        assert row[col["predicted"]] == labels[int(np.argmax(p))]
        assert row[col["flagged"]] in ("True", "False")
        assert math.isfinite(float(row[col["severity"]]))
    # Flagged means likely wrong: on a file read twice throughout, as many answers from the top
    # of the queue as there are answers whose reads differ (seen, not estimated).
    flagged = sum(row[col["flagged"]] == "True" for row in rows)
    assert flagged == sum(row[col["raters_disagree"]] == "True" for row in rows) > 0


def test_tuning_has_one_row_per_default_k_and_one_selected(default_run):
    out, _ = default_run
    header, rows = read_csv(out / "tuning.csv")
    assert header == [*TUNING_COLUMNS, "run_id"]
    defaults = load_defaults()
    assert [int(r[0]) for r in rows] == list(defaults.top_k_values)
    assert {float(r[1]) for r in rows} == {1.0}
    selected = [r for r in rows if r[header.index("selected")] == "True"]
    assert len(selected) == 1
    kappas = [float(r[header.index("kappa")]) for r in rows]
    assert float(selected[0][header.index("kappa")]) == max(kappas)


def test_report_matches_the_tuning_table_and_the_predictions(default_run):
    out, _ = default_run
    report = json.loads((out / "report.json").read_text())
    assert report["config"] == load_defaults().updated(second_score_column="score2").to_dict()
    assert report["items"][0]["similarity_mode"] == "single-vector"
    assert set(report["items"][0]["timings_seconds"]) >= {
        "embedding",
        "neighbours",
        "tuning",
        "total",
    }

    header, rows = read_csv(out / "tuning.csv")
    (chosen,) = [r for r in rows if r[header.index("selected")] == "True"]
    assert report["items"][0]["selected"]["top_k"] == int(chosen[0])
    assert report["items"][0]["selected"]["power"] == float(chosen[1])
    assert list(report["items"][0]["metrics"]) == METRICS
    for name in METRICS:
        assert report["items"][0]["metrics"][name] == pytest.approx(
            float(chosen[header.index(name)]), abs=2e-6
        )

    # the metrics are those of the predictions file, recomputed with scikit-learn
    pheader, prows = read_csv(out / "predictions.csv")
    human = np.array([int(r[pheader.index("score")]) for r in prows])
    predicted = np.array([int(r[pheader.index("predicted")]) for r in prows])
    proba = np.array([[float(r[pheader.index(f"p_{c}")]) for c in "012"] for r in prows])
    labels = [0, 1, 2]
    expected = {
        "accuracy": accuracy_score(human, predicted),
        "kappa": cohen_kappa_score(human, predicted, labels=labels),
        "qwk": cohen_kappa_score(human, predicted, labels=labels, weights="quadratic"),
        "near": np.mean(np.abs(human - predicted) <= 1),
        "f1": f1_score(human, predicted, labels=labels, average="macro"),
        "nll": -np.mean(np.log(proba[np.arange(len(human)), human])),
    }
    for name, value in expected.items():
        assert report["items"][0]["metrics"][name] == pytest.approx(value, abs=1e-4), name


def test_report_lists_every_parameter_with_a_standard_error(default_run):
    out, _ = default_run
    report = json.loads((out / "report.json").read_text())
    names = [p["name"] for p in report["items"][0]["parameters"]]
    assert names == ["beta_1", "beta_2", "gamma_1", "gamma_2", "mu_1", "mu_2"]
    for parameter in report["items"][0]["parameters"]:
        assert math.isfinite(parameter["estimate"])
        assert parameter["se"] is not None and parameter["se"] > 0
    assert report["items"][0]["optimiser"]["converged"] is True


def test_grid_settings_from_the_command_line_are_evaluated_completely(
    sample_embeddings_file, tmp_path
):
    out = tmp_path / "grid"
    run_audit_cli(
        SAMPLE_CSV,
        "--embeddings",
        sample_embeddings_file,
        "--out",
        out,
        "--set",
        "similarity_top_k=[5, 15]",
        "--set",
        "similarity_power=[1, 2, 4]",
        "--set",
        "selection_metric=nll",
    )
    header, rows = read_csv(out / "tuning.csv")
    assert [(int(r[0]), float(r[1])) for r in rows] == [
        (k, p) for k in (5, 15) for p in (1.0, 2.0, 4.0)
    ]
    nll = [float(r[header.index("nll")]) for r in rows]
    assert [r[header.index("selected")] for r in rows].index("True") == nll.index(min(nll))
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["similarity_power"] == [1.0, 2.0, 4.0]
    assert report["config"]["selection_metric"] == "nll"


def test_existing_outputs_are_not_overwritten_without_force(default_run, sample_embeddings_file):
    out, _ = default_run
    before = (out / "report.json").read_text()
    result = CliRunner().invoke(
        app,
        [
            "audit",
            str(SAMPLE_CSV),
            "--embeddings",
            str(sample_embeddings_file),
            "--out",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 2
    assert "--force" in result.output
    assert (out / "report.json").read_text() == before


@pytest.mark.slow
def test_audit_embeds_with_the_bundled_model_and_reuses_the_cache(tmp_path, monkeypatch):
    """The one test that embeds through the CLI. It uses the first 80 answers of the sample so
    it stays quick, and an empty cache folder so the first run must embed."""
    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path / "cache"))
    rows = sample_rows()[:80]
    data = tmp_path / "plant_growth_head.csv"
    with open(data, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    settings = ["--set", "similarity_top_k=[5, 10]"]
    run_audit_cli(data, "--out", tmp_path / "first", *settings)
    # --rerun: the same file and settings would reuse the first run (tests/test_reuse.py).
    run_audit_cli(data, "--out", tmp_path / "second", *settings, "--rerun")
    # report.json schema 2: a file without items is a session of one item.
    first = json.loads((tmp_path / "first" / "report.json").read_text())["items"][0]
    second = json.loads((tmp_path / "second" / "report.json").read_text())["items"][0]
    assert first["embedding"]["model"] == load_defaults().embedding_model
    assert first["embedding"]["cached"] is False
    assert second["embedding"]["cached"] is True
    assert second["metrics"] == first["metrics"]
    # The same predictions; only the run each file names differs.
    first_rows, second_rows = (
        read_csv(tmp_path / run / "predictions.csv") for run in ("first", "second")
    )
    assert first_rows[0] == second_rows[0] and first_rows[0][-1] == "run_id"
    assert [r[:-1] for r in first_rows[1]] == [r[:-1] for r in second_rows[1]]


# -- score labels without and with a stated order ---------------------------------------------

LEVELS = {"0": "low", "1": "medium", "2": "high"}
QUICK = ["--set", "bootstrap_samples=0", "--set", "cross_fit_folds=0"]


@pytest.fixture(scope="module")
def text_labels_csv(tmp_path_factory):
    """The sample data with its scores 0, 1, 2 written as low, medium, high (both raters)."""
    path = tmp_path_factory.mktemp("levels") / "levels.csv"
    rows = sample_rows()
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "score": LEVELS[row["score"]], "score2": LEVELS[row["score2"]]})
    return path


def test_unordered_text_labels_leave_out_qwk_and_near_and_say_why(
    text_labels_csv, sample_embeddings_file, tmp_path
):
    out = tmp_path / "nominal"
    result = run_audit_cli(
        text_labels_csv, "--embeddings", sample_embeddings_file, "--out", out,
        "--second-score-col", "score2", *QUICK,
    )  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    assert report["items"][0]["input"]["scores_ordered"] is False
    assert list(report["items"][0]["metrics"]) == ["accuracy", "kappa", "f1", "nll"]
    assert report["items"][0]["metrics_left_out"]["metrics"] == ["qwk", "near"]
    assert "no stated order" in report["items"][0]["metrics_left_out"]["reason"]
    assert set(report["items"][0]["second_rater"]["rater1_vs_rater2"]) == {"exact", "kappa"}
    header, _ = read_csv(out / "tuning.csv")
    assert header == ["top_k", "power", "accuracy", "kappa", "f1", "nll", "selected", "run_id"]
    markdown = (out / "report.md").read_text()
    assert "Quadratic weighted kappa" not in markdown and "Near agreement" not in markdown
    assert "QWK and near agreement are left out: the score labels are text" in markdown
    headline = " ".join(result.output.split()).split("Selected: ")[1]
    assert "QWK" not in headline.split("QWK and near agreement are left out")[0]
    assert "QWK and near agreement are left out: the score labels are text" in headline
    assert "treated as nominal" in result.output  # the one-line warning


def test_score_order_on_the_command_line_gives_the_numeric_run(
    text_labels_csv, sample_embeddings_file, default_run, tmp_path
):
    out = tmp_path / "ordered"
    run_audit_cli(
        text_labels_csv, "--embeddings", sample_embeddings_file, "--out", out,
        "--score-order", "low,medium,high", *QUICK,
    )  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    numeric = json.loads((default_run[0] / "report.json").read_text())
    assert report["items"][0]["input"]["labels"] == ["low", "medium", "high"]
    assert report["items"][0]["input"]["scores_ordered"] is True
    assert report["items"][0]["metrics_left_out"] is None
    assert report["items"][0]["metrics"] == pytest.approx(numeric["items"][0]["metrics"], abs=1e-9)


def test_selecting_by_qwk_with_unordered_labels_is_refused(text_labels_csv, tmp_path):
    result = CliRunner().invoke(
        app,
        ["audit", str(text_labels_csv), "--out", str(tmp_path / "x"), "--quiet"]
        + ["--set", "selection_metric=qwk"],
    )
    assert result.exit_code == 2
    assert "'selection_metric' = \"qwk\" needs ordered scores" in result.output
    assert "Set score_order" in result.output
    assert not (tmp_path / "x").exists()


def test_parm_audit_with_items_and_raters_writes_the_session(tmp_path):
    from typer.testing import CliRunner

    from parm_tui.cli import app

    frame, vectors = session_frame()
    frame.to_csv(tmp_path / "session.csv", index=False)
    np.save(tmp_path / "session.npy", vectors)
    args = ["audit", str(tmp_path / "session.csv"), "--embeddings", str(tmp_path / "session.npy"),
            "--item-col", "item", "--rater-col", "rater", "--out", str(tmp_path / "out"),
            "--set", "similarity_top_k=[5,10]", "--set", "bootstrap_samples=0"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    for name in ("predictions.csv", "tuning.csv", "report.json", "report.md", "items.csv",
                 "raters.csv"):  # fmt: skip
        assert (tmp_path / "out" / name).is_file()
    assert (
        "Item A: Selected: K=" in result.output and "2 item(s) audited, 0 skipped" in result.output
    )
    assert "raters, farthest from the rest:" in result.output
    # The cross-fitted figures lead, the in-sample ones beside them; the session model's line.
    pooled = next(line for line in result.output.splitlines() if line.startswith("Session (all"))
    assert re.match(
        r"Session \(all items pooled\): kappa \d\.\d{3} cross-fitted \(in-sample", pooled
    )
    assert re.search(r"^Session model QWK \d\.\d{3} cross-fitted \(in-sample", result.output, re.M)
    assert re.search(
        r"Item A: Selected: K=\d+, p=1, chosen by kappa over 2 configurations\. kappa \d\.\d{3} "
        "cross-fitted",
        result.output,
    )
    # What the lead concludes, the first sentences of report.html: no answer is read twice here.
    short = next(line for line in result.output.splitlines() if line.startswith("In short: "))
    assert short.startswith("In short: parm cannot say how consistent the raters are: no answer "
                            "is read twice. parm flags ")  # fmt: skip
    assert short.removeprefix("In short: ") in " ".join(
        (tmp_path / "out" / "report.md").read_text().split()
    )
    missing = CliRunner().invoke(app, [*args[:2], "--item-col", "question", "--out",
                                       str(tmp_path / "o2"), "--quiet"])  # fmt: skip
    assert missing.exit_code == 2 and "item column 'question' does not exist" in missing.output


def session_files(tmp_path, **columns):
    """A session table (items A and B, a rater column, a second score) as CSV and .npy."""
    frame, vectors = session_frame()
    frame["score2"] = frame["score"].where(frame.index % 4 == 0, "")
    for name, values in columns.items():
        frame[name] = values
    frame.to_csv(tmp_path / "session.csv", index=False)
    np.save(tmp_path / "session.npy", vectors)
    return tmp_path / "session.csv", tmp_path / "session.npy"


QUICK = ["--set", "bootstrap_samples=0", "--set", "cross_fit_folds=0"]


def test_parm_audit_guesses_the_columns_the_app_guesses_unless_told_not_to(tmp_path):
    path, vectors = session_files(tmp_path, school=["North", "South"] * 55)
    args = ["audit", str(path), "--embeddings", str(vectors), *QUICK, "--set",
            "similarity_top_k=[5,10]"]  # fmt: skip
    guessed = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert guessed.exit_code == 0, guessed.output
    said = " ".join(guessed.output.split())
    assert (
        "Guessed columns: id = none (row numbers identify the responses), second score = "
        "score2, item = item, rater = rater. (--no-guess turns guessing off.)"
    ) in said
    # Each said once; the column parm leaves unread is named.
    assert said.count("Guessed columns") == 1 and said.count("Not used: school.") == 1
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["config"]["item_column"] == "item" and report["raters"] is not None
    plain = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b"), "--no-guess",
                                     "--set", "id_column=null"])  # fmt: skip
    assert plain.exit_code == 0, plain.output
    assert "Guessed" not in plain.output
    report = json.loads((tmp_path / "b" / "report.json").read_text())
    assert report["config"]["item_column"] is None and report["items"][0]["second_rater"] is None


def test_parm_export_writes_the_newest_saved_run_or_the_one_asked_for(tmp_path):
    path, vectors = session_files(tmp_path)
    runs = []
    for k in ("5", "10"):
        out = tmp_path / f"audit-{k}"
        result = CliRunner().invoke(app, ["audit", str(path), "--embeddings", str(vectors),
                                          *QUICK, "--set", f"similarity_top_k=[{k}]",
                                          "--out", str(out)])  # fmt: skip
        assert result.exit_code == 0, result.output
        runs.append(json.loads((out / "report.json").read_text())["run_id"])
    from engine import workspace

    # Each run keeps where it wrote: the folder the app's Export offers for it.
    kept = workspace.open_file(path).runs
    assert [run.out_folder for run in kept] == [
        str(tmp_path / "audit-10"),
        str(tmp_path / "audit-5"),
    ]
    newest = CliRunner().invoke(app, ["export", str(path), "--out", str(tmp_path / "e1")])
    assert newest.exit_code == 0, newest.output
    assert workspace.open_file(path).runs[0].out_folder == str(tmp_path / "e1")
    assert f"Exported run {runs[1]}" in newest.output and "nothing run again" in newest.output
    names = sorted(p.name for p in (tmp_path / "e1").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "audit-10").iterdir())
    earlier = CliRunner().invoke(
        app, ["export", str(path), "--run", runs[0], "--out", str(tmp_path / "e2")]
    )
    assert earlier.exit_code == 0, earlier.output
    report = json.loads((tmp_path / "e2" / "report.json").read_text())
    assert report["run_id"] == runs[0]
    assert {i["top_k"] for i in report["items_overview"]} == {5}
    unknown = CliRunner().invoke(app, ["export", str(path), "--run", "nope", "--out",
                                       str(tmp_path / "e3")])  # fmt: skip
    assert unknown.exit_code == 2 and "No saved run nope" in unknown.output
    assert runs[0] in unknown.output  # the kept runs are named
    again = CliRunner().invoke(app, ["export", str(path), "--out", str(tmp_path / "e1")])
    assert again.exit_code == 2 and "--force" in again.output


def test_parm_export_of_a_file_never_audited_says_what_to_do(tmp_path):
    path, _ = session_files(tmp_path)
    result = CliRunner().invoke(app, ["export", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "has no saved audit" in result.output
    assert "parm audit" in result.output and not (tmp_path / "out").exists()


def test_progress_bars_keep_their_counts_and_time_whole_at_80_columns():
    import io

    from rich.console import Console

    from engine.core.progress import ProgressEvent
    from parm_tui.headless import StageBars, progress_bars

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=80, color_system=None)
    with progress_bars(console, quiet=False) as progress:
        bars = StageBars(progress)
        bars(ProgressEvent("tuning", 3, 10, "item 12.11: K=25, p=1: kappa=0.849 " + "x" * 40))
        bars(ProgressEvent("embedding", 250, 756, "item 12.11: loaded from cache"))
        progress.refresh()
    # The last frame: each bar's line after the cursor moves.
    frame = buffer.getvalue().rsplit("\x1b[1A\x1b[2K", 1)[1]
    lines = [line.rstrip() for line in frame.split("\x1b[?25h")[0].splitlines()]
    assert [len(line) <= 80 for line in lines] == [True, True]
    tuning, embedding = sorted(lines, key=lambda line: not line.startswith("Tuning"))
    assert tuning.endswith("3/10   -:--:--") and "kappa=0.849 x" in tuning and "…" in tuning
    assert embedding.endswith("250/756 -:--:--") and "loaded from cache" in embedding


def without_a_writable_home(tmp_path) -> dict:
    """The environment of a user whose home folder cannot be written (it is a file: no folder
    can be made in it, by root either; with HOME unset Python falls back to the password
    database's home, writable here)."""
    unset = ("HOME", "MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
    env = {key: value for key, value in os.environ.items() if key not in unset}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    env["HOME"] = str(tmp_path / "home-is-a-file")
    (tmp_path / "home-is-a-file").write_text("")
    return env


def test_a_report_plot_says_nothing_where_the_home_folder_cannot_be_written(tmp_path):
    """matplotlib, imported as report.html imports it, must not advise about MPLCONFIGDIR on
    stderr (-q promises errors only) when it cannot write its usual folders."""
    plot = ("from engine.outputs.report.plots.drawing import score_distribution; "
            "print(score_distribution(['0', '1'], {'rater': [3, 4]}, 'Scores')[:4])")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", plot], capture_output=True, text=True,
                          env=without_a_writable_home(tmp_path), timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout == "<svg\n"


@pytest.mark.slow
def test_quiet_says_nothing_where_the_home_folder_cannot_be_written(tmp_path):
    """The whole of `parm audit -q` (report.html and all) on such a home: nothing printed."""
    vectors, scores = clustered_embeddings(60, 3, seed=3)
    np.save(tmp_path / "emb.npy", vectors)
    rows = [[f"s{i}", f"Plants need light {i}", int(scores[i])] for i in range(60)]
    path = write_rows(tmp_path / "answers.csv", ["id", "answer", "score"], rows)
    command = [sys.executable, "-c", "from parm_tui.launch import main; main()", "audit",
               str(path), "--embeddings", str(tmp_path / "emb.npy"), "--out",
               str(tmp_path / "out"), "--set", "similarity_top_k=[5,10]", "-q"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True,
                          env=without_a_writable_home(tmp_path), timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout == ""
    assert "<svg" in (tmp_path / "out" / "report.html").read_text()


@pytest.mark.parametrize(
    "request_class",
    ["parm_tui.headless:AuditRequest", "parm_tui.monitor_run:MonitorRequest",
     "parm_tui.serve_run:ServeRequest"],
)  # fmt: skip
def test_a_commands_request_is_built_by_keyword_only(request_class):
    """`parm audit`'s request has three booleans in a row: by position one could take another's
    place unseen, so every request refuses positions."""
    import dataclasses
    import importlib

    module, name = request_class.split(":")
    cls = getattr(importlib.import_module(module), name)
    fields = dataclasses.fields(cls)
    assert all(field.kw_only for field in fields)
    with pytest.raises(TypeError, match="positional"):
        cls(*(Path("x") for _ in fields))


FINISHING = """
import atexit, sys, threading, time
from pathlib import Path
folder = Path(sys.argv[1])
atexit.register(lambda: (folder / "atexit").write_text("ran"))
def late():
    time.sleep(0.3)
    (folder / "thread").write_text("ran")
threading.Thread(target=late).start()
print("before", end="")  # a pipe: block-buffered, written only if flushed
from parm_tui.launch import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize(("args", "code"), [(["--version"], 0), (["audit"], 2)])
def test_a_command_leaves_as_the_interpreter_would_without_its_teardown(tmp_path, args, code):
    """parm_tui.launch leaves with os._exit after a command, skipping the teardown of every
    module: what finalising does first still happens (a thread still running is waited for,
    atexit handlers run, buffered output is flushed) and the code is the command's."""
    done = subprocess.run([sys.executable, "-c", FINISHING, str(tmp_path), *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == code, done.stderr
    assert done.stdout.startswith("before")
    assert (tmp_path / "thread").read_text() == "ran"
    assert (tmp_path / "atexit").read_text() == "ran"
