"""engine.outputs.report.plots.kept: report.html's plots kept by what they draw. A plot asked for
again is the kept one (matplotlib not called); other arguments draw anew; a kept file changed by
anyone is cleaned (or drawn again) before it reaches a page; the folder stays bounded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.embedding.cache.entries import PLOTS_FOLDER
from engine.outputs.report.plots import drawing as plots
from engine.outputs.report.plots import kept as kept_plots

LABELS = ["0", "1", "2"]
COUNTS = {"human": [3, 4, 5], "model": [2, 5, 5]}


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(kept_plots, "_bounded", [False])
    return tmp_path / "cache" / PLOTS_FOLDER


def _no_matplotlib(monkeypatch):
    def refuse(*_):
        raise AssertionError("drawn again")

    monkeypatch.setattr(plots, "_figure", refuse)


def test_a_plot_asked_for_again_is_the_kept_one(cache, monkeypatch):
    first = plots.score_distribution(LABELS, COUNTS, "Score distribution, item 1")
    heat = plots.confusion_heatmap(LABELS, [[3, 1, 0], [1, 2, 1], [0, 1, 4]], "Confusion, item 1")
    assert len(list(cache.glob("*.svg"))) == 2
    _no_matplotlib(monkeypatch)
    assert plots.score_distribution(LABELS, COUNTS, "Score distribution, item 1") == first
    assert plots.confusion_heatmap(LABELS, [[3, 1, 0], [1, 2, 1], [0, 1, 4]],
                                   title="Confusion, item 1") == heat  # fmt: skip
    with pytest.raises(AssertionError, match="drawn again"):  # one count differs: drawn
        plots.score_distribution(LABELS, {"human": [3, 4, 6], "model": [2, 5, 5]},
                                 "Score distribution, item 1")  # fmt: skip
    with pytest.raises(AssertionError, match="drawn again"):  # another title: drawn
        plots.score_distribution(LABELS, COUNTS, "Score distribution, item 2")


def test_a_kept_plot_changed_in_the_folder_reaches_no_page_as_it_is(cache, monkeypatch):
    title = "Score distribution, item 1"
    drawn = plots.score_distribution(LABELS, COUNTS, title)
    [kept] = cache.glob("*.svg")
    hostile = drawn.replace(
        "</svg>",
        '<script>alert(1)</script><a href="https://example.com"><text>x</text></a>'
        "<foreignObject><div>y</div></foreignObject></svg>",
    ).replace('role="img"', 'role="img" onload="alert(2)"')
    kept.write_text(hostile, encoding="utf-8")
    found = plots.score_distribution(LABELS, COUNTS, title)
    for word in ("<script", "alert", "onload", "example.com", "foreignObject"):
        assert word not in found
    kept.write_text("not an svg <", encoding="utf-8")  # unreadable: drawn again, kept again
    assert plots.score_distribution(LABELS, COUNTS, title) == drawn
    assert kept.read_text(encoding="utf-8") == drawn


def test_without_a_cache_folder_plots_are_drawn(monkeypatch):
    monkeypatch.setattr("engine.embedding.cache.entries.cache_folder", lambda: (None, "no home"))
    assert plots.score_distribution(LABELS, COUNTS, "t").startswith("<svg")


def test_a_folder_that_cannot_be_written_only_means_drawing(cache, monkeypatch):
    cache.parent.mkdir(parents=True)
    cache.write_text("a file where the folder would be")
    first = plots.score_distribution(LABELS, COUNTS, "t")
    assert first == plots.score_distribution(LABELS, COUNTS, "t")


def test_the_folder_keeps_the_most_recently_used(tmp_path):
    for k in range(6):
        path = tmp_path / f"{k}.svg"
        path.write_text("<svg/>")
        os.utime(path, (1_000_000 + k, 1_000_000 + k))
    (tmp_path / "other.part").write_text("")
    kept_plots.bound(tmp_path, limit=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["3.svg", "4.svg", "5.svg", "other.part"]
    kept_plots.bound(tmp_path, limit=3)  # within the limit: nothing removed
    assert len(list(tmp_path.glob("*.svg"))) == 3


def test_a_plot_that_cannot_be_written_leaves_nothing_behind(cache, monkeypatch):
    """A full disk mid-write: the plot is still drawn, and no half-written file stays."""

    def full(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(kept_plots.os, "replace", full)
    assert plots.score_distribution(LABELS, COUNTS, "t").startswith("<svg")
    assert list(cache.iterdir()) == []
