"""A session whose answers are read more than once, end to end: the reads as ItemReads with
session-wide raters (engine.audit.reads.session_reads), the figures computed once per run
(engine.audit.reads.reads_audit, SessionResult.reads) and kept through a saved session, and the files
that show them (consensus.csv, agreement.csv, raters.csv's reliability, report.json's
`agreement`, report.md and report.html), escaped where rater names come from the data."""

from __future__ import annotations

import csv
import io
import json
import re
import sys

import jsonschema
import numpy as np
import pandas as pd
import pytest
from helpers import (
    FAST_CLI,
    MULTI_READ_RATERS,
    MULTI_READ_SETTINGS,
    ROOT,
    cli,
    multi_read_frame,
    run_frame,
    session_config,
    session_frame,
)
from hostile import FORMULAS, HTML, MARKDOWN, OSC52, UNSAFE, check_csv_inert, check_html_inert

from engine.audit.raters.expert import MIN_EXPERT_READS
from engine.audit.reads.session_reads import item_reads, read_raters, session_raters
from engine.input.table import read_table
from engine.outputs import declared
from engine.outputs.names import AGREEMENT_FILE, CONSENSUS_FILE
from engine.outputs.report import reads_outputs, report_json
from engine.outputs.session import session_contents
from engine.results.session import session_result
from engine.saved.archive import load_result, result_files


@pytest.fixture(scope="module")
def planted():
    frame, vectors, truth = multi_read_frame()
    # Cross-fitted (PRMSE takes the cross-fitted scores: in-sample ones were fitted to the reads).
    session = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS, cross_fit_folds=3))
    return session, frame, truth


def table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def files(session, names=None) -> dict[str, str]:
    return dict(session_contents(session, names))


def test_reads_get_session_wide_raters_and_score_columns_name_their_reads(planted):
    session, _, _ = planted
    items = [result.responses for result in session.results]
    raters = session_raters(items)
    assert raters == ("Ana", "Ben", "Cleo", "Dev") == session.reads.raters
    for responses in items:
        reads = item_reads(responses, raters)
        names = read_raters(responses)
        assert [raters[r] for r in reads.rater] == list(names)
        assert np.array_equal(reads.score, responses.reads.score)
    frame, vectors = session_frame()
    frame["score2"] = frame["score"].sample(frac=1, random_state=1).to_numpy()
    one = run_frame(frame, vectors, session_config(second_score_column="score2"))
    assert one.reads.raters == ("score", "score2")  # no rater column: the columns name them
    assert {row.rater for row in one.raters.rows} == {"score", "score2"}


def test_prmse_judges_the_cross_fitted_expected_scores(planted):
    """PRMSE's system is each answer's expected score under its held-out probabilities (the
    least squared error), not the most probable score; the two differ on this session."""
    from engine.audit.reads.prmse import session_true_score
    from engine.audit.reads.reads_audit import SAMPLES

    session = planted[0]
    reads = list(session.reads.items)
    expected = [r.cross_fit.proba @ item.points for r, item in zip(session.results, reads)]
    likeliest = [item.points[r.cross_fit.predicted] for r, item in zip(session.results, reads)]
    seed = session.config.seed
    _, pooled = session_true_score(reads, expected, SAMPLES, seed)
    _, before = session_true_score(reads, likeliest, SAMPLES, seed)
    assert session.reads.session_prmse.prmse.estimate == pytest.approx(pooled.prmse.estimate)
    assert abs(pooled.prmse.estimate - before.prmse.estimate) > 0.01
    # The mean minimises the expected squared error under the model: its MSE_T is the smaller.
    assert pooled.mse_true < before.mse_true


