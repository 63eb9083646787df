"""The gauntlet's files and runs (tests/test_gauntlet.py): samples of every kind of real scoring
file in ../shared/data ($PARM_DATA_ROOT), each in the shapes that kind comes in, and parm run on
them as a user runs it, each (kind, shape) once per test session.

Kinds: ASAP-SAS (one prompt, 0-3, a second rater), SciEntsBank (five unordered text labels, small
items, one read), ASAP-AES (long essays, 1-6, two raters and the resolved score), Mohler (half
points, small items, two graders), Powergrading (binary, three graders). Shapes: `wide`, the
sample as the file has it, columns guessed; `long`, one row per read (id, item, answer, rater,
score), columns guessed; `named`, the wide sample with every column named, run as a process
under -q without a usable HOME; `export`, `parm export` of the wide run (the saved run written
again); and a text column named as the score (`text_as_score`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
from helpers import ROOT
from invariants import FileReads, output_breaches, reads_of
from typer.testing import CliRunner

from parm_tui.cli import app as cli_app

DATA = Path(os.environ.get("PARM_DATA_ROOT", ROOT.parent / "shared" / "data"))
SEED = 43


@dataclass(frozen=True)
class Kind:
    """A sample of one kind of file: its table as the file has it, its columns, and the flags
    that name them (`named`)."""

    name: str
    frame: pd.DataFrame
    id: str
    item: str | None
    text: str
    reads: tuple[str, ...]
    named: tuple[str, ...]


def _read(relative: str) -> pd.DataFrame:
    return pd.read_csv(DATA / relative, dtype=str, keep_default_na=False)


def _sample(frame: pd.DataFrame, item: str | None, items: int, answers: int) -> pd.DataFrame:
    """`items` items drawn at random (all when there is no item column), up to `answers` answers
    of each, in the file's order."""
    rng = np.random.default_rng(SEED)
    if item is not None:
        chosen = rng.choice(sorted(frame[item].unique()), items, replace=False)
        frame = frame[frame[item].isin(chosen)]
    groups = frame.groupby(item, sort=False) if item else [(None, frame)]
    parts = [g.sample(min(answers, len(g)), random_state=SEED) for _, g in groups]
    return pd.concat(parts).sort_index().reset_index(drop=True)


def _named(text, score, ids, second=None, item=None, reads=None) -> tuple[str, ...]:
    flags = ["--text-col", text, "--id-col", ids]
    flags += ["--score-cols", ",".join(reads)] if reads else ["--score-col", score]
    flags += ["--second-score-col", second] if second else []
    return tuple(flags + (["--item-col", item] if item else []))


def load_kind(name: str) -> Kind:
    if name == "asap-sas":
        frame = _sample(_read("asap-sas/prompt1-train.csv"), None, 1, 100)
        named = _named("EssayText", "Score1", "Id", second="Score2")
        return Kind(name, frame, "Id", None, "EssayText", ("Score1", "Score2"), named)
    if name == "scientsbank":
        frame = _sample(_read("scientsbank/train.csv"), "question_id", 3, 40)
        named = _named("answer", "label", "id", item="question_id")
        return Kind(name, frame, "id", "question_id", "answer", ("label",), named)
    if name == "asap-aes":
        frame = _sample(_read("asap-aes/set1.csv"), None, 1, 50)
        reads = ("rater1_domain1", "rater2_domain1")
        named = _named("essay", reads[0], "essay_id", second=reads[1])
        return Kind(name, frame, "essay_id", None, "essay", reads, named)
    if name == "mohler":
        frame = _sample(_read("mohler/answers.csv"), "question_id", 3, 40)
        reads = ("score_grader1", "score_grader2")
        named = _named("answer", reads[0], "id", second=reads[1], item="question_id")
        return Kind(name, frame, "id", "question_id", "answer", reads, named)
    assert name == "powergrading", name
    frame = _sample(_read("powergrading/answers.csv"), "question_id", 2, 60)
    reads = ("G1", "G2", "G3")
    named = _named("answer", None, "id", item="question_id", reads=reads)
    return Kind(name, frame, "id", "question_id", "answer", reads, named)


def long_frame(kind: Kind) -> pd.DataFrame:
    """One row per read (id, item, answer, rater, score), an answer's reads together and in the
    order of the file's score columns; a blank read has no row. The rater is the score column's
    name, as the wide file names it."""
    keep = [kind.id, *([kind.item] if kind.item else []), kind.text]
    frame = kind.frame.assign(position=range(len(kind.frame)))
    long = frame.melt([*keep, "position"], list(kind.reads), var_name="rater", value_name="score")
    long["order"] = long["rater"].map(kind.reads.index)
    long = long[long["score"].str.strip() != ""].sort_values(["position", "order"], kind="stable")
    return long[[*keep, "rater", "score"]].reset_index(drop=True)


@dataclass
class Run:
    """One run of parm on a sample: where it wrote, its exit code, what it printed (stdout and
    stderr together, and stderr alone where the run was a process), and the Python warnings
    that reached the user (in-process runs)."""

    kind: Kind
    shape: str
    frame: pd.DataFrame
    folder: Path
    code: int
    printed: str
    stderr: str = ""
    shown_warnings: tuple[str, ...] = ()

    @cached_property
    def report(self) -> dict:
        return json.loads((self.folder / "report.json").read_text(encoding="utf-8"))

    @cached_property
    def reads(self) -> FileReads:
        """The file's reads of the columns the run says it read."""
        return reads_of(self.frame, self.report["config"])

    @cached_property
    def breaches(self):
        printed = self.printed if self.code == 0 else ""
        return output_breaches(self.folder, self.reads, list(self.frame.columns), printed)


