"""The gauntlet of real files (issue 43): parm run as a user runs it on samples of every kind of
file in ../shared/data (tests/gauntlet.py), in each shape the kind comes in, and every invariant
of tests/invariants checked on everything it writes: figures in range, sentences that agree with
their figures, a consensus within the reads, every rater counted and named as the file names
them, the same figures from long and wide reads, no Python warning, nothing printed under -q but
errors, and a text column named as the score stopped with exit 2 before any embedding. Skipped
where the data is absent (CI has it); each sample runs once per session."""

from __future__ import annotations

import re

import krippendorff
import numpy as np
import pytest
from gauntlet import DATA, TRIPPED, Gauntlet
from invariants import describe, of_family, shape_breaches
from invariants.figures import number, read_csv
from sklearn.metrics import cohen_kappa_score

pytestmark = [
    pytest.mark.skipif(not DATA.is_dir(), reason=f"no real data at {DATA}"),
    pytest.mark.slow,
]

KINDS = ("asap-sas", "scientsbank", "asap-aes", "mohler", "powergrading")
READ_TWICE = tuple(k for k in KINDS if k != "scientsbank")  # SciEntsBank has one label a answer
SHAPES = ("wide", "long", "named", "export")
CASES = [(k, s) for k in KINDS for s in SHAPES if s != "long" or k in READ_TWICE]
CASES_READ_TWICE = [(k, s) for k, s in CASES if k in READ_TWICE]


@pytest.fixture(scope="session")
def gauntlet(tmp_path_factory) -> Gauntlet:
    return Gauntlet(tmp_path_factory.mktemp("gauntlet"))


def finished(gauntlet: Gauntlet, kind: str, shape: str):
    run = gauntlet.run(kind, shape)
    assert run.code == 0, f"exit {run.code}: {run.printed[-3000:]}"
    return run


# Each family of invariants on the runs it applies to: figures in range or blank, sentences that
# agree with their figures (every run); a consensus within the reads, every rater with a row and
# named as the file names them (the runs whose answers are read twice).
FAMILY_CASES = [(f, k, s) for f in ("figures", "sentences") for k, s in CASES] + [
    (f, k, s) for f in ("consensus", "raters") for k, s in CASES_READ_TWICE
]


@pytest.mark.parametrize("family, kind, shape", FAMILY_CASES)
def test_every_invariant_of_the_family_holds(gauntlet, family, kind, shape):
    found = of_family(finished(gauntlet, kind, shape).breaches, family)
    assert not found, describe(found)


@pytest.mark.parametrize("kind", READ_TWICE)
def test_long_and_wide_reads_give_the_same_raters_agreement_and_consensus(gauntlet, kind):
    long, wide = finished(gauntlet, kind, "long"), finished(gauntlet, kind, "named")
    found = shape_breaches(long.folder, wide.folder)
    assert not found, describe(found)


@pytest.mark.parametrize("kind, shape", [(k, s) for k, s in CASES if s != "named"])
def test_no_python_warning_reaches_the_user(gauntlet, kind, shape):
    run = finished(gauntlet, kind, shape)
    assert not run.shown_warnings, "\n".join(run.shown_warnings)


@pytest.mark.parametrize("kind", KINDS)
def test_a_quiet_run_without_a_usable_home_prints_nothing(gauntlet, kind):
    run = gauntlet.run(kind, "named")
    assert (run.code, run.printed) == (0, ""), run.printed[-3000:]


@pytest.mark.parametrize("on_bad_rows", ["error", "skip"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_text_column_named_as_the_score_stops_before_any_embedding(gauntlet, kind, on_bad_rows):
    done, out = gauntlet.text_as_score(kind, on_bad_rows)
    said = done.stderr + done.stdout
    assert done.returncode != TRIPPED, f"went on to embed the answers: {said[-2000:]}"
    assert done.returncode == 2, f"exit {done.returncode}: {said[-2000:]}"
    # The error names the column and the columns that look like scores.
    error = "\n".join(line for line in said.splitlines() if line.startswith("Error"))
    sample = gauntlet.kind(kind)
    assert re.search(rf"\b{sample.text}\b", error), said
    assert any(re.search(rf"\b{re.escape(c)}\b", error) for c in sample.reads), said
    assert not out.exists() or not any(out.iterdir())


# -- the raters' agreement against independent oracles ---------------------------------------------
@pytest.mark.parametrize("kind", READ_TWICE)
def test_agreement_between_raters_matches_scikit_learn_and_krippendorff(gauntlet, kind):
    """Each item's pair figures (n, exact, Cohen's kappa) against scikit-learn, and its nominal
    alpha against the krippendorff package, on the file's own reads."""
    run = finished(gauntlet, kind, "named")
    reads = run.reads.answers
    columns = gauntlet.kind(kind).reads
    for row in read_csv(run.folder / "agreement.csv"):
        item = row["item"] if any(key[0] for key in reads) else ""
        if row["item"] == "all":
            continue
        answers = [r for (i, _), r in reads.items() if i == item]
        if row["rater_a"] == "all":
            assert number(row["alpha_nominal"]) == pytest.approx(_alpha(answers), abs=2e-6), row
            continue
        a, b = (_column(row[c], columns) for c in ("rater_a", "rater_b"))
        pairs = [(d[a], d[b]) for d in map(dict, answers) if a in d and b in d]
        # Scores as codes: scikit-learn takes half points for a continuous target.
        codes = np.unique([float(s) for p in pairs for s in p], return_inverse=True)[1]
        first, second = codes.reshape(-1, 2).T
        assert int(row["n"]) == len(pairs), row
        assert number(row["exact"]) == pytest.approx(np.mean(first == second), abs=2e-6), row
        kappa = cohen_kappa_score(first, second)
        if np.isfinite(kappa):
            assert number(row["kappa"]) == pytest.approx(kappa, abs=2e-6), row


def _column(rater: str, columns: tuple[str, ...]) -> str:
    """The score column a rater's name stands for (its own name, or 'read k' / 'rater k')."""
    numbered = re.fullmatch(r"(?:read|rater) (\d+)", rater)
    return columns[int(numbered.group(1)) - 1] if numbered else rater


def _alpha(answers: list[list[tuple[str, str]]]) -> float:
    raters = sorted({rater for reads in answers for rater, _ in reads})
    table = np.full((len(raters), len(answers)), np.nan)
    for j, reads in enumerate(answers):
        for rater, score in reads:
            table[raters.index(rater), j] = float(score)
    return krippendorff.alpha(reliability_data=table, level_of_measurement="nominal")
