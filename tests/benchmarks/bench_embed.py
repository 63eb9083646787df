"""Embedding throughput on CPU: engine.embedding.sentence.embed_texts against sentence-transformers' encode.

    python tests/benchmarks/bench_embed.py [--texts FILE.csv] [--column EssayText] [--n 1000]

Texts: the first N answers of a CSV column (default: the public ASAP-SAS prompt 1 training
file in $PARM_ASAP_DIR, default ../shared/data/asap-sas beside the repository, when it is
present, else repeated sample answers). Both sides use the same loaded model (the bundled
all-MiniLM-L6-v2), the same texts and batch size; the model is warmed up first.
Also timed: a second embed_texts call, which must come from the cache and skip the model.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
ASAP_DIR = Path(os.environ.get("PARM_ASAP_DIR", ROOT.parent / "shared" / "data" / "asap-sas"))
ASAP = ASAP_DIR / "prompt1-train.csv"


def load_texts(path: Path | None, column: str, n: int) -> tuple[list[str], str]:
    import pandas as pd

    if path is None and ASAP.exists():
        path = ASAP
    if path is None:
        frame = pd.read_csv(ROOT / "sample_data" / "plant_growth.csv", dtype=str)
        texts = frame["answer"].fillna("").tolist()
        source = "sample_data/plant_growth.csv (repeated)"
    else:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        texts = frame[column].tolist()
        source = f"{path.name} column {column}"
    texts = (texts * (n // max(len(texts), 1) + 1))[:n]
    return texts, source


def timed(function, repeats: int = 2) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=Path)
    parser.add_argument("--column", default="EssayText")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["PARM_CACHE_DIR"] = tempfile.mkdtemp(prefix="parm-embed-bench-")

    import torch

    from engine.embedding.models import load_sentence_model
    from engine.embedding.sentence import embed_texts
    from engine.input.settings.config import DEFAULT_MODEL

    texts, source = load_texts(args.texts, args.column, args.n)
    started = time.perf_counter()
    model = load_sentence_model(DEFAULT_MODEL)
    load_seconds = time.perf_counter() - started
    model.encode(texts[:64], batch_size=args.batch_size)  # warm-up
    b = args.batch_size

    def encode():
        model.encode(texts, batch_size=b, convert_to_numpy=True, show_progress_bar=False)

    def ours():
        embed_texts(texts, DEFAULT_MODEL, b, use_cache=False)

    encode_s = timed(encode)
    ours_s = timed(ours)
    embed_texts(texts, DEFAULT_MODEL, b)  # fills the cache
    cached_s = timed(lambda: embed_texts(texts, DEFAULT_MODEL, b))
    ours_vectors, _ = embed_texts(texts, DEFAULT_MODEL, b, use_cache=False)
    reference = model.encode(texts, batch_size=b, normalize_embeddings=True)
    agree = float(np.abs(ours_vectors - reference).max())
    chars = np.mean([len(t) for t in texts])
    n = len(texts)
    print(f"Texts: {n:,} from {source}, mean {chars:.0f} characters")
    print(f"Torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} cores")
    print(f"Model load (first, in process): {load_seconds:.1f} s\n")
    print("| call | seconds | responses / s |")
    print("| --- | ---: | ---: |")
    print(f"| model.encode, batch {b} | {encode_s:.2f} | {n / encode_s:.0f} |")
    print(f"| embed_texts, batch {b}, no cache | {ours_s:.2f} | {n / ours_s:.0f} |")
    print(f"| embed_texts, cached | {cached_s:.3f} | {n / cached_s:.0f} |")
    print(f"\nembed_texts / encode time: {ours_s / encode_s:.2f} (goal <= 1.0, within noise)")
    print(f"Largest difference from encode(normalize_embeddings=True): {agree:.1e}")


if __name__ == "__main__":
    main()
