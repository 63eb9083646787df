"""Validity papers (`expert_column`): the lead's (expert's) score of some answers, blank on the
others. It is a property of the answer, not a read: in a wide file it is on the answer's row, in
a long file on any of its rows (the same value wherever it is given). A value off the item's
scale, and an answer whose rows give two expert scores, stop the load with their rows named."""

from __future__ import annotations

import numpy as np

from engine.core.errors import DataError
from engine.input.labels import label_text, number_label
from engine.input.table import SHOWN_ROWS, as_number, describe_rows


def expert_codes(cells, position, rows, answers, labels, numeric: bool, column: str, where):
    """(N,) each kept answer's expert score as a code on the item's scale, -1 where none.

    cells: the column's value on each data row; position: (rows,) the answer each row is of
    (wide: the row itself); rows: (rows,) 1-based data-row numbers; answers: the kept answers'
    positions, in order; labels: the item's labels in code order (numbers in canonical
    spelling when numeric). DataError naming rows: a value not on the scale, an answer with two."""
    index = {label: k for k, label in enumerate(labels)}
    of_answer = {int(p): k for k, p in enumerate(answers)}
    out = np.full(len(answers), -1, dtype=np.int64)
    row_of = np.zeros(len(answers), dtype=np.int64)
    off: dict[str, list[int]] = {}
    for value, p, row in zip(cells, position, rows):
        text = label_text(str(value))
        k = of_answer.get(int(p))
        if text == "" or text.lower() == "nan" or k is None:
            continue
        code = index.get(_canonical(text, numeric))
        if code is None:
            off.setdefault(text, []).append(int(row))
            continue
        if out[k] >= 0 and out[k] != code:
            raise DataError(
                f"{where}: column '{column}' gives one answer two expert scores, "
                f"'{labels[out[k]]}' (row {row_of[k]}) and '{labels[code]}' (row {row}); an "
                "answer has one expert score."
            )
        out[k], row_of[k] = code, row
    if off:
        shown = "; ".join(
            f"'{v}' (rows {describe_rows(r)})" for v, r in list(off.items())[:SHOWN_ROWS]
        )
        raise DataError(
            f"{where}: column '{column}' has expert score(s) that are not on the item's scale "
            f"({', '.join(labels)}): {shown}. An expert score is one of the item's scores, or "
            "blank."
        )
    return out


def _canonical(text: str, numeric: bool) -> str:
    """A number in the labels' canonical spelling ("2.0" is "2"); text as written."""
    if not numeric:
        return text
    number = as_number(text)
    return text if number is None else number_label(number)