def test_the_consensus_recovers_the_planted_truth_better_than_the_first_read(planted):
    session, _, truth = planted
    found = session.reads
    consensus_right, first_right, twice = 0, 0, 0
    offset = 0
    for result, item in zip(session.results, found.consensus.items):
        responses = result.responses
        true = truth[responses.rows - 1]
        many = item.reads >= 2
        twice += int(many.sum())
        consensus_right += int(np.sum(item.consensus[many] == true[many]))
        first_right += int(np.sum(responses.scores[many] == true[many]))
        offset += len(responses)
    assert twice > 80
    assert consensus_right / twice >= first_right / twice + 0.05
    accuracy = found.consensus.raters.accuracy
    assert list(np.argsort(-accuracy)) == [0, 1, 2, 3]  # Ana, Ben, Cleo, Dev
    ranks = np.concatenate([item.third_read_rank for item in found.consensus.items])
    ranked = np.sort(ranks[ranks > 0])
    assert (
        np.array_equal(ranked, np.arange(1, ranked.size + 1)) and found.third_reads == ranked.size
    )


def test_consensus_csv_has_one_row_per_answer_and_each_raters_read(planted):
    session, frame, _ = planted
    rows = table(files(session)[CONSENSUS_FILE])
    header, body = rows[0], rows[1:]
    assert header == [*declared.CONSENSUS.header, "score_Ana", "score_Ben", "score_Cleo",
                      "score_Dev", "run_id"]  # fmt: skip
    assert len(body) == len(frame)
    by_id = {row[0]: dict(zip(header, row)) for row in body}
    for _, source in frame.iterrows():
        row = by_id[source["id"]]
        given = {source[f"rater{k}"]: source[f"score{k}"] for k in (1, 2, 3) if source[f"rater{k}"]}
        assert {r: row[f"score_{r}"] for r in MULTI_READ_RATERS if row[f"score_{r}"]} == given
        assert int(row["reads"]) == len(given)
        assert (row["consensus"] == "") == (len(given) == 1)
        if row["third_read_rank"]:
            assert float(row["consensus_p"]) < 0.95


def test_scores_reviewed_carries_the_consensus_beside_the_final_score(planted):
    from engine.outputs.reviewed import reviewed_table

    session, frame, _ = planted
    header, rows = reviewed_table(session, frame, None)
    consensus = {row[0]: row for row in table(files(session)[CONSENSUS_FILE])[1:]}
    at = header.index("consensus")
    assert header[at + 1] == "consensus_p" and header[at - 1] == "severity"
    for source, row in zip(frame["id"], rows):
        assert row[at] == consensus[source][3]  # empty for an answer read once
        assert (row[at + 1] == "") == (row[at] == "")
        if row[at]:
            assert float(row[at + 1]) == pytest.approx(float(consensus[source][4]), abs=1e-6)


def test_agreement_csv_has_each_items_pairs_an_all_row_and_the_sessions(planted):
    session, _, _ = planted
    rows = table(files(session)[AGREEMENT_FILE])
    header, body = rows[0], [dict(zip(rows[0], row)) for row in rows[1:]]
    assert header == [*declared.AGREEMENT.header, "run_id"]
    for item in ("A", "B", "all"):
        mine = [row for row in body if row["item"] == item]
        pairs = [row for row in mine if row["rater_a"] != "all"]
        assert len(pairs) == 6 and mine[-1]["rater_a"] == "all"
        assert mine[-1]["alpha_ordinal"] and not mine[-1]["kappa"]
        assert mine[-1]["prmse"] and not mine[-1]["prmse_note"]
        assert float(mine[-1]["prmse_low"]) <= float(mine[-1]["prmse"]) <= float(
            mine[-1]["prmse_high"]) <= 1  # fmt: skip
        for row in pairs:
            assert float(row["exact_low"]) <= float(row["exact"]) <= float(row["exact_high"])
            assert (row["too_few"] == "True") == (int(row["n"]) < 20)
            below = row["below"].split()
            # A pair too few to judge is not marked, however its figures came out.
            assert ("qwk" in below) == (float(row["qwk"]) < 0.70 and row["too_few"] == "False")
    session_rows = [row for row in body if row["item"] == "all" and row["rater_a"] != "all"]
    for row in session_rows:
        parts = [r for r in body if r["item"] != "all" and (r["rater_a"], r["rater_b"]) ==
                 (row["rater_a"], row["rater_b"])]  # fmt: skip
        assert int(row["n"]) == sum(int(r["n"]) for r in parts)


