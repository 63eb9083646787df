"""The tuning table: one row per configuration as it finishes, the current best marked. Its
metric columns are those the rows carry (no QWK or near columns for unordered score labels)."""

from __future__ import annotations

import math

from rich.text import Text

from engine.core.metric_names import METRIC, METRIC_NAMES, better
from parm_tui.widgets.lists import VimDataTable

BEST_STYLE = "bold reverse"


def fmt(value: float) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.3f}"


class TuningTable(VimDataTable):
    """A DataTable of TuningRows. `add_tuning_row` keeps the best (by `metric`) highlighted."""

    def __init__(self, metric: str = "kappa", **kwargs) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)
        self.metric = metric
        self.tuning_rows: list = []
        self.best_index: int | None = None
        self.metric_columns: tuple[str, ...] = ()

    def on_mount(self) -> None:
        self.set_metric_columns(METRIC_NAMES)

    def set_metric_columns(self, names: tuple[str, ...]) -> None:
        """(Re)build the columns for these metrics, when they are not the ones shown."""
        if names == self.metric_columns:
            return
        self.clear(columns=True)
        self.metric_columns = names
        headers = ("", "K", "p", *(METRIC[m].column for m in names), "conv")
        for i, header in enumerate(headers):
            self.add_column(header, key=f"c{i}")

    def reset(self, metric: str) -> None:
        self.clear()
        self.metric = metric
        self.tuning_rows = []
        self.best_index = None
        self.border_subtitle = ""

    def cells(self, row, best: bool) -> list[Text]:
        style = BEST_STYLE if best else ""
        values = [
            "★" if best else "",
            "dense" if row.top_k is None else str(row.top_k),
            f"{row.power:.3g}",
            *(fmt(row.metrics[m]) for m in self.metric_columns),
            "yes" if row.converged else "no",
        ]
        return [
            Text(v, style=style, justify="right" if i > 0 else "left") for i, v in enumerate(values)
        ]

    def add_tuning_row(self, row) -> None:
        if not self.tuning_rows:
            self.set_metric_columns(tuple(row.metrics))
        index = len(self.tuning_rows)
        self.tuning_rows.append(row)
        previous = self.best_index
        best_value = None if previous is None else self.tuning_rows[previous].metrics[self.metric]
        if previous is None or better(self.metric, row.metrics[self.metric], best_value):
            self.best_index = index
        self.add_row(*self.cells(row, self.best_index == index), key=str(index))
        if previous is not None and self.best_index != previous:
            self.restyle(previous, False)
        self.show_best()

    def show_best(self) -> None:
        """Name the best row under the table, so it stays in view while rows scroll past."""
        if self.best_index is None:
            self.border_subtitle = ""
            return
        row = self.tuning_rows[self.best_index]
        k = "dense" if row.top_k is None else f"K={row.top_k}"
        value = fmt(row.metrics[self.metric])
        self.border_subtitle = f"★ best {k}, p={row.power:.3g}: {self.metric} {value}"

    def restyle(self, index: int, best: bool) -> None:
        for column, cell in enumerate(self.cells(self.tuning_rows[index], best)):
            self.update_cell(str(index), f"c{column}", cell)

    def show_rows(self, rows, metric: str) -> None:
        """Fill with finished rows; the engine's `selected` flag decides the highlight."""
        self.reset(metric)
        if rows:
            self.set_metric_columns(tuple(rows[0].metrics))
        for index, row in enumerate(rows):
            self.tuning_rows.append(row)
            if row.selected:
                self.best_index = index
            self.add_row(*self.cells(row, row.selected), key=str(index))
        if self.best_index is not None:
            # After layout, so the table scrolls to the best row once it knows its height.
            self.call_after_refresh(self.move_cursor, row=self.best_index)
        self.show_best()
