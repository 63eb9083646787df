"""The names of the files an output set can hold: one list, so that the writer, the app's export
screen and the reader of a set (engine.outputs.sets) agree. A new kind of output joins here,
and in OUTPUT_GROUPS, the choices an export offers."""

from __future__ import annotations

from dataclasses import dataclass

REPORT_JSON = "report.json"
OUTPUT_FILES = ("predictions.csv", "tuning.csv", REPORT_JSON, "report.md")
# The report to read in a browser, print or send (engine.outputs.report.report_html).
HTML_FILE = "report.html"
# Every warning of the run, one a line with its kind (engine.core.run_warnings); the CLI and
# the app show one line per kind and point here.
WARNINGS_FILE = "warnings.txt"
ITEMS_FILE = "items.csv"
RATERS_FILE = "raters.csv"
DECISIONS_FILE = "decisions.csv"
# Every input row with its original columns and the final score after the review
# (engine.outputs.reviewed).
REVIEWED_FILE = "scores_reviewed.csv"
# With a rater column: the rater-by-item bias cells and each rater's flagged scores.
BIAS_FILE = "rater_item_bias.csv"
FEEDBACK_FILE = "rater_feedback.csv"
# With answers read twice or more: each answer's consensus and third-read rank, and the
# agreement of every rater pair with alpha (engine.outputs.report.reads_outputs).
CONSENSUS_FILE = "consensus.csv"
AGREEMENT_FILE = "agreement.csv"
# Every table of the set in one workbook, a sheet each, with a first sheet saying what each
# sheet is (engine.outputs.workbook): written when the table format asks for it.
WORKBOOK_FILE = "results.xlsx"
# How a set holds its tables: CSV files (the default), one workbook instead (decisions.csv stays
# for `parm review import`), or both.
CSV, XLSX, BOTH = "csv", "xlsx", "both"
TABLE_FORMATS = (CSV, XLSX, BOTH)
# With reads (answers read twice or more, or a rater column): the lead's lists of the run
# (engine.actions), a scoring platform's assignments for today.
BACKREADS_FILE = "backreads.csv"
THIRD_READS_FILE = "third_reads.csv"
STATUS_FILE = "rater_status.csv"
ACTION_FILES = (BACKREADS_FILE, THIRD_READS_FILE, STATUS_FILE)
# A live session's run (`parm monitor`, engine.live): one row per item, rater and period of the
# agreement through time; the open alerts; what changed since the run before (Markdown). Its
# report.html is HTML_FILE too, and the lead's lists of the morning are ACTION_FILES.
MONITOR_FILE = "monitor.csv"
ALERTS_FILE = "alerts.csv"
CHANGES_FILE = "changes.md"
MONITOR_FILES = (MONITOR_FILE, ALERTS_FILE, CHANGES_FILE, HTML_FILE, *ACTION_FILES)
# Written last: the run, and every parm file of the folder with its size, SHA-256 and run.
MANIFEST_FILE = "parm-manifest.json"
# Every file a set can hold besides its manifest. A folder holding only these (and the
# manifest) is parm's to switch as a whole (engine.outputs.sets).
SET_FILES = OUTPUT_FILES + (
    HTML_FILE,
    WARNINGS_FILE,
    ITEMS_FILE,
    RATERS_FILE,
    BIAS_FILE,
    FEEDBACK_FILE,
    CONSENSUS_FILE,
    AGREEMENT_FILE,
    *ACTION_FILES,
    DECISIONS_FILE,
    REVIEWED_FILE,
    WORKBOOK_FILE,
    MONITOR_FILE,
    ALERTS_FILE,
    CHANGES_FILE,
)


@dataclass(frozen=True)
class OutputGroup:
    """One choice an export offers: a key, what it is in words, the files it writes, and
    whether it is chosen until the user says otherwise."""

    key: str
    label: str
    files: tuple[str, ...]
    default: bool = True


# What an export offers, in the order the Export screen lists them; every file of SET_FILES is
# in one group.
OUTPUT_GROUPS = (
    OutputGroup("predictions", "predictions.csv (one row per response)", ("predictions.csv",)),
    OutputGroup("tuning", "tuning.csv (every top-K / power tried)", ("tuning.csv",)),
    OutputGroup(
        "report",
        "report.json, report.md, report.html, warnings.txt",
        ("report.json", "report.md", HTML_FILE, WARNINGS_FILE),
    ),
    OutputGroup("decisions", "decisions.csv (your review decisions)", (DECISIONS_FILE,)),
    OutputGroup(
        "reviewed", "scores_reviewed.csv (every row with its final score)", (REVIEWED_FILE,)
    ),
    OutputGroup("items", "items.csv (one row per item)", (ITEMS_FILE,)),
    OutputGroup(
        "raters",
        "raters.csv, rater_item_bias.csv, rater_feedback.csv",
        (RATERS_FILE, BIAS_FILE, FEEDBACK_FILE),
    ),
    OutputGroup(
        "reads",
        "consensus.csv, agreement.csv (answers read twice or more)",
        (CONSENSUS_FILE, AGREEMENT_FILE),
    ),
    OutputGroup(
        "actions",
        "backreads.csv, third_reads.csv, rater_status.csv (today's lists)",
        ACTION_FILES,
    ),
    OutputGroup(
        "workbook",
        "results.xlsx (every table a sheet, for a spreadsheet)",
        (WORKBOOK_FILE,),
        default=False,
    ),
)
