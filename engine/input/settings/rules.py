"""How a setting's value is checked and read: one `Rule` per kind of value, each with the words
for what it accepts and the function that reads a JSON value into the value a run uses (or
raises a ConfigError naming the setting, the value and what is accepted). The settings table
(engine.input.settings.declared) gives every setting its rule; the Settings form picks its widget by the
rule's `kind`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass

from engine.cluster.address import local_workers
from engine.core.errors import ConfigError
from engine.core.text import is_safe


@dataclass(frozen=True)
class PowerInterval:
    """Bounded interval for Brent's method on the power p."""

    min: float
    max: float
    tol: float = 0.02


@dataclass(frozen=True)
class Rule:
    """kind: the widget a form gives it ("bool", "int", "number", "text", "choice", or a kind of
    its own for the values a plain field cannot hold); accepted: what is accepted, in words;
    read(key, value): the value a run uses; choices: (value, label) of a "choice"."""

    kind: str
    accepted: str
    read: Callable[[str, object], object]
    choices: tuple[tuple[object, str], ...] = ()
    nullable: bool = False


def fail(key: str, value: object, accepted: str) -> ConfigError:
    return ConfigError(
        f"Setting '{key}' = {json.dumps(value, default=str)} is invalid: {accepted}.", key
    )


def boolean() -> Rule:
    def read(key: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise fail(key, value, "expected true or false")
        return value

    return Rule("bool", "true or false", read)


def integer(minimum: int = 1, nullable: bool = False) -> Rule:
    extra = " or null" if nullable else ""

    def read(key: str, value: object) -> int | None:
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise fail(key, value, f"expected an integer >= {minimum}{extra}")
        return value

    return Rule("int", f"an integer >= {minimum}{extra}", read, nullable=nullable)


def positive() -> Rule:
    return Rule("number", "a number > 0", read_positive)


def read_positive(key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(key, value, "expected a number > 0")
    if not math.isfinite(value) or value <= 0:
        raise fail(key, value, "expected a finite number > 0")
    return float(value)


def unit(nullable: bool = False) -> Rule:
    accepted = "a number in (0, 1]" + (" or null" if nullable else "")

    def read(key: str, value: object) -> float | None:
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
            raise fail(key, value, "expected " + accepted)
        return float(value)

    return Rule("number", accepted, read, nullable=nullable)


def text(nullable: bool = False) -> Rule:
    accepted = "a non-empty string" + (" or null" if nullable else "")

    def read(key: str, value: object) -> str | None:
        if value is None and nullable:
            return None
        if not isinstance(value, str) or not value.strip():
            raise fail(key, value, "expected " + accepted)
        if not is_safe(value):
            raise fail(
                key, value, "control characters (escape sequences, bidi overrides) are not allowed"
            )
        return value

    return Rule("text", accepted, read, nullable=nullable)


def choice(*options: tuple[object, str]) -> Rule:
    """One of `options`, each (value, how a form labels it); None is written null."""
    values = tuple(value for value, _ in options)
    shown = ", ".join("null" if v is None else str(v) for v in values)

    def read(key: str, value: object) -> object:
        if value not in values:
            raise fail(key, value, f"expected one of {shown}")
        return value

    return Rule("choice", f"one of {shown}", read, tuple(options), nullable=None in values)


def shares(count: int) -> Rule:
    """`count` shares in [0, 1] (targets by scale size), as a list or one comma-separated
    string (as a form's field gives it: "0.85, 0.8")."""
    accepted = f"a list of {count} numbers in [0, 1]"

    def read(key: str, value: object) -> tuple[float, ...]:
        return tuple(_numbers(key, value, count, accepted, 0.0, 1.0))

    return Rule("shares", accepted, read)


def percentiles() -> Rule:
    """Two percentiles, the first (yellow) at least the second (red), each in (0, 100)."""
    accepted = "two percentiles in (0, 100), the first (yellow) at least the second (red)"

    def read(key: str, value: object) -> tuple[float, float]:
        yellow, red = _numbers(key, value, 2, accepted, 0.0, 100.0)
        if not (0 < red <= yellow < 100):
            raise fail(key, value, "expected " + accepted)
        return (yellow, red)

    return Rule("shares", accepted, read)


def _numbers(
    key: str, value: object, count: int, accepted: str, low: float, high: float
) -> list[float]:
    if isinstance(value, str):
        parts = [p for p in value.strip().strip("[]()").replace(";", ",").split(",") if p.strip()]
        try:
            value = [float(p) for p in parts]
        except ValueError:
            raise fail(key, value, "expected " + accepted) from None
    if not isinstance(value, (list, tuple)) or len(value) != count:
        raise fail(key, value, "expected " + accepted)
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
            raise fail(key, value, "expected " + accepted)
    return [float(v) for v in value]


def _distinct_strings(
    least: int, what: str, accepted: str
) -> Callable[[str, object], tuple[str, ...] | None]:
    """A reader of strings, at least `least` and each once (or null), as a list or one
    comma-separated string (as `--score-cols G1,G2,G3` gives it), with no control characters."""

    def read(key: str, value: object) -> tuple[str, ...] | None:
        if value is None:
            return None
        found = value.split(",") if isinstance(value, str) else value
        found = list(found) if isinstance(found, tuple) else found
        if not isinstance(found, list) or not all(isinstance(v, str) for v in found):
            raise fail(key, value, accepted)
        found = [v.strip() for v in found]
        if len(found) < least or "" in found or len(set(found)) < len(found):
            raise fail(key, value, accepted)
        if not all(is_safe(v) for v in found):
            raise fail(key, value, f"control characters are not allowed in {what}")
        return tuple(found)

    return read


def column_list() -> Rule:
    """Column names, at least two and each once (or null), as a list or one comma-separated
    string (as `--score-cols G1,G2,G3` gives it)."""
    accepted = 'expected null or at least two column names, each once, e.g. ["G1", "G2"]'
    read = _distinct_strings(2, "column names", accepted)
    return Rule("columns", accepted.removeprefix("expected "), read, nullable=True)


def top_k() -> Rule:
    accepted = "expected an integer >= 1, a non-empty list of them, or null for the dense graph"

    def read(key: str, value: object) -> int | tuple[int, ...] | None:
        if value is None:
            return None
        if isinstance(value, list):
            if not value:
                raise fail(key, value, accepted)
            for v in value:
                if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                    raise fail(key, value, accepted)
            return tuple(sorted(set(value)))
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise fail(key, value, accepted)
        return value

    return Rule("top_k", accepted.removeprefix("expected "), read, nullable=True)


def power() -> Rule:
    def read(key: str, value: object) -> float | tuple[float, ...] | PowerInterval:
        if isinstance(value, dict):
            unknown = set(value) - {"min", "max", "tol"}
            if unknown or "min" not in value or "max" not in value:
                raise fail(key, value, 'an interval needs "min" and "max" (and optionally "tol")')
            lo, hi = read_positive(key, value["min"]), read_positive(key, value["max"])
            tol = read_positive(key, value.get("tol", 0.02))
            if lo >= hi:
                raise fail(key, value, "the interval needs min < max")
            return PowerInterval(lo, hi, tol)
        if isinstance(value, list):
            if not value:
                raise fail(key, value, "a grid needs at least one power")
            return tuple(sorted({read_positive(key, v) for v in value}))
        return read_positive(key, value)

    return Rule("power", 'a number > 0, a list of them, or {"min": .., "max": .., "tol": ..}', read)


def score_order() -> Rule:
    """The score labels lowest first, as written in the file: a list, or one comma-separated
    string (as `--score-order "low,medium,high"` gives it); null: numbers in numeric order,
    text labels unordered."""
    accepted = 'expected null or the score labels lowest first, e.g. ["low", "medium", "high"]'

    def read(key: str, value: object) -> tuple[str, ...] | None:
        if value is None:
            return None
        labels = value.split(",") if isinstance(value, str) else value
        if not isinstance(labels, list) or not all(isinstance(v, str) for v in labels):
            raise fail(key, value, accepted)
        labels = [v.strip() for v in labels]
        if len(labels) < 2 or "" in labels:
            raise fail(key, value, accepted + " (at least two, none empty)")
        if not all(is_safe(v) for v in labels):
            raise fail(key, value, "control characters are not allowed in score labels")
        repeated = sorted({v for v in labels if labels.count(v) > 1})
        if repeated:
            raise fail(key, value, f"each label once ({', '.join(repeated)} repeated)")
        return tuple(labels)

    return Rule("score_order", accepted.removeprefix("expected "), read, nullable=True)


def scheduler() -> Rule:
    """A Dask scheduler's address (`tcp://host:8786`, `host:8786`), `local` or `local:N` (a
    cluster of N worker processes on this machine, engine.cluster.address), or null: none."""
    accepted = (
        'expected null, a Dask scheduler\'s address such as "tcp://10.0.0.5:8786", or "local:N" '
        "for N worker processes on this machine"
    )

    def read(key: str, value: object) -> str | None:
        if value is None:
            return None
        if (
            not isinstance(value, str)
            or not value.strip()
            or any(c.isspace() for c in value.strip())
        ):
            raise fail(key, value, accepted)
        if not is_safe(value):
            raise fail(key, value, "control characters are not allowed")
        local_workers(value.strip())  # a bad N in "local:N" is refused there, naming the setting
        return value.strip()

    return Rule("text", accepted.removeprefix("expected "), read, nullable=True)


def shares_by_size() -> Rule:
    """Shares in (0, 1] by the size of an item's scale: the first for a scale of two scores,
    the next for three and so on, the last for every larger scale (a list, or one
    comma-separated string as the form and `--set` give it)."""
    accepted = (
        "expected one to ten numbers in (0, 1], the first for a scale of 2 scores, the last "
        "for every larger scale, e.g. [0.85, 0.8, 0.75]"
    )

    def read(key: str, value: object) -> tuple[float, ...]:
        values = value.split(",") if isinstance(value, str) else value
        values = list(values) if isinstance(values, tuple) else values
        if not isinstance(values, list) or not 1 <= len(values) <= 10:
            raise fail(key, value, accepted)
        found = []
        for v in values:
            v = _number_text(v)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
                raise fail(key, value, accepted)
            found.append(float(v))
        return tuple(found)

    return Rule("shares", accepted.removeprefix("expected "), read)


def _number_text(value: object) -> object:
    """A number typed as text ('0.8') as the number; anything else as it is."""
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return value
    return value


def names() -> Rule:
    """People's names, each once (or null: none), as a list or one comma-separated string."""
    accepted = 'expected null or names, each once, e.g. ["Ann", "Bo"] or "Ann, Bo"'
    read = _distinct_strings(1, "names", accepted)
    return Rule("text", accepted.removeprefix("expected "), read, nullable=True)
