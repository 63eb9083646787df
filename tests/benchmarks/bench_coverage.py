"""Coverage of parm's 95% intervals (estimate +/- 1.96 SE) on simulated scores with known
parameters.

The graph is parm's own: a symmetric top-K graph (`engine.graph.search.build_graph`, normalised,
power p) over random unit vectors. Scores are drawn from the PARM joint distribution on that
graph by Gibbs sampling (tests/potts.py), one independent chain per replication; each
replication is fitted unweighted and with balanced weights, and gets the neighbour sandwich
(parm's standard errors) and, for comparison, the independence sandwich B = sum_i g_i g_i^T
(parm before issue 13).

What each interval should cover: the unweighted fit, the true theta; the balanced fit, the true
beta and gamma and mu_c + log(pi_0 / pi_c), pi_c the category shares over all replications
(balanced weights tilt only the intercepts; engine/model/standard_errors.py). Usage:

    python tests/benchmarks/bench_coverage.py [--replications 200] [--n 2000] [--top-k 10]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import options  # noqa: E402
from potts import TRUE_BETA, TRUE_GAMMA, TRUE_MU, features, gibbs_sample  # noqa: E402

from engine.graph.search import build_graph  # noqa: E402
from engine.model.pseudo_likelihood import (  # noqa: E402
    class_weights,
    fit,
    hessian,
    pack,
    score_contributions,
)
from engine.model.standard_errors import adjacency, sandwich_se  # noqa: E402


def simulation_graph(n: int, top_k: int, power: float, dim: int, seed: int) -> sp.csr_matrix:
    """parm's symmetric top-K graph over n random unit vectors in `dim` dimensions."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return build_graph(vectors.astype(np.float32), top_k).weights(top_k, power, True)


def independence_se(theta, t, s, scores, class_weight) -> np.ndarray:
    """The sandwich parm used before: B = sum_i g_i g_i^T, as if responses were independent."""
    weights = class_weights(scores, t.shape[1], class_weight)
    g = score_contributions(theta, t, s, scores, weights)
    try:
        h_inv = np.linalg.inv(hessian(theta, t, s, weights))
    except np.linalg.LinAlgError:
        return np.full(theta.shape, np.nan)
    return np.sqrt(np.abs(np.diag(h_inv @ (g.T @ g) @ h_inv)))


def replicate(graph, scores_by_chain, class_weight):
    """(estimates, neighbour SEs, independence SEs), each (replications, 3C)."""
    neighbours = adjacency(graph)
    k = TRUE_BETA.size
    estimates, neighbour, independent = [], [], []
    for scores in scores_by_chain:
        t, s = features(graph, scores, k)
        theta = fit(t, s, scores, class_weight).theta
        estimates.append(theta)
        neighbour.append(sandwich_se(theta, t, s, scores, class_weight, neighbours))
        independent.append(independence_se(theta, t, s, scores, class_weight))
    return np.array(estimates), np.array(neighbour), np.array(independent)


def print_table(title, names, target, estimates, neighbour, independent) -> None:
    print(f"\n{title}")
    print(
        f"{'parameter':10s} {'target':>7s} {'mean est.':>9s} {'sd est.':>8s} "
        f"{'mean SE':>8s} {'coverage':>8s} {'indep. SE':>9s} {'coverage':>8s}"
    )
    for j, name in enumerate(names):
        inside = np.abs(estimates[:, j] - target[j]) <= 1.96 * neighbour[:, j]
        inside_old = np.abs(estimates[:, j] - target[j]) <= 1.96 * independent[:, j]
        print(
            f"{name:10s} {target[j]:7.3f} {estimates[:, j].mean():9.3f} "
            f"{estimates[:, j].std(ddof=1):8.3f} {np.nanmean(neighbour[:, j]):8.3f} "
            f"{np.nanmean(inside):8.3f} {np.nanmean(independent[:, j]):9.3f} "
            f"{np.nanmean(inside_old):8.3f}"
        )
    print(f"  SE not available (NaN) in {np.isnan(neighbour).mean():.1%} of the fits")


def main() -> None:
    parser = options(
        __doc__, replications=200, n=2000, top_k=10, power=1.0, dim=8, sweeps=200, seed=0
    )
    args = parser.parse_args()
    started = time.perf_counter()
    graph = simulation_graph(args.n, args.top_k, args.power, args.dim, args.seed)
    degree = np.diff(graph.indptr).mean()
    print(
        f"N = {args.n}, symmetric top-K graph K = {args.top_k}, p = {args.power} over random "
        f"unit vectors in {args.dim} dimensions (mean degree {degree:.1f}, mean S_i "
        f"{graph.sum() / args.n:.2f}); {args.replications} Gibbs chains x {args.sweeps} sweeps"
    )
    chains = gibbs_sample(
        graph, TRUE_BETA, TRUE_GAMMA, TRUE_MU, args.replications, args.sweeps, args.seed + 1
    )
    shares = np.bincount(chains.ravel(), minlength=TRUE_BETA.size) / chains.size
    print(
        f"category shares {np.round(shares, 3)}; simulated in {time.perf_counter() - started:.0f} s"
    )
    c = TRUE_BETA.size - 1
    names = [f"{p}_{k}" for p in ("beta", "gamma", "mu") for k in range(1, c + 1)]
    true = pack(TRUE_BETA, TRUE_GAMMA, TRUE_MU)
    tilted = true.copy()
    tilted[2 * c :] += np.log(shares[0] / shares[1:])
    monte_carlo = np.sqrt(0.95 * 0.05 / args.replications)
    for class_weight, target, what in (
        (None, true, "true theta"),
        ("balanced", tilted, "true beta, gamma; mu_c + log(pi_0 / pi_c)"),
    ):
        result = replicate(graph, chains, class_weight)
        print_table(
            f"class_weight = {class_weight}: coverage of {what} by estimate +/- 1.96 SE "
            f"(Monte Carlo error of a coverage: +/- {monte_carlo:.3f})",
            names,
            target,
            *result,
        )
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
