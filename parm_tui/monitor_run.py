"""`parm monitor FILE... --session DIR --out OUT`: a live scoring session. Each file's reads are
added to the session in DIR, the session is judged and the run's files are written into OUT
(monitor.csv, alerts.csv, changes.md, report.html); the open alerts are printed, and with
`--since last` (or a run id) what changed since that run. With no file, the session as it
stands. The same exit codes and calm one-line errors as `parm audit` (parm_tui.headless)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine import workspace
from engine.core.errors import OutputsExist
from engine.workspace.settings import CHOSEN_KEYS, build_config
from parm_tui.headless import guarded, say

# Alerts printed before "and N more" (alerts.csv and report.html hold every one).
SHOWN_ALERTS = 12


@dataclass(frozen=True, kw_only=True)
class MonitorRequest:
    files: tuple[Path, ...]
    session: Path
    out: Path
    since: str | None
    period: str | None
    config_path: Path | None
    columns: dict
    overrides: tuple[str, ...]
    force: bool
    quiet: bool


def run_monitor(request: MonitorRequest) -> int:
    """Run `parm monitor`; returns the process exit code."""
    return guarded(lambda console, written: _monitor(console, request, written))


def _monitor(console, request: MonitorRequest, written: list[Path]) -> int:
    from rich.console import Console

    told = Console(stderr=True, quiet=True) if request.quiet else console
    config = build_config(request.config_path, list(request.overrides), request.columns)
    given = {key for key, value in request.columns.items() if key in CHOSEN_KEYS and value}
    given |= {item.partition("=")[0].strip() for item in request.overrides}
    try:
        done = workspace.monitor(
            request.session, list(request.files), config, request.out, request.since,
            request.period, given, request.force,
            on_wait=lambda: say(told, f"Another parm monitor run holds {request.session}; waiting."),
            on_switched=written.extend,
        )  # fmt: skip
    except OutputsExist as exc:  # the engine's message names no flag: here it is --force
        raise OutputsExist(
            f"{exc.folder} already has {', '.join(exc.names)} of another run; choose another "
            "folder with --out, or add --force to replace them. Nothing was added.",
            exc.folder, exc.names,
        ) from None  # fmt: skip
    for line in done.said:
        say(told, line)
    result = done.result
    for added in result.added:
        say(told, _added(added))
    for note in result.notes:
        say(told, note)
    say(told, _session_line(result))
    _alerts(told, result.alerts)
    for line in result.actions.lines():
        say(told, line)
    changes = result.changes
    if request.since is not None:
        for line in changes.lines():
            say(told, line)
    elif changes.since is not None:
        say(told, f"Since run {changes.since}: {len(changes.raised)} alert(s) raised, "
                  f"{len(changes.cleared)} cleared, {len(changes.still_open)} still open "
                  "(--since last lists them; changes.md).")  # fmt: skip
    say(told, "Wrote " + ", ".join(str(p) for p in written))
    return 0


def _added(added) -> str:
    name = Path(added.path).name
    text = f"Added {name}: {added.reads:,} reads, {added.answers:,} answers new"
    text += f"; {added.repeated:,} already in the session" if added.repeated else ""
    if added.conflicts:
        text += (f"; {added.conflicts:,} conflict(s): a score or text that differs from the "
                 "session's, kept as it was (changes.md)")  # fmt: skip
    return text + "."


def _session_line(result) -> str:
    reads, days = result.reads, result.reads.days
    span = f"{days[0]} to {days[-1]}" if len(days) > 1 else (days[0] if days else "no day yet")
    text = (f"Session {result.folder}: {result.record['reads']:,} reads of "
            f"{result.record['answers']:,} answers, {len(reads.items)} item(s), "
            f"{len(reads.raters)} rater(s), {span}.")  # fmt: skip
    if reads.off_scale:
        text += f" {reads.off_scale:,} read(s) off their item's scale left out."
    return text


def _alerts(console, alerts) -> None:
    if not alerts:
        say(console, "No open alert: every figure judged on its latest day keeps to its rule.")
        return
    red = sum(a.level == "red" for a in alerts)
    say(console, f"Open alerts: {len(alerts)} ({red} red, {len(alerts) - red} yellow), red first:")
    for alert in alerts[:SHOWN_ALERTS]:
        say(console, f"  {alert.level:<6} {alert.kind}: {alert.message}")
    if len(alerts) > SHOWN_ALERTS:
        say(console, f"  and {len(alerts) - SHOWN_ALERTS} more (alerts.csv, report.html).")
