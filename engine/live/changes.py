"""What changed since an earlier look: the alerts raised, cleared and still open (an alert is
the same alert on another day when its kind, item and rater are), the raters whose verdict or
status changed, the items whose latest exact agreement crossed their target, and the reads,
answers, files and conflicts added since. Written as changes.md, printed by `parm monitor
--since last`, shown by the app's "since" selector."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.live.alerts.alert import EVENT_KINDS, Alert, order_key


@dataclass(frozen=True)
class Crossing:
    """An item whose latest exact agreement moved across its target between two runs."""

    item: str
    before: float
    now: float
    target: float

    @property
    def fell(self) -> bool:
        return self.now < self.target

    def sentence(self) -> str:
        way = "fell below" if self.fell else "rose to or above"
        return (f"Item '{self.item}' {way} its target of {self.target:.0%}: exact agreement "
                f"{self.before:.1%} then, {self.now:.1%} now.")  # fmt: skip


@dataclass(frozen=True)
class Changes:
    """The changes from run `since` (None: the session's first run) to run `run_id`."""

    run_id: str
    since: str | None
    since_at: str | None
    raised: list[Alert] = field(default_factory=list)
    cleared: list[Alert] = field(default_factory=list)
    still_open: list[Alert] = field(default_factory=list)
    verdicts: list[tuple[str, str, str]] = field(default_factory=list)
    statuses: list[tuple[str, str, str, str]] = field(default_factory=list)
    crossings: list[Crossing] = field(default_factory=list)
    reads: int = 0
    answers: int = 0
    files: list[str] = field(default_factory=list)
    conflicts: int = 0
    # The run before's one-time notices (a verdict or status that changed): told once, then
    # neither still open nor cleared.
    told_before: int = 0
    # The third reads of the run before followed up (engine.live.actions.FollowUp.sentence).
    third_reads: str = ""

    def lines(self) -> list[str]:
        """The changes in plain sentences, one a line (the CLI prints them)."""
        if self.since is None:
            head = "First run of this session: every alert is new."
        else:
            head = f"Since run {self.since} ({self.since_at}):"
        out = [head]
        out.append(f"{self.reads:,} reads and {self.answers:,} answers added"
                   + (f" from {len(self.files)} file(s)" if self.files else "")
                   + (f"; {self.conflicts} conflict(s) kept (scores or texts that differ)"
                      if self.conflicts else "") + ".")  # fmt: skip
        told = (f" ({self.told_before} change(s) of a verdict or status told by the run before "
                "are not carried over)" if self.told_before else "")  # fmt: skip
        out.append(f"Alerts: {len(self.raised)} raised, {len(self.cleared)} cleared, "
                   f"{len(self.still_open)} still open{told}.")  # fmt: skip
        out += [f"  raised: {a.message}" for a in self.raised]
        out += [f"  cleared: {_cleared(a)}" for a in self.cleared]
        out += [f"  Rater '{r}': {was} -> {now} (verdict from co-raters' reads)."
                for r, was, now in self.verdicts]  # fmt: skip
        out += [f"  Rater '{r}' on item '{i}': {was} -> {now} (status)."
                for r, i, was, now in self.statuses]  # fmt: skip
        out += [f"  {c.sentence()}" for c in self.crossings]
        if self.third_reads:
            out.append(self.third_reads)
        return out

    def markdown(self) -> str:
        """changes.md."""
        from engine.outputs.report.markdown import md_text

        lines = [f"# What changed: run {md_text(self.run_id)}", ""]
        lines += [md_text(line) if not line.startswith("  ") else f"- {md_text(line.strip())}"
                  for line in self.lines()]  # fmt: skip
        if self.still_open:
            lines += ["", "## Still open", ""]
            lines += [f"- {md_text(a.message)}" for a in self.still_open]
        return "\n".join(lines) + "\n"


def _cleared(alert: Alert) -> str:
    where = f"item '{alert.item}'" if alert.item else ""
    who = f"rater '{alert.rater}'" if alert.rater else ""
    about = " ".join(x for x in (who, "on" if who and where else "", where) if x) or "the session"
    return f"{alert.kind} about {about} (raised on {alert.period}) no longer holds."


def changes_between(now: dict, before: dict | None, store=None) -> Changes:
    """The changes from run record `before` (None: the first run) to `now`; store: the session,
    for the files and conflicts added in between."""
    from engine.live.actions import FollowUp

    current = [Alert.from_dict(a) for a in now["alerts"]]
    third = FollowUp(**now.get("third_reads", {})).sentence()
    if before is None:
        return Changes(now["run_id"], None, None, sorted(current, key=order_key),
                       reads=now["reads"], answers=now["answers"],
                       files=[f["path"] for f in now["files"]], conflicts=now["conflicts"],
                       third_reads=third)  # fmt: skip
    earlier = {Alert.from_dict(a).key: Alert.from_dict(a) for a in before["alerts"]}
    told = sum(a.kind in EVENT_KINDS for a in earlier.values())
    earlier = {k: a for k, a in earlier.items() if a.kind not in EVENT_KINDS}
    keys = {a.key for a in current}
    raised = [a for a in current if a.key not in earlier or a.kind in EVENT_KINDS]
    still = [a for a in current if a.key in earlier and a.kind not in EVENT_KINDS]
    cleared = [a for k, a in earlier.items() if k not in keys]
    files, conflicts = _between(store, before["run_id"], now)
    return Changes(
        now["run_id"], before["run_id"], before["at"],
        sorted(raised, key=order_key), sorted(cleared, key=order_key), sorted(still, key=order_key),
        _verdicts(now, before), _statuses(now, before), _crossings(now, before),
        now["reads"] - before["reads"], now["answers"] - before["answers"], files, conflicts,
        told, third,
    )  # fmt: skip


def _between(store, since: str, now: dict) -> tuple[list[str], int]:
    """The files added and conflicts found by the runs after run `since` (this one too)."""
    if store is None:
        return [f["path"] for f in now["files"]], now["conflicts"]
    done = "SELECT run_id FROM runs WHERE rowid <= (SELECT rowid FROM runs WHERE run_id = ?)"
    files = store.query(f"SELECT path FROM files WHERE run_id NOT IN ({done}) ORDER BY added_at",
                        (since,))  # fmt: skip
    (conflicts,), = store.query(
        f"SELECT count(*) FROM conflicts WHERE run_id NOT IN ({done})", (since,))  # fmt: skip
    return [path for (path,) in files], int(conflicts)


def _verdicts(now: dict, before: dict) -> list[tuple[str, str, str]]:
    out = []
    for rater, figures in sorted(now["verdicts"].items()):
        was = before["verdicts"].get(rater, {}).get("verdict")
        if was is not None and was != figures["verdict"]:
            out.append((rater, was, figures["verdict"]))
    return out


def _statuses(now: dict, before: dict) -> list[tuple[str, str, str, str]]:
    out = []
    for key, (status, *_) in sorted(now["statuses"].items()):
        was = before.get("statuses", {}).get(key, [None])[0]
        if was is not None and was != status:
            rater, _, item = key.partition("\x1f")
            out.append((rater, item, was, status))
    return out


def _crossings(now: dict, before: dict) -> list[Crossing]:
    out = []
    for item, figures in sorted(now["items"].items()):
        was = before["items"].get(item)
        goal = figures.get("target")
        if was is None or goal is None:
            continue
        if (was["exact"] < goal) != (figures["exact"] < goal):
            out.append(Crossing(item, was["exact"], figures["exact"], goal))
    return out
