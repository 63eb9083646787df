"""Figures in their ranges: which range a column, key or label names, and the checks of the
CSV files and report.json (issue 43's first point); `Breach`, what every check returns."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

# Tolerances: the CSV files write six decimals; report.json full precision.
CSV_TOLERANCE = 1.01e-6
JSON_TOLERANCE = 1e-9
UNIT, SIGNED = (0.0, 1.0), (-1.0, 1.0)
# PRMSE = 1 - MSE_T / V_T is at most 1 and unbounded below; under -100 the model's error would
# be a hundred times the true-score variance, which only a true-score variance near 0 gives, and
# that is marked not estimable (engine.audit.reads.prmse): such a figure or bound is a ratio of noise.
PRMSE = (-100.0, 1.0)
NOT_FINITE = {"nan", "-nan", "inf", "-inf", "+inf", "infinity", "-infinity", "+infinity"}


@dataclass(frozen=True)
class Breach:
    check: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.where}: {self.detail}"


def describe(breaches: list[Breach], shown: int = 6) -> str:
    """Breaches grouped by check: each check's count and its first few instances."""
    by_check: dict[str, list[Breach]] = {}
    for breach in breaches:
        by_check.setdefault(breach.check, []).append(breach)
    lines = []
    for check, found in by_check.items():
        lines.append(f"{check}: {len(found)} breach(es)")
        lines += [f"    {b.where}: {b.detail}" for b in found[:shown]]
    return "\n".join(lines)


# -- which figure a name is ------------------------------------------------------------------------
_SIGNED_NAMES = re.compile(r"kappa|qwk|alpha|cohen|quadratic|session_model|in_sample|cross_fit")
_UNIT_NAMES = re.compile(
    r"(^|_)(exact|adjacent|accuracy|near|f1|share|severity|reliability|middle_expected|agreement|"
    r"p|p_value|probability)(_|$)|^p_"
)


def figure_range(name: str, csv_file: bool = True) -> tuple[float, float] | None:
    """The range of the figure a column, key, header or row label names; None when it has none
    (counts, score points, fit statistics, settings). `csv_file`: a bare "p" is a p-value in a
    CSV file (rater_item_bias.csv) and the similarity power in a report's items table."""
    key = re.sub(r"[\s\-'.()%]+", "_", name.strip().lower()).strip("_")
    key = re.sub(r"_(low|high)$", "", key)
    if not key or key in ("power", "nll") or "log_likelihood" in key:
        return None
    if key == "p":
        return UNIT if csv_file else None
    if "prmse" in key:
        # Issue 43: "PRMSE <= 1 with a bounded interval"; below 0 the model's scores are further
        # from the true scores than their mean is, a figure, not an error.
        return PRMSE
    if _SIGNED_NAMES.search(key) or key in ("nominal", "ordinal", "interval"):
        return SIGNED
    if _UNIT_NAMES.search(key):
        return UNIT
    return None


def number(cell: str) -> float | None:
    text = cell.strip()
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        return None
    return float(text)


def out_of_range(value: float, bounds, tolerance: float) -> bool:
    return not (bounds[0] - tolerance <= value <= bounds[1] + tolerance)


# -- CSV files -------------------------------------------------------------------------------------
def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# The estimate an interval's columns belong to where it is not the columns' stem.
_ESTIMATE_OF = {"model_differs": "model_differs_share"}


def csv_breaches(path: Path, input_columns=()) -> list[Breach]:
    """Every figure of a CSV file parm wrote (the input's own columns, which scores_reviewed.csv
    and predictions.csv carry, left out) in its range, finite, inside its interval; each row's
    score probabilities (p_<label>) sum to 1."""
    rows = read_csv(path)
    if not rows:
        return []
    columns = [c for c in rows[0] if c not in set(input_columns)]
    found = []
    for k, row in enumerate(rows, start=2):
        where = f"{path.name} line {k}"
        for column in columns:
            cell = (row.get(column) or "").strip()
            if cell.lower() in NOT_FINITE:
                found.append(Breach("finite", f"{where} {column}", repr(cell)))
                continue
            value, bounds = number(cell), figure_range(column)
            if value is None or bounds is None:
                continue
            if out_of_range(value, bounds, CSV_TOLERANCE):
                found.append(Breach("in range", f"{where} {column}", f"{value} not in {bounds}"))
        found += _csv_intervals(row, columns, where)
        found += _probabilities(row, columns, where)
    return found


