"""engine.audit.queue.read_severity: what the answers read twice teach the queue about the others.
A simulation where disagreement depends on the item and the audited score (the signal must
raise AUROC on the answers read once), no answer ranked with its own reads, and single-read
sessions keeping today's severity exactly; a file read twice throughout does not hand the
regression each answer's own label through the rates (the leave-one-out leak)."""

from __future__ import annotations

import numpy as np
from helpers import run_frame, session_config, session_frame
from sklearn.metrics import roc_auc_score

from engine.audit.queue.read_severity import MIN_EACH, answer_folds, features, learned_severity
from engine.embedding.vectors import Embedded
from engine.input.items import split_items
from engine.pipeline import run_audit
from engine.session import run_session


def simulated(seed: int, share_read: float):
    """Three items of 400 answers on 0-3; disagreement rates per item and score (known truth);
    today's severity carries a weak signal of it. Returns per-item lists."""
    rng = np.random.default_rng(seed)
    rates = np.array([[0.02, 0.30, 0.40, 0.05], [0.05, 0.10, 0.60, 0.10], [0.01, 0.05, 0.20, 0.02]])
    out = {"severity": [], "scores": [], "read": [], "differs": []}
    for item_rates in rates:
        scores = rng.integers(0, 4, size=400)
        differs = rng.random(400) < item_rates[scores]
        noise = rng.normal(size=400)
        out["severity"].append(1 / (1 + np.exp(-(noise + 0.5 * differs - 1.0))))
        out["scores"].append(scores)
        out["read"].append(rng.random(400) < share_read)
        out["differs"].append(differs)
    return out


def test_what_the_reads_teach_raises_auroc_on_the_answers_read_once():
    for seed in range(3):
        data = simulated(seed, 0.3)
        learned = learned_severity(data["severity"], data["scores"], data["read"], data["differs"])
        once = np.concatenate([~r for r in data["read"]])
        truth = np.concatenate(data["differs"])[once]
        today = roc_auc_score(truth, np.concatenate(data["severity"])[once])
        new = roc_auc_score(truth, np.concatenate(learned)[once])
        assert new > today + 0.1, (seed, today, new)
        assert all(((s >= 0) & (s <= 1)).all() for s in learned)


def test_an_answer_read_twice_never_sees_its_own_reads_nor_its_folds():
    data = simulated(5, 0.5)
    severity, scores, read, differs = (
        data[k][0] for k in ("severity", "scores", "read", "differs")
    )
    [fold] = answer_folds([read], [differs], 0)
    assert set(fold[read]) == set(range(5)) and (fold[~read] == -1).all()
    before = features(severity, scores, fold, differs & read, 0.2)
    for answer in np.flatnonzero(read)[:20]:
        # Flip every label of the answer's fold: its own features stay as they were.
        flipped = np.where(fold == fold[answer], ~differs, differs)
        after = features(severity, scores, fold, flipped & read, 0.2)
        np.testing.assert_array_equal(after[answer], before[answer])
    # The answers read once see only the reads of others: hiding their truth changes nothing.
    hidden = np.where(read, differs, False)
    np.testing.assert_array_equal(features(severity, scores, fold, hidden & read, 0.2), before)


