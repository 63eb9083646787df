"""Property-based: whatever a file or a settings dict holds, the loader and the config parser
return a valid result or raise a ParmError, never another exception."""

from __future__ import annotations

import csv
import io
import string
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.errors import ParmError
from engine.input.guess import guess_columns
from engine.input.responses import load_responses, read_table, responses_from_frame
from engine.input.settings.config import DEFAULTS, AuditConfig, config_from_dict, fit_top_k

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LOADER = config_from_dict({"on_bad_rows": "skip", "second_score_column": "score2"})
STRICT = config_from_dict({})

# Mostly plausible scores (so that many tables load and their invariants are checked), some mess.
plausible_scores = st.sampled_from(["0", "1", "2", "2.0", " 1 "])
scores = st.one_of(
    plausible_scores,
    plausible_scores,
    plausible_scores,
    st.sampled_from(["", "n/a", "nan", "inf", "1e999", "-1", "A"]),
    st.integers(-3, 5).map(str),
    st.text(max_size=4),
)
plausible_texts = st.sampled_from(
    ["Plants need light", '"quoted, text"', "a;b\tc", "=SUM(A1)", "x\ny", "ünï ✓"]
)
texts = st.one_of(
    plausible_texts,
    plausible_texts,
    plausible_texts,
    st.sampled_from(["", "   ", "\t"]),
    st.text(max_size=40),
)
header_names = st.sampled_from(["id", "answer", "score", "score2", "", " answer", "answer "])


def check_responses(responses, source_rows: int | None = None) -> None:
    """The invariants every loaded Responses must hold."""
    n = len(responses)
    assert n >= 10
    assert len(responses.scores) == len(responses.ids) == len(responses.rows) == n
    assert responses.scores.min() >= 0 and responses.scores.max() < responses.n_classes
    assert len(set(responses.labels)) == responses.n_classes >= 2
    assert np.all(np.diff(responses.rows) > 0) and responses.rows[0] >= 1
    assert responses.rows[-1] <= responses.file_rows
    # Blank answers are audited: kept, and marked as blank exactly when they are.
    assert responses.blank.tolist() == [not text.strip() for text in responses.texts]
    if responses.second_scores is not None:
        assert responses.second_scores.min() >= -1
        assert responses.second_scores.max() < responses.n_classes
    if source_rows is not None:
        assert responses.file_rows == source_rows


@st.composite
def tables(draw):
    """A table of strings: three or four columns, mostly sensible names, messy cells."""
    columns = draw(
        st.one_of(
            st.just(["id", "answer", "score", "score2"]),
            st.lists(header_names, min_size=2, max_size=5),
        )
    )
    n_rows = draw(st.one_of(st.integers(0, 12), st.integers(12, 40)))
    rows = []
    for _ in range(n_rows):
        row = [draw(scores) if "score" in c else draw(texts) for c in columns]
        rows.append(row)
    return columns, rows


@SETTINGS
@given(tables(), st.sampled_from([",", ";", "\t"]), st.sampled_from(["utf-8", "utf-8-sig"]))
def test_loader_on_written_files_returns_responses_or_parm_error(table, delimiter, encoding):
    columns, rows = table
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter)
    writer.writerow(columns)
    writer.writerows(rows)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "answers.csv"
        path.write_bytes(buffer.getvalue().encode(encoding, "surrogatepass"))
        for config in (LOADER, STRICT):
            try:
                check_responses(load_responses(path, config))
            except ParmError:
                pass
        try:
            frame = read_table(path)
        except ParmError:
            return
        guessed = guess_columns(frame)
        assert guessed["text"] in frame.columns
        assert guessed["score"] is None or guessed["score"] in frame.columns


@SETTINGS
@given(st.binary(max_size=400))
def test_loader_on_arbitrary_bytes_returns_responses_or_parm_error(content):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "answers.csv"
        path.write_bytes(b"answer,score\n" + content)
        try:
            check_responses(load_responses(path, LOADER))
        except ParmError:
            pass


@SETTINGS
@given(
    st.lists(texts, min_size=15, max_size=40),
    st.lists(scores, min_size=40, max_size=40),
    st.lists(scores, min_size=40, max_size=40),
)
def test_frames_return_responses_or_parm_error(answers, first, second):
    n = len(answers)
    frame = pd.DataFrame(
        {"id": [str(i % 7) for i in range(n)], "answer": answers,
         "score": first[:n], "score2": second[:n]}
    )  # fmt: skip
    try:
        responses = responses_from_frame(frame, LOADER, source="frame")
    except ParmError:
        return
    check_responses(responses, source_rows=n)
    kept = set(responses.rows.tolist())
    assert kept | {row for row, _ in responses.skipped} == set(range(1, n + 1))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 300)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(string.ascii_letters + " _", max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["min", "max", "tol", "x"]), inner, max_size=4)
    ),
    max_leaves=8,
)
plausible_values = st.one_of(
    st.integers(1, 80),
    st.lists(st.integers(1, 80), min_size=1, max_size=5),
    st.floats(0.05, 6),
    st.fixed_dictionaries({"min": st.floats(0.05, 6), "max": st.floats(0.05, 6)}),
    st.sampled_from(["kappa", "nll", "skip", "error", "balanced", None, True, False, "answer"]),
)
setting_values = st.one_of(plausible_values, plausible_values, json_values)
known_keys = st.sampled_from(sorted(DEFAULTS))
keys = st.one_of(known_keys, known_keys, known_keys, st.text(max_size=8))


@SETTINGS
@given(st.dictionaries(keys, setting_values, max_size=3), st.integers(10, 200))
def test_config_parser_returns_config_or_parm_error(values, n_responses):
    try:
        config = config_from_dict(values)
    except ParmError:
        return
    assert isinstance(config, AuditConfig)
    assert config_from_dict(config.to_dict()) == config
    try:
        fitted, _ = fit_top_k(config, n_responses)
    except ParmError:
        return
    assert all(k is None or k < n_responses for k in fitted.top_k_values)
