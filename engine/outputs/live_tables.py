"""The tables of a live session's run (`parm monitor`, engine.live), declared once as every
table parm writes is (engine.outputs.columns): monitor.csv, the agreement through time, and
alerts.csv, the open alerts. engine.outputs.declared lists them with the others."""

from __future__ import annotations

from engine.outputs.columns import (
    COUNT,
    FIGURE,
    SHARE,
    Column,
    OutputTable,
    figure_columns,
    row_key,
)
from engine.outputs.names import ALERTS_FILE, MONITOR_FILE

MONITOR = OutputTable(
    MONITOR_FILE,
    "item, rater (or all) and period, in time order (a day, then its morning and afternoon)",
    (
        Column("period", "the day, YYYY-MM-DD, or a half day, 'YYYY-MM-DD am' or 'YYYY-MM-DD pm' "
               "(where the file gives times of day); a double read is in its later read's "
               "period", row_key("period")),
        Column("item", "the item as the file names it; empty: every item", row_key("item")),
        Column("rater", "the rater as the file names them; empty: every rater", row_key("rater")),
        Column("reads", "reads in the period (every kind)", row_key("reads"), COUNT),
        Column("double_reads", "answers read twice independently (first and second reads) whose "
               "later read is in the period; a rater's: those they are one of", row_key("double_reads"),
               COUNT),
        *figure_columns("exact", "exact agreement of the double reads (Wilson interval)", SHARE),
        *figure_columns("adjacent", "agreement within one score point (ordered scores; Wilson "
                 "interval)", SHARE),
        *figure_columns("kappa", "Cohen's kappa of the double reads (large-sample interval, Fleiss, "
                 "Cohen and Everitt 1969; rows of every item: the items' kappas weighted by "
                 "double reads)", FIGURE),
        *figure_columns("qwk", "quadratic weighted kappa (ordered scores; as kappa)", FIGURE),
        Column("validity_reads", "reads of validity papers (answers with an expert score) in "
               "the period", row_key("validity_reads"), COUNT),
        *figure_columns("validity_exact", "exact accuracy against the expert scores (Wilson interval)",
                 SHARE),
        Column("exact_target", "the exact-agreement target of the item's scale size "
               "(`exact_targets`; rows of every item: the targets weighted by double "
               "reads)", row_key("exact_target"), SHARE),
    ),
)  # fmt: skip


ALERTS = OutputTable(
    ALERTS_FILE,
    "open alert (on its item's or rater's latest day judged), red first, then the surest",
    (
        Column("kind", "what the alert is (docs/explanation/monitor-alerts.md)", row_key("kind")),
        Column("item", "the item as the file names it; empty: the alert is about every item",
               row_key("item")),
        Column("rater", "the rater as the file names them; empty: the alert is about no one "
               "rater", row_key("rater")),
        Column("period", "the day (YYYY-MM-DD) or half day ('YYYY-MM-DD pm') judged",
               row_key("period")),
        Column("figure", "the figure judged: a share for agreement and accuracy, score points "
               "for drift, standard errors for a verdict", row_key("figure"), FIGURE),
        Column("threshold", "what it was judged against, in the same unit: the target, the "
               "history's percentile, the morning's share, the drift points", row_key("threshold"),
               FIGURE),
        Column("message", "one plain sentence: the figure, the threshold and how sure (the "
               "test's p and the reads)", row_key("message")),
    ),
)  # fmt: skip

LIVE_TABLES = (MONITOR, ALERTS)
