"""report.html's plots (engine/outputs/report/plots/drawing.py): matplotlib figures as inline SVG with nothing
that could load or run, and text from the data (item and rater names) as escaped text."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hostile import HTML, MARKUP

from engine.outputs.report.plots import drawing as plots

NS = {"svg": plots.SVG_NS}
HOSTILE_NAMES = [HTML, "$\\frac{1}{0}$ & <b>", MARKUP, "R" * 60]


def parse(svg: str):
    return ET.fromstring(svg)


def texts(root) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{{{plots.SVG_NS}}}text")]


def test_hostile_names_are_text_in_the_svg_and_mathtext_is_off():
    svg = plots.interval_dots(
        HOSTILE_NAMES, [0.5, 0.6, 0.2, 0.4], [0.4, 0.5, 0.1, None], [0.6, 0.7, 0.3, None],
        "kappa", "Kappa per item",
    )  # fmt: skip
    root = parse(svg)
    shown = texts(root)
    assert plots.short(HTML) in shown  # escaped by the writer, parsed back as written
    assert "$\\frac{1}{0}$ & <b>" in shown  # drawn as written, not as mathtext
    assert plots.short("R" * 60) in shown and len(plots.short("R" * 60)) == plots.NAME_LIMIT
    assert "<img" not in svg and "<script" not in svg.lower()
    assert root.get("aria-label") == "Kappa per item" and root.get("role") == "img"


def test_inline_svg_keeps_only_what_draws():
    hostile = f"""<svg xmlns="{plots.SVG_NS}" xmlns:xlink="{plots.XLINK_NS}" width="10pt"
      height="10pt" viewBox="0 0 10 10" onload="alert(1)">
      <metadata>Matplotlib https://matplotlib.org/</metadata>
      <script>alert(2)</script>
      <foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>
      <a xlink:href="https://x"><text>link</text></a>
      <image xlink:href="https://x/i.png"/>
      <defs><clipPath id="c1"><rect width="5" height="5"/></clipPath>
        <path id="m1" d="M 0 0 L 1 1"/></defs>
      <g id="axes_1" clip-path="url(#c1)" onclick="alert(3)">
        <use xlink:href="#m1"/><use xlink:href="https://x#y"/>
        <rect style="fill: url(https://x/p)" width="1" height="1"/>
      </g>
      <style>@import url(https://x/s.css);</style>
    </svg>"""
    svg = plots.inline_svg(hostile, "A plot")
    root = parse(svg)
    tags = {e.tag.rsplit("}", 1)[-1] for e in root.iter()}
    assert tags <= {"svg", "defs", "clipPath", "rect", "path", "g", "use", "style"}
    for element in root.iter():
        for name, value in element.attrib.items():
            assert not name.rsplit("}", 1)[-1].startswith("on")
            assert "https://" not in value and "alert" not in value
    hrefs = [e.get(f"{{{plots.XLINK_NS}}}href") for e in root.iter(f"{{{plots.SVG_NS}}}use")]
    assert hrefs == ["#m1", None]
    assert root.find(".//svg:g", NS).get("class") == "axes"
    assert root.find(".//svg:g", NS).get("clip-path") == "url(#c1)"
    assert "https" not in "".join(root.itertext())


def test_every_plot_is_an_svg_with_axes_and_unique_ids():
    class Row:
        def __init__(self, top_k, power, value, selected=False):
            self.top_k, self.power, self.selected = top_k, power, selected
            self.metrics = {"kappa": value}

    rows = [Row(k, p, 0.5 + k / 100 - p / 10, k == 10 and p == 1) for k in (5, 10, 20)
            for p in (1, 2)]  # fmt: skip
    made = [
        plots.score_distribution(["0", "1", "2"], {"human": [3, 4, 5], "model": [4, 4, 4]}, "d"),
        plots.confusion_heatmap(["0", "1", "2"], [[3, 1, 0], [1, 2, 1], [0, 1, 4]], "c"),
        plots.tuning_lines(rows, "kappa", "Cohen's kappa", "t"),
        plots.raters_panels(
            ["a", "b"],
            ([0.1, -0.2], [0.0, -0.3], [0.2, -0.1]),
            ([0.2, 0.4], [0.1, 0.3], [0.3, 0.5]),
            "r",
        ),  # fmt: skip
    ]
    ids = []
    for svg in made:
        root = parse(svg)
        assert root.findall(".//svg:g[@class='axes']", NS)
        assert root.find(".//svg:image", NS) is None  # vector only: no embedded bitmap
        ids += [e.get("id") for e in root.iter() if e.get("id")]
    assert len(ids) == len(set(ids))


def test_a_series_with_nothing_to_draw_has_no_legend_entry():
    """Every item too small for an in-sample kappa: the plot names only what it draws."""
    none = [None, None, None]
    svg = plots.interval_dots(["a", "b", "c"], none, none, none, "Cohen's kappa", "Kappa",
                              extra=("cross-fitted", [0.1, 0.2, 0.3]), series="in-sample")  # fmt: skip
    shown = texts(parse(svg))
    assert "cross-fitted" in shown and "in-sample" not in shown
    drawn = plots.interval_dots(["a", "b", "c"], [0.2, None, 0.4], none, none, "Cohen's kappa",
                                "Kappa", extra=("cross-fitted", [0.1, 0.2, 0.3]), series="in-sample")  # fmt: skip
    assert {"cross-fitted", "in-sample", "Cohen's kappa"} <= set(texts(parse(drawn)))


@pytest.mark.parametrize("where", ["MATPLOTLIBRC", "working folder"])
def test_a_users_matplotlibrc_does_not_change_the_plots(tmp_path, where):
    """A matplotlibrc in the user's settings or in the folder parm runs in (matplotlib reads
    both) changed the report's plots, and a kept plot then differed from a fresh one."""
    import subprocess
    import sys

    code = (
        "from engine.outputs.report.plots.drawing import score_distribution as plot\n"
        "print(plot.__wrapped__(['0', '1'], {'human': [3, 4], 'model': [2, 5]}, 'Item 1'))\n"
    )
    rc = tmp_path / "rc" / "matplotlibrc"
    rc.parent.mkdir()
    rc.write_text("axes.facecolor: red\nlines.linewidth: 7\nfont.size: 20\n"
                  "axes.prop_cycle: cycler('color', ['00ff00'])\nfigure.dpi: 30\n")  # fmt: skip

    def drawn(env: dict, cwd) -> str:
        plain = {k: v for k, v in os.environ.items() if k != "MATPLOTLIBRC"}
        plain["MPLCONFIGDIR"] = str(tmp_path / "mpl")  # not the user's own settings
        run = subprocess.run([sys.executable, "-c", code], env={**plain, **env}, cwd=cwd,
                             capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
        return run.stdout

    root = Path(__file__).resolve().parents[1]
    env = {"PYTHONPATH": str(root)}
    fresh = drawn(env, tmp_path)
    assert "<svg" in fresh
    if where == "MATPLOTLIBRC":
        changed = drawn({**env, "MATPLOTLIBRC": str(rc)}, tmp_path)
    else:
        changed = drawn(env, rc.parent)
    assert changed == fresh
