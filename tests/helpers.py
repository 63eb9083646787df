"""Builders the tests share: synthetic data and results, the sample file's place, small settings,
a host app for one result screen, and ways to drive the app and the CLI. Test modules import
from here (never from each other); fixtures live in conftest.py."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import zipfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import PredefinedSplit
from textual.app import App
from textual.widgets import Static
from typer.testing import CliRunner

import parm_tui.app
from engine.core.errors import ConfigError
from engine.embedding.vectors import Embedded, TokenEmbeddings
from engine.input.items import split_items
from engine.input.responses import Responses
from engine.input.settings.config import config_from_dict, load_defaults
from engine.pipeline import run_audit
from engine.results.item import AuditResult, new_run_id
from engine.results.session import SessionResult, single_item_session
from engine.session import ItemTask, audit_item, run_session
from parm_tui.cli import app as cli_app
from parm_tui.screens.review import ReviewScreen
from parm_tui.widgets.review_list import ReviewTable

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CSV = ROOT / "sample_data" / "plant_growth.csv"
PARM_CSS = Path(parm_tui.app.__file__).with_name("parm.tcss")
MARKUP_TEXT = "[bold red]not markup[/bold red] and [link=http://x]a link[/link]"
# A session's settings that run in a moment: two K values, no bootstrap, no cross-fitting.
FAST_SETTINGS = {"similarity_top_k": [5, 10], "bootstrap_samples": 0, "cross_fit_folds": 0}
# The same for `parm audit`: two K values, no progress bar.
# The CLI's messages (warnings, the summary) without its progress bars: --quiet says nothing.
TALKING_CLI = ["--set", "similarity_top_k=[5,10]"]
FAST_CLI = [*TALKING_CLI, "-q"]


# -- synthetic data -------------------------------------------------------------------------------
def clustered_embeddings(n: int, n_classes: int, dim: int = 16, noise: float = 0.6, seed: int = 0):
    """Synthetic unit vectors in clusters, one cluster per score, and the scores."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_classes, dim))
    scores = rng.integers(0, n_classes, size=n)
    vectors = centres[scores] + noise * rng.normal(size=(n, dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32), scores


def synthetic_responses(scores: np.ndarray, second: np.ndarray | None = None) -> Responses:
    """Responses with these score codes (and second scores), labels "0".."C"."""
    n = scores.shape[0]
    return Responses(
        texts=[f"answer {i}" for i in range(n)],
        scores=np.asarray(scores, dtype=np.int64),
        labels=tuple(str(c) for c in range(int(scores.max()) + 1)),
        ids=[f"R{i}" for i in range(n)],
        rows=np.arange(1, n + 1),
        second_scores=second,
        source="synthetic.csv",
    )


def noisy_clusters(n: int, seed: int, classes: int = 3, noise: float = 0.9, flip: float = 0.15):
    """`clustered_embeddings` with a share `flip` of the scores replaced by random ones."""
    vectors, scores = clustered_embeddings(n, classes, noise=noise, seed=seed)
    rng = np.random.default_rng(seed + 1)
    scores = np.where(rng.random(n) < flip, rng.integers(0, classes, size=n), scores)
    return vectors, scores


def random_tokens(n: int, dim: int = 8, seed: int = 0, max_len: int = 9) -> TokenEmbeddings:
    """Token embeddings of n responses, 1 to max_len - 1 random tokens each."""
    rng = np.random.default_rng(seed)
    return TokenEmbeddings.from_list(
        [rng.normal(size=(rng.integers(1, max_len), dim)) for _ in range(n)]
    )


def make_responses(texts=None, n=12) -> Responses:
    """Twelve (or len(texts)) responses scored 0, 1, 2, 0, ... with ids S000, S001, ..."""
    texts = texts or [f"answer number {i}" for i in range(n)]
    n = len(texts)
    return Responses(
        texts=list(texts),
        scores=np.arange(n) % 3,
        labels=("0", "1", "2"),
        ids=[f"S{i:03d}" for i in range(n)],
        rows=np.arange(1, n + 1),
        source="answers.csv",
        file_rows=n,
    )


def small_config(**changes):
    """The defaults with a short K grid, a small bootstrap and no cross-fitting."""
    settings = {"similarity_top_k": [5, 10, 15], "bootstrap_samples": 20, "cross_fit_folds": 0}
    return load_defaults().updated(**{**settings, **changes})


# flipped_audit: 300 answers in 3 clusters, 15 of them scored as another cluster.
FLIPPED_N = 300
FLIPPED_CLASSES = 3
FLIPS = 15


def flipped_audit():
    """Clustered answers whose score is their cluster, with FLIPS scores deliberately changed:
    the AuditResult, which responses were flipped, and the vectors."""
    from engine.pipeline import run_audit

    vectors, scores = clustered_embeddings(FLIPPED_N, FLIPPED_CLASSES, noise=0.5, seed=3)
    rng = np.random.default_rng(7)
    flipped = rng.choice(FLIPPED_N, size=FLIPS, replace=False)
    noisy = scores.copy()
    noisy[flipped] = (scores[flipped] + rng.integers(1, FLIPPED_CLASSES, size=FLIPS)) % (
        FLIPPED_CLASSES
    )
    result = run_audit(
        synthetic_responses(noisy), small_config(), embedded=Embedded.precomputed(vectors)
    )
    is_flipped = np.zeros(FLIPPED_N, dtype=bool)
    is_flipped[flipped] = True
    return result, is_flipped, vectors


def engine_error(**values) -> ConfigError:
    """The engine's own error about these settings (they must be invalid)."""
    with pytest.raises(ConfigError) as error:
        config_from_dict(values)
    return error.value


def engine_message(**values) -> str:
    """The engine's own message about these settings (they must be invalid)."""
    return str(engine_error(**values))


def synthetic_result(
    n: int, noise: float = 2.5, seed: int = 0, second: bool = True, top_k=(10,), power=1.0
):
    """An AuditResult on clustered synthetic embeddings (3 scores, many disagreements)."""
    from engine.input.responses import responses_from_frame
    from engine.pipeline import run_audit

    vectors, scores = clustered_embeddings(n, 3, noise=noise, seed=seed)
    texts = [f"answer {i} about roots and leaves" for i in range(n)]
    texts[7] = MARKUP_TEXT
    frame = pd.DataFrame(
        {
            "id": [f"S{i:05d}" for i in range(n)],
            "answer": texts,
            "score": [str(s) for s in scores],
            "score2": [str((s + (i % 4 == 0)) % 3) for i, s in enumerate(scores)],
        }
    )
    config = load_defaults().updated(
        similarity_top_k=list(top_k),
        similarity_power=power,
        second_score_column="score2" if second else None,
    )
    responses = responses_from_frame(frame, config, "synthetic.csv")
    return run_audit(responses, config, embedded=Embedded.precomputed(vectors))


def one_item_session(result: AuditResult) -> SessionResult:
    """The session of a file of one item (no item column) whose audit is `result`."""
    return single_item_session(result)


# -- sessions of items ----------------------------------------------------------------------------
def session_frame(items=(("A", 60, 3), ("B", 50, 4)), seed=0, same_texts=False):
    """A table of items (name, answers, score levels) with clustered unit vectors per item, one
    row per answer, rows of the items interleaved; and the vectors, one per file row."""
    rng = np.random.default_rng(seed)
    rows, vectors = [], []
    for name, n, levels in items:
        centres = rng.normal(size=(levels, 12))
        for i in range(n):
            score = i % levels
            vector = centres[score] + 0.7 * rng.normal(size=12)
            vectors.append(vector / np.linalg.norm(vector))
            text = f"answer {i}" if same_texts else f"{name} answer {i}"
            rows.append({"item": name, "answer": text, "score": str(score), "rater": f"r{i % 4}"})
    order = rng.permutation(len(rows))
    frame = pd.DataFrame([rows[k] for k in order]).astype(str)
    return frame, np.asarray(vectors, dtype=np.float32)[order]


def session_config(**changes):
    """Settings for `session_frame`: its item column, no id column, FAST_SETTINGS."""
    return config_from_dict({"item_column": "item", "id_column": None, **FAST_SETTINGS, **changes})


def run_frame(frame, vectors, config, **kwargs):
    """run_session on a table and its vectors (one per file row)."""
    items = split_items(frame, config, source="session.csv")
    return run_session(
        items, config, embeddings=[vectors[r.rows - 1] for r in items.audited], **kwargs
    )


# -- the decision store ---------------------------------------------------------------------------
def record(store, responses, i, action, new_score=None, note=""):
    """Record a decision on response i of `responses`."""
    return store.record(
        int(responses.rows[i]), responses.ids[i], responses.texts[i], action, new_score, note
    )


# -- the app --------------------------------------------------------------------------------------
class Host(App):
    """Shows one result screen (ReviewScreen unless told otherwise), as ParmApp would."""

    CSS_PATH = PARM_CSS

    def __init__(self, result, store, screen=ReviewScreen) -> None:
        super().__init__()
        self.result, self.store, self.screen_class = result, store, screen

    def on_mount(self) -> None:
        self.push_screen(self.screen_class(self.result, self.store))


def shown_rows(screen: ReviewScreen) -> list[int]:
    """Data rows listed on the current page, top to bottom."""
    table = screen.query_one(ReviewTable)
    rows = screen.review.responses.rows
    return [int(rows[int(key.value)]) for key in table.rows]


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def cells(table, column: int) -> list[str]:
    """The text of one column of a Rich table."""
    return [str(cell) for cell in table.columns[column]._cells]


async def wait_for(pilot, condition, what: str, limit: float = 180.0) -> None:
    """Let the app work until `condition()` holds (a guard against hanging, not a timing test)."""
    for _ in range(int(limit / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"gave up waiting for {what}")


async def load_and_run(pilot) -> None:
    """Wait for the file, then run the audit from the Run screen."""
    app = pilot.app
    await wait_for(
        pilot, lambda: app.state.responses is not None and app.state.store is not None, "the file"
    )
    await pilot.press("f4")
    await wait_for(pilot, lambda: app.screen.id == "run-screen", "the run screen")
    await pilot.press("s")
    await wait_for(pilot, lambda: app.state.result is not None, "the audit")
    await pilot.pause()


async def open_review(pilot) -> ReviewScreen:
    await pilot.press("f6")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReviewScreen), "the review")
    await pilot.pause()
    return pilot.app.screen