# Python's default filters hide these categories unless they are raised by __main__ (parm's own
# modules count: a deprecation in parm's code is parm's to fix).
HIDDEN = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)
OWN = (str(ROOT / "engine"), str(ROOT / "parm_tui"))
# What a run without a usable home folder lacks (a service account, a container, cron).
HOME_VARIABLES = ("HOME", "MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")


def _shown(caught) -> tuple[str, ...]:
    return tuple(
        f"{w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})"
        for w in caught
        if not issubclass(w.category, HIDDEN) or str(w.filename).startswith(OWN)
    )


# A process that dies at the first step of embedding (the model's load or the vectors): what a
# run on a score column of text must never reach.
TRIPWIRE = """
import os, sys
import engine.embedding.loading as loading, engine.embedding.sentence as sentence
import engine.pipeline as pipeline, engine.session as session
def tripped(*args, **kwargs):
    sys.stderr.write("TRIPWIRE: the run went on to load the model or embed the answers\\n")
    sys.stderr.flush()
    os._exit(97)
for module in (sentence, pipeline, session):
    module.embed_text_lists = tripped
loading.preload_model = loading.model_for = sentence.model_for = tripped
from parm_tui.cli import main
main(sys.argv[1:])
"""
TRIPPED = 97


class Gauntlet:
    """The samples written under `root` and their runs, each made once, when a test asks."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.kinds: dict[str, Kind] = {}
        self.runs: dict[tuple[str, str], Run] = {}

    def kind(self, name: str) -> Kind:
        if name not in self.kinds:
            self.kinds[name] = load_kind(name)
        return self.kinds[name]

    def file(self, name: str, shape: str) -> tuple[Path, pd.DataFrame]:
        kind = self.kind(name)
        frame = long_frame(kind) if shape == "long" else kind.frame
        path = self.root / name / f"{'long' if shape == 'long' else 'wide'}.csv"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            frame.to_csv(path, index=False)
        return path, frame

    def run(self, name: str, shape: str) -> Run:
        """A run of `parm audit` (wide, long: in this process; named: a process), or `parm
        export` of the wide run (export: nothing run again, the saved run written)."""
        key = (name, shape)
        if key not in self.runs:
            if shape in ("named", "export"):
                self.run(name, "wide")  # its answers in the embedding cache first: no model load
            if shape == "named":
                self.runs[key] = self._process(name)
            else:
                self.runs[key] = self._in_process(name, shape)
        return self.runs[key]

    def _in_process(self, name: str, shape: str) -> Run:
        path, frame = self.file(name, shape)
        out = self.root / name / f"out-{shape}"
        command = "export" if shape == "export" else "audit"
        with self._own_data(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = CliRunner().invoke(cli_app, [command, str(path), "--out", str(out)])
        printed = result.output
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            printed += f"\n{type(result.exception).__name__}: {result.exception}"
        return Run(self.kind(name), shape, frame, out, result.exit_code, printed,
                   shown_warnings=_shown(caught))  # fmt: skip

    @contextmanager
    def _own_data(self):
        """The gauntlet's own data folder (saved runs, decisions), whichever test runs first."""
        before = os.environ.get("PARM_DATA_DIR")
        os.environ["PARM_DATA_DIR"] = str(self.root / "data")
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("PARM_DATA_DIR")
            else:
                os.environ["PARM_DATA_DIR"] = before

    def _process(self, name: str) -> Run:
        path, frame = self.file(name, "wide")
        out = self.root / name / "out-named"
        command = ["-m", "parm_tui.cli", "audit", str(path), *self.kind(name).named, "--out", str(out), "-q"]  # fmt: skip
        done = self.process(command)
        return Run(self.kind(name), "named", frame, out, done.returncode,
                   done.stdout + done.stderr, done.stderr)  # fmt: skip

    def text_as_score(
        self, name: str, on_bad_rows: str
    ) -> tuple[subprocess.CompletedProcess, Path]:
        """`parm audit FILE --score-col <the text column>` as a process that dies at the first step
        of embedding (exit TRIPPED)."""
        path, _ = self.file(name, "wide")
        out = self.root / name / f"out-text-as-score-{on_bad_rows}"
        flags = ["--score-col", self.kind(name).text, "--set", f"on_bad_rows={on_bad_rows}"]
        return self.process(["-c", TRIPWIRE, "audit", str(path), *flags, "--out", str(out)]), out

    def process(self, arguments: list[str]) -> subprocess.CompletedProcess:
        """`python ARGUMENTS` with this session's cache and data folders and a HOME that cannot
        be made (under a file: not even root can), as for a service account without one."""
        env = {k: v for k, v in os.environ.items() if k not in HOME_VARIABLES}
        (self.root / "not-a-folder").touch()
        env["HOME"] = str(self.root / "not-a-folder" / "home")
        env["PARM_DATA_DIR"] = str(self.root / "data")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        return subprocess.run(
            [sys.executable, *arguments], capture_output=True, text=True, env=env,
            cwd=self.root, timeout=600,
        )  # fmt: skip
