"""What the reports say, for the front ends to say it the same way: the reads' agreement and
PRMSE as report.json holds them and the cells report.html shows, the raters' table's columns,
an item's parameters, the lead's lists in a line, the review's summary, the conclusions, and
the names the reads' raters go by.

Loads numpy and pandas (through the outputs): the screens and the CLI that show these import
it where they show them.
"""

from __future__ import annotations

from engine.input.several_reads import rater_name, read_pair
from engine.outputs.declared import RATERS, TOO_FEW
from engine.outputs.names import WARNINGS_FILE
from engine.outputs.report.action_outputs import summary as actions_summary
from engine.outputs.report.conclusions import conclusions
from engine.outputs.report.item_content import parameters
from engine.outputs.report.markdown import plural
from engine.outputs.report.reads_outputs import (
    agreement_dict,
    interval_text,
    pair_cells,
    prmse_text,
)
from engine.outputs.report.review_summary import NO_REVIEW, review_summary

__all__ = [
    "NO_REVIEW",
    "RATERS",
    "TOO_FEW",
    "WARNINGS_FILE",
    "actions_summary",
    "agreement_dict",
    "conclusions",
    "interval_text",
    "pair_cells",
    "parameters",
    "plural",
    "prmse_text",
    "rater_name",
    "read_pair",
    "review_summary",
]