async def show_results(pilot, result: AuditResult):
    """The Results screen of a file of one item whose audit is `result`, in a ParmApp."""
    pilot.app.finish_run(one_item_session(result), None)
    await pilot.app.action_show("results")
    await pilot.pause()
    return pilot.app.screen


# -- the command line -----------------------------------------------------------------------------
def write_rows(path, header, rows, delimiter=",", encoding="utf-8"):
    with open(path, "w", newline="", encoding=encoding) as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def parm_command(command: str, *args):
    """`parm COMMAND ARGS` in this process: (exit code, output); never a traceback."""
    result = CliRunner().invoke(cli_app, [command, *map(str, args)])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.output


def cli(*args):
    """`parm audit ARGS` in this process: (exit code, output); never a traceback."""
    return parm_command("audit", *args)


class PartialResult:
    """The parts of an AuditResult that decisions.csv reads: responses, predicted, severity."""

    def __init__(self, responses):
        self.responses = responses
        self.predicted = (responses.scores + 1) % 3
        self.severity = np.linspace(0.1, 0.9, len(responses))
        self.run_id = "20261124T000000Z-abcdef"


# -- output sets and the embedding cache (test_sets, test_cache, test_faults) -----------------
SET_N = 60


def data_span(path: Path, member: str) -> tuple[int, int]:
    """Where the data bytes of a member's array lie in the entry's file (after its zip local
    header and its .npy header)."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
        with archive.open(info) as handle:
            version = np.lib.format.read_magic(handle)
            if version == (1, 0):
                np.lib.format.read_array_header_1_0(handle)
            else:
                np.lib.format.read_array_header_2_0(handle)
            header = handle.tell()
    raw = path.read_bytes()
    name_length = int.from_bytes(raw[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_length = int.from_bytes(raw[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_length + extra_length + header
    return start, info.header_offset + 30 + name_length + extra_length + info.file_size


def damage(path: Path, how: str, member: str = "vectors.npy") -> None:
    """Zero, randomise or cut short the data section of one array of a cache entry."""
    start, end = data_span(path, member)
    raw = bytearray(path.read_bytes())
    if how == "zeroed":
        raw[start:end] = bytes(end - start)
    elif how == "random":
        raw[start:end] = np.random.default_rng(0).bytes(end - start)
    else:  # short: a torn copy
        raw = raw[: start + (end - start) // 2]
    path.write_bytes(bytes(raw))


def small_result(seed: int = 5, text: str = "answer {}") -> AuditResult:
    """A quick audit of 60 clustered synthetic responses (its own run id per call); `text`
    makes each answer from its number."""
    vectors, scores = clustered_embeddings(SET_N, 3, noise=2.0, seed=seed)
    responses = Responses(
        texts=[text.format(i) for i in range(SET_N)],
        scores=scores.astype(np.int64),
        labels=("0", "1", "2"),
        ids=[str(i) for i in range(SET_N)],
        rows=np.arange(1, SET_N + 1),
        file_rows=SET_N,
    )
    config = config_from_dict({**FAST_SETTINGS, "similarity_top_k": [5]})
    return run_audit(responses, config, embedded=Embedded.precomputed(vectors))


# -- planted rater effects (test_rater_effects, test_rater_files) ------------------------------
PLANTED_ROLES = {"r1": "neutral", "r2": "neutral", "r3": "neutral", "r4": "lenient", "r5": "harsh",
         "r6": "noisy", "r7": "central", "r8": "drifting", "r9": "bias cell"}  # fmt: skip


def planted_session(seed: int = 0, items: int = 3, per_item: int = 600, levels: int = 4,
                    labels=None):  # fmt: skip
    """Clustered answer vectors per item, true scores, nine raters (roles above), a scoring
    order; each planted effect on 45% of a rater's scores (central: 70% of the extremes;
    drifting: from 0 to 90% over the rater's order), and r9's item I0 cell raised."""
    rng = np.random.default_rng(seed)
    rows, vectors = [], []
    for k in range(items):
        centres = rng.normal(size=(levels, 24))
        for i in range(per_item):
            truth = int(rng.integers(0, levels))
            vector = centres[truth] + 0.8 * rng.normal(size=24)
            vectors.append(vector / np.linalg.norm(vector))
            rows.append({"item": f"I{k}", "answer": f"I{k} answer {i}", "truth": truth,
                         "rater": f"r{rng.integers(1, 10)}"})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["time"] = rng.permutation(len(frame))
    top = levels - 1
    score = frame["truth"].to_numpy().copy()
    for name, role in PLANTED_ROLES.items():
        mine = np.flatnonzero(frame["rater"].to_numpy() == name)
        hit = mine[rng.random(mine.size) < 0.45]
        if role == "lenient":
            score[hit] = np.minimum(score[hit] + 1, top)
        elif role == "harsh":
            score[hit] = np.maximum(score[hit] - 1, 0)
        elif role == "noisy":
            score[hit] = (score[hit] + rng.integers(1, levels, hit.size)) % levels
        elif role == "central":
            pulled = mine[rng.random(mine.size) < 0.7]
            score[pulled] = np.clip(score[pulled], 1, top - 1)
        elif role == "drifting":
            order = np.argsort(np.argsort(frame["time"].to_numpy()[mine])) / (mine.size - 1)
            up = mine[rng.random(mine.size) < 0.9 * order]
            score[up] = np.minimum(score[up] + 1, top)
    cell = np.flatnonzero((frame["rater"] == "r9").to_numpy() & (frame["item"] == "I0").to_numpy())
    raised = cell[rng.random(cell.size) < 0.7]
    score[raised] = np.minimum(score[raised] + 1, top)
    frame["score"] = score if labels is None else np.asarray(labels)[score]
    return frame.drop(columns="truth").astype(str), np.asarray(vectors, dtype=np.float32)


def audit_planted(frame, vectors, **settings):
    """Audit a planted session (items, raters, the time column) with quick settings."""
    config = config_from_dict({"item_column": "item", "rater_column": "rater", "id_column": None,
                               "time_column": "time", **FAST_SETTINGS, **settings})  # fmt: skip
    items = split_items(frame, config, "session.csv")
    return run_session(items, config, embeddings=[vectors[r.rows - 1] for r in items.audited])


def as_split(parts: list[np.ndarray], n: int) -> PredefinedSplit:
    fold = np.empty(n, dtype=int)
    for number, held in enumerate(parts):
        fold[held] = number
    return PredefinedSplit(fold)


def answers_for(scores: np.ndarray, seed: int = 0) -> list[str]:
    """Short answers whose words lean towards their score (noisily), a few of them blank."""
    rng = np.random.default_rng(seed)
    topics = [["light", "sun", "leaves"], ["water", "roots", "soil"], ["air", "carbon", "gas"]]
    common = ["plants", "need", "the", "to", "grow", "because", "and", "they"]
    texts = []
    for score in scores:
        own = topics[int(score) % 3] if rng.random() < 0.7 else topics[rng.integers(3)]
        words = list(rng.choice(own, 2)) + list(rng.choice(common, 4))
        texts.append(" ".join(rng.permutation(words)))
    for i in rng.choice(len(texts), 3, replace=False):
        texts[i] = " " if i % 2 else ""
    return texts


def unfaulted_keep(monkeypatch) -> None:
    """Let `parm audit` save its run (for the app and `parm export`) with the real os.fsync, so a
    test's fsync fault counts only the output set's writes, which come after it."""
    import os

    from engine import workspace

    keep, real_fsync = workspace.keep, os.fsync

    def unfaulted(*args):
        faulty, os.fsync = os.fsync, real_fsync
        try:
            return keep(*args)
        finally:
            os.fsync = faulty

    monkeypatch.setattr(workspace, "keep", unfaulted)


# -- sessions on a Dask cluster (test_cluster) -----------------------------------------------------
SESSIONS_CSV = ROOT / "sample_data" / "sessions.csv"
# The sample session's columns, as `parm audit` is told them.
SESSIONS_FLAGS = ["--item-col", "item", "--rater-col", "rater", "--second-score-col", "score2",
                  "--second-rater-col", "rater2"]  # fmt: skip


@dataclass(frozen=True)
class DyingTask:
    """An item's task whose unit kills its own worker process: once (when `marker` does not
    exist yet; it is made first), or every time (`always`), as a worker lost mid-run would."""

    task: ItemTask
    marker: str | None = None
    always: bool = False


def dying_unit(task: DyingTask, progress, cancel):
    """engine.session.audit_item, unless the task says its worker dies first."""
    if task.always or (task.marker is not None and not os.path.exists(task.marker)):
        if task.marker is not None:
            Path(task.marker).touch()
        os._exit(1)  # the worker process dies at once, as kill -9 or the OOM killer would do it
    return audit_item(task.task, progress, cancel)


def item_tasks(frame, vectors, config) -> tuple[list[ItemTask], list[str], list[int]]:
    """A table's items as the units run_session makes of them (given vectors), with their
    names and sizes as run_on_cluster takes them."""
    items = split_items(frame, config, source="session.csv")
    run_id = new_run_id()
    tasks = [ItemTask(r, Embedded.precomputed(vectors[r.rows - 1]), config, run_id)
             for r in items.audited]  # fmt: skip
    return tasks, [f"item {r.item}" for r in items.audited], [len(r) for r in items.audited]


def output_differences(first: Path, second: Path, tolerance: float = 0.0) -> list[str]:
    """What differs between two output sets beyond what differs between any two runs: run ids,
    dates, timings, and the settings saying where the items ran (jobs, scheduler). Text (labels,
    flags, evidence, verdicts, ...) must be identical; numbers may differ by `tolerance` (for
    runs on other BLAS paths: NUMBER_TOLERANCE). Each difference is named with its first
    instance ("predictions.csv row 3 severity: 0.5 != 0.6")."""
    different = []
    names = sorted(p.name for p in first.iterdir())
    if names != sorted(p.name for p in second.iterdir()):
        return [f"files: {names}"]
    same = partial(_first_difference, tolerance=tolerance)
    for name in names:
        if name.endswith(".csv"):
            found = same(
                without_run(read_rows(first / name)), without_run(read_rows(second / name))
            )
        elif name == "report.json":
            ignored = RUN_KEYS | PLACE_KEYS
            found = same(
                without_keys(json.loads((first / name).read_text(encoding="utf-8")), ignored),
                without_keys(json.loads((second / name).read_text(encoding="utf-8")), ignored),
            )
        elif name == "report.md":
            found = same(_md_lines(first / name), _md_lines(second / name))
        else:  # the manifest and report.html (its plots): checksums of files that name their run
            continue
        if found is not None:
            different.append(f"{name} {found}".strip())
    return different


# Numbers in two output sets of the same audit on different BLAS paths (thread counts, torch or
# numpy, kernels) agree within one unit of their last written digit: the outputs write six
# decimals, and a figure that differs in its twelfth digit can round either way there. Within
# one set of BLAS kernels they are identical (docs/explanation/reproducibility.md).
NUMBER_TOLERANCE = 1.01e-6
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _first_difference(one, other, tolerance: float, where: str = "") -> str | None:
    """Where `one` and `other` (JSON values, rows, lines) first differ beyond `tolerance` for
    numbers; None when they agree."""
    if isinstance(one, dict) and isinstance(other, dict):
        if one.keys() != other.keys():
            return f"{where} keys: {sorted(one.keys() ^ other.keys())}"
        for key in one:
            found = _first_difference(one[key], other[key], tolerance, f"{where} {key}")
            if found is not None:
                return found
        return None
    if isinstance(one, list) and isinstance(other, list):
        if len(one) != len(other):
            return f"{where} length {len(one)} != {len(other)}"
        for k, (a, b) in enumerate(zip(one, other)):
            found = _first_difference(a, b, tolerance, f"{where} row {k}")
            if found is not None:
                return found
        return None
    if isinstance(one, str) and isinstance(other, str):
        if one == other:
            return None
        # Text with numbers in it: the words identical, the numbers within tolerance.
        if _NUMBER.split(one) == _NUMBER.split(other):
            pairs = zip(_NUMBER.findall(one), _NUMBER.findall(other))
            if all(_close(float(a), float(b), tolerance) for a, b in pairs):
                return None
        return f"{where}: {one[:60]!r} != {other[:60]!r}"
    if isinstance(one, (int, float)) and isinstance(other, (int, float)):
        if isinstance(one, bool) or isinstance(other, bool):
            return None if one == other else f"{where}: {one} != {other}"
        return None if _close(one, other, tolerance) else f"{where}: {one} != {other}"
    return None if one == other else f"{where}: {one!r} != {other!r}"


def _close(a: float, b: float, tolerance: float) -> bool:
    if a == b or (math.isnan(a) and math.isnan(b)):
        return True
    return abs(a - b) <= tolerance + 1e-9 * max(abs(a), abs(b))


# What differs between two runs of the same audit: which run, when, and how long it took.
RUN_KEYS = {"run_id", "created", "timings_seconds"}
# The settings saying where the items ran.
PLACE_KEYS = {"jobs", "scheduler"}


def read_rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def without_run(rows: list[dict]) -> list[dict]:
    """CSV rows without their run_id column."""
    return [{k: v for k, v in row.items() if k != "run_id"} for row in rows]


def without_keys(value, keys: set = RUN_KEYS):
    """A report.json value with every key in `keys` left out, at any depth."""
    if isinstance(value, dict):
        return {k: without_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without_keys(v, keys) for v in value]
    return value


def _md_lines(path: Path) -> list[str]:
    return [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if not line.startswith(("Run: ", "- Run: "))
    ]


# -- tuning and cross-fitting on a graph (test_tuning, test_cross_fit, ...) -----------------------
def tune_on(graph, scores, n_classes, config, *args):
    """engine.model.tuning.tune on the item's features (its graph and scores) under `config`."""
    from engine.model.features import ItemFeatures
    from engine.model.tuning import tune

    features = ItemFeatures(graph, scores, n_classes, config.similarity_top_k_symmetric)
    return tune(features, config, *args)


