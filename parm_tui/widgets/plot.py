"""A small text plot: the selection metric against K (best p per K), and against p for the
selected K, as horizontal bars drawn with Unicode eighth blocks. Only reads the tuning rows."""

from __future__ import annotations

import math

from rich.text import Text
from textual.widgets import Static

from parm_tui.widgets.tuning_table import is_better

BLOCKS = " ▏▎▍▌▋▊▉█"


def bar(fraction: float, width: int) -> str:
    """A bar `fraction` (0..1) of `width` cells long, in eighths of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (BLOCKS[part] if part else "")).ljust(width)


def bar_lines(points: list[tuple[str, float, bool]], width: int) -> Text:
    """One line per (label, value, highlighted): label, bar scaled between min and max, value.

    The bars start a little below the smallest value so every bar is visible.
    """
    values = [v for _, v, _ in points if math.isfinite(v)]
    out = Text()
    if not values:
        return out
    low, high = min(values), max(values)
    span = high - low
    floor = low - (0.1 * span if span > 0 else 1.0)
    label_width = max(len(label) for label, _, _ in points)
    for label, value, selected in points:
        fraction = (value - floor) / (high - floor) if math.isfinite(value) else 0.0
        style = "bold green" if selected else ""
        shown = f"{value:.3f}" if math.isfinite(value) else "—"
        out.append(f"{label.rjust(label_width)} ", style)
        out.append(bar(fraction, width), "green" if selected else "cyan")
        out.append(f" {shown}" + (" ★" if selected else "") + "\n", style)
    return out


def best_per_k(rows, metric: str) -> list:
    """For each K (in the order first tried), the row with the best metric."""
    best: dict = {}
    for row in rows:
        value = row.metrics[metric]
        current = best.get(row.top_k)
        if current is None or is_better(metric, value, current.metrics[metric]):
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
    text.append_text(bar_lines(points, width))
    if selected is not None:
        same_k = sorted((r for r in rows if r.top_k == selected.top_k), key=lambda r: r.power)
        if len({r.power for r in same_k}) > 1:
            k = "dense" if selected.top_k is None else f"K={selected.top_k}"
            text.append(f"\n{metric} by p at {k}\n", "bold")
            points = [(f"p={r.power:.3g}", r.metrics[metric], r is selected) for r in same_k]
            text.append_text(bar_lines(points, width))
    text.rstrip()
    return text


class MetricPlot(Static):
    """Shows `metric_plot` for a result's tuning rows."""

    def show(self, rows, metric: str) -> None:
        self.update(metric_plot(rows, metric))
