"""One scale across items, held out (issue 44, points 2 and 3): the severity as a calibrated
probability that another read would give another score, and the number of wrong scores it
estimates.

The map is engine.audit.calibration's: a logistic regression on the logit of the raw severity,
the item's mean logit and the log of its number of scores, fitted on the real second reads of
every kind but the one it is scored on (each kind weighted equally). Reported per held-out kind:
the expected calibration error (ECE: 10 bins of equal width, |mean probability - share that
differ| weighted by the bin's answers), the estimated count of wrong scores per item (the sum
of the probabilities) against the true count, and a reliability plot (SVG).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from severity_metrics import Outcome

from engine.audit.calibration import fit_map, map_features, predict_map

BINS = 10
RATIO = 1.5


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
    x = [map_features(o.rankings[name], classes[(o.dataset, o.item)]) for o in outcomes]
    y = [o.positives for o in outcomes]
    w = []
    kinds = {o.dataset for o in outcomes}
    for o in outcomes:
        answers = sum(p.positives.size for p in outcomes if p.dataset == o.dataset)
        w.append(np.full(o.positives.size, 1.0 / (answers * len(kinds))))
    return np.vstack(x), np.concatenate(y), np.concatenate(w)


def held_out_calibration(real: list[Outcome], choices: dict, classes: dict) -> dict:
    """Per held-out kind: its items' calibrated probabilities and truth, by the map fitted on
    the other kinds' real reads (of the candidate chosen without that kind)."""
    out = {}
    for kind in dict.fromkeys(o.dataset for o in real):
        name = choices[kind]
        train = [o for o in real if o.dataset != kind]
        x, y, w = _design(train, name, classes)
        coef = fit_map(x, y, w)
        mine = [o for o in real if o.dataset == kind]
        out[kind] = [
            (o.item, predict_map(coef, map_features(o.rankings[name], classes[(kind, o.item)])),
             o.positives)
            for o in mine
        ]  # fmt: skip
    return out


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


def flag_lines(per_kind: dict, predicted: dict) -> list[str]:
    """Per item with real second reads: the wrong scores (reads differ), what parm flagged
    before issue 44 (predicted != audited) and how many of those the second read agrees with,
    and the estimate (sum of calibrated probabilities) with the top-ranked that many flagged."""
    lines = ["", "## Flagged lists held out (real second reads)", ""]
    lines += ["| kind | item | answers | reads differ | before: flagged (2nd read agrees) | "
              "estimate | flagged now (2nd read agrees) |", "|---" * 7 + "|"]  # fmt: skip
    for kind, rows in per_kind.items():
        for item, p, y in rows:
            before, audited = predicted[(kind, item)]
            old = before != audited
            old = f"{int(old.sum())} ({int((old & ~y).sum())})"
            k = int(round(p.sum()))
            top = np.argsort(-p, kind="stable")[:k]
            lines.append(f"| {kind} | {item} | {p.size:,} | {int(y.sum())} | {old} | "
                         f"{p.sum():.0f} | {k} ({int((~y[top]).sum())}) |")  # fmt: skip
    return lines