def cross_fit_on(graph, scores, n_classes, config, *args):
    """engine.model.cross_fit.cross_fit on the item's features under `config`."""
    from engine.model.cross_fit import cross_fit
    from engine.model.features import ItemFeatures

    features = ItemFeatures(graph, scores, n_classes, config.similarity_top_k_symmetric)
    return cross_fit(features, config, *args)


# -- a stand-in sentence model --------------------------------------------------------------------
class FakeEncoder:
    """A sentence model without torch: `encode` gives each text a unit vector made from its
    SHA-256 (the same text, the same vector) and records every text it was given. With
    `tokenizer` and `max_seq_length` (a real fast tokenizer, a small limit), long texts are
    read as the real models read them (engine.embedding.reading)."""

    def __init__(self, dim=8, tokenizer=None, max_seq_length=None, seed_salt: str = ""):
        self.dim = dim
        self.seed_salt = seed_salt
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        self.device = "cpu"
        self.encoded: list[str] = []

    def encode(self, texts, **_):
        import hashlib

        self.encoded += list(texts)
        rows = []
        for text in texts:
            digest = hashlib.sha256((self.seed_salt + text).encode("utf-8")).digest()
            seed = int.from_bytes(digest[:8], "big")
            rows.append(np.random.default_rng(seed).normal(size=self.dim))
        rows = np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def use_fake_model(monkeypatch, model: FakeEncoder) -> FakeEncoder:
    """Make every embedding in this test use `model` (loaded in no time)."""
    import engine.embedding.sentence as sentence

    monkeypatch.setattr(
        sentence, "model_for", lambda name, reporter=None, device="auto": (model, 0.0)
    )
    return model


