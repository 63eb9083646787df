"""Groups of similar answers (spherical k-means) and folds of whole groups: identical answers
share a group, planted clusters are recovered, every answer is held out once with its whole
group, the seed fixes everything; and a cluster scored the same wrong way, which random folds
learn, stands out over group folds (issue 44)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, roc_auc_score

from engine.audit.queue.answer_groups import group_folds, group_sums, similar_groups
from engine.model.classifier import out_of_fold_proba, stratified_folds


def blobs(n_per=40, centres=6, dim=16, noise=0.05, seed=0):
    rng = np.random.default_rng(seed)
    middle = rng.normal(size=(centres, dim))
    truth = np.repeat(np.arange(centres), n_per)
    x = middle[truth] + noise * rng.normal(size=(truth.size, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32), truth


def test_well_separated_clusters_are_found_and_the_seed_fixes_them():
    x, truth = blobs()
    groups = similar_groups(x, 6, seed=3)
    assert adjusted_rand_score(truth, groups) > 0.99
    np.testing.assert_array_equal(groups, similar_groups(x, 6, seed=3))
    assert groups.min() == 0 and np.unique(groups).size == groups.max() + 1


@pytest.mark.parametrize("dim", [1, 2, 3, 384])
def test_group_sums_are_bit_for_bit_numpys_unbuffered_sums_in_row_order(dim):
    # The k-means step's sums: the same floats as np.add.at (rows added one after another), so
    # the groups, and the severity's group folds, are those np.add.at gave.
    rng = np.random.default_rng(dim)
    scale = rng.choice([1.0, 1000.0], size=(5000, 1))
    x = (rng.normal(size=(5000, dim)) * scale).astype(np.float32)
    label = rng.integers(0, 7, size=5000)
    label[label == 4] = 5  # an empty group sums to zero
    expected = np.zeros((7, dim), dtype=np.float32)
    np.add.at(expected, label, x)
    assert group_sums(x, label, 7).tobytes() == expected.tobytes()


def test_identical_answers_share_a_group():
    x, _ = blobs(seed=1)
    x[10:20] = x[10]
    groups = similar_groups(x, 12, seed=0)
    assert np.unique(groups[10:20]).size == 1


def test_fewer_answers_than_groups_gives_each_its_own():
    x, _ = blobs(n_per=1, centres=4)
    np.testing.assert_array_equal(similar_groups(x, 10, seed=0), np.arange(4))
    assert similar_groups(x, 1, seed=0).tolist() == [0, 0, 0, 0]


def test_group_folds_hold_every_answer_once_with_its_whole_group_and_balance_sizes():
    groups = np.repeat(np.arange(20), np.arange(1, 21))  # sizes 1..20, 210 answers
    parts = group_folds(groups, 5, seed=2)
    held = np.concatenate(parts)
    np.testing.assert_array_equal(np.sort(held), np.arange(groups.size))
    for part in parts:
        inside = np.unique(groups[part])
        assert np.isin(np.flatnonzero(np.isin(groups, inside)), part).all()
    sizes = [p.size for p in parts]
    assert max(sizes) - min(sizes) <= 20  # at most the largest group apart
    assert group_folds(np.zeros(9, dtype=np.int64), 5, 0) == []


def arc_of_kinds(seed: int, kinds=8, per=30, dim=16):
    """Eight kinds of answer along an arc (neighbouring kinds alike), each with a little
    wording of its own; the score follows the place on the arc: 0, 0, 0, 1, 1, 1, 2, 2."""
    rng = np.random.default_rng(seed)
    kind = np.repeat(np.arange(kinds), per)
    theta = kind * np.pi / (kinds - 1)
    own = 0.1 * rng.normal(size=(kinds, dim))
    own[:, :2] = 0
    x = own[kind] + 0.03 * rng.normal(size=(kind.size, dim))
    x[:, 0] += np.cos(theta)
    x[:, 1] += np.sin(theta)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), kind, np.array([0, 0, 0, 1, 1, 1, 2, 2])[kind]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_kind_of_answer_scored_the_same_wrong_way_stands_out_over_group_folds(seed):
    # A rater who misjudges one wording scores the whole kind 2 instead of 1. Random folds see
    # the rest of the kind in training and partly learn the error; folds of whole groups
    # predict the kind from its neighbours on the arc, which never give 2.
    vectors, kind, scores = arc_of_kinds(seed)
    wrong = kind == 3
    audited = np.where(wrong, 2, scores)
    rows = np.arange(audited.size)

    def auroc(parts):
        proba = out_of_fold_proba(vectors, audited, 3, parts, 10.0)
        return roc_auc_score(wrong, 1 - proba[rows, audited])

    random_folds = auroc(stratified_folds(audited, 5, 0))
    grouped = auroc(group_folds(similar_groups(vectors, 8, 0), 5, 0))
    assert grouped > 0.97 and grouped > random_folds + 0.02
