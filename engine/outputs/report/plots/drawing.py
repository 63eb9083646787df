"""report.html's plots: matplotlib figures as inline SVG text.

matplotlib is imported only when a report is written (so `parm --help` and the app's first
screen stay fast) and only through its object API: `matplotlib.figure.Figure` saved with the
SVG backend's writer, never pyplot, so no GUI backend and no global figure state is involved
and an export in the app's worker thread is safe. Text is kept as SVG <text> (`svg.fonttype:
none`), which matplotlib's XML writer escapes; mathtext is off (`text.parse_math`), so a rater
called "$x$" is drawn as written; names are cut to 28 characters. Every SVG then goes through
`inline_svg`, which keeps only what draws: no script, no foreign object, no link, no event
handler, no reference outside the SVG itself. Each plot is kept by what it draws
(engine.outputs.report.plots.kept): a page written again draws only what changed.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from contextlib import contextmanager

from engine.outputs.report.plots.kept import kept

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
# Elements matplotlib writes; anything else is dropped.
_ELEMENTS = {
    "svg", "g", "path", "defs", "clipPath", "use", "text", "tspan", "style", "rect", "circle",
    "ellipse", "line", "polyline", "polygon", "title", "desc", "linearGradient", "radialGradient",
    "stop", "pattern", "mask",
}  # fmt: skip
_LOCAL_URL = re.compile(r"url\(\s*(?!#)", re.IGNORECASE)
# Colours: human blue, model orange, the second rater grey; highlighted: red.
HUMAN, MODEL, SECOND, WARN = "#1f5fa8", "#e07b00", "#8c8c8c", "#b3261e"
NAME_LIMIT = 28
# A figure of each row and its 95% interval's low and high ends (None: not known).
Ranges = tuple[Sequence[float | None], Sequence[float | None], Sequence[float | None]]


def short(name, limit: int = NAME_LIMIT) -> str:
    """A name for a plot: one line, control characters replaced, cut to `limit` characters."""
    from engine.core.text import safe_text

    text = " ".join(safe_text(str(name), one_line=True).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@contextmanager
def _style(salt: str):
    """matplotlib's settings for one figure: its defaults (never the user's or the working
    folder's matplotlibrc, so a report draws the same on every machine and a kept plot is what
    a fresh one would be), text as text, no mathtext, ids unique to it (the salt is the plot's
    kind and title, which name the item by its position, never by data)."""
    from engine.core.places import matplotlib_folder

    matplotlib_folder()  # before the import: no advice on stderr where the home is read-only
    import matplotlib

    with matplotlib.rc_context():  # restores the caller's settings afterwards
        matplotlib.rcdefaults()
        with matplotlib.rc_context(
            {
                "svg.fonttype": "none",
                "svg.hashsalt": salt,
                "text.parse_math": False,
                "font.size": 9,
                "font.family": "sans-serif",
                "axes.spines.top": False,
                "axes.spines.right": False,
                "axes.titlesize": 10,
                "axes.titleweight": "bold",
            }
        ):
            yield


def _figure(width: float, height: float):
    from engine.core.places import matplotlib_folder

    matplotlib_folder()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _svg(figure, title: str) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return inline_svg(buffer.getvalue(), title)


def inline_svg(text: str, title: str) -> str:
    """An SVG document as an inert inline <svg> element: only drawing elements, no event
    handler or scripting attribute, only references into the SVG itself (`#id`), no XML
    declaration or metadata; `title` as its accessible name (parm's words, never data: item
    and rater names are only in the drawing's text, which the SVG writer escapes). Its width and height stay (in pt),
    so every plot's text has the same size; the page's style sheet lets it shrink to fit."""
    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    root = ET.fromstring(text)
    _clean(root)
    _drop_unused_ids(root)
    root.set("role", "img")
    root.set("aria-label", title)
    width = float(re.sub(r"[^\d.]", "", root.get("width", "0")) or 0)
    # A wide plot keeps most of its size on a phone and scrolls sideways in its figure.
    root.set("class", "plot wide" if width > 300 else "plot")
    return ET.tostring(root, encoding="unicode")


def _clean(element) -> None:
    for child in list(element):
        tag = child.tag.rsplit("}", 1)[-1]
        if not child.tag.startswith("{" + SVG_NS) or tag not in _ELEMENTS:
            element.remove(child)
            continue
        _clean(child)
    for name, value in list(element.attrib.items()):
        local = name.rsplit("}", 1)[-1].lower()
        if local.startswith("on") or (local == "href" and not value.startswith("#")):
            del element.attrib[name]
        elif _LOCAL_URL.search(value):
            del element.attrib[name]
    if element.tag == f"{{{SVG_NS}}}style" and element.text and _LOCAL_URL.search(element.text):
        element.text = ""


def _drop_unused_ids(root) -> None:
    """Remove the ids nothing in the SVG refers to (matplotlib names every group `figure_1`,
    `axes_1`, ...: several plots in one page would repeat them); the figure's and each axes'
    group keep their kind as a class."""
    used = set()
    for element in root.iter():
        for value in element.attrib.values():
            used.update(re.findall(r"#([\w.-]+)", value))
    for element in root.iter():
        name = element.get("id")
        if name is not None and re.fullmatch(r"(figure|axes)_\d+", name):
            element.set("class", name.split("_")[0])  # what a test or a style sheet can find
        if name not in used:
            element.attrib.pop("id", None)


@kept
def score_distribution(labels, counts: dict[str, list[int]], title: str) -> str:
    """Bars of how often each score was given, side by side per score: {series: counts}."""
    colours = {"human": HUMAN, "model": MODEL, "second rater": SECOND}
    with _style("distribution" + title):
        figure = _figure(5.0, 2.6)
        axes = figure.add_subplot()
        width = 0.8 / len(counts)
        for k, (name, values) in enumerate(counts.items()):
            positions = [i + (k - (len(counts) - 1) / 2) * width for i in range(len(labels))]
            axes.bar(positions, values, width, label=name, color=colours.get(name, SECOND))
        axes.set_xticks(range(len(labels)), [short(label, 12) for label in labels])
        axes.set_xlabel("score")
        axes.set_ylabel("responses")
        axes.legend(frameon=False, ncols=len(counts), loc="lower left", bbox_to_anchor=(0, 1))
        return _svg(figure, title)


@kept
def confusion_heatmap(labels, counts, title: str) -> str:
    """The confusion matrix as a heatmap, rows the human score, columns the model's, each
    cell's count written in it (vector cells: pcolormesh, not an embedded image)."""
    import numpy as np

    matrix = np.asarray(counts)
    size = 1.5 + 0.5 * len(labels)
    with _style("confusion" + title):
        figure = _figure(size, size)
        axes = figure.add_subplot()
        axes.pcolormesh(matrix, cmap="Blues", vmin=0, edgecolors="white", linewidth=1)
        top = matrix.max() if matrix.size else 0
        for (i, j), n in np.ndenumerate(matrix):
            colour = "white" if top and n > top * 0.55 else "black"
            axes.text(j + 0.5, i + 0.5, f"{n:,}", ha="center", va="center", color=colour)
        ticks = [short(label, 10) for label in labels]
        centres = np.arange(len(labels)) + 0.5
        axes.set_xticks(centres, ticks)
        axes.set_yticks(centres, ticks)
        axes.set_xlim(0, len(labels))
        axes.set_ylim(len(labels), 0)
        axes.set_aspect("equal")
        axes.set_xlabel("model's score")
        axes.set_ylabel("human score")
        axes.tick_params(length=0)
        axes.spines[:].set_visible(False)
        return _svg(figure, title)


@kept
def tuning_lines(rows, metric: str, label: str, title: str) -> str:
    """The selection metric against K, one line per power p (or against p when K is fixed or
    the graph dense); the selected configuration circled."""
    by_power: dict[float, list] = {}
    for row in rows:
        by_power.setdefault(row.power, []).append(row)
    against_k = any(r.top_k is not None for r in rows) and len({r.top_k for r in rows}) > 1
    with _style("tuning" + title):
        figure = _figure(6.0, 2.6)
        axes = figure.add_subplot()
        if against_k:
            for power, own in sorted(by_power.items()):
                own = sorted(own, key=lambda r: r.top_k or 0)
                name = f"p = {power:.3g}"
                axes.plot([r.top_k for r in own], [r.metrics[metric] for r in own], marker="o",
                          markersize=3, label=name)  # fmt: skip
            axes.set_xlabel("K (neighbours per response)")
        else:
            ordered = sorted(rows, key=lambda r: r.power)
            axes.plot([r.power for r in ordered], [r.metrics[metric] for r in ordered],
                      marker="o", markersize=3, color=HUMAN)  # fmt: skip
            axes.set_xlabel("power p")
        chosen = next((r for r in rows if r.selected), None)
        if chosen is not None:
            x = chosen.top_k if against_k else chosen.power
            axes.plot([x], [chosen.metrics[metric]], marker="o", markersize=10, fillstyle="none",
                      color=WARN, linestyle="none", label="selected")  # fmt: skip
        axes.set_ylabel(label)
        if metric != "nll":
            # Agreement on its whole 0-1 scale, so small differences between settings look small.
            axes.set_ylim(0, 1)
        else:
            axes.set_ylim(bottom=0)
        if len(by_power) > 1 or chosen is not None:
            axes.legend(frameon=False, fontsize=8)
        return _svg(figure, title)


@kept
def interval_dots(
    names, values, lows, highs, label: str, title: str, extra=None, line=None, series=None
):
    """One row per name: the value as a dot with its interval as a bar; extra: a second series
    of dots ((name, values)); line: a reference value drawn as a dashed line; label: the axis's
    name, and the dots' in the legend unless `series` names them."""
    import numpy as np

    n = len(names)
    with _style("dots" + title):
        figure = _figure(6.0, 0.9 + 0.32 * n)
        axes = figure.add_subplot()
        y = np.arange(n)[::-1]
        _dots(axes, y, values, lows, highs, HUMAN, series or label)
        if extra is not None:
            name, others = extra
            axes.plot(_floats(others), y, "D", color=MODEL, markersize=4, label=name)
        if line is not None:
            axes.axvline(line, color=SECOND, linestyle="--", linewidth=1)
        axes.set_yticks(y, [short(v) for v in names])
        axes.set_xlabel(label)
        axes.legend(frameon=False, fontsize=8, loc="lower left", bbox_to_anchor=(0, 1), ncols=2)
        return _svg(figure, title)


@kept
def raters_panels(names, leniency: Ranges | None, differs: Ranges, title: str) -> str:
    """Two panels, one row per rater: leniency in score points with its 95% interval, and the
    share of the rater's scores the model would change with its Wilson interval."""
    import numpy as np

    n = len(names)
    with _style("raters" + title):
        figure = _figure(7.0, 1.0 + 0.32 * n)
        left, right = figure.subplots(1, 2, sharey=True)
        y = np.arange(n)[::-1]
        if leniency is not None:
            _dots(left, y, *leniency, HUMAN, "leniency")
            left.axvline(0, color=SECOND, linestyle="--", linewidth=1)
            left.set_xlabel("leniency (score points; 0 = the typical rater)")
        else:
            left.text(0.5, 0.5, "no leniency: unordered labels", ha="center",
                      transform=left.transAxes)  # fmt: skip
        _dots(right, y, *differs, MODEL, "model differs")
        right.set_xlabel("share of scores the model would change")
        right.xaxis.set_major_formatter("{x:.0%}")
        left.set_yticks(y, [short(v) for v in names])
        return _svg(figure, title)


def _dots(axes, y, values, lows, highs, colour, label) -> None:
    """Dots with their intervals as lines from low to high (an interval need not be symmetric
    about its estimate, so it is drawn as it is, not as an error around the dot)."""
    import numpy as np

    values, lows, highs = _floats(values), _floats(lows), _floats(highs)
    known = ~(np.isnan(lows) | np.isnan(highs))
    axes.hlines(y[known], lows[known], highs[known], color=colour, linewidth=1.5)
    axes.plot(lows[known], y[known], "|", highs[known], y[known], "|", color=colour,
              markersize=7)  # fmt: skip
    # A series with no value to draw has no entry in the legend either.
    axes.plot(values, y, "o", color=colour, label=None if np.isnan(values).all() else label)


def _floats(values):
    import numpy as np

    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


# A live session's small multiples, drawn as SVG directly: 40 panels in milliseconds, where
# matplotlib takes seconds (the monitor draws them every morning).
PANEL_W, PANEL_H, PANEL_PAD = 210, 120, 34


def trend_panels(panels, label: str, title: str, columns: int = 4) -> str:
    """Small multiples, one panel per item or rater: each series a line over the periods (a
    live session's days; a gap where a value is missing), the panel's threshold a dashed red
    line, its alert days red circles, the scale 0 to 1. panels: (name, periods, {series:
    values}, threshold or None, alert periods). Names are escaped text; the result goes
    through inline_svg as every plot does."""
    from xml.sax.saxutils import escape

    rows = max(1, -(-len(panels) // columns))
    width, height = columns * PANEL_W + 10, rows * PANEL_H + 26
    parts = [f'<svg xmlns="{SVG_NS}" width="{width}pt" height="{height}pt" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="9">']  # fmt: skip
    names = list(panels[0][2]) if panels else []
    for k, name in enumerate(names):
        colour = (HUMAN, MODEL, SECOND)[k % 3]
        parts.append(f'<line x1="{12 + 110 * k}" y1="10" x2="{28 + 110 * k}" y2="10" '
                     f'stroke="{colour}" stroke-width="2"/><text x="{32 + 110 * k}" y="13">'
                     f"{escape(short(name, 18))}</text>")  # fmt: skip
    parts.append(f'<text x="{width - 8}" y="13" text-anchor="end" fill="#5c5f66">'
                 f"{escape(short(label, 30))}, 0 to 1</text>")  # fmt: skip
    for k, panel in enumerate(panels):
        left, top = 10 + (k % columns) * PANEL_W, 26 + (k // columns) * PANEL_H
        parts += _panel(panel, left, top, escape)
    parts.append("</svg>")
    return inline_svg("".join(parts), title)


def _panel(panel, left: float, top: float, escape) -> list[str]:
    import numpy as np

    name, periods, series, line, alerted = panel
    w, h = PANEL_W - PANEL_PAD, PANEL_H - 44
    x0, y0 = left + 24, top + 16
    count = max(len(periods) - 1, 1)

    def at(i, v):
        return x0 + w * i / count, y0 + h * (1 - min(max(v, 0.0), 1.0))

    out = [f'<text x="{left}" y="{top + 9}" font-weight="bold">{escape(short(name, 26))}</text>',
           f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#d5d8de"/>']  # fmt: skip
    for v in (0.0, 0.5, 1.0):
        y = at(0, v)[1]
        out.append(f'<text x="{x0 - 3}" y="{y + 3}" text-anchor="end" fill="#5c5f66">{v:g}</text>')
    if line is not None:
        y = at(0, line)[1]
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + w}" y2="{y:.1f}" stroke="{WARN}" '
                   'stroke-dasharray="3 2" stroke-width="0.8"/>')  # fmt: skip
    for k, values in enumerate(series.values()):
        colour = (HUMAN, MODEL, SECOND)[k % 3]
        values = _floats(values)
        run: list[str] = []
        for i, v in enumerate(list(values) + [np.nan]):
            if np.isfinite(v):
                run.append("{:.1f},{:.1f}".format(*at(i, v)))
                continue
            if len(run) > 1:
                out.append(f'<polyline points="{" ".join(run)}" fill="none" stroke="{colour}" '
                           'stroke-width="1.3"/>')  # fmt: skip
            elif run:
                x, y = run[0].split(",")
                out.append(f'<circle cx="{x}" cy="{y}" r="1.5" fill="{colour}"/>')
            run = []
    first = _floats(next(iter(series.values()), []))
    for i, period in enumerate(periods):
        if period in alerted and np.isfinite(first[i]):
            x, y = at(i, first[i])
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="none" stroke="{WARN}" '
                       'stroke-width="1.3"/>')  # fmt: skip
    if periods:
        out.append(
            f'<text x="{x0}" y="{y0 + h + 11}" fill="#5c5f66">{escape(periods[0][5:])}</text>'
        )
        out.append(f'<text x="{x0 + w}" y="{y0 + h + 11}" text-anchor="end" fill="#5c5f66">'
                   f"{escape(periods[-1][5:])}</text>")  # fmt: skip
    return out