def test_reads_everywhere_do_not_teach_each_answer_its_own_label():
    """Every answer read twice and a severity that knows nothing: with the own label only left
    out, the item's rate is lower exactly where the reads differ and the learned severity
    ranked the answers by their own labels (AUROC 1.0); out of fold it knows as little as the
    severity does."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        scores = rng.integers(0, 3, 1000)
        differs = rng.random(1000) < 0.12
        severity = 1 / (1 + np.exp(-rng.normal(size=1000)))
        read = np.ones(1000, bool)
        [learned] = learned_severity([severity], [scores], [read], [differs], seed)
        assert roc_auc_score(differs, learned) < 0.6, seed


def test_too_few_disagreements_or_agreements_change_nothing():
    data = simulated(1, 0.3)
    read = [np.zeros(s.size, bool) for s in data["scores"]]
    assert learned_severity(data["severity"], data["scores"], read, data["differs"]) is None
    few = [np.zeros(s.size, bool) for s in data["scores"]]
    few[0][: MIN_EACH + 50] = True
    differs = [np.zeros(s.size, bool) for s in data["scores"]]
    differs[0][: MIN_EACH - 1] = True  # 4 disagreements among the answers read twice
    assert learned_severity(data["severity"], data["scores"], few, differs) is None


def test_a_single_read_session_keeps_todays_severity_exactly():
    frame, vectors = session_frame(seed=2)
    config = session_config()
    session = run_frame(frame, vectors, config)
    items = split_items(frame, config, source="session.csv")
    for responses, result in zip(items.audited, session.results):
        alone = run_audit(
            responses, config, embedded=Embedded.precomputed(vectors[responses.rows - 1])
        )
        np.testing.assert_array_equal(result.severity, alone.severity)


def test_a_session_with_second_reads_ranks_by_what_they_teach():
    frame, vectors = session_frame(items=(("A", 120, 3), ("B", 120, 3)), seed=6)
    rng = np.random.default_rng(0)
    # Item B's middle score is where the second rater disagrees; half the answers read twice.
    second = []
    for item, score in zip(frame["item"], frame["score"]):
        rate = 0.7 if (item == "B" and score == "1") else 0.05
        other = (int(score) + 1) % 3 if rng.random() < rate else int(score)
        second.append(str(other) if rng.random() < 0.5 else "")
    frame["score2"] = second
    config = session_config(second_score_column="score2")
    items = split_items(frame, config, source="session.csv")
    session = run_session(items, config, embeddings=[vectors[r.rows - 1] for r in items.audited])
    alone = [
        run_audit(r, config, embedded=Embedded.precomputed(vectors[r.rows - 1]))
        for r in items.audited
    ]
    read = [r.responses.reads.per_answer(len(r.responses)) >= 2 for r in session.results]
    expected = learned_severity(
        [a.severity for a in alone],
        [r.scores for r in items.audited],
        read,
        [t & ~r.confirmed for t, r in zip(read, session.results)],
        config.seed,
    )
    assert expected is not None
    for result, want in zip(session.results, expected):
        np.testing.assert_allclose(result.severity, want, rtol=0, atol=1e-12)
    b = next(r for r in session.results if r.responses.item == "B")
    once = ~(b.responses.reads.per_answer(len(b.responses)) >= 2)
    middle = b.responses.scores == 1
    # The answers read once with B's middle score now lead B's single-read queue.
    assert roc_auc_score(middle[once], b.severity[once]) > 0.9


def test_one_backread_per_item_still_gives_every_answer_a_severity():
    """Twenty items with one answer read twice each (ten differ): the folds are dealt over the
    session, so every fold's regression has both kinds and no severity is missing."""
    rng = np.random.default_rng(4)
    scores = [rng.integers(0, 3, 30) for _ in range(20)]
    severity = [1 / (1 + np.exp(-rng.normal(size=30))) for _ in range(20)]
    read = [np.arange(30) == 0 for _ in range(20)]
    differs = [(np.arange(30) == 0) & (g % 2 == 0) for g in range(20)]
    learned = learned_severity(severity, scores, read, differs, 0)
    assert learned is not None
    assert all(np.isfinite(s).all() and ((s >= 0) & (s <= 1)).all() for s in learned)
    folds = answer_folds(read, differs, 0)
    dealt = np.concatenate([f[r] for f, r in zip(folds, read)])
    flagged = np.concatenate([d[r] for d, r in zip(differs, read)])
    for part in range(5):  # two of each kind in every fold
        assert (flagged[dealt == part]).sum() == 2 and (~flagged[dealt == part]).sum() == 2
