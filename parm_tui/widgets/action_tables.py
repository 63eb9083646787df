"""The lead's lists on the Results screen's Raters tab (engine.actions, through the workspace):
one line on what today's lists hold and where they go, and the routed third reads (enter
reviews the answer's item). The raters' status is a column of the raters table
(parm_tui.widgets.session_tables). Names and ids go into Text objects only."""

from __future__ import annotations

from rich.text import Text

from engine.workspace.reporting import actions_summary
from parm_tui.widgets.session_tables import SessionTable, name

# From this width the third reads show the backup rater and the reads in full.
WIDE_THIRD = 120


def lists_line(lists) -> Text:
    """What today's lists hold, in one paragraph, and how to have them."""
    found = actions_summary(lists)
    text = Text("Today's lists: ", "bold")
    text.append(f"{found['backreads']:,} backreads of {found['backread_raters']:,} raters "
                f"({found['random']:,} at random; review: view 'backreads today'); "
                f"{found['third_reads']:,} answers need a third read, {found['assigned']:,} "
                f"assigned, {found['no_eligible']:,} with no eligible rater")  # fmt: skip
    statuses = [f"{n:,} {status}" for status, n in found["statuses"].items() if n]
    text.append("; status " + (", ".join(statuses) or "none") + ".")
    text.append("\nExport screen: ctrl+t writes backreads.csv, third_reads.csv and "
                "rater_status.csv.", "dim")  # fmt: skip
    if lists.third_reads:
        text.append("\nThird reads today, least sure first · enter: review the item", "dim")
    return text


class ThirdReadsTable(SessionTable):
    """The answers that need another read, least sure first: id, the item (several items),
    the reads so far, the rater assigned (— where none), the backup (wide) and why."""

    def show(self, lists, by_item: bool, wide: bool) -> int:
        """Fill the table; returns how many answers it lists."""
        self.clear(columns=True)
        headers = ["id", *(["item"] if by_item else []), "reads", "assigned"]
        headers += ["backup"] if wide else []
        for header in [*headers, "why"]:
            self.add_column(header, key=header)
        for t in lists.third_reads:
            reads = t.reads if wide or len(t.reads) <= 24 else t.reads[:23] + "…"
            cells = [name(t.id), *([name(t.item)] if by_item else []), name(reads)]
            cells.append(name(t.assigned_rater) if t.assigned_rater else Text("—", "bold yellow"))
            cells += [name(t.backup_rater)] if wide else []
            cells.append(name(t.why))
            self.add_target(cells, t.item or None, None)
        return len(lists.third_reads)
