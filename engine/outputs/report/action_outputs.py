"""The lead's lists in the outputs (engine.actions): backreads.csv, third_reads.csv and
rater_status.csv, and their short section in report.md and report.html (`actions.html.j2`).
Rater names and ids come from the data: CSV cells are guarded by engine.outputs.write, report.md's
text is escaped by engine.outputs.report.markdown, report.html's by its template's autoescaping."""

from __future__ import annotations

from collections import Counter

from engine.actions.backreads import RANDOM
from engine.actions.rules import QUALIFIED, STATUSES
from engine.actions.third_reads import NO_ELIGIBLE
from engine.outputs.columns import shown
from engine.outputs.declared_actions import BACKREADS, RATER_STATUS, THIRD_READS
from engine.outputs.report import markdown

# report.md and report.html list at most this many raters not qualified and third reads.
LISTED = 10


def backreads_table(actions) -> tuple[list[str], list[list]]:
    return BACKREADS.csv(actions.backreads)


def third_reads_table(actions) -> tuple[list[str], list[list]]:
    return THIRD_READS.csv(actions.third_reads)


def status_table(actions) -> tuple[list[str], list[list]]:
    return RATER_STATUS.csv(actions.statuses)


def summary(actions) -> dict:
    """What the lists hold, in counts: statuses, backreads (random and by risk, raters,
    supervisors), third reads (assigned, to how many raters, with no eligible rater, at the
    cap), and the raters not qualified (most severe first)."""
    statuses = Counter(s.status for s in actions.statuses)
    third = actions.third_reads
    assigned = Counter(t.assigned_rater for t in third if t.assigned_rater)
    return {
        "statuses": {status: statuses.get(status, 0) for status in STATUSES},
        "backreads": len(actions.backreads),
        "random": sum(b.sample == RANDOM for b in actions.backreads),
        "backread_raters": len({b.rater for b in actions.backreads}),
        "reviewers": sorted({b.reviewer for b in actions.backreads if b.reviewer}),
        "third_reads": len(third),
        "assigned": sum(assigned.values()),
        "assignees": len(assigned),
        "most": assigned.most_common(1)[0] if assigned else None,
        "no_eligible": sum(NO_ELIGIBLE in t.why for t in third),
        "not_qualified": sorted(
            (s for s in actions.statuses if s.status != QUALIFIED), key=lambda s: -s.severity
        ),  # fmt: skip
    }


def sentences(found: dict) -> list[str]:
    """The section's sentences (plain text; names escaped by the caller's format)."""
    counts = ", ".join(f"{n:,} {status}" for status, n in found["statuses"].items() if n)
    most = found["most"]
    lines = [
        f"Status of each rater on each item they read: {counts or 'no named rater'}.",
        f"Backreads: {found['backreads']:,} reads of {found['backread_raters']:,} raters "
        f"({found['random']:,} drawn at random for an unbiased agreement estimate, the rest the "
        "riskiest)"
        + (
            f", given to {len(found['reviewers'])} supervisors in turn"
            if found["reviewers"]
            else "; no supervisors named"
        )
        + ".",  # fmt: skip
        f"Third reads: {found['third_reads']:,} answers need another read; "
        f"{found['assigned']:,} assigned to {found['assignees']:,} raters"
        + (f" (most to {most[0]}: {most[1]:,})" if most else "")
        + f", {found['no_eligible']:,} with no eligible rater.",
    ]
    return lines


def actions_markdown(actions) -> str:
    """report.md's short section on the lists."""
    found = summary(actions)
    lines = ["## Today's lists", ""]
    lines += [markdown.md_text(line, 4000) for line in sentences(found)[:1]]
    lines.append("")
    for s in found["not_qualified"][:LISTED]:
        item = f" on item {markdown.md_text(s.item, 80)}" if s.item else ""
        lines.append(f"- {markdown.md_text(s.rater, 80)}{item}: **{s.status}**, "
                     f"{markdown.md_text(s.rule, 400)}")  # fmt: skip
    more = len(found["not_qualified"]) - LISTED
    if more > 0:
        lines.append(f"- and {more:,} more (rater_status.csv)")
    lines += ["", *(markdown.md_text(line, 4000) for line in sentences(found)[1:])]
    lines += ["", "backreads.csv, third_reads.csv and rater_status.csv list them; "
              "docs/how-to/lead-actions.md says how they are chosen."]  # fmt: skip
    return "\n".join(lines) + "\n"


def actions_view(actions) -> dict | None:
    """report.html's section (templates/actions.html.j2); None without lists."""
    if actions is None or not (actions.statuses or actions.third_reads or actions.backreads):
        return None
    found = summary(actions)
    said = sentences(found)
    rows = [[s.rater, s.item, s.status, s.rule, shown(s.figure, "figure")]
            for s in found["not_qualified"][:LISTED]]  # fmt: skip
    third = [[t.id, t.item, t.reads, t.assigned_rater or "—", t.why]
             for t in actions.third_reads[:LISTED]]  # fmt: skip
    return {
        "status": said[0],
        "backreads": said[1],
        "third": said[2],
        "not_qualified": rows,
        "more": max(len(found["not_qualified"]) - LISTED, 0),
        "third_rows": third,
        "third_more": max(len(actions.third_reads) - LISTED, 0),
    }
