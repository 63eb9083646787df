"""A small text plot: the selection metric against K (best p per K), and against p for the
selected K, as horizontal bars drawn with Unicode eighth blocks from zero, with the axis under
them. Only reads the tuning rows."""

from __future__ import annotations

import math

from rich.text import Text
from textual.widgets import Static

from engine.core.metric_names import METRIC, better

BLOCKS = " ▏▎▍▌▋▊▉█"


def bar(fraction: float, width: int) -> str:
    """A bar `fraction` (0..1) of `width` cells long, in eighths of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (BLOCKS[part] if part else "")).ljust(width)


def bar_lines(points: list[tuple[str, float, bool]], width: int, top: float | None = None) -> Text:
    """One line per (label, value, highlighted): label, bar, value; then the axis.

    Bars start at zero, so their lengths compare as the values do: a bar is value / top of
    `width` cells (top: the axis end, default the largest value); a negative value (kappa can
    be) gets no bar.
    """
    values = [v for _, v, _ in points if math.isfinite(v)]
    out = Text()
    if not values:
        return out
    top = top if top is not None else max(max(values), 1e-12)
    label_width = max(len(label) for label, _, _ in points)
    for label, value, selected in points:
        fraction = max(value, 0.0) / top if math.isfinite(value) else 0.0
        style = "bold green" if selected else ""
        shown = f"{value:.3f}" if math.isfinite(value) else "—"
        out.append(f"{label.rjust(label_width)} ", style)
        out.append(bar(fraction, width), "green" if selected else "cyan")
        out.append(f" {shown}" + (" ★" if selected else "") + "\n", style)
    end = f"{top:.3g}"
    axis = "0".ljust(width - len(end) + 1, "·") + end
    out.append(" " * (label_width + 1) + axis + "\n", "dim")
    return out


def axis_top(metric: str) -> float | None:
    """Where the bars' axis ends: 1 for agreement figures (at most 1), else the largest value."""
    return 1.0 if METRIC[metric].higher_is_better else None


def best_per_k(rows, metric: str) -> list:
    """For each K (in the order first tried), the row with the best metric."""
    best: dict = {}
    for row in rows:
        value = row.metrics[metric]
        current = best.get(row.top_k)
        if current is None or better(metric, value, current.metrics[metric]):
            best[row.top_k] = row
    return list(best.values())


def metric_plot(rows, metric: str, width: int = 40) -> Text:
    """The text of the plot for finished tuning rows (one of them `selected`)."""
    selected = next((r for r in rows if r.selected), None)
    per_k = sorted(best_per_k(rows, metric), key=lambda r: -1 if r.top_k is None else r.top_k)
    text = Text(f"{metric} by K (best p for each K)\n", "bold")
    points = [
        (
            "dense" if r.top_k is None else f"K={r.top_k}",
            r.metrics[metric],
            selected is not None and r.top_k == selected.top_k,
        )
        for r in per_k
    ]
    text.append_text(bar_lines(points, width, axis_top(metric)))
    if selected is not None:
        same_k = sorted((r for r in rows if r.top_k == selected.top_k), key=lambda r: r.power)
        if len({r.power for r in same_k}) > 1:
            k = "dense" if selected.top_k is None else f"K={selected.top_k}"
            text.append(f"\n{metric} by p at {k}\n", "bold")
            points = [(f"p={r.power:.3g}", r.metrics[metric], r is selected) for r in same_k]
            text.append_text(bar_lines(points, width, axis_top(metric)))
    text.rstrip()
    return text


class MetricPlot(Static):
    """Shows `metric_plot` for a result's tuning rows."""

    def show(self, rows, metric: str) -> None:
        self.update(metric_plot(rows, metric))
