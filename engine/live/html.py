"""A live session's report.html: its first screen the open alerts (red first) and what changed
since the run before, then the lead's lists of the morning (engine.live.actions), then the trends as small multiples (each item's exact agreement by day
with its target, each rater's agreement with co-raters and validity accuracy by day, alert days
marked), then the latest day's figures. Rendered from engine/outputs/report/templates/monitor.html.j2 with
autoescaping; plots are inline SVG (engine.outputs.report.plots); the page loads nothing."""

from __future__ import annotations

from engine.live.intake.periods import sort_key
from engine.outputs.live_tables import MONITOR
from engine.outputs.report.action_outputs import actions_view
from engine.outputs.report.plots import drawing as plots
from engine.outputs.report.report_html import CONTENT_SECURITY_POLICY

TEMPLATE = "monitor.html.j2"
# Columns of the latest day's table.
LATEST = ("item", "rater", "double_reads", "exact", "adjacent", "kappa", "qwk", "validity_exact")


def monitor_html(result, rows: list[dict]) -> str:
    """The page of a run (rows: monitor.csv's)."""
    import jinja2

    from engine.core.versions import parm_version

    # the report's own templates, package data (pyproject.toml), as report.html finds them
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("engine.outputs.report", "templates"),
        autoescape=True,
        keep_trailing_newline=True,
    )
    days = [p for p in dict.fromkeys(r["period"] for r in rows) if " " not in p]
    context = {
        "csp": CONTENT_SECURITY_POLICY,
        "title": f"parm monitor: {result.folder.name or 'session'}",
        "version": parm_version(),
        "run_id": result.run_id,
        "at": result.at,
        "folder": str(result.folder),
        "latest": result.latest_day,
        "counts": result.record,
        "alerts": [_alert(a) for a in result.alerts],
        "changes": result.changes.lines() if result.changes else [],
        "items_plot": _items_plot(result, rows, days),
        "raters_plot": _raters_plot(result, rows, days),
        "latest_header": [MONITOR.heading(name, False) for name in LATEST],
        "latest_rows": _latest(rows, result.latest_day),
        "notes": result.notes,
        "actions": actions_view(result.actions.lists),
    }
    return environment.get_template(TEMPLATE).render(context)


def _alert(alert) -> dict:
    return {"level": alert.level, "kind": alert.kind, "item": alert.item or "(every item)",
            "rater": alert.rater, "period": alert.period, "message": alert.message}  # fmt: skip


def _series(rows, item: str, rater: str, figure: str, days: list[str]) -> list:
    found = {r["period"]: r[figure] for r in rows if r["item"] == item and r["rater"] == rater}
    return [found.get(d) for d in days]


def _alerted(result, item: str, rater: str) -> set[str]:
    return {a.day for a in result.history if a.item == item and a.rater == rater}


def _items_plot(result, rows, days) -> str | None:
    goals = {r["item"]: r["exact_target"] for r in rows if r["item"] and not r["rater"]}
    panels = [
        (name, days, {"exact": _series(rows, name, "", "exact", days)}, goals.get(name),
         _alerted(result, name, ""))
        for name in result.reads.items
    ]  # fmt: skip
    if not panels or not days:
        return None
    return plots.trend_panels(panels, "exact agreement", "Each item's exact agreement by day")


def _raters_plot(result, rows, days) -> str | None:
    panels = []
    for name in result.reads.raters:
        series = {"with co-raters": _series(rows, "", name, "exact", days),
                  "validity": _series(rows, "", name, "validity_exact", days)}  # fmt: skip
        goals = [r["exact_target"] for r in rows if r["rater"] == name and not r["item"]]
        goal = next((g for g in reversed(goals) if g is not None), None)
        panels.append((name, days, series, goal, _alerted(result, "", name)))
    if not panels or not days:
        return None
    return plots.trend_panels(panels, "exact share", "Each rater's agreement and accuracy by day")


def _latest(rows, day: str) -> list[list[str]]:
    mine = [r for r in rows if r["period"] == day]
    mine.sort(key=lambda r: (r["item"] == "", r["item"], r["rater"]))
    out = []
    for row in mine:
        cells = [row["item"] or "(every item)", row["rater"] or "(every rater)"]
        cells += [MONITOR.cell(name, row) for name in LATEST[2:]]
        out.append(cells)
    return out


__all__ = ["monitor_html", "sort_key"]