def _csv_intervals(row: dict, columns: list[str], where: str) -> list[Breach]:
    found = []
    for low in (c for c in columns if c.endswith("_low")):
        stem = low[: -len("_low")]
        high, estimate = f"{stem}_high", _ESTIMATE_OF.get(stem, stem)
        if high not in row or estimate not in row:
            continue
        values = [number(row[c] or "") for c in (estimate, low, high)]
        found += interval_breaches(f"{where} {estimate}", *values, CSV_TOLERANCE)
    return found


def interval_breaches(where: str, estimate, low, high, tolerance: float) -> list[Breach]:
    """An interval's ends in order, containing its estimate; PRMSE's ends within [-1, 1]."""
    if estimate is None or low is None or high is None:
        return []
    if not (low - tolerance <= estimate <= high + tolerance):
        return [Breach("interval holds its estimate", where, f"{estimate} not in [{low}, {high}]")]
    return []


def _probabilities(row: dict, columns: list[str], where: str) -> list[Breach]:
    values = [number(row[c] or "") for c in columns if c.startswith("p_") and c != "p_score"]
    given = [v for v in values if v is not None]
    if len(given) >= 2 and abs(sum(given) - 1.0) > 1e-5 * len(given):
        return [Breach("probabilities sum to 1", where, f"p_* sum to {sum(given):.6f}")]
    return []


# -- report.json -----------------------------------------------------------------------------------
def json_breaches(path: Path) -> list[Breach]:
    """Every figure of report.json in its range and finite (NaN and Infinity are not JSON, but
    Python writes them), every interval around its estimate; the settings left out."""
    not_finite: list[str] = []
    data = json.loads(path.read_text(encoding="utf-8"), parse_constant=not_finite.append)
    found = [Breach("finite", path.name, f"{len(not_finite)} x {c}") for c in set(not_finite)]
    found += _walk(data, [], path.name)
    return found


def _walk(value, keys: list[str], name: str) -> list[Breach]:
    if isinstance(value, list):
        return [b for k, item in enumerate(value) for b in _walk(item, [*keys, str(k)], name)]
    if not isinstance(value, dict):
        return []
    if keys and keys[-1] in ("config", "thresholds", "rules", "timings_seconds"):
        return []
    where = f"{name} {'.'.join(keys)}"
    found = []
    if "low" in value and "high" in value:
        estimate = next((value[k] for k in ("estimate", "accuracy") if k in value), None)
        found += interval_breaches(where, estimate, value["low"], value["high"], JSON_TOLERANCE)
    for key, item in value.items():
        if isinstance(item, (dict, list)):
            found += _walk(item, [*keys, key], name)
            continue
        if not isinstance(item, (int, float)) or isinstance(item, bool):
            continue
        # An interval's ends are named by the path to them (agreement.alpha.0.levels.nominal).
        path = "_".join([*keys, key]) if key in ("estimate", "low", "high") else key
        bounds = figure_range(path)
        if bounds is not None and out_of_range(item, bounds, JSON_TOLERANCE):
            found.append(Breach("in range", f"{where}.{key}", f"{item} not in {bounds}"))
    for stem in {k[: -len("_low")] for k in value if k.endswith("_low")}:
        estimate = value.get(_ESTIMATE_OF.get(stem, stem))
        found += interval_breaches(
            f"{where}.{stem}", estimate, value.get(f"{stem}_low"), value.get(f"{stem}_high"),
            JSON_TOLERANCE,
        )  # fmt: skip
    return found


def items_breaches(folder: Path) -> list[Breach]:
    """items.csv's warning states the gap between the in-sample and cross-fitted figures of its
    own row."""
    path = folder / "items.csv"
    if not path.exists():
        return []
    found = []
    for k, row in enumerate(read_csv(path), start=2):
        for stated, metric in re.findall(
            r"in-sample (-?\d+\.\d+) above cross-fitted: memorised \((\w+)\)",
            row.get("warning") or "",
        ):
            inside, crossed = number(row.get(metric) or ""), number(row.get(f"cross_fit_{metric}") or "")  # fmt: skip
            if inside is None or crossed is None or abs(inside - crossed - float(stated)) > 0.0051:
                found.append(Breach("stated gap is the figures' difference", f"items.csv line {k}",
                                    f"{metric} {inside} - cross-fitted {crossed} stated as {stated}"))  # fmt: skip
    return found
