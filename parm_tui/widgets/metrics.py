"""Result widgets built from Rich tables: agreement metrics, the confusion matrix and the
parameter estimates with standard errors. Numbers are read from the result, not computed."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rich import box
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from engine.core.metric_names import METRIC
from engine.core.text import safe_text
from engine.results.headline import NOMINAL_NOTE, selected_text
from engine.results.lead import memorised, run_lead, session_model_lead

if TYPE_CHECKING:
    from engine.results.figures import RunFigures
    from engine.results.headline import Headline
    from engine.results.item import AuditResult
    from engine.results.session import SessionResult


def fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{value:.{digits}f}"


def _lead_line(text: Text, line: str) -> None:
    """One headline figure, its warning (after ⚠) in bold yellow."""
    figure, warn, rest = line.partition(" ⚠ ")
    text.append(figure)
    if warn:
        text.append(" ⚠ " + rest.removesuffix(")"), "bold yellow")
        text.append(")")


def lead_lines(figures: RunFigures) -> Text:
    """'\nkappa 0.411 cross-fitted (in-sample 0.483 ⚠ 0.07 above: memorised) · QWK ...', then
    the session model's line where the run fitted it (engine.results.lead)."""
    text = Text("\n")
    for n, line in enumerate(run_lead(figures)):
        text.append(" · " if n else "")
        _lead_line(text, line)
    modelled = session_model_lead(figures)
    if modelled is not None:
        text.append("\n")
        _lead_line(text, modelled)
    return text


def item_lead(headline: Headline) -> Text:
    """An item's figures from its headline (engine.results.headline, as the CLI and the reports
    write it), their warnings in bold yellow; the nominal note and a too-small item's label on
    lines of their own."""
    text = Text("\n")
    for n, part in enumerate(headline.figures + ((headline.reads,) if headline.reads else ())):
        text.append(" · " if n else "")
        _lead_line(text, part)
    if headline.nominal is not None:
        text.append("\n" + headline.nominal + ".", "dim")
    if headline.small is not None:
        text.append("\n⚠ " + headline.small, "bold yellow")
    return text


def interval_text(result: AuditResult, name: str) -> str:
    interval = result.intervals.get(name)
    return "" if interval is None else f"{fmt(interval.low)}–{fmt(interval.high)}"


def metrics_summary(result: AuditResult) -> str:
    """Plain-text summary for the clipboard; an item too small for its scores says so instead
    of its in-sample figures (engine.results.lead)."""
    from engine.results.overview import is_small

    lines = [f"parm audit of {result.responses.source}", f"Selected: {selected_text(result)}"]
    crossed = {} if result.cross_fit is None else result.cross_fit.metrics
    small = is_small(result)
    for name, value in result.metrics.items():
        line = f"{METRIC[name].screen}: "
        if name in crossed:  # the cross-fitted figure first (engine.results.lead)
            line += f"{fmt(crossed[name])} cross-fitted, "
        if small:
            lines.append(line + "in-sample: too small")
            continue
        line += f"{fmt(value)} in-sample"
        if name in result.intervals:
            line += f" (95% CI {interval_text(result, name)})"
        if name in ("kappa", "qwk") and memorised(value, crossed.get(name)):
            line += " ⚠ memorised"
        lines.append(line)
    lines.append(f"Flagged: {int(result.flagged.sum())} of {len(result.responses)}")
    return "\n".join(lines)


def session_summary(session: SessionResult) -> str:
    """The clipboard summary of every item of a session (one item: `metrics_summary`)."""
    if not session.by_item:
        return metrics_summary(session.results[0])
    parts = [f"Item {r.responses.item}\n" + metrics_summary(r) for r in session.results]
    return safe_text("\n\n".join(parts))


def metrics_table(result: AuditResult, small: bool = False) -> Table:
    """Each metric cross-fitted first (where cross-fitting ran), then in-sample with its
    bootstrap interval; ⚠ beside an in-sample figure more than .05 above its cross-fitted one.
    small: an item too small for its scores (engine.results.lead), whose in-sample figures and
    intervals say "too small" instead."""
    table = Table(title="Agreement, model vs human", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("metric")
    with_intervals = bool(result.intervals)
    crossed = result.cross_fit.metrics if result.cross_fit is not None else None
    if crossed is not None:
        table.add_column("cross-fit", justify="right")
    table.add_column("in-sample", justify="right")
    if with_intervals:
        table.add_column("in-sample 95% CI", justify="center")
    metric = result.config.selection_metric
    for name, value in result.metrics.items():
        style = "bold green" if name == metric else ""
        cells = [Text(METRIC[name].screen, style)]
        inside = Text(fmt(value), style) if not small else Text("too small", "bold yellow")
        if crossed is not None:
            cells.append(Text(fmt(crossed[name]) if name in crossed else "", style))
            if not small and name in ("kappa", "qwk") and memorised(value, crossed.get(name)):
                inside = Text("⚠ " + fmt(value), "bold yellow")
        cells.append(inside)
        if with_intervals:
            cells.append(Text("" if small else interval_text(result, name), "dim"))
        table.add_row(*cells)
    return table


def uncertainty_note(result: AuditResult) -> Text:
    """One line each on what the interval and the cross-fitted column mean, and on metrics left
    out for unordered score labels."""
    lines = []
    if not result.responses.ordered:
        lines.append(NOMINAL_NOTE + ".")
    if result.intervals:
        lines.append(
            f"95% CI: bootstrap over responses ({result.config.bootstrap_samples} samples, "
            "predictions held fixed)."
        )
    if result.cross_fit is not None:
        lines.append(
            f"Cross-fit: each score predicted by a model tuned and fitted without it "
            f"({len(result.cross_fit.folds)} folds) — the honest estimate; in-sample is optimistic."
        )
    if not result.intervals and result.cross_fit is None:
        lines.append("No intervals or cross-fit (bootstrap_samples and cross_fit_folds are 0).")
    return Text("\n".join(lines), style="dim")


def confusion_table(result: AuditResult) -> Table:
    """Human score (rows) against predicted score (columns), counts from the result."""
    responses = result.responses
    counts = result.confusion
    table = Table(title="Confusion matrix", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("human↓ model→")
    for label in responses.labels:
        table.add_column(Text(label), justify="right")
    for i, label in enumerate(responses.labels):
        cells = [Text(f"{n:,}", "bold" if i == j else "") for j, n in enumerate(counts[i])]
        table.add_row(Text(label, "bold"), *cells)
    return table


def parameters_table(result: AuditResult) -> Table:
    from engine.workspace.reporting import parameters

    title = f"Parameter estimates (SE: {result.fitted.se_method})"
    # The title is no wider than the table unless told: at least its own length, so it never
    # wraps ("neighbour sandwich" on a line of its own at any width).
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, min_width=len(title))
    for header in ("parameter", "category", "estimate", "SE"):
        table.add_column(header, justify="left" if header in ("parameter", "category") else "right")
    for entry in parameters(result):
        table.add_row(
            entry["parameter"],
            Text(str(entry["category"])),
            fmt(entry["estimate"]),
            fmt(entry["se"]),
        )
    return table


class RichPanel(Static):
    """A Static that shows a Rich renderable (tables, text) built from a result."""