def test_raters_csv_gains_the_reliability_with_its_interval(planted):
    session, _, _ = planted
    rows = table(files(session)["raters.csv"])
    body = [dict(zip(rows[0], row)) for row in rows[1:]]
    for row in body:
        low, mid, high = (float(row[k]) for k in ("reliability_low", "reliability",
                                                   "reliability_high"))  # fmt: skip
        assert 0 <= low <= mid <= high <= 1
    best = max(body, key=lambda row: float(row["reliability"]))
    assert best["rater"] == "Ana"


def test_report_json_md_and_html_carry_the_agreement(planted):
    session, _, _ = planted
    data = report_json.session_dict(session)
    jsonschema.validate(json.loads(json.dumps(data)), report_json.report_schema())
    agreement = data["agreement"]
    assert agreement["raters"] == list(MULTI_READ_RATERS)
    assert agreement["consensus"]["third_reads"] == session.reads.third_reads
    assert agreement["consensus"]["answers"] == session.reads.answers_read_twice
    assert len(agreement["pairs"]) == 18 and len(agreement["alpha"]) == 3
    written = files(session, ["report.md", "report.html"])
    assert "## Agreement between raters" in written["report.md"]
    assert 'id="agreement"' in written["report.html"] and "Pairs of raters: qwk" in written[
        "report.html"]  # fmt: skip


def test_a_file_read_once_writes_nothing_new():
    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config(rater_column="rater"))
    assert session.reads is None and session.raters.reliability == {}
    written = files(session)
    assert CONSENSUS_FILE not in written and AGREEMENT_FILE not in written
    assert report_json.session_dict(session)["agreement"] is None
    assert "Agreement between raters" not in written["report.md"]
    assert 'id="agreement"' not in written["report.html"]
    assert "reliability" not in table(written["raters.csv"])[1] or all(
        row[table(written["raters.csv"])[0].index("reliability")] == ""
        for row in table(written["raters.csv"])[1:]
    )


def test_a_saved_session_restores_the_same_figures(planted, tmp_path):
    session, _, _ = planted
    restored = []
    for k, result in enumerate(session.results):
        for path, content in result_files(result, tmp_path, f"item{k}").items():
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
        restored.append(load_result(tmp_path, f"item{k}", result.responses))
    again = session_result(session.items, restored, session.config).reads
    assert again is not None
    for one, other in zip(session.reads.consensus.items, again.consensus.items):
        assert np.array_equal(one.consensus, other.consensus)
        assert np.array_equal(one.third_read_rank, other.third_read_rank)
        np.testing.assert_allclose(one.consensus_p, other.consensus_p, rtol=0, atol=1e-12)
    assert reads_outputs.agreement_rows(session) == reads_outputs.agreement_rows(
        type(session)(session.items, restored, session.config, reads=again)
    )


HOSTILE_RATERS = [FORMULAS[0], "<b>" + HTML[:20], MARKDOWN[:30], OSC52 + "x"]


