"""One monitor run: the files added to the session (each in its own transaction, all read
first, so a file that cannot be read stops the run before anything is added), the session's
figures (each item's periods reused from the store where their reads are unchanged), the alerts
with the open ones, the raters' verdicts, the lead's actions (engine.live.actions), and the
run's record kept in one transaction. Two runs on one session wait for each other
(engine.live.intake.lock).

What a morning needs is computed from the reads only: agreement, validity and the co-raters'
verdicts cost seconds for a session of 200,000 reads. parm's audit (embedding, the model, the
severity, the consensus) is not run: it costs minutes to hours at that size and answers another
question (which answers are wrong); `parm audit` on the session's reads gives it, its embedding
cache embedding only the answers it has not seen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from engine.input.settings.config import AuditConfig
from engine.live.actions import ActionsResult, actions_for_run
from engine.live.alerts import rules
from engine.live.alerts.alert import Alert, open_alerts, order_key
from engine.live.alerts.explained import ItemDays
from engine.live.alerts.figures import Cell, Pairs, double_reads, session_cells
from engine.live.alerts.verdicts import rater_verdicts, verdict_changes
from engine.live.changes import Changes, changes_between
from engine.live.intake.lock import session_lock
from engine.live.intake.reading import read_file_reads
from engine.live.intake.session_reads import SessionReads, load_reads
from engine.live.intake.store import Added, SessionStore, open_store
from engine.results.item import new_run_id
from engine.saved.decision_db import now


@dataclass(frozen=True)
class FileInput:
    """A file to add: its path, the SHA-256 of its bytes, its table, the settings its columns
    were chosen under, and (the day of reads without a dated time, how it was found)."""

    path: Path
    digest: str
    frame: pd.DataFrame
    config: AuditConfig
    day: tuple[str, str]


@dataclass
class MonitorResult:
    """A run: its id and time, what each file added, the session's reads, figures, every alert
    of every day (`history`) and the open ones (`alerts`), the raters' verdicts, the actions,
    the changes since the run compared with, its record and the runs kept before it."""

    run_id: str
    at: str
    folder: Path
    config: AuditConfig
    added: list[Added]
    reads: SessionReads
    pairs: Pairs
    cells: list[Cell]
    history: list[Alert]
    alerts: list[Alert]
    verdicts: dict
    earlier: list[dict]
    actions: ActionsResult = field(default_factory=ActionsResult)
    record: dict = field(default_factory=dict)
    changes: Changes | None = None
    conflicts: list[tuple] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def previous(self) -> dict | None:
        return self.earlier[-1] if self.earlier else None

    @property
    def latest_day(self) -> str:
        days = self.reads.days
        return days[-1] if days else ""


def monitor_session(
    folder: str | Path,
    files: list[FileInput],
    config: AuditConfig,
    since: str | None = None,
    record: bool = True,
    actions: Callable[[SessionReads, MonitorResult], ActionsResult] = actions_for_run,
    on_wait: Callable[[], None] | None = None,
) -> MonitorResult:
    """Add `files` to the session in `folder` and judge it (the module docstring). since: the
    run the changes are counted from ("last": the run before this one; a run id); record: keep
    this run (the app's look at a session keeps nothing)."""
    folder = Path(folder).expanduser()
    with session_lock(folder, on_wait):
        store = open_store(folder, create=record)
        try:
            return _run(store, folder, files, config, since, record, actions)
        finally:
            store.close()


def _run(store: SessionStore, folder, files, config, since, record, actions) -> MonitorResult:
    run_id, at = new_run_id(), now()
    read = [(f, read_file_reads(f.frame, f.config, str(f.path), f.day)) for f in files]
    added = [store.add(reads, str(f.path), f.digest, run_id) for f, reads in read]
    notes = list(dict.fromkeys(n for _, reads in read for n in reads.notes))
    earlier = store.runs()
    reads = load_reads(store, config.score_order)
    pairs = double_reads(reads)
    cells, cache = session_cells(reads, store.figure_cache())
    history, judged = judge(reads, pairs, cells, config)
    verdicts = rater_verdicts(reads, pairs, config.monitor_min_reads)
    result = MonitorResult(run_id, at, folder, config, added, reads, pairs, cells, history,
                           open_alerts(history, judged), verdicts, earlier, notes=notes)  # fmt: skip
    result.alerts += _verdict_alerts(result)
    result.actions = actions(reads, result)
    result.alerts += _status_alerts(result)
    result.alerts.sort(key=order_key)
    result.conflicts = store.conflicts(run_id)
    result.record = run_record(result, store.counts())
    if record:
        store.record_run(result.record, cache)
    result.changes = changes_between(result.record, _base(earlier, since), store)
    return result


def judge(reads: SessionReads, pairs: Pairs, cells: list[Cell], config: AuditConfig):
    """Every alert of every day, and the latest day each rule judged each unit."""
    explain = ItemDays(reads, pairs)
    found = [
        rules.item_targets(cells, reads, config, explain),
        rules.session_target(cells, reads, config),
        rules.item_history(cells, config, explain),
        rules.within_day(cells, config),
        rules.rater_agreement(cells, reads, config),
        rules.rater_validity(reads, config),
        rules.rater_drifts(reads, pairs, config),
    ]
    # Two item rules may find one rater explaining one item's day: told once.
    unique: dict = {}
    for alert in (a for f in found for a in f.alerts):
        unique.setdefault((alert.kind, alert.item, alert.rater, alert.period), alert)
    history = sorted(unique.values(), key=lambda a: (a.period, order_key(a)))
    judged = {key: day for f in found for key, day in f.judged.items()}
    return history, judged


def _verdict_alerts(result: MonitorResult) -> list[Alert]:
    before = (result.previous or {}).get("verdicts", {})
    out = []
    for rater, was, now_, figures in verdict_changes(result.verdicts, before):
        because = figures["because"] or "no rule fires"
        message = (f"Rater '{rater}': verdict from co-raters' reads changed from {was} to {now_} "
                   f"since the run before ({because}; {figures['pairs']:,} double reads).")  # fmt: skip
        out.append(Alert("rater_verdict", "", rater, result.latest_day, figures["leniency_z"],
                         3.0, message, float("nan"), figures["pairs"], "rater_verdict"))  # fmt: skip
    return out


def _status_alerts(result: MonitorResult) -> list[Alert]:
    before = (result.previous or {}).get("statuses", {})
    out = []
    for (rater, item), (status, rule, figure, *_) in sorted(result.actions.statuses.items()):
        was = before.get(f"{rater}\x1f{item}", [None])[0]
        if was is not None and was != status:
            message = (f"Rater '{rater}' on item '{item}': status changed from {was} to "
                       f"{status} since the run before ({rule}).")  # fmt: skip
            shown = float("nan") if figure is None else float(figure)  # a rule without one
            out.append(Alert("rater_status", item, rater, result.latest_day, shown,
                             float("nan"), message, float("nan"), 0, "rater_status"))  # fmt: skip
    return out


def _base(earlier: list[dict], since: str | None) -> dict | None:
    """The run the changes are counted from: the run before this one ("last" or None), or the
    run named."""
    from engine.core.errors import SessionError

    if since is None or since == "last":
        return earlier[-1] if earlier else None
    for found in earlier:
        if found["run_id"] == since:
            return found
    kept = ", ".join(r["run_id"] for r in earlier[-5:]) or "none yet"
    raise SessionError(f"--since {since}: the session has no such run (the latest: {kept}).")


def run_record(result: MonitorResult, counts: tuple[int, int]) -> dict:
    """What is kept of a run to compare a later one with (JSON)."""
    items = {}
    for cell in result.cells:
        if cell.item and not cell.rater and rules.is_day(cell.period) and cell.pairs:
            items[cell.item] = {"day": cell.period, "exact": cell.exact / cell.pairs,
                                "pairs": cell.pairs}  # fmt: skip
    for k, name in enumerate(result.reads.items):
        goal = rules.target(result.config.exact_targets, result.reads.scales[k].size)
        if name in items:
            items[name]["target"] = goal
    return {
        "run_id": result.run_id,
        "at": result.at,
        "files": [vars(a) for a in result.added],
        "reads": counts[0],
        "answers": counts[1],
        "latest_day": result.latest_day,
        "alerts": [a.as_dict() for a in result.alerts],
        "verdicts": result.verdicts,
        "statuses": {f"{r}\x1f{i}": list(v) for (r, i), v in result.actions.statuses.items()},
        "assigned": [dict(found) for found in result.actions.assigned],
        "third_reads": vars(result.actions.follow_up),
        "items": items,
        "conflicts": len(result.conflicts),
    }
