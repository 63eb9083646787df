"""Coverage of the session model's 95% intervals on sessions simulated with known parameters.

Each replication draws the items' random effects (agreement shifts a_g, intercept shifts
nu_gc) and the raters' intercepts rho_m from their priors (tests/session_sim.py's TRUTH), then
every read by Gibbs sampling on parm's own top-K graphs over clustered vectors (the graphs and
who reads what are fixed across replications), and fits the session model unweighted with K
as simulated. Intervals: estimate +/- 1.96 SE for the fixed theta_0, lambda and delta, by the sandwich
over answers (engine.model.session.inference) and, for comparison, by the model's own curvature
(H + P)^-1; Wald intervals on log tau^2 for the variances of the random effects. A coverage
is within Monte Carlo error of 95% when it is within 1.96 sqrt(.95 .05 / replications).

    python tests/benchmarks/bench_session_coverage.py [--items 20] [--answers 200]
        [--raters 6] [--double 0.3] [--replications 200] [--sweeps 100] [--top-k 10]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_line, options  # noqa: E402
from session_sim import TRUTH, session_design, simulate  # noqa: E402

from engine.model.session.features import read_features  # noqa: E402
from engine.model.session.fit import fit_session  # noqa: E402
from engine.model.session.inference import Z95, standard_errors  # noqa: E402


def replicate(plan, seed: int, sweeps: int):
    """(estimates, sandwich SEs, model SEs) of theta_0, lambda and delta, and per variance component
    (estimate, low, high)."""
    items, _, _ = simulate(plan, TRUTH, sweeps, seed)
    fit = fit_session(read_features(items, plan.top_k), class_weight=None)
    errors = standard_errors(fit)
    model_se = np.sqrt(np.diag(errors.model_covariance))
    lay = fit.layout
    estimate = np.r_[fit.theta0, fit.own_weight, fit.same_rater_weight]
    sandwich = np.r_[errors.theta0_se, errors.own_se, errors.same_rater_se]
    model = np.r_[model_se[: lay.fixed], model_se[lay.own_index], model_se[lay.same_index]]
    variances = {
        name: (np.exp(fit.log_var[k]), *errors.variance_intervals[name])
        for k, name in enumerate(fit.layout.components)
    }
    return estimate, sandwich, model, variances, fit.converged


def print_fixed(estimates, sandwich, model, replications):
    c = TRUTH.c
    names = [f"{p}_{k}" for p in ("beta", "gamma", "mu") for k in range(1, c + 1)]
    names += ["lambda", "delta"]
    truth = np.r_[TRUTH.theta0, TRUTH.own, TRUTH.same]
    print(
        f"\n{'parameter':10s} {'truth':>6s} {'mean est.':>9s} {'sd est.':>8s} {'sandwich SE':>11s} "
        f"{'coverage':>8s} {'model SE':>8s} {'coverage':>8s}"
    )
    for j, name in enumerate(names):
        error = np.abs(estimates[:, j] - truth[j])
        print(
            f"{name:10s} {truth[j]:6.2f} {estimates[:, j].mean():9.3f} "
            f"{estimates[:, j].std(ddof=1):8.3f} {sandwich[:, j].mean():11.3f} "
            f"{np.mean(error <= Z95 * sandwich[:, j]):8.3f} {model[:, j].mean():8.3f} "
            f"{np.mean(error <= Z95 * model[:, j]):8.3f}"
        )


def print_variances(variances, replications):
    print(
        f"\n{'variance':10s} {'truth':>6s} {'mean est.':>9s} {'median':>7s} {'at floor':>8s} "
        f"{'coverage':>8s}"
    )
    for name, truth in TRUTH.variances.items():
        rows = np.array([v[name] for v in variances])
        covered = (rows[:, 1] <= truth) & (truth <= rows[:, 2])
        print(
            f"{name:10s} {truth:6.3f} {rows[:, 0].mean():9.3f} {np.median(rows[:, 0]):7.3f} "
            f"{np.mean(rows[:, 0] <= 1.01e-4):8.3f} {covered.mean():8.3f}"
        )


def main() -> None:
    parser = options(
        __doc__,
        items=20,
        answers=200,
        raters=6,
        double=0.3,
        replications=200,
        sweeps=100,
        top_k=10,
        seed=0,
    )
    args = parser.parse_args()
    print(machine_line())
    plan = session_design(
        args.items, args.answers, args.raters, args.double, args.top_k, seed=args.seed
    )
    print(
        f"{args.items} items x {args.answers} answers, {args.raters} raters, {args.double:.0%} "
        f"read twice, K = {args.top_k}; {args.replications} replications x {args.sweeps} "
        f"Gibbs sweeps; truth: theta_0 {TRUTH.theta0.tolist()}, lambda {TRUTH.own}, "
        f"delta {TRUTH.same}, variances {TRUTH.variances}"
    )
    started = time.perf_counter()
    found = [
        replicate(plan, 1000 * (args.seed + 1) + r, args.sweeps) for r in range(args.replications)
    ]
    estimates, sandwich, model, variances, converged = zip(*found)
    print(
        f"fitted in {time.perf_counter() - started:.0f} s (load {os.getloadavg()[0]:.1f}); "
        f"{np.mean(converged):.1%} converged; Monte Carlo error of a 95% coverage: "
        f"+/- {Z95 * np.sqrt(0.95 * 0.05 / args.replications):.3f}"
    )
    print_fixed(np.array(estimates), np.array(sandwich), np.array(model), args.replications)
    print_variances(variances, args.replications)


if __name__ == "__main__":
    main()