def test_hostile_rater_names_are_inert_in_every_file(tmp_path):
    hostile = dict(zip(HOSTILE_RATERS, MULTI_READ_RATERS.values()))
    frame, vectors, _ = multi_read_frame(n=(40, 30), seed=3, raters=hostile)
    frame.to_csv(tmp_path / "hostile.csv", index=False)
    frame = read_table(tmp_path / "hostile.csv")  # as parm reads a file: controls replaced
    session = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS))
    written = files(session)
    for name in (CONSENSUS_FILE, AGREEMENT_FILE, "raters.csv"):
        (tmp_path / name).write_text(written[name], encoding="utf-8")
        check_csv_inert(tmp_path / name)
    header = table(written[CONSENSUS_FILE])[0]
    assert f"score_{FORMULAS[0]}" in header  # "score_" first: a formula cannot start it
    shown = check_html_inert(written["report.html"])
    assert HOSTILE_RATERS[1] in shown  # the name is there, as text
    agreement_md = written["report.md"].split("## Agreement between raters")[1]
    assert not re.search(r"(?<!\\)<(b|img)", agreement_md)  # the names' tags escaped
    assert "\\| a \\| b" in agreement_md  # a | in a name does not split its cell
    assert not UNSAFE.search(written["report.md"])


def test_the_readme_command_audits_the_sample_session(tmp_path):
    sys.path.insert(0, str(ROOT / "sample_data"))
    from make_reads import session as sample_session

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert (
        "parm audit sample_data/reads.csv --item-col item --score-cols score1,score2,score3"
        in readme
    )
    rows, _ = sample_session()
    path = ROOT / "sample_data" / "reads.csv"
    on_disk = list(csv.DictReader(path.open(encoding="utf-8")))
    assert [row["id"] for row in on_disk] == [row["id"] for row in rows]  # the file is the script's
    vectors = np.random.default_rng(0).normal(size=(len(rows), 8)).astype(np.float32)
    np.save(tmp_path / "reads.npy", vectors)
    code, output = cli(path, "--item-col", "item", "--score-cols", "score1,score2,score3",
                       "--rater-cols", "rater1,rater2,rater3", "--embeddings",
                       tmp_path / "reads.npy", "--out", tmp_path / "out", *FAST_CLI)  # fmt: skip
    assert code == 0, output
    consensus = table((tmp_path / "out" / CONSENSUS_FILE).read_text(encoding="utf-8"))
    assert len(consensus) == 1 + len(rows)
    assert consensus[0][6:10] == ["score_Ana", "score_Ben", "score_Cleo", "score_Dev"]
    agreement = table((tmp_path / "out" / AGREEMENT_FILE).read_text(encoding="utf-8"))
    assert len(agreement) == 1 + 3 * (6 + 1)
    # Validity papers on a fifth of the answers: every read of them counts, and there are
    # enough for leniency to be measured against the expert.
    raters = list(csv.DictReader((tmp_path / "out" / "raters.csv").open(encoding="utf-8")))
    expert_reads = sum(row[f"score{k}"] != "" for row in rows if row["expert_score"] != ""
                       for k in (1, 2, 3))  # fmt: skip
    assert sum(int(row["expert_n"]) for row in raters) == expert_reads >= MIN_EXPERT_READS
    assert {row["reference"] for row in raters} == {"expert"}


def test_a_long_file_of_the_same_reads_gives_the_same_consensus(planted):
    session, frame, _ = planted
    rows, row_vectors = [], []
    _, vectors, _ = multi_read_frame()
    for k, (_, source) in enumerate(frame.iterrows()):
        for j in (1, 2, 3):
            if source[f"rater{j}"]:
                rows.append({"id": source["id"], "item": source["item"], "answer": source["answer"],
                             "rater": source[f"rater{j}"], "score": source[f"score{j}"]})  # fmt: skip
                row_vectors.append(vectors[k])
    long = pd.DataFrame(rows).astype(str)
    config = session_config(id_column="id", reads="long", rater_column="rater", cross_fit_folds=3)
    again = run_frame(long, np.asarray(row_vectors), config)
    assert again.reads.raters == session.reads.raters
    for one, other in zip(session.reads.consensus.items, again.reads.consensus.items):
        assert np.array_equal(one.consensus, other.consensus)
        np.testing.assert_allclose(one.consensus_p, other.consensus_p, rtol=0, atol=1e-9)
    assert reads_outputs.agreement_rows(session) == reads_outputs.agreement_rows(again)


