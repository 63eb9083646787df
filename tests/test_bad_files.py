"""The remaining ways a bad file could hang, crash or half-write, each a one-line error (exit
code 2, no traceback) or a documented behaviour: pipes and devices, deep JSON, .npy headers that
announce huge arrays, repeated column names, a folder in an export target's place, a fallback
encoding, and the embedding cache's key."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import FAST_CLI, TALKING_CLI, cli, clustered_embeddings, write_rows
from hostile import unsafe_characters
from numpy.lib import format as npy_format

from engine.core import files
from engine.core.errors import ExportError
from engine.embedding.cache import entries as cache

N = 60
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX files and signals")


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    folder = tmp_path_factory.mktemp("good-files")
    vectors, scores = clustered_embeddings(N, 3, seed=4)
    write_rows(folder / "answers.csv", ["id", "answer", "score"],
               [[f"s{i}", f"Roots take up water {i}", int(scores[i])] for i in range(N)])  # fmt: skip
    np.save(folder / "emb.npy", vectors)
    return folder


@pytest.fixture
def no_hang():
    """A test that would block on a pipe fails after 10 s instead of hanging the suite (the
    alarm interrupting a blocked open must fail the test, never let it pass late)."""

    def give_up(signum, frame):
        raise TimeoutError("blocked: parm opened a file that never ends")

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def refused(*args) -> str:
    code, output = cli(*args)
    assert code == 2, output
    assert output.startswith("Error: ") and output.strip().count("\n") == 0
    return output


# -- files that are not regular files ----------------------------------------------------------
@posix_only
@pytest.mark.parametrize("role", ["input", "--config", "--embeddings"])
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path, good, no_hang, role):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    args = {
        "input": [pipe],
        "--config": [good / "answers.csv", "--config", pipe],
        "--embeddings": [good / "answers.csv", "--embeddings", pipe],
    }[role]
    output = refused(*args, *FAST_CLI)
    assert f"{pipe} is a named pipe (FIFO), not a regular file" in output


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("role", ["input", "--config", "--embeddings"])
def test_a_device_that_never_ends_is_refused(good, no_hang, role):
    args = {
        "input": ["/dev/zero"],
        "--config": [good / "answers.csv", "--config", "/dev/zero"],
        "--embeddings": [good / "answers.csv", "--embeddings", "/dev/zero"],
    }[role]
    assert "/dev/zero is a device, not a regular file" in refused(*args, *FAST_CLI)


@pytest.mark.parametrize("role", ["--config", "--embeddings"])
def test_a_folder_is_refused(tmp_path, good, role):
    output = refused(good / "answers.csv", role, tmp_path, *FAST_CLI)
    assert f"{tmp_path} is a folder" in output


# -- settings ----------------------------------------------------------------------------------
def test_deeply_nested_json_is_a_config_error_not_a_crash(tmp_path, good):
    settings = tmp_path / "deep.json"
    settings.write_text("[" * 200_000 + "]" * 200_000)
    output = refused(good / "answers.csv", "--config", settings, *FAST_CLI)
    assert "deep.json is nested too deeply" in output
    output = refused(good / "answers.csv", "--set", "seed=" + "[" * 200_000, *FAST_CLI)
    assert "--set seed: the value is nested too deeply" in output


def test_a_huge_config_file_is_refused_before_parsing(tmp_path, good):
    settings = tmp_path / "huge.json"
    settings.write_text('{"seed": 0' + " " * 2_000_000 + "}")
    assert "huge.json is larger than 1024 KB" in refused(good / "answers.csv", "--config", settings)


def test_control_characters_in_a_setting_are_refused(tmp_path, good):
    settings = tmp_path / "settings.json"
    settings.write_text('{"text_column": "answer\\u001b]52;c;eA==\\u0007"}')
    output = refused(good / "answers.csv", "--config", settings, *FAST_CLI)
    assert "'text_column'" in output and "control characters" in output
    assert unsafe_characters(output) == []


# -- .npy files --------------------------------------------------------------------------------
def npy_with_header(path: Path, shape, descr="<f4", payload=b"\x00" * 64) -> Path:
    with open(path, "wb") as handle:
        npy_format.write_array_header_1_0(
            handle, {"descr": descr, "fortran_order": False, "shape": shape}
        )
        handle.write(payload)
    return path


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ((10**12, 384), "has 1,000,000,000,000 rows but the input has 60 data rows"),
        ((N, 10**11), f"is cut short: its header announces {N} x 100,000,000,000 float32"),
        ((N, 384, 2), "expected (rows, dim)"),
    ],
)
def test_a_npy_header_announcing_a_huge_array_is_refused_before_allocating(
    tmp_path, good, shape, expected
):
    path = npy_with_header(tmp_path / "huge.npy", shape)
    output = refused(good / "answers.csv", "--embeddings", path, *FAST_CLI)
    assert "huge.npy" in output and expected in output and "MemoryError" not in output


def test_an_npz_archive_is_named(tmp_path, good):
    np.savez(tmp_path / "both.npz", a=np.zeros((N, 4)))
    output = refused(good / "answers.csv", "--embeddings", tmp_path / "both.npz", *FAST_CLI)
    assert "not a single .npy array (an .npz archive?)" in output


# -- the input table ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "header", [["id", "answer", "score", "score"], ["score", "answer", " score"]]
)
def test_repeated_column_names_are_refused_and_listed(tmp_path, header):
    rows = [[f"{i}", f"text {i}", i % 2, (i + 1) % 2][: len(header)] for i in range(N)]
    path = write_rows(tmp_path / "twice.csv", header, rows)
    output = refused(path, *FAST_CLI)
    assert "twice.csv has more than one column named 'score'" in output


def test_a_fallback_encoding_is_a_warning_on_stderr_and_in_the_report(tmp_path, good):
    rows = [[f"s{i}", f"Lumière et eau {i}", i % 3] for i in range(N)]
    path = write_rows(tmp_path / "fr.csv", ["id", "answer", "score"], rows, encoding="cp1252")
    # Not quiet: --quiet prints errors only.
    code, output = cli(
        path, "--embeddings", good / "emb.npy", "--out", tmp_path / "o", *TALKING_CLI
    )
    assert code == 0, output
    warning = "fr.csv is not valid UTF-8; it was read as Windows-1252"
    assert output.startswith("Warning: File ") and warning in output.splitlines()[0]
    assert output.count(warning) == 1  # said once, at the start
    report = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    assert warning in report.split("## Warnings", 1)[1]
    code, output = cli(good / "answers.csv", "--embeddings", good / "emb.npy", "--out",
                       tmp_path / "o2", *TALKING_CLI)  # fmt: skip
    assert code == 0 and "not valid UTF-8" not in output


@pytest.mark.slow
async def test_the_app_notifies_a_fallback_encoding(tmp_path):
    from helpers import wait_for

    from parm_tui.app import ParmApp

    rows = [[f"s{i}", f"Lumière et eau {i}", i % 3] for i in range(N)]
    path = write_rows(tmp_path / "fr.csv", ["id", "answer", "score"], rows, encoding="cp1252")
    app = ParmApp(path=path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.state.responses is not None, "the file")
        messages = [n.message for n in app._notifications if n.severity == "warning"]
        assert any("read as Windows-1252" in m for m in messages)
        assert "Lumière" in app.state.responses.texts[0]


@pytest.mark.slow
async def test_a_reading_note_comes_after_the_question_whether_to_resume(tmp_path):
    """At 80x24 the note's toast covered the Resume question's buttons (ASAP essays set 1, a
    saved run): the note is now said once the question is answered."""
    from helpers import wait_for

    from parm_tui.app import ParmApp
    from parm_tui.screens.resume import ResumeModal

    rows = [[f"s{i}", f"Lumière et eau {i}", i % 3] for i in range(N)]
    path = write_rows(tmp_path / "fr.csv", ["id", "answer", "score"], rows, encoding="cp1252")
    vectors = tmp_path / "fr.npy"
    np.save(vectors, clustered_embeddings(N, 3, seed=1)[0])
    code, output = cli(path, "--embeddings", vectors, "--out", tmp_path / "out", *FAST_CLI)
    assert code == 0, output
    app = ParmApp(path=path)

    def warned() -> bool:
        return any("read as Windows-1252" in n.message for n in app._notifications)

    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeModal), "the question")
        await pilot.pause()
        assert not warned()
        await pilot.press("n")  # start fresh
        await wait_for(pilot, warned, "the note")


# -- exports are all or nothing ----------------------------------------------------------------
def test_a_folder_in_a_targets_place_stops_the_export_before_anything_is_written(tmp_path, good):
    out = tmp_path / "o"
    args = [good / "answers.csv", "--embeddings", good / "emb.npy", "--out", out, *FAST_CLI]
    assert cli(*args)[0] == 0
    (out / "report.md").unlink()
    (out / "report.md").mkdir()
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    output = refused(*args, "--force")
    assert "report.md: it is a folder; nothing was written" in output
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in out.iterdir()) == sorted([*before, "report.md"])


def test_atomic_writes_check_every_target_first(tmp_path):
    (tmp_path / "b.csv").mkdir()
    with pytest.raises(ExportError, match=r"b\.csv: it is a folder; nothing was written"):
        files.atomic_write_files({tmp_path / "a.csv": "a\n", tmp_path / "b.csv": "b\n"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.csv"]


# -- the embedding cache's key -----------------------------------------------------------------
def test_cache_keys_cannot_collide_through_separator_characters():
    model = "sentence-transformers/all-MiniLM-L6-v2"
    keys = {
        cache.cache_key(model, texts)
        for texts in (
            ["a\x1fb"],
            ["a", "b"],
            ["ab"],
            ["a\x1f", "b"],
            ["a", "\x1fb"],
            ["a", "b", ""],
        )
    }
    assert len(keys) == 6
    assert cache.cache_key(model, ["x"]) == cache.cache_key("all-minilm-l6-v2", ["x"])
    assert cache.cache_key(model, ["x"]) != cache.cache_key(model, ["x"], kind="token")


def test_cache_key_follows_a_local_models_files(tmp_path):
    model = tmp_path / "my-model"
    model.mkdir()
    weights = model / "model.safetensors"
    weights.write_bytes(b"weights v1")
    first = cache.cache_key(str(model), ["x"])
    assert cache.cache_key(str(model), ["x"]) == first
    os.utime(weights, ns=(1, 1))
    touched = cache.cache_key(str(model), ["x"])
    weights.write_bytes(b"weights v2, retrained")
    assert len({first, touched, cache.cache_key(str(model), ["x"])}) == 3


def test_cache_key_follows_a_hub_models_revision(tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    refs = tmp_path / "models--someone--encoder" / "refs"
    unknown = cache.cache_key("someone/encoder", ["x"])
    refs.mkdir(parents=True)
    (refs / "main").write_text("1111111\n")
    first = cache.cache_key("someone/encoder", ["x"])
    (refs / "main").write_text("2222222\n")
    assert len({unknown, first, cache.cache_key("someone/encoder", ["x"])}) == 3


def test_an_interrupted_cache_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path / "cache"))

    def interrupted(path, *args, **kwargs):
        Path(path).write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(cache, "_write_entry", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cache.write_arrays("k" * 64, {"vectors": np.zeros((2, 2))})
    assert list((tmp_path / "cache").iterdir()) == []
