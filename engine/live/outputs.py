"""A run's files, one output set (engine.outputs.sets): monitor.csv and alerts.csv (their
columns declared in engine.outputs.live_tables, every cell guarded against formulas),
changes.md, report.html (engine.live.html) and the files of the lead's actions. The --out
folder of a session is written again every morning: its earlier set of this session is
replaced without --force, anything else only with it."""

from __future__ import annotations

import math
from pathlib import Path

from scipy.special import ndtri

from engine.audit.resample import wilson_interval
from engine.live.alerts import rules
from engine.live.alerts.figures import Cell
from engine.live.intake.periods import sort_key
from engine.outputs.live_tables import ALERTS, MONITOR
from engine.outputs.names import ALERTS_FILE, CHANGES_FILE, HTML_FILE, MONITOR_FILE
from engine.outputs.write import run_csv, write_files

# The normal quantile of a 95% interval, once (scipy's ppf costs 80 us a call).
Z95 = float(ndtri(0.975))


def cell_row(cell: Cell, goal: float | None) -> dict:
    """A monitor.csv row: the cell's counts as shares with Wilson intervals, kappa and QWK with
    their large-sample intervals."""
    row = {"period": cell.period, "item": cell.item, "rater": cell.rater, "reads": cell.reads,
           "double_reads": cell.pairs, "validity_reads": cell.validity_reads,
           "exact_target": goal}  # fmt: skip
    for name, k, n in (("exact", cell.exact, cell.pairs),
                       ("adjacent", cell.adjacent, cell.adjacent_pairs),
                       ("validity_exact", cell.validity_exact, cell.validity_reads)):  # fmt: skip
        found = wilson_interval(k, n) if n else None
        row[name] = None if found is None else found.estimate
        row[f"{name}_low"] = None if found is None else found.low
        row[f"{name}_high"] = None if found is None else found.high
    for name in ("kappa", "qwk"):
        row.update(zip((name, f"{name}_low", f"{name}_high"), kappa_interval(cell, name)))
    return row


def kappa_interval(cell: Cell, name: str) -> tuple:
    """(estimate, low, high): estimate +- z x its large-sample SE, within [-1, 1]."""
    value, variance = getattr(cell, name), getattr(cell, f"{name}_var")
    if value is None or not math.isfinite(value):
        return None, None, None
    value = min(max(float(value), -1.0), 1.0)
    if variance is None or not math.isfinite(variance):
        return value, None, None
    half = Z95 * math.sqrt(variance)
    return value, max(value - half, -1.0), min(value + half, 1.0)


def monitor_rows(result) -> list[dict]:
    """Every cell of the run as monitor.csv's rows, in time order, then item, then rater."""
    goals = _targets(result)
    rows = [cell_row(c, goals.get((c.item, c.rater, c.period))) for c in result.cells]
    return sorted(rows, key=lambda r: (sort_key(r["period"]), r["item"], r["rater"]))


def _targets(result) -> dict:
    """Each cell's exact target: its item's, or the items' weighted by double reads."""
    sizes = {n: s.size for n, s in zip(result.reads.items, result.reads.scales)}
    targets = result.config.exact_targets
    goal = {c.key: rules.target(targets, sizes[c.item]) for c in result.cells if c.item}
    sums: dict = {}
    for c in result.cells:
        if c.item and goal[c.key] is not None and c.pairs:
            part = sums.setdefault(("", c.rater, c.period), [0.0, 0])
            part[0] += goal[c.key] * c.pairs
            part[1] += c.pairs
    goal.update({key: total / n for key, (total, n) in sums.items()})
    return goal


def alert_rows(result) -> list[dict]:
    return [a.as_dict() for a in result.alerts]


def contents(result) -> list[tuple[str, str]]:
    """(name, text) of every file of the run's set."""
    from engine.live.html import monitor_html

    rows = monitor_rows(result)
    out = [
        (MONITOR_FILE, run_csv(MONITOR.csv(rows), result.run_id)),
        (ALERTS_FILE, run_csv(ALERTS.csv(alert_rows(result)), result.run_id)),
        (CHANGES_FILE, result.changes.markdown()),
        (HTML_FILE, monitor_html(result, rows)),
    ]
    return out + list(result.actions.files)


def write_monitor(result, out: str | Path, force: bool = False, on_switched=None) -> list[Path]:
    """The run's set written into `out` (see the module docstring); returns the paths."""
    runs = [r["run_id"] for r in result.earlier] + [result.run_id]
    replace = force or replaceable(out, runs)
    written: list[tuple[str, str | bytes]] = list(contents(result))
    return write_files(out, result.run_id, written, replace, on_switched, whole=True)


def write_lists(result, out: str | Path) -> list[Path]:
    """The run's three lists alone (backreads.csv, third_reads.csv, rater_status.csv) written
    into `out`: the app's one-key export of a look at the session. A folder that holds only
    lists written before is replaced; any other parm files there are not."""
    from engine.outputs.manifest import listed
    from engine.outputs.names import ACTION_FILES

    out = Path(out).expanduser()
    earlier = listed(out) if out.is_dir() else []
    ours = bool(earlier) and all(entry.name in ACTION_FILES for entry in earlier)
    return write_files(out, result.run_id, list(result.actions.files), ours, whole=True)


def replaceable(out: str | Path, runs: list[str]) -> bool:
    """Whether `out` holds only a set of these runs (this session's earlier mornings)."""
    from engine.outputs.manifest import listed

    out = Path(out).expanduser()
    earlier = listed(out) if out.is_dir() else []
    return bool(earlier) and all(entry.run_id in runs for entry in earlier)


def check_out(out: str | Path, runs: list[str], force: bool = False) -> None:
    """Before anything is added: OutputsExist when `out` holds files of these names that are not
    this session's (`runs`) and `force` is off; ExportError when it cannot be written."""
    from engine.outputs.names import MONITOR_FILES
    from engine.outputs.write import check_writable

    check_writable(Path(out).expanduser(), list(MONITOR_FILES), force or replaceable(out, runs))


def trends(result) -> dict[tuple[str, str], list[tuple[str, float | None, int]]]:
    """Each item's and each rater's exact agreement by day: {("item" or "rater", name): [(day,
    share or None, double reads)]}, every day of the session (the Monitor screen's
    sparklines)."""
    days = list(result.reads.days)
    found = {(c.item, c.rater, c.period): c for c in result.cells}
    out = {}
    units = [("item", name, (name, "")) for name in result.reads.items]
    units += [("rater", name, ("", name)) for name in result.reads.raters]
    for what, name, (item, rater) in units:
        series = []
        for day in days:
            cell = found.get((item, rater, day))
            n = 0 if cell is None else cell.pairs
            series.append((day, cell.exact / n if cell is not None and n else None, n))
        out[(what, name)] = series
    return out
