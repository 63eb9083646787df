"""The severity candidates bench_severity.py compares, built from the cached components of
severity_components.py: each is a function of one item's components and the scores being audited
(never the truth), with the components it needs (for its cost).

A name with * means "C chosen per item by inner cross-validation": the C whose out-of-fold
probabilities give the audited scores the lowest log loss. "shrink" candidates use a stacked
model on large items and the plain model on small ones (by a size threshold, or per item by the
same inner log loss).
"""

from __future__ import annotations

import numpy as np
from severity_components import BOTH_C, EMB_C, TFIDF_C, inner_choice, log_loss

# The severity parm shipped before issue 22 (its stacker recomputed here, so the column stays
# when run_audit changes), and the candidate run_audit computes since.
BEFORE = "before: stack PARM + emb C=10"
SHIPPED_AS = "stack parm+emb10+tfidf10, shrink <10 rows per parameter"
SHRINK_AT = (100, 200, 400)
ROWS_PER_PARAMETER = (1, 2, 5, 10)
MIX_WEIGHTS = (0.25, 0.5, 0.75)


def one_minus(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    return 1.0 - proba[np.arange(scores.size), scores]


def _star(family: str, grid):
    """(probabilities function, needed components) of a family at its inner-CV C."""

    def proba(found, scores):
        return found[f"{family}/C{inner_choice(found, family, grid, scores):g}"]

    return proba, [f"{family}/C{c:g}" for c in grid]


EMB_STAR, EMB_ALL = _star("emb", EMB_C)
TFIDF_STAR, TFIDF_ALL = _star("tfidf", TFIDF_C)
BOTH_STAR, BOTH_ALL = _star("both", BOTH_C)
TFIDF_ALL.append("tfidf/setup")  # the Gram matrix both families are fitted through
BOTH_ALL.append("tfidf/setup")


def _mix(w: float):
    def proba(found, scores):
        return w * EMB_STAR(found, scores) + (1 - w) * TFIDF_STAR(found, scores)

    return proba


def _with_knn(model):
    """One third the kNN vote's score shares, two thirds the model (an ensemble of the two)."""

    def proba(found, scores):
        return (2 * model(found, scores) + found["knn/shares"]) / 3

    return proba


def _with_shares(model):
    """One third PARM's neighbour shares T_i(c) / S_i of the selected graph, two thirds the model."""

    def proba(found, scores):
        s = np.maximum(found["parm/S"], np.finfo(float).tiny)[:, None]
        return (2 * model(found, scores) + found["parm/T"] / s) / 3

    return proba


def _mix_inner(found, scores):
    """The mixing weight of emb* and tfidf* chosen per item by the audited scores' log loss."""
    mixes = [_mix(w)(found, scores) for w in (0.0, *MIX_WEIGHTS, 1.0)]
    return min(mixes, key=lambda p: log_loss(p, scores))


def _stack(name, kind="stack"):
    def proba(found, scores):
        return found[f"{kind}/{name}"]

    return proba


def _fixed_mix(a: str, b: str):
    def proba(found, scores):
        return 0.5 * found[a] + 0.5 * found[b]

    return proba


def _shrink(stacked, plain, threshold):
    def proba(found, scores):
        return stacked(found, scores) if scores.size >= threshold else plain(found, scores)

    return proba


def stacker_parameters(n_classes: int, inputs: int) -> int:
    """Parameters of a multinomial stacker on `inputs` per-score inputs, PARM's shares and
    log(1 + S): (C+1) x (inputs (C+1) + (C+1) + 2), one row fewer with two scores."""
    rows = n_classes if n_classes > 2 else 1
    return rows * ((inputs + 1) * n_classes + 2)


def _shrink_per_parameter(stacked, plain, inputs: int, ratio: float):
    """The stack where the item has at least `ratio` responses per stacker parameter."""

    def proba(found, scores):
        n_classes = found["emb/C10"].shape[1]
        enough = scores.size >= ratio * stacker_parameters(n_classes, inputs)
        return stacked(found, scores) if enough else plain(found, scores)

    return proba


def _shrink_inner(stacked, plain):
    def proba(found, scores):
        a, b = stacked(found, scores), plain(found, scores)
        return a if log_loss(a, scores) < log_loss(b, scores) else b

    return proba


def _probabilities() -> dict[str, tuple]:
    """name -> (probabilities function, components needed)."""
    found: dict[str, tuple] = {
        "PARM in-sample": (lambda f, s: f["parm/proba"], []),
        "PARM cross-fitted": (lambda f, s: f["parm/cross"], []),
    }
    for family, grid in (("emb", EMB_C), ("tfidf", TFIDF_C), ("both", BOTH_C)):
        for c in grid:
            key = f"{family}/C{c:g}"
            needs = [key] + (["tfidf/setup"] if family != "emb" else [])
            found[f"{family} C={c:g}"] = (lambda f, s, k=key: f[k], needs)
    found["emb C*"] = (EMB_STAR, EMB_ALL)
    found["tfidf C*"] = (TFIDF_STAR, TFIDF_ALL)
    found["both C*"] = (BOTH_STAR, BOTH_ALL)
    for w in MIX_WEIGHTS:
        found[f"mix emb* {w:g} + tfidf*"] = (_mix(w), EMB_ALL + TFIDF_ALL)
    found["mix emb* + tfidf*, w*"] = (_mix_inner, EMB_ALL + TFIDF_ALL)
    for a in (3, 10):
        for b in (3, 10, 30):
            needs = [f"emb/C{a}", f"tfidf/C{b}", "tfidf/setup"]
            found[f"mix emb C={a} + tfidf C={b}"] = (_fixed_mix(f"emb/C{a}", f"tfidf/C{b}"), needs)
    for a, b in ((10, 10), (10, 30), (3, 10)):
        needs = [f"emb/C{a}", f"tfidf/C{b}", "tfidf/setup"]
        found[f"mix emb C={a} + tfidf C={b} + kNN"] = (
            _with_knn(_fixed_mix(f"emb/C{a}", f"tfidf/C{b}")),
            needs,
        )
        found[f"mix emb C={a} + tfidf C={b} + PARM shares"] = (
            _with_shares(_fixed_mix(f"emb/C{a}", f"tfidf/C{b}")),
            needs,
        )
    for c in (3, 10):
        found[f"both C={c} + kNN"] = (
            _with_knn(lambda f, s, k=f"both/C{c}": f[k]),
            [f"both/C{c}", "tfidf/setup"],
        )
    mix = EMB_ALL + TFIDF_ALL
    pools = {
        "emb*+tfidf*+parm": mix,
        "emb*+tfidf*": mix,
        "emb10+tfidf10+parm": ["emb/C10", "tfidf/C10", "tfidf/setup"],
        "emb3+tfidf10+parm": ["emb/C3", "tfidf/C10", "tfidf/setup"],
        "both*+parm": BOTH_ALL,
        "both3+parm": ["both/C3", "tfidf/setup"],
        "emb*+parm": EMB_ALL,
    }
    for name, needs in pools.items():
        found[f"pool {name}"] = (_stack(name, "pool"), needs + [f"pool/{name}"])
    # name: (the plain model it shrinks to, components, the pool it may shrink to instead)
    stacks = {
        "parm+emb*": (EMB_STAR, EMB_ALL, "emb*+parm"),
        "parm+emb*+tfidf*": (_mix(0.5), mix, "emb*+tfidf*+parm"),
        "parm+both*": (BOTH_STAR, BOTH_ALL, "both*+parm"),
        "emb*+tfidf*": (_mix(0.5), mix, "emb*+tfidf*"),
        "parm+emb10": (lambda f, s: f["emb/C10"], ["emb/C10"], None),
        "parm+emb3+tfidf10": (
            _fixed_mix("emb/C3", "tfidf/C10"),
            ["emb/C3", "tfidf/C10", "tfidf/setup"],
            "emb3+tfidf10+parm",
        ),
        "parm+emb10+tfidf10": (
            _fixed_mix("emb/C10", "tfidf/C10"),
            ["emb/C10", "tfidf/C10", "tfidf/setup"],
            "emb10+tfidf10+parm",
        ),
        "parm+both3": (lambda f, s: f["both/C3"], ["both/C3", "tfidf/setup"], "both3+parm"),
    }
    for name, (plain, needs, pool) in stacks.items():
        stacked = _stack(name)
        own = needs + [f"stack/{name}"]
        found[f"stack {name}"] = (stacked, own)
        for threshold in SHRINK_AT:
            found[f"stack {name}, shrink <{threshold}"] = (_shrink(stacked, plain, threshold), own)
            if pool is not None:
                found[f"stack {name}, pool <{threshold}"] = (
                    _shrink(stacked, _stack(pool, "pool"), threshold),
                    own + [f"pool/{pool}"],
                )
        found[f"stack {name}, shrink by log loss"] = (_shrink_inner(stacked, plain), own)
        if name in ("parm+emb10+tfidf10", "parm+both3", "parm+emb3+tfidf10"):
            inputs = 1 if name == "parm+both3" else 2
            for ratio in ROWS_PER_PARAMETER:
                found[f"stack {name}, shrink <{ratio} rows per parameter"] = (
                    _shrink_per_parameter(stacked, plain, inputs, ratio),
                    own,
                )
    return found


PROBABILITIES = _probabilities()


def candidates(found: dict, scores: np.ndarray) -> dict[str, np.ndarray]:
    """Every candidate's severity for one item (the shipped one as parm computed it)."""
    out = {BEFORE: one_minus(found["stack/parm+emb10"], scores)}
    for name, (proba, _) in PROBABILITIES.items():
        out[name] = one_minus(proba(found, scores), scores)
    return out


def costs(found: dict) -> dict[str, float]:
    """Seconds each candidate's severity took on this item (the components it needs)."""
    out = {BEFORE: float(found["cost/stack/parm+emb10"] + found["cost/emb/C10"])}
    for name, (_, needs) in PROBABILITIES.items():
        out[name] = float(sum(found[f"cost/{k}"] for k in dict.fromkeys(needs)))
    return out
