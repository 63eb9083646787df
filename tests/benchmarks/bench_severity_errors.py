"""Does the review queue find the errors real raters make? Random errors, real second-read
disagreements, and the consistent ones: a cluster of similar answers scored one step off, a rater
who never gives the top score, a rater who drifts (issue 44).

    PARM_DATA_ROOT=../shared/data OMP_NUM_THREADS=1 nice python tests/benchmarks/bench_severity_errors.py
    python tests/benchmarks/bench_severity_errors.py --datasets mohler powergrading --seeds 1
    python tests/benchmarks/bench_severity_errors.py --limit 5          # 5 items per file

Data (severity_data.py): the eight ASAP-SAS prompts, SciEntsBank's 5-way labels (the first
--scientsbank questions), the ASAP essay sets 1, 2, 7, 8, Mohler's questions and Powergrading's
five (G1 audited). Tasks: "real" where another read exists (ASAP, essays, Mohler: the second
score differs; Powergrading: G2 or G3 differs from G1) and the kinds of severity_errors.py, each
planted --seeds times per item. Rankings per item (severity_error_candidates.py) from pieces
cached under $PARM_BENCH_CACHE (severity_error_pieces.py); peers on the same embeddings: kNN
vote and OOF LR (severity_peers.py). Nested leave-one-dataset-out (severity_error_report.py):
each dataset's figures are those of the candidate the fixed rule picks on the other four.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import dataset_options, machine_line  # noqa: E402
from severity_data import BY_NAME, DATA, item_seed, load_items, with_progress  # noqa: E402
from severity_error_calibration import (  # noqa: E402
    calibration_lines,
    flag_lines,
    held_out_calibration,
    reliability_svg,
    shipped_map,
)
from severity_error_candidates import candidates  # noqa: E402
from severity_error_pieces import GROUP_COUNTS, item_inputs, pieces  # noqa: E402
from severity_error_report import CURRENT, KNN, OOF_LR, choose, held_out, report, table, units  # noqa: E402
from severity_errors import GENERATORS  # noqa: E402
from severity_metrics import Outcome  # noqa: E402

NAMES = ("asap-sas", "scientsbank-5way", "asap-aes", "mohler", "powergrading")


def real_positives(name: str, item) -> np.ndarray | None:
    """Rows another read scored differently (None: the dataset has no other read)."""
    responses = item.responses
    if name == "powergrading":
        frame = pd.read_csv(DATA / BY_NAME[name].files[0], dtype=str, keep_default_na=False)
        picked = frame.iloc[responses.rows - 1]
        grades = [pd.to_numeric(picked[c], errors="coerce").to_numpy() for c in ("G1", "G2", "G3")]
        return (grades[1] != grades[0]) | (grades[2] != grades[0])
    if responses.second_scores is None:
        return None
    second = responses.second_scores
    return (second >= 0) & (second != responses.scores)


def tasks(name: str, item, seeds: int):
    real = real_positives(name, item)
    if real is not None:
        yield "real", None, item.responses.scores, real
    for kind, make in GENERATORS.items():
        for seed in range(seeds):
            made = make(item, item_seed(name, f"{item.name}/{kind}", seed))
            if made is not None and made[1].any():
                yield kind, seed, made[0], made[1]


def rankings(found: dict, scores: np.ndarray, groups) -> dict[str, np.ndarray]:
    out = candidates(found, scores, groups)
    out[KNN] = found["peer/knn"]
    out[OOF_LR] = 1.0 - found["peer/lr"][np.arange(scores.size), scores]
    out[CURRENT] = found["cur/sev"]
    return out


CLASSES: dict[tuple[str, str], tuple] = {}
PREDICTED: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}


def dataset_items(name: str, limit: int | None):
    """(item, its inputs, the dataset's settings) for every item of the dataset `name`."""
    dataset = BY_NAME[name]
    items, _ = load_items(dataset, limit)
    config = dataset.config()
    for item in with_progress(name, items, every=10):
        yield item, item_inputs(item), config


def audit_datasets(args, audit_one) -> list[Outcome]:
    """audit_one(name, limit) for every dataset of args, on one BLAS thread (SciEntsBank: its
    first args.scientsbank questions)."""
    outcomes = []
    with threadpool_limits(1, user_api="blas"):
        for name in args.datasets:
            limit = args.scientsbank if name.startswith("scientsbank") else args.limit
            outcomes += audit_one(name, limit)
    return outcomes


def audit(name: str, seeds: int, limit: int | None, groups) -> list[Outcome]:
    outcomes = []
    for item, inputs, config in dataset_items(name, limit):
        CLASSES[(name, item.name)] = (item.responses.n_classes, item.responses.scores)
        for task, seed, scores, positives in tasks(name, item, seeds):
            found = pieces(item, inputs, task, seed, scores, config, groups)
            if task == "real":
                PREDICTED[(name, item.name)] = (found["cur/predicted"], scores)
            outcomes.append(
                Outcome(name, item.name, task, seed, positives, rankings(found, scores, groups), {})
            )
    return outcomes


def main() -> None:
    parser = dataset_options(__doc__, NAMES, seeds=2)
    parser.add_argument("--scientsbank", type=int, default=60, help="SciEntsBank questions")
    parser.add_argument("--groups", type=int, nargs="*", default=list(GROUP_COUNTS))
    parser.add_argument("--plot", default="/tmp/parm-severity-reliability.svg")
    args = parser.parse_args()
    started = time.perf_counter()
    print(machine_line(), file=sys.stderr)
    outcomes = audit_datasets(args, lambda name, limit: audit(name, args.seeds, limit, args.groups))
    np.seterr(all="ignore")
    print(report(outcomes))
    real = [o for o in outcomes if o.task == "real"]
    if real:
        grouped = units(outcomes)
        figures = table(grouped, list(outcomes[0].rankings))
        pool = [n for n in outcomes[0].rankings if n not in (KNN, OOF_LR)]
        choices = held_out(figures, pool)
        per_kind, features = held_out_calibration(real, choices, CLASSES)
        print("\n".join(calibration_lines(per_kind)))
        print(
            "\nMap features chosen without each kind: "
            + "; ".join(f"{k}: {v}" for k, v in features.items())
        )
        everything = choose(figures, list(figures), pool)
        pick, coef = shipped_map(real, everything, CLASSES)
        print(
            f"Chosen on every kind: {everything}; map fitted on every kind ({pick}): "
            f"COEFFICIENTS = {np.array2string(coef, precision=6, separator=', ')}"
        )
        print("\n".join(flag_lines(per_kind, PREDICTED)))
        reliability_svg(per_kind, Path(args.plot))
        print(f"\nReliability plot: {args.plot}")
    print(f"\nTotal {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
