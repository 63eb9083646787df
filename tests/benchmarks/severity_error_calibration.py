"""One scale across items, held out (issue 44, points 2 and 3): the severity as a calibrated
probability that another read would give another score, and the number of wrong scores it
estimates.

The map is engine.audit.queue.calibration's: a logistic regression on the logit of the raw severity,
the item's mean logit and the log of its number of scores, fitted on the real second reads of
every kind but the one it is scored on (each kind weighted equally). Reported per held-out kind:
the expected calibration error (ECE: 10 bins of equal width, |mean probability - share that
differ| weighted by the bin's answers), the estimated count of wrong scores per item (the sum
of the probabilities) against the true count, and a reliability plot (SVG).
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
from severity_metrics import Outcome

from engine.audit.queue.calibration import fit_map, map_features, predict_map
from engine.audit.queue.flagging import flagged, wrong_estimate

BINS = 10
# The map's candidate features (columns of engine.audit.queue.calibration.map_features): the
# intercept and the raw severity's logit always; the item's mean logit; log(number of scores).
FEATURE_SETS = {
    "logit": (0, 1),
    "+ item mean": (0, 1, 2),
    "+ scores": (0, 1, 3),
    "all": (0, 1, 2, 3),
}
RATIO = 1.5
# The share of each item's answers whose second read a session is shown, for the estimate from
# second reads.
VISIBLE = 0.2


def ece(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> float:
    edges = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = edges == b
        if inside.any():
            total += inside.sum() * abs(p[inside].mean() - y[inside].mean())
    return float(total / p.size)


def reliability(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> list[tuple[float, float, int]]:
    edges = np.minimum((p * bins).astype(int), bins - 1)
    return [
        (float(p[edges == b].mean()), float(y[edges == b].mean()), int((edges == b).sum()))
        for b in range(bins)
        if (edges == b).any()
    ]


def _design(outcomes: list[Outcome], name: str, classes: dict) -> tuple:
    x = [map_features(o.rankings[name], *classes[(o.dataset, o.item)]) for o in outcomes]
    y = [o.positives for o in outcomes]
    w = []
    kinds = {o.dataset for o in outcomes}
    for o in outcomes:
        answers = sum(p.positives.size for p in outcomes if p.dataset == o.dataset)
        w.append(np.full(o.positives.size, 1.0 / (answers * len(kinds))))
    return np.vstack(x), np.concatenate(y), np.concatenate(w)


def fit_columns(x, y, w, columns) -> np.ndarray:
    """The map fitted on some of its features; the others' coefficients 0."""
    coef = np.zeros(x.shape[1])
    coef[list(columns)] = fit_map(x[:, list(columns)], y, w)
    return coef


def inner_ece(real: list[Outcome], name: str, classes: dict, columns) -> float:
    """Mean ECE over the given kinds, each scored by the map fitted on the others."""
    kinds = list(dict.fromkeys(o.dataset for o in real))
    found = []
    for kind in kinds:
        x, y, w = _design([o for o in real if o.dataset != kind], name, classes)
        coef = fit_columns(x, y, w, columns)
        mx, my, _ = _design([o for o in real if o.dataset == kind], name, classes)
        found.append(ece(predict_map(coef, mx), my))
    return float(np.mean(found))


def held_out_calibration(real: list[Outcome], choices: dict, classes: dict) -> tuple[dict, dict]:
    """Per held-out kind: its items' calibrated probabilities and truth, by the map fitted on
    the other kinds' real reads (of the candidate chosen without that kind), with the features
    (FEATURE_SETS) whose mean ECE, each of those kinds held out in turn, is lowest. Returns
    that and {kind: the feature set chosen}."""
    out, chosen = {}, {}
    for kind in dict.fromkeys(o.dataset for o in real):
        name = choices[kind]
        train = [o for o in real if o.dataset != kind]
        if len({o.dataset for o in train}) > 2:
            pick = min(FEATURE_SETS, key=lambda f: inner_ece(train, name, classes, FEATURE_SETS[f]))
        else:
            pick = "all"
        chosen[kind] = pick
        x, y, w = _design(train, name, classes)
        coef = fit_columns(x, y, w, FEATURE_SETS[pick])
        mine = [o for o in real if o.dataset == kind]
        out[kind] = [
            (o.item, predict_map(coef, map_features(o.rankings[name], *classes[(kind, o.item)])),
             o.positives)
            for o in mine
        ]  # fmt: skip
    return out, chosen


def shipped_map(real: list[Outcome], name: str, classes: dict) -> tuple[str, np.ndarray]:
    """The map parm ships: the feature set chosen over every kind, fitted on all of them."""
    pick = min(FEATURE_SETS, key=lambda f: inner_ece(real, name, classes, FEATURE_SETS[f]))
    x, y, w = _design(real, name, classes)
    return pick, fit_columns(x, y, w, FEATURE_SETS[pick])


def count_line(item_rows) -> tuple[int, int, float]:
    """(items whose estimate is within RATIO of the truth, items, median estimate / truth)."""
    ratios = [p.sum() / max(y.sum(), 1) for _, p, y in item_rows]
    within = sum(1 / RATIO <= r <= RATIO for r in ratios)
    return within, len(ratios), float(np.median(ratios))


def calibration_lines(per_kind: dict) -> list[str]:
    lines = [
        "",
        "## Calibration held out: P(another read differs), the map fitted without the kind",
        "",
    ]
    lines += ["| kind | answers | ECE | mean p | share differing | estimate / truth (pooled) | "
              "items within 1.5x | median item ratio |", "|---" * 8 + "|"]  # fmt: skip
    for kind, rows in per_kind.items():
        p = np.concatenate([r[1] for r in rows])
        y = np.concatenate([r[2] for r in rows])
        within, items, median = count_line(rows)
        lines.append(
            f"| {kind} | {p.size:,} | {ece(p, y):.3f} | {p.mean():.3f} | {y.mean():.3f} | "
            f"{p.sum():.0f} / {y.sum()} | {within} of {items} | {median:.2f} |"
        )
    return lines