# -- multi-read sessions --------------------------------------------------------------------------
def simulated_reads(
    rng: np.random.Generator,
    n: int,
    accuracy: np.ndarray,
    prior: np.ndarray,
    reads: tuple[int, ...] = (2, 3),
    ordered: bool = True,
    values: np.ndarray | None = None,
    name: str = "",
    missing: float = 0.0,
):
    """(ItemReads, true codes): n answers of true code drawn from `prior`, each read by
    rng.choice(reads) distinct raters (len(accuracy) raters); a rater gives the true code with
    probability accuracy[r], else a neighbouring code (ordered) or another code (nominal).
    `missing`: the share of answers that lose all but their first read."""
    from engine.audit.reads.item_reads import ItemReads

    classes, raters = prior.size, accuracy.size
    truth = rng.choice(classes, n, p=prior)
    count = rng.choice(np.asarray(reads), n)
    count = np.where(rng.random(n) < missing, 1, count)
    order = np.argsort(rng.random((n, raters)), axis=1)
    answer = np.concatenate([np.flatnonzero(count > j) for j in range(max(reads))])
    rater = np.concatenate([order[count > j, j] for j in range(max(reads))])
    right = rng.random(answer.size) < accuracy[rater]
    if ordered:
        step = rng.choice([-1, 1], answer.size)
        wrong = truth[answer] + step
        wrong = np.where((wrong < 0) | (wrong >= classes), truth[answer] - step, wrong)
    else:
        wrong = (truth[answer] + rng.integers(1, classes, answer.size)) % classes
    score = np.where(right, truth[answer], wrong)
    return ItemReads(answer, rater, score, n, classes, ordered, values, name), truth


