"""Score labels: coded 0..C in their order, the originals kept. Numbers are ordered numerically
(2 < 10, 1.5 < 2), in one canonical spelling ("+2", "02" and "2.0" are "2"); text labels in the
order `score_order` states, else nominal (coded in sorted order only to have codes)."""

from __future__ import annotations

from engine.core.errors import DataError
from engine.input.table import as_number


def label_text(value: str) -> str:
    return value.strip()


def is_numeric(values: list[str]) -> bool:
    """Scores are numbers when more than half of the non-empty values parse as finite numbers."""
    present = [v for v in (label_text(x) for x in values) if v != ""]
    return sum(as_number(v) is not None for v in present) > len(present) / 2


def code_labels(
    values: list[str], numeric: bool | None = None, order: tuple[str, ...] | None = None
) -> tuple[tuple[str, ...], dict[str, int], set[str]]:
    """Code score labels 0..C: in `order` when given, else numerically when most values are
    numbers, else in sorted order (nominal labels need codes too).

    Returns (labels in code order, mapping from stripped value to code, values that are bad:
    not numbers among numbers, or not in `order`). Labels of `order` that do not occur are left
    out. Labels like "2", "+2", "02" and "2.0" are the same number, shown in one canonical
    spelling (`number_label`: "2"; "2.50" is "2.5"); text labels are kept as written.
    numeric: force numeric or text coding (None: decide with `is_numeric`).
    """
    present = [v for v in (label_text(x) for x in values) if v != ""]
    if order is not None:
        seen = set(present)
        labels = tuple(label for label in order if label in seen)
        code = {label: i for i, label in enumerate(labels)}
        return labels, code, seen - set(order)
    numbers = {v: as_number(v) for v in present}
    if numeric is None:
        numeric = is_numeric(present)
    bad: set[str] = set()
    if numeric:
        bad = {v for v in present if numbers[v] is None}
        order_found = sorted({n for n in numbers.values() if n is not None})
        position = {n: i for i, n in enumerate(order_found)}
        labels = tuple(number_label(n) for n in order_found)
        code = {v: position[n] for v, n in numbers.items() if n is not None}
    else:
        labels = tuple(sorted(set(present)))
        place = {label: i for i, label in enumerate(labels)}
        code = {v: place[v] for v in present}
    return labels, code, bad


def number_label(value: float) -> str:
    """A numeric score's canonical spelling: an integer without plus sign, leading zeros or point
    ("+2", "02", "2.0" are "2"; "-0" is "0"), else the shortest decimal that reads back as the
    same number ("2.50" is "2.5")."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def check_order(values: list[str], order: tuple[str, ...], column: str, where) -> None:
    """Every label that occurs in `column` must be in score_order: name the ones that are not."""
    missing = sorted({label_text(v) for v in values} - set(order) - {""})
    if missing:
        shown = ", ".join(repr(v if len(v) <= 30 else v[:29] + "…") for v in missing[:10])
        raise DataError(
            f"{where}: column '{column}' has score(s) {shown} that are not in score_order "
            f"({', '.join(order)}); add them to score_order in their place, lowest first."
        )


def order_notes(labels, numeric: bool, order, column: str) -> tuple[bool, list[str]]:
    """(whether the codes are ordered, warnings): unused score_order labels, or text labels
    without an order, which make the scores nominal."""
    if order is not None:
        unused = [label for label in order if label not in labels]
        notes = []
        if unused:
            notes.append(
                f"score_order lists {', '.join(repr(v) for v in unused)}, which no response has "
                f"in column '{column}'; left out of the scale."
            )
        return True, notes
    if numeric:
        return True, []
    shown = ", ".join(repr(v) for v in labels[:6]) + (", ..." if len(labels) > 6 else "")
    return False, [
        f"The scores in column '{column}' ({shown}) are text with no stated order, so they are "
        "treated as nominal: QWK, near agreement and the 'off by 2' filter are left out; set "
        'score_order (e.g. --score-order "low,medium,high") to give them an order.'
    ]


# Two columns of numbers are reads on two scales (a sum or a resolved score beside one rater's)
# when one's highest score and its mean are both at least SCALE_RATIO times the other's and it
# lies above the other's highest score on at least SCALE_ABOVE of the answers both score. Two
# raters of one rubric do none of this, however harsh or central one of them: a harsh rater's
# mean is a fraction of a point lower, and a rater who never gives the top score is one step
# short of the other's. Below SCALE_TOP (0-2, 1-2) a rater who never gives the top score and a
# sum of two binary reads cannot be told apart from the numbers, so nothing is said.
SCALE_RATIO = 1.5
SCALE_ABOVE = 0.2
SCALE_TOP = 3


def two_scales(first: list[float], other: list[float]) -> bool:
    """Whether paired scores (the same answers' two reads, as numbers) look like two scales."""
    if not first or min(min(first), min(other)) < 0:
        return False
    low, high = sorted((first, other), key=_mean)
    if max(low) < SCALE_TOP or max(high) < SCALE_RATIO * max(low):
        return False
    if _mean(high) < SCALE_RATIO * _mean(low):
        return False
    return _share_above(high, max(low)) >= SCALE_ABOVE


def scale_notes(names, position, column, labels: list[str]) -> list[str]:
    """A warning for each read column whose numbers look like another scale than the first
    column's (`two_scales`), over the answers both score. names: the read columns; position,
    column: (R,) each read's answer and column; labels: each read's label as written."""
    parsed = {label: as_number(label) for label in set(labels)}  # a scale has few labels
    values = [parsed[label] for label in labels]
    first = {p: v for p, c, v in zip(position, column, values) if c == 0 and v is not None}
    notes = []
    for j in range(1, len(names)):
        pairs = [(first[p], v) for p, c, v in zip(position, column, values)
                 if c == j and v is not None and p in first]  # fmt: skip
        a, b = [x for x, _ in pairs], [y for _, y in pairs]
        if not pairs or not two_scales(a, b):
            continue
        low, high = sorted((a, b), key=_mean)
        notes.append(
            f"Columns '{names[0]}' ({_span(a)}) and '{names[j]}' ({_span(b)}) look like two "
            f"scales: one's mean is {_mean(high) / max(_mean(low), 1e-9):.1f} times the other's, "
            f"above the other's highest score on {_share_above(high, max(low)):.0%} of the "
            f"{len(pairs):,} answers both score (a sum or a resolved score beside one rater's?). "
            "parm compares them as reads of one scale: name two raters' columns instead."
        )
    return notes


def _mean(values) -> float:
    return sum(values) / len(values)


def _share_above(values, top: float) -> float:
    return sum(v > top for v in values) / len(values)


def _span(values) -> str:
    return f"{number_label(min(values))} to {number_label(max(values))}, mean {_mean(values):.1f}"
