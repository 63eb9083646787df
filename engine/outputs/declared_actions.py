"""The lead's lists as tables, declared once (engine.outputs.columns): backreads.csv,
third_reads.csv and rater_status.csv (engine.actions makes their rows), the Today tab of the app
and the short section of report.md and report.html pick their columns from here."""

from __future__ import annotations

from engine.outputs.columns import FIGURE, Column, OutputTable, row_attr

LISTS_WHEN = "with reads: answers read twice or more, or a rater column"

# The columns more than one list has, declared once.
ID = Column("id", "the answer's id", row_attr("id"))
ITEM = Column("item", "the item (empty for a file of one item)", row_attr("item"))


BACKREADS = OutputTable(
    "backreads.csv",
    "read to read again today: by rater, each rater's riskiest reads first, then those drawn "
    "at random",
    (
        Column("reviewer", "the supervisor who backreads it (`backread_supervisors` in turn, "
               "never their own reads); empty when none are named", row_attr("reviewer")),
        Column("rater", "who gave the read", row_attr("rater")),
        ID,
        ITEM,
        Column("score", "the rater's score (original label)", row_attr("score")),
        Column("why", "why it was chosen: its risk (riskier than x% of the reads of answers read "
               "twice or more, by the consensus, or of the answers read once, by severity), the "
               "rater's own figures it fits and a raised rate, or drawn at random",
               row_attr("why")),
        Column("sample", "`random` (a simple random sample of the rater's reads: the "
               "supervisor's agreement with them estimates the rater's without bias) or `risk`",
               row_attr("sample")),
    ),
)  # fmt: skip

THIRD_READS = OutputTable(
    "third_reads.csv",
    "answer that needs another read, the least sure consensus first",
    (
        ID,
        ITEM,
        Column("reads", "its reads so far, `rater: score; ...`", row_attr("reads")),
        Column("assigned_rater", "the most reliable rater qualified on the item who has not "
               "read it and has fewer than `third_read_cap` third reads today; empty when none "
               "(the why says so)", row_attr("assigned_rater")),
        Column("backup_rater", "the next such rater, when the assigned one cannot",
               row_attr("backup_rater")),
        Column("why", "why it needs a read (reads too far apart, disagreeing labels, an unsure "
               "consensus) and why no rater was assigned (`no eligible rater`: every qualified "
               "rater read it, or none is qualified; the cap)", row_attr("why")),
    ),
)  # fmt: skip

RATER_STATUS = OutputTable(
    "rater_status.csv",
    "rater and item they read, by rater, then item",
    (
        Column("rater", "the rater", row_attr("rater")),
        ITEM,
        Column("status", "`qualified`, `watch`, `retrain` or `stop`: the most severe rule that "
               "fired (docs/how-to/lead-actions.md)", row_attr("status")),
        Column("rule", "the rule that fired, with its figures and threshold, or `no rule fired` "
               "with the figures read", row_attr("rule")),
        Column("figure", "the rule's figure: a share (validity exact or adjacent agreement, "
               "agreement with co-raters), or a verdict's statistic over its threshold; empty "
               "where the rule has none", row_attr("figure"), FIGURE),
    ),
)  # fmt: skip

ACTION_TABLES = (BACKREADS, THIRD_READS, RATER_STATUS)
