"""The tuning plot (parm_tui/widgets/plot.py): bars in eighths of a cell, the selected K marked."""

from __future__ import annotations

from engine.model.tuning import TuningRow
from parm_tui.widgets.plot import bar, metric_plot


def test_bars_are_drawn_in_eighths_of_a_cell():
    assert bar(1.0, 4) == "████"
    assert bar(0.5, 3) == "█▌ "
    assert bar(0.0, 2) == "  "


def test_plot_marks_the_selected_k_and_shows_p_for_it():
    def row(k, p, kappa, selected=False):
        metrics = dict(accuracy=0.5, kappa=kappa, qwk=0.5, near=0.9, f1=0.5, nll=1.0)
        return TuningRow(k, p, metrics, True, selected)

    rows = [row(5, 1.0, 0.40), row(5, 2.0, 0.45), row(10, 1.0, 0.50, True), row(10, 2.0, 0.30)]
    lines = metric_plot(rows, "kappa").plain.splitlines()
    k_lines = [line for line in lines if line.lstrip().startswith("K=")]
    assert k_lines[0].strip().startswith("K=5") and "0.450" in k_lines[0]
    assert k_lines[1].strip().startswith("K=10") and k_lines[1].endswith("★")
    p_lines = [line for line in lines if line.lstrip().startswith("p=")]
    assert [line.split()[0] for line in p_lines] == ["p=1", "p=2"]
    assert p_lines[0].endswith("★")