# -- a file of several reads per answer -----------------------------------------------------------
MULTI_READ_RATERS = {"Ana": 0.95, "Ben": 0.85, "Cleo": 0.75, "Dev": 0.6}


def multi_read_frame(n=(90, 80), seed=0, raters=MULTI_READ_RATERS, shares=(0.4, 0.45, 0.15)):
    """A wide file of two items (0-2 and 0-3): each answer's true score in its text's cluster,
    read once, twice or three times by distinct raters of the given accuracies (errors one step
    away). Returns the frame, one vector per row, and each row's true score."""
    rng = np.random.default_rng(seed)
    names = list(raters)
    rows, vectors, truth = [], [], []
    for (item, levels), size in zip((("A", 3), ("B", 4)), n):
        centres = rng.normal(size=(levels, 12))
        for i in range(size):
            true = int(rng.integers(levels))
            vector = centres[true] + 0.8 * rng.normal(size=12)
            vectors.append(vector / np.linalg.norm(vector))
            row = {"id": f"{item}{i}", "item": item, "answer": f"{item} answer {i}"}
            count = int(rng.choice([1, 2, 3], p=shares))
            for k, rater in enumerate(rng.permutation(names)[:3]):
                score = ""
                if k < count:
                    score = true
                    if rng.random() > raters[rater]:
                        step = int(rng.choice([-1, 1]))
                        score = true + (step if 0 <= true + step < levels else -step)
                row[f"rater{k + 1}"] = rater if k < count else ""
                row[f"score{k + 1}"] = str(score)
            rows.append(row)
            truth.append(true)
    return pd.DataFrame(rows).astype(str), np.asarray(vectors, np.float32), np.array(truth)