def test_decisions_csv_carries_the_consensus_of_a_decided_answer(planted):
    from engine.outputs.session import decisions_table
    from engine.results.decision import Decision

    session, frame, _ = planted
    consensus = {row[0]: row for row in table(files(session)[CONSENSUS_FILE])[1:]}
    result = session.results[0]
    rows = [int(r) for r in result.responses.rows[:2]]

    class Store:
        def all(self):
            return {r: Decision(r, frame["id"][r - 1], "keep", None, "", "t") for r in rows}

        def conflicts(self, row):
            return []

        def added_reads(self):
            return []

    header, body = decisions_table(Store(), session)
    assert header[-3:] == ["consensus", "consensus_p", "added_reads"] and len(body) == 2
    for row in body:
        assert row[-3] == consensus[row[1]][3]


def half_point_items(items: int = 10, answers: int = 12, seed: int = 3):
    """A wide file like Mohler's: many small items scored 0-5 in half points by two graders
    (no rater names), every answer read twice; every third item near its ceiling, most answers
    5 and 5 (a bootstrap draw of those alone has no true-score variance); and one vector per
    row."""
    rng = np.random.default_rng(seed)
    rows, vectors = [], []
    for j in range(items):
        centres = rng.normal(size=(11, 12))
        ceiling = j % 3 == 0
        for i in range(answers):
            true = 10 if ceiling and i % 6 else int(rng.integers(4, 11))
            vector = centres[true] + 0.9 * rng.normal(size=12)
            vectors.append(vector / np.linalg.norm(vector))
            step = 0 if ceiling and true == 10 else rng.choice([-2, -1, 0, 0, 1])
            second = int(np.clip(true + step, 0, 10))
            rows.append({"id": f"{j}.{i}", "item": f"{j + 1}.1", "answer": f"answer {j} {i}",
                         "score1": f"{true / 2:.1f}", "score2": f"{second / 2:.1f}"})  # fmt: skip
    return pd.DataFrame(rows).astype(str), np.asarray(vectors, np.float32)


@pytest.mark.filterwarnings("error")
def test_many_small_half_point_items_give_no_warning_and_every_figure_in_range():
    frame, vectors = half_point_items()
    config = session_config(id_column="id", score_column="score1", second_score_column="score2",
                            cross_fit_folds=3)  # fmt: skip
    session = run_frame(frame, vectors, config)
    written = files(session)  # every output of the run, each built once
    rows = table(written[AGREEMENT_FILE])
    body = [dict(zip(rows[0], row)) for row in rows[1:]]
    for row in body:
        for name in ("exact", "adjacent", "kappa", "qwk", "alpha_nominal", "alpha_ordinal",
                     "alpha_interval", "prmse"):  # fmt: skip
            if row[name]:
                low, mid, high = (float(row[k]) for k in (f"{name}_low", name, f"{name}_high"))
                floor = 0.0 if name in ("exact", "adjacent") else -np.inf if name == "prmse" else -1
                assert floor <= low <= mid <= high <= 1.0, (name, row)
        if row["rater_a"] == "all":  # PRMSE or the reason it has none
            assert bool(row["prmse"]) != bool(row["prmse_note"])
    # Items of 12 answers are too few for their own PRMSE; the session pools them.
    notes = {row["prmse_note"] for row in body[:-1] if row["rater_a"] == "all"}
    assert notes == {"not estimable: 12 answers read twice, 20 needed"}
    data = json.loads(written["report.json"])["agreement"]
    assert data["session_prmse"] is not None and data["session_prmse_reason"] is None
    text = "PRMSE of the model's cross-fitted expected scores over the session: "
    assert text + reads_outputs.prmse_text(data) in written["report.md"]
    for page in ("report.md", "report.html"):  # each item's PRMSE, or why it has none
        assert written[page].count("not estimable (12 answers read twice, 20 needed)") == 10
