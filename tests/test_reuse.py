"""engine.workspace.reuse through `parm audit`: the same file (its bytes) with the same settings
opens the finished run instead of computing it; a changed byte, a changed setting, --rerun or
vectors handed in compute it again. Embedding uses helpers.FakeEncoder (no model loaded)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from helpers import SAMPLE_CSV, FakeEncoder, record, use_fake_model
from typer.testing import CliRunner

from engine import workspace
from engine.input.settings.config import load_defaults
from engine.outputs.manifest import read_set
from engine.outputs.names import MANIFEST_FILE
from parm_tui.cli import app

QUICK = ["--set", "bootstrap_samples=0", "--set", "similarity_top_k=[5, 10]"]


@pytest.fixture
def answers(tmp_path, monkeypatch):
    """The sample's first 150 answers (two reads each) in a file of this test's own, embedded
    by a stand-in model, whose vectors go to a cache of this test's own (never the bundled
    model's cache that other tests read)."""
    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path / "cache"))
    use_fake_model(monkeypatch, FakeEncoder())
    with open(SAMPLE_CSV, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[:151]
    path = tmp_path / "answers.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def audit(path, out, *args: str):
    result = CliRunner().invoke(app, ["audit", str(path), "--out", str(out), *QUICK, *args])
    assert result.exit_code == 0, result.output
    run_id = json.loads((out / "report.json").read_text())["run_id"]
    return run_id, result.output


def test_the_same_file_and_settings_reuse_the_run_and_keep_its_own_set(answers, tmp_path):
    first, said = audit(answers, tmp_path / "a")
    assert "Reused" not in said
    out = tmp_path / "b"
    again, said = audit(answers, out)
    assert again == first
    assert f"Reused the finished run {first} of {answers} (same file and settings)" in said
    assert "--rerun to compute it again" in said and "Reused: run" in said  # the progress line
    # The new folder has the whole set, the same tables as the run's first set.
    for name in ("predictions.csv", "tuning.csv", "decisions.csv"):
        assert (out / name).read_text() == (tmp_path / "a" / name).read_text()
    # The report keeps the run's own stages (saved with it) and adds this set's making.
    timings = json.loads((out / "report.json").read_text())["timings_seconds"]
    assert {"reading", "severity", "outputs", "total"} <= set(timings)
    # Into the same folder, without --force: the folder holds this very run, kept as it is.
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    assert audit(answers, out)[1].count("Kept the outputs") == 1
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before
    # A decision since: the set is written again, with it.
    file = workspace.open_file(answers)
    prepared, _ = workspace.restore(file, file.runs[0])
    store = workspace.open_review(prepared).store
    record(store, prepared.responses, 3, "keep", note="seen")
    store.close()
    third, said = audit(answers, out)
    assert third == first and "Reused" in said and "Kept the outputs" not in said
    assert "seen" in (out / "decisions.csv").read_text()


def test_a_reused_run_into_a_new_folder_copies_the_set_it_last_wrote(answers, tmp_path):
    """The set the run last wrote, when it is what writing it now would write, is copied (the
    same bytes, checked against its manifest), not made again; a decision since, a file changed
    in that folder, or the same bytes read from another path: written again."""
    first, _ = audit(answers, tmp_path / "a")
    again, said = audit(answers, tmp_path / "b")
    assert again == first and f"Copied the outputs from {tmp_path / 'a'}" in said
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == names
    for name in names:
        if name != MANIFEST_FILE:  # a manifest says when its set was written
            assert (tmp_path / "b" / name).read_bytes() == (tmp_path / "a" / name).read_bytes()
    manifests = [json.loads((tmp_path / f / MANIFEST_FILE).read_text()) for f in "ab"]
    for manifest in manifests:
        manifest.pop("written_at")
    assert manifests[0] == manifests[1]

    assert read_set(tmp_path / "b").one_run and read_set(tmp_path / "b").run_id == first
    # The run now remembers b: a changed file there is not copied, the set is made again.
    (tmp_path / "b" / "report.md").write_text("changed by someone", encoding="utf-8")
    _, said = audit(answers, tmp_path / "c")
    assert (
        "Copied" not in said
        and "changed by someone" not in (tmp_path / "c" / "report.md").read_text()
    )
    # A decision since the last set: made again, with it.
    file = workspace.open_file(answers)
    prepared, _ = workspace.restore(file, file.runs[0])
    store = workspace.open_review(prepared).store
    record(store, prepared.responses, 3, "keep", note="seen")
    store.close()
    _, said = audit(answers, tmp_path / "d")
    assert "Copied" not in said and "seen" in (tmp_path / "d" / "decisions.csv").read_text()
    # The same bytes under another name: reused, but its reports name the file as it is now.
    moved = tmp_path / "moved.csv"
    moved.write_bytes(answers.read_bytes())
    _, said = audit(moved, tmp_path / "e")
    report = json.loads((tmp_path / "e" / "report.json").read_text())
    assert "Copied" not in said and report["input"]["file"] == str(moved)


def test_rerun_a_changed_setting_or_a_changed_byte_compute_the_run_again(answers, tmp_path):
    first, _ = audit(answers, tmp_path / "a")
    again, said = audit(answers, tmp_path / "b", "--rerun")
    assert again != first and "Reused" not in said
    changed, said = audit(answers, tmp_path / "c", "--set", "similarity_power=[1.0]")
    assert changed not in (first, again) and "Reused" not in said
    text = answers.read_text(encoding="utf-8")
    answers.write_text(text.replace("sun", "Sun", 1), encoding="utf-8")
    other, said = audit(answers, tmp_path / "d")
    assert other not in (first, again, changed) and "Reused" not in said


def test_a_run_another_parm_kept_is_computed_again(answers, tmp_path, monkeypatch):
    """A run kept by another parm (another version, or changed engine sources) is not reused:
    the sample's run kept before a fix was reused after it and printed the fixed leak's figures.
    Its items are audited again too (their keys hold the same method version)."""
    import importlib

    first, _ = audit(answers, tmp_path / "a")
    for name in ("engine.saved.method", "engine.saved.items", "engine.saved.store"):
        monkeypatch.setattr(importlib.import_module(name), "method_version", lambda: "another parm")
    again, said = audit(answers, tmp_path / "b")
    assert again != first and "Reused" not in said and "reused" not in said.lower()
    third, said = audit(answers, tmp_path / "c")  # this parm's own run, kept: reused
    assert third == again and "Reused the finished run" in said


@pytest.mark.slow
def test_settings_outside_the_digest_reuse_and_vectors_handed_in_never_do(answers, tmp_path):
    first, _ = audit(answers, tmp_path / "a")
    audit(answers, tmp_path / "b", "--set", "similarity_power=[1.0]")
    # Each run is kept: the first is found again by its own settings.
    assert audit(answers, tmp_path / "c")[0] == first
    # The lead's lists are not in the digest: the run is reused, its set written under them.
    rate = load_defaults().backread_rate / 2
    reused, said = audit(answers, tmp_path / "d", "--set", f"backread_rate={rate}")
    assert reused == first and "Reused" in said
    report = json.loads((tmp_path / "d" / "report.json").read_text())
    assert report["config"]["backread_rate"] == rate
    # Vectors handed in are not part of the key: computed each time, and never reused by a
    # run that embeds the answers.
    np.save(tmp_path / "v.npy", FakeEncoder().encode([f"{k}" for k in range(150)]))
    given = [audit(answers, tmp_path / f"e{k}", "--embeddings", str(tmp_path / "v.npy"))[0]
             for k in range(2)]  # fmt: skip
    assert len({first, *given}) == 3
    embedded, said = audit(answers, tmp_path / "f")  # the newest run of these settings: given's
    assert embedded not in given and "Reused the finished run" not in said
    # Its item's audit is the first run's (embedded alike), never one made on given vectors
    # (engine.saved.items keeps none of those).
    assert "Reused the audits of 1 of 1 item unchanged" in said


def test_a_set_that_changes_after_its_check_is_not_copied(answers, tmp_path):
    """copy_set reads each file once and checks those bytes: a file changed (or gone) since
    the set was read writes nothing, and the caller writes the set instead."""

    audit(answers, tmp_path / "a")
    found = read_set(tmp_path / "a")
    assert found.one_run
    (tmp_path / "a" / "report.md").write_text("changed meanwhile", encoding="utf-8")
    assert workspace.copy_set(found, tmp_path / "b") is None
    assert not (tmp_path / "b").exists()
    (tmp_path / "a" / "report.md").unlink()
    assert workspace.copy_set(found, tmp_path / "c") is None and not (tmp_path / "c").exists()