def reliability_svg(per_kind: dict, path: Path) -> None:
    """A reliability plot: each kind's bins (mean probability, share that differ), the
    diagonal the calibrated severity should follow."""
    size, pad = 360, 40
    colours = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + 2 * pad + 160}" '
             f'height="{size + 2 * pad}" font-family="sans-serif" font-size="11">',
             f'<rect x="{pad}" y="{pad}" width="{size}" height="{size}" fill="none" stroke="#999"/>',
             f'<line x1="{pad}" y1="{pad + size}" x2="{pad + size}" y2="{pad}" stroke="#bbb" '
             'stroke-dasharray="4 3"/>',
             f'<text x="{pad}" y="{pad + size + 28}">calibrated severity (bin mean)</text>',
             f'<text x="8" y="{pad - 10}">share whose other read differs</text>']  # fmt: skip
    for tick in (0.0, 0.5, 1.0):
        at = pad + tick * size
        parts.append(f'<text x="{at - 6:.0f}" y="{pad + size + 14}">{tick:g}</text>')
        parts.append(f'<text x="{pad - 22}" y="{pad + size - tick * size + 4:.0f}">{tick:g}</text>')
    for k, (kind, rows) in enumerate(per_kind.items()):
        p = np.concatenate([r[1] for r in rows])
        y = np.concatenate([r[2] for r in rows])
        points = reliability(p, y)
        colour = colours[k % len(colours)]
        xy = [(pad + px * size, pad + size - py * size) for px, py, _ in points]
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="'
                     + " ".join(f"{a:.1f},{b:.1f}" for a, b in xy) + '"/>')  # fmt: skip
        for (a, b), (_, _, n) in zip(xy, points):
            r = 2 + min(6, np.log10(max(n, 1)) * 1.5)
            parts.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="{r:.1f}" fill="{colour}"/>')
        label = f"{kind} (ECE {ece(p, y):.3f})"
        parts.append(f'<text x="{pad + size + 10}" y="{pad + 14 + 16 * k}" fill="{colour}">'
                     f"{label}</text>")  # fmt: skip
    parts.append("</svg>")
    path.write_text("\n".join(parts))


def _within(estimate: float, truth: int) -> bool:
    return 1 / RATIO <= max(estimate, 0.5) / max(truth, 0.5) <= RATIO


def flag_lines(per_kind: dict, predicted: dict) -> list[str]:
    """Per item with real second reads: the wrong scores (reads differ); what parm flagged
    before issue 44 (predicted != audited) and how many of those the second read agrees with;
    the estimate from the held-out calibrated severities (engine.audit.queue.flagging) and the list
    flagged from it; and the estimate from VISIBLE of the answers' second reads, as a session
    with some answers read twice gets it."""
    lines = ["", "## Flagged lists held out (real second reads)", ""]
    lines += ["| kind | item | answers | reads differ | before: flagged (2nd read agrees) | "
              "estimate from severities (95%) | flagged now (2nd read agrees) | "
              f"estimate from {VISIBLE:.0%} read twice (95%) |", "|---" * 8 + "|"]  # fmt: skip
    tally = {"severities": [0, 0], "reads": [0, 0], "covered": [0, 0], "sev covered": [0, 0]}
    logs: dict[str, list[float]] = {}
    for kind, rows in per_kind.items():
        for item, p, y in rows:
            logs.setdefault(kind, []).append(np.log((p.sum() + 0.5) / (y.sum() + 0.5)))
            before, audited = predicted[(kind, item)]
            old = before != audited
            estimate = wrong_estimate(p)
            now = flagged(np.argsort(-p, kind="stable"), p, estimate)
            rng = np.random.default_rng(zlib.crc32(f"{kind}/{item}".encode()))
            shown = rng.random(p.size) < VISIBLE
            reads = wrong_estimate(p, shown, y & shown)
            truth = int(y.sum())
            for key, e in (("severities", estimate), ("reads", reads)):
                tally[key][0] += _within(e.count, truth)
                tally[key][1] += 1
            tally["covered"][0] += reads.low <= truth <= reads.high
            tally["covered"][1] += 1
            tally["sev covered"][0] += estimate.low <= truth <= estimate.high
            lines.append(f"| {kind} | {item} | {p.size:,} | {truth} | {int(old.sum())} "
                         f"({int((old & ~y).sum())}) | {estimate.count:.0f} ({estimate.low:.0f}-"
                         f"{estimate.high:.0f}) | {int(now.sum())} ({int((now & ~y).sum())}) | "
                         f"{reads.count:.0f} ({reads.low:.0f}-{reads.high:.0f}) |")  # fmt: skip
    lines += ["", f"Items whose estimate is within {RATIO}x of the truth: from the severities "
              f"{tally['severities'][0]} of {tally['severities'][1]} (its 95% interval holds the "
              f"truth on {tally['sev covered'][0]}); from {VISIBLE:.0%} read "
              f"twice {tally['reads'][0]} of {tally['reads'][1]} (its 95% interval holds the "
              f"truth on {tally['covered'][0]})."]  # fmt: skip
    rms = [float(np.sqrt(np.mean(np.square(v)))) for v in logs.values()]
    lines += ["", "Log of estimate / truth from the severities, root mean square per kind: "
              + "; ".join(f"{k} {r:.2f}" for k, r in zip(logs, rms))
              + f"; mean over kinds (flagging.CALIBRATION_SPREAD): {np.mean(rms):.3f}."]  # fmt: skip
    return lines
