"""Check parm against the method paper's results table on the shared ASAP prompts.

Runs the paper's variants with the bundled all-MiniLM-L6-v2, selection by kappa:
dense (normalised, p = 1), top-K grid (K = 1..50), and power tuning by Brent on [1, 10]
(dense graph). Prints one table per prompt. Usage:

    python tests/benchmarks/bench_paper.py [../shared/data/asap-sas]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from asap_prompts import ASAP_SAS, asap_config, each_prompt

from engine.pipeline import run_audit

VARIANTS = {
    "Full matrix (norm., p=1)": {"similarity_top_k": None, "similarity_power": 1.0},
    "Top-K grid (K=1..50)": {"similarity_top_k": list(range(1, 51)), "similarity_power": 1.0},
    "Power tuning (Brent on [1, 10])": {
        "similarity_top_k": None,
        "similarity_power": {"min": 1.0, "max": 10.0, "tol": 0.02},
    },
}


def main(folder: Path) -> None:
    base = asap_config()
    header = (
        f"{'variant':34s} {'sel.':>10s} {'acc':>6s} {'kappa':>6s} {'near':>6s} "
        f"{'f1':>6s} {'nll':>6s} {'time s':>7s}"
    )
    for responses in each_prompt(folder, base, header):
        for name, changes in VARIANTS.items():
            config = base.updated(**changes)
            started = time.perf_counter()
            result = run_audit(responses, config)
            seconds = time.perf_counter() - started
            best = result.selected
            sel = f"K={best.top_k}" if best.top_k is not None else f"p={best.power:.2f}"
            m = best.metrics
            print(
                f"{name:34s} {sel:>10s} {m['accuracy']:6.3f} {m['kappa']:6.3f} "
                f"{m['near']:6.3f} {m['f1']:6.3f} {m['nll']:6.3f} {seconds:7.1f}"
            )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ASAP_SAS)
