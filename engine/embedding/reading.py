"""How a sentence model reads answers: long answers either cut at the model's input limit or read
whole in overlapping windows (the `long_answers` setting).

"truncate" reads the first `max_seq_length` word pieces, as sentence-transformers does;
"windows" reads the whole text as windows of the model's input limit that overlap by a quarter
window, each starting and ending on a word boundary, and pools their vectors (the mean weighted
by each window's word pieces, then unit length). A text that fits is read the same way in both
(READ_WHOLE), so the answer cache keeps one vector for it whatever the setting.

Texts are encoded longest first in batches of `embedding_batch_size`, as earlier versions did:
batches pad little. Padding changes a vector in its last bits (about 1e-7), so a text's vector
can differ that much with the texts it was batched with; the answer cache keeps the first one
made, so a re-run gives exactly the same vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.progress import EMBEDDING, Reporter
from engine.embedding.vectors import unit_rows
from engine.input.settings.declared import LONG_ANSWERS

TRUNCATE, WINDOWS = LONG_ANSWERS
# How a vector read its text, as the answer cache keeps it: the whole text (any setting gives
# this vector), its first window only, or all of it in windows.
READ_WHOLE = "whole"
# Windows overlap by a quarter of the model's window: every boundary has context on both sides.
OVERLAP_SHARE = 4


@dataclass(frozen=True)
class Plan:
    """What to encode for `n` texts: `pieces` (strings, in order), the text each belongs to
    (`owner`), its weight in its text's vector (`weight`: its word pieces), and how each text
    is read (`readings`, READ_WHOLE, TRUNCATE or WINDOWS)."""

    pieces: list[str]
    owner: np.ndarray
    weight: np.ndarray
    readings: list[str]


def input_limit(model) -> tuple[object | None, int | None]:
    """(tokenizer, max word pieces with the special tokens) of a transformer model; (None, None)
    for a model without a limit (the static model)."""
    limit = getattr(model, "max_seq_length", None)
    tokenizer = getattr(model, "tokenizer", None)
    if not limit or tokenizer is None or not getattr(tokenizer, "is_fast", False):
        return None, None
    return tokenizer, int(limit)


def plan_reading(model, texts: list[str], long_answers: str) -> Plan:
    """The pieces to encode for `texts` under `long_answers` (see the module docstring)."""
    tokenizer, limit = input_limit(model)
    n = len(texts)
    if tokenizer is None or limit is None:  # input_limit gives both or neither
        return Plan(list(texts), np.arange(n), np.ones(n), [READ_WHOLE] * n)
    lengths = _lengths(tokenizer, texts)
    fits = lengths <= limit
    readings = [READ_WHOLE if fit else long_answers for fit in fits]
    if long_answers == TRUNCATE or fits.all():
        return Plan(list(texts), np.arange(n), np.ones(n), readings)
    pieces, owner, weight = [], [], []
    specials = _special_count(tokenizer)
    for i, text in enumerate(texts):
        spans = [(text, 1)] if fits[i] else windows(tokenizer, text, limit - specials)
        for piece, pieces_in in spans:
            pieces.append(piece)
            owner.append(i)
            weight.append(pieces_in)
    return Plan(pieces, np.array(owner), np.array(weight, float), readings)


def _lengths(tokenizer, texts: list[str]) -> np.ndarray:
    if not texts:
        return np.zeros(0, int)
    # verbose=False: long texts are the point here; the tokenizer's warning about them is noise.
    ids = tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    return np.array([len(i) for i in ids], dtype=int)


def _special_count(tokenizer) -> int:
    return len(tokenizer("", add_special_tokens=True)["input_ids"])


def windows(tokenizer, text: str, size: int) -> list[tuple[str, int]]:
    """The windows of a long `text`: (substring, its word pieces), at most `size` word pieces
    each, starting and ending on word boundaries, each starting a quarter window before the
    previous one ended, the last one ending with the text."""
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets, words = encoded["offset_mapping"], encoded.word_ids()
    n = len(offsets)
    starts = [k for k in range(n) if k == 0 or words[k] is None or words[k] != words[k - 1]]
    out, start = [], 0
    while True:
        end = min(start + size, n)
        if end < n:  # end before the word the limit falls in (unless that word is the window)
            boundary = max((s for s in starts if start < s <= end), default=end)
            end = boundary
        out.append((text[offsets[start][0] : offsets[end - 1][1]], end - start))
        if end >= n:
            return out
        overlap_start = max(start + 1, end - size // OVERLAP_SHARE)
        start = min((s for s in starts if s >= overlap_start), default=end)
        start = min(start, end)


def encode_plan(
    model, plan: Plan, batch_size: int, reporter: Reporter, cached: int = 0
) -> np.ndarray:
    """(len(plan.readings), d) float32 unit vectors: the plan's pieces encoded (longest first,
    progress and cancel between batches), pooled per text. cached: the distinct answers of the
    run found in the answer cache, said beside the count of those embedded now ("357 of 357
    new, 1,916 from the cache")."""
    n = len(plan.readings)
    unit = "distinct answers" if len(plan.pieces) == n else "windows of distinct answers"
    if cached:
        unit = ("new" if len(plan.pieces) == n else "windows of new answers") + (
            f", {cached:,} from the cache"
        )
    pieces = encode_sorted(model, plan.pieces, batch_size, reporter, unit)
    if len(plan.pieces) == n:
        return unit_rows(pieces)
    sums = np.zeros((n, pieces.shape[1]), dtype=np.float64)
    np.add.at(sums, plan.owner, pieces.astype(np.float64) * plan.weight[:, None])
    return unit_rows(sums)


def encode_sorted(
    model, pieces: list[str], batch_size: int, reporter: Reporter, unit: str = "answers"
) -> np.ndarray:
    """(len(pieces), d) float32 vectors as the model gives them, in the order given. Longest
    first in batches of `batch_size`, so batches pad little (the order earlier versions used,
    so a list embedded whole gives the vectors it gave then)."""
    total = len(pieces)
    order = np.argsort([len(p) for p in pieces], kind="stable")[::-1]
    # One batch per call: about a second of work on a CPU, so progress and cancel stay prompt
    # (a static model encodes a few thousand texts in that time).
    group = getattr(model, "encode_group", batch_size)
    vectors = np.zeros((total, 0), dtype=np.float32)
    reporter(EMBEDDING, 0, total, f"0 of {total:,} {unit}")
    for start in range(0, total, group):
        reporter.check()
        chosen = order[start : start + group]
        encoded = model.encode(
            [pieces[i] for i in chosen],
            batch_size=batch_size,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        if vectors.shape[1] == 0:
            vectors = np.empty((total, encoded.shape[1]), dtype=np.float32)
        vectors[chosen] = encoded
        done = min(start + group, total)
        reporter(EMBEDDING, done, total, f"{done:,} of {total:,} {unit}")
    return vectors
