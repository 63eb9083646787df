"""What the reports say, for the front ends to say it the same way: the reads' agreement and
PRMSE as report.json holds them and the cells report.html shows, the raters' table's columns,
an item's parameters, the lead's lists in a line, the review's summary, the conclusions, and
the names the reads' raters go by, the raters' rules and what is said where no rater x item
cell can be judged.

Each name is imported from its module when it is first asked for (PEP 562): the outputs' modules
load scipy.stats and pandas, which a screen that only names the reads' raters (the Load
screen, shown while the model loads) must not wait for.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.audit.raters.bias import NO_CELL as NO_BIAS_CELL
    from engine.audit.raters.verdicts import RULES as RATER_RULES
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

# Each name: (its module, its name there).
_SOURCES = {
    "NO_BIAS_CELL": ("engine.audit.raters.bias", "NO_CELL"),
    "RATER_RULES": ("engine.audit.raters.verdicts", "RULES"),
    "rater_name": ("engine.input.several_reads", "rater_name"),
    "read_pair": ("engine.input.several_reads", "read_pair"),
    "RATERS": ("engine.outputs.declared", "RATERS"),
    "TOO_FEW": ("engine.outputs.declared", "TOO_FEW"),
    "WARNINGS_FILE": ("engine.outputs.names", "WARNINGS_FILE"),
    "actions_summary": ("engine.outputs.report.action_outputs", "summary"),
    "conclusions": ("engine.outputs.report.conclusions", "conclusions"),
    "parameters": ("engine.outputs.report.item_content", "parameters"),
    "plural": ("engine.outputs.report.markdown", "plural"),
    "agreement_dict": ("engine.outputs.report.reads_outputs", "agreement_dict"),
    "interval_text": ("engine.outputs.report.reads_outputs", "interval_text"),
    "pair_cells": ("engine.outputs.report.reads_outputs", "pair_cells"),
    "prmse_text": ("engine.outputs.report.reads_outputs", "prmse_text"),
    "NO_REVIEW": ("engine.outputs.report.review_summary", "NO_REVIEW"),
    "review_summary": ("engine.outputs.report.review_summary", "review_summary"),
}

__all__ = [
    "NO_BIAS_CELL",
    "NO_REVIEW",
    "RATER_RULES",
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


def __getattr__(name: str):
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _SOURCES[name]
    value = getattr(import_module(module), attribute)
    globals()[name] = value  # asked once
    return value
