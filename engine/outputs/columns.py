"""Output tables declared once: each column's name, what it means, how its value is found and what
kind of value it is. A table's CSV header and rows, the columns of its Markdown and HTML tables
and of the app's table (by name, with the label and the formatting of people's tables), and the
output reference (`reference_markdown`) are all made from one declaration
(engine.outputs.declared holds them).

Kinds: how a value is written. In a CSV every number keeps six decimals (counts are integers);
for people a figure shows three decimals, a share a percentage, points a signed number with two
decimals, and a column with an interval shows it after the value. A label is a score as the
file spells it (text in a CSV; a number in a workbook where it is one: engine.outputs.workbook).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.core.numbers import signed

TEXT, COUNT, FIGURE, SHARE, POINTS, FLAG = "text", "count", "figure", "share", "points", "flag"
LABEL = "label"


@dataclass(frozen=True)
class Column:
    """One column. get(row, context): its value for one row (context: what the table is made
    from, e.g. the session); label: its heading in tables people read (the name when empty);
    interval: the names of the columns holding its 95% interval, shown after it; when: the
    condition under which the file has it, for the reference ("" = always)."""

    name: str
    meaning: str
    # Any: each table's rows (and context) are of its own type, which its columns read.
    get: Callable[[Any, Any], object] | None = None
    kind: str = TEXT
    label: str = ""
    interval: tuple[str, str] | None = None
    when: str = ""

    @property
    def heading(self) -> str:
        return self.label or self.name


def row_key(name: str):
    """A column's value read from a row kept as a dict (the row's `name`)."""
    return lambda row, _: row.get(name)


def row_attr(name: str):
    """A column's value read from a row kept as an object (its attribute `name`)."""
    return lambda row, _: getattr(row, name)


def figure_columns(name: str, meaning: str, kind: str) -> tuple[Column, ...]:
    """A figure and its 95% interval's two ends, read from a dict row by their names."""
    return (
        Column(name, meaning, row_key(name), kind, interval=(f"{name}_low", f"{name}_high")),
        Column(f"{name}_low", "its 95% interval: low end", row_key(f"{name}_low"), kind),
        Column(f"{name}_high", "its 95% interval: high end", row_key(f"{name}_high"), kind),
    )


def missing(value) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def csv_cell(value, kind: str):
    """A value as a CSV writes it: six decimals for numbers, integers for counts, "" for none."""
    if missing(value):
        return ""
    if kind in (FIGURE, SHARE, POINTS) and isinstance(value, float):
        return f"{value:.6f}"
    return value


def fixed(value, digits: int = 3) -> str:
    """A figure with `digits` decimals, "n/a" where there is none (report.md, report.html)."""
    return "n/a" if missing(value) else f"{value:.{digits}f}"


def shown(value, kind: str) -> str:
    """A value as a table for people shows it."""
    if missing(value):
        return ""
    if kind == FIGURE and isinstance(value, float):
        return f"{value:.3f}"
    if kind == SHARE:
        return f"{value:.1%}"
    if kind == POINTS:
        return signed(value)
    if kind == COUNT:
        return f"{value:,}"
    return str(value)


def _value(column: Column, row: object, context: object) -> object:
    """A column's value for one row: only tables whose columns all read their rows (`get`)
    are made into rows here (the others' rows are written by their own writers)."""
    assert column.get is not None, f"the column {column.name} reads no row"
    return column.get(row, context)


@dataclass(frozen=True)
class OutputTable:
    """A table parm writes: its file, what one row is, and its columns in order. `families`:
    columns whose names are made from the data (`p_<label>`), named with their pattern, for the
    reference; the CSV builders that write them check their names against it (tests)."""

    file: str
    row: str
    columns: tuple[Column, ...]
    families: tuple[Column, ...] = ()

    def __post_init__(self) -> None:
        names = [column.name for column in self.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.file}: a column is declared twice")

    @property
    def header(self) -> list[str]:
        return [column.name for column in self.columns]

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"{self.file} has no column {name!r}")

    def without(self, when: str) -> OutputTable:
        """The table less the columns it has only `when` (e.g. with an expert score column)."""
        kept = tuple(column for column in self.columns if column.when != when)
        return OutputTable(self.file, self.row, kept, self.families)

    def csv_row(self, row, context=None) -> list:
        """One row's CSV cells, in the declared order."""
        return [csv_cell(_value(column, row, context), column.kind) for column in self.columns]

    def csv(self, rows, context=None) -> tuple[list[str], list[list]]:
        """(header, rows) of the CSV."""
        return self.header, [self.csv_row(row, context) for row in rows]

    def cell(self, name: str, row, context=None, with_interval: bool = True) -> str:
        """One column of one row as people read it: the value, and its interval after it."""
        column = self.column(name)
        text = shown(_value(column, row, context), column.kind)
        if not text or column.interval is None or not with_interval:
            return text
        low, high = (_value(self.column(n), row, context) for n in column.interval)
        if missing(low) or missing(high):
            return text
        return f"{text} ({shown(low, column.kind)} to {shown(high, column.kind)})"

    def heading(self, name: str, with_interval: bool = True) -> str:
        column = self.column(name)
        suffix = " (95% interval)" if with_interval and column.interval is not None else ""
        return column.heading + suffix

    def reference(self) -> str:
        """The table's columns as a Markdown list for the output reference."""
        lines = [f"### `{self.file}`", "", f"One row per {self.row}.", ""]
        for column in (*self.columns, *self.families):
            when = f" ({column.when})" if column.when else ""
            lines.append(f"- `{column.name}`{when}: {column.meaning}")
        return "\n".join(lines) + "\n"


def reference_markdown(tables) -> str:
    """Every table's reference, one after another."""
    return "\n".join(table.reference() for table in tables)