MULTI_READ_SETTINGS = {
    "id_column": "id",
    "score_column": "score1",
    "score_columns": ["score1", "score2", "score3"],
    "rater_column": "rater1",
    "rater_columns": ["rater1", "rater2", "rater3"],
}


# Scales for random designs: half points 0-5 (Mohler's 11 values), 0-3, binary, nominal labels.
READ_SCALES = {
    "half points": (tuple(f"{v / 2:g}" for v in range(11)), True),
    "0-3": (("0", "1", "2", "3"), True),
    "binary": (("0", "1"), True),
    "nominal": (("correct", "partial", "contradictory", "irrelevant", "non_domain"), False),
}


def read_design(seed: int, n: int, most_reads: int, scale: str, name: str = ""):
    """(ItemReads, labels): n answers, each read by 1..most_reads of 4 raters; a rater of random
    accuracy gives the true score, else a near miss (ordered scales) or any other label; a
    random share of answers keeps one read. For property tests of every figure's range."""
    from engine.audit.reads.item_reads import ItemReads
    from engine.audit.reads.session_reads import label_points

    labels, ordered = READ_SCALES[scale]
    rng = np.random.default_rng(seed)
    classes = len(labels)
    truth = rng.choice(classes, n, p=rng.dirichlet(np.full(classes, 0.7)))
    count = np.where(rng.random(n) < rng.random(), 1, rng.integers(1, most_reads + 1, n))
    order = np.argsort(rng.random((n, 4)), axis=1)
    answer = np.concatenate([np.flatnonzero(count > j) for j in range(most_reads)])
    rater = np.concatenate([order[count > j, j] for j in range(most_reads)])
    accuracy = rng.uniform(0.2, 1.0, 4)
    step = rng.choice([-1, 1], answer.size) if ordered else rng.integers(1, classes, answer.size)
    wrong = np.clip(truth[answer] + step, 0, classes - 1) if ordered else (truth[answer] + step)
    score = np.where(rng.random(answer.size) < accuracy[rater], truth[answer], wrong % classes)
    values = label_points(labels) if ordered else None
    return ItemReads(answer, rater, score, n, classes, ordered, values, name), labels


