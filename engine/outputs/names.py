"""The names of the files an output set can hold: one list, so that the writer, the app's export
screen and the reader of a set (engine.outputs.sets) agree. A new kind of output joins here."""

OUTPUT_FILES = ("predictions.csv", "tuning.csv", "report.json", "report.md")
# The report to read in a browser, print or send (engine.outputs.html_report).
HTML_FILE = "report.html"
ITEMS_FILE = "items.csv"
RATERS_FILE = "raters.csv"
DECISIONS_FILE = "decisions.csv"
# Every input row with its original columns and the final score after the review
# (engine.outputs.reviewed).
REVIEWED_FILE = "scores_reviewed.csv"
# With a rater column: the rater-by-item bias cells and each rater's flagged scores.
BIAS_FILE = "rater_item_bias.csv"
FEEDBACK_FILE = "rater_feedback.csv"
# Written last: the run, and every parm file of the folder with its size, SHA-256 and run.
MANIFEST_FILE = "parm-manifest.json"
# Every file a set can hold besides its manifest. A folder holding only these (and the
# manifest) is parm's to switch as a whole (engine.outputs.sets).
SET_FILES = OUTPUT_FILES + (
    HTML_FILE,
    ITEMS_FILE,
    RATERS_FILE,
    BIAS_FILE,
    FEEDBACK_FILE,
    DECISIONS_FILE,
    REVIEWED_FILE,
)