# -- the lead's lists (engine.actions) ------------------------------------------------------------
def action_ledger(item, answer, rater, score, items=(("A", 4, True),), raters=None, **fields):
    """A Ledger (engine.actions.ledger) straight from read arrays: items are (name, scores,
    ordered), each with as many answers as its reads name; raters: the names (R01, R02, ...
    by default); fields: any other column or figure (order, kind, expert, wrong, evidence,
    direction, consensus_p, unsure, reliability, verdicts, drift, bias, seed)."""
    from engine.actions.ledger import FILE_READ, SEVERITY, ItemFacts, Ledger, risk_percentiles

    item, answer = np.asarray(item, np.int64), np.asarray(answer, np.int64)
    rater, score = np.asarray(rater, np.int64), np.asarray(score, np.int64)
    sizes = [int(answer[item == k].max(initial=-1)) + 1 for k in range(len(items))]
    facts = tuple(
        ItemFacts(name, tuple(str(c) for c in range(scores)), ordered,
                  tuple(f"{name}{j}" for j in range(size)), np.arange(1, size + 1) + 1000 * k)
        for k, ((name, scores, ordered), size) in enumerate(zip(items, sizes))
    )  # fmt: skip
    total = sum(sizes)
    names = raters or tuple(f"R{m + 1:02d}" for m in range(int(rater.max(initial=-1)) + 1))
    size = item.size
    wrong = np.asarray(fields.pop("wrong", np.linspace(0, 1, size)), dtype=float)
    evidence = np.asarray(fields.pop("evidence", [SEVERITY] * size), dtype=object)
    values = {
        "order": np.arange(size, dtype=float), "kind": np.array([FILE_READ] * size, dtype=object),
        "expert": np.full(size, -1), "direction": np.zeros(size, np.int64),
        "consensus_p": np.full(total, np.nan), "unsure": np.zeros(total, bool),
        "reliability": np.full(len(names), np.nan),
    }  # fmt: skip
    values.update(fields)
    for key in ("kind",):
        values[key] = np.asarray(values[key], dtype=object)
    return Ledger(
        items=facts, raters=tuple(names), item=item, answer=answer, rater=rater, score=score,
        wrong=wrong, evidence=evidence, risk=risk_percentiles(wrong, evidence),
        offsets=np.r_[0, np.cumsum(sizes)].astype(np.int64), **values,
    )  # fmt: skip


def live_reads(
    days: int = 5,
    items=("q1", "q2"),
    raters=("A", "B", "C", "D"),
    answers_per_day: int = 30,
    accuracy: float = 0.9,
    seed: int = 0,
    drift: tuple[str, int, float] | None = None,
    fall: tuple[str, int, float] | None = None,
    seeds_per_rater: int = 0,
    points: int = 3,
) -> list[pd.DataFrame]:
    """A simulated live session, one long frame per day (id, item, answer, rater, score, time,
    expert): each day each item's answers are read twice, half in the morning, half in the
    afternoon; a rater reads the true score with `accuracy`, else a neighbour. drift: (rater,
    from day, share of reads one point too high); fall: (item, from day, accuracy that
    afternoon on); seeds_per_rater: validity papers each rater reads a day (expert scored)."""
    rng = np.random.default_rng(seed)
    top = points - 1

    def read(true, rater, day, item, pm):
        good = accuracy
        if fall is not None and item == fall[0] and (day > fall[1] or (day == fall[1] and pm)):
            good = fall[2]
        score = true if rng.random() < good else int(np.clip(true + rng.choice((-1, 1)), 0, top))
        if drift is not None and rater == drift[0] and day >= drift[1] and score < top:
            score += int(rng.random() < drift[2])
        return score

    frames, number = [], 0
    for day in range(days):
        date = f"2026-05-{day + 4:02d}"
        rows = []
        for item in items:
            for j in range(answers_per_day):
                number += 1
                true, pm = int(rng.integers(0, points)), j >= answers_per_day // 2
                hour = 14 if pm else 9
                for k, rater in enumerate(rng.choice(raters, 2, replace=False)):
                    rows.append((f"{item}-{number}", item, f"answer {number} of {item}", rater,
                                 read(true, rater, day, item, pm),
                                 f"{date}T{hour + k:02d}:{j % 60:02d}", ""))  # fmt: skip
            for rater in raters[: len(raters)] if seeds_per_rater else ():
                for s in rng.choice(20, seeds_per_rater, replace=False):
                    true = int(s % points)
                    rows.append((f"{item}-seed{s}", item, f"seed {s} of {item}", rater,
                                 read(true, rater, day, item, False), f"{date}T08:{s:02d}", true))  # fmt: skip
        columns = ["id", "item", "answer", "rater", "score", "time", "expert"]
        frames.append(pd.DataFrame(rows, columns=columns).astype(str))
    return frames


def live_config(**changes):
    """The settings a live frame of `live_reads` is read with (long, every column named)."""
    return load_defaults().updated(
        reads="long", id_column="id", item_column="item", rater_column="rater",
        time_column="time", expert_column="expert", text_column="answer", **changes,
    )  # fmt: skip
