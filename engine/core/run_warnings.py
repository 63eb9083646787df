"""A run's warnings as data: each is of a declared kind, about an item (or the whole file) and
says what in a sentence. The kinds are declared once here, each with the one line that
summarises all of its warnings, so a run of 135 items prints one line per kind, not one per
warning; the full list goes to report.json and the output set's warnings file.

The stages that find a problem say it in a sentence (engine.input, engine.model, ...); its kind
is read from that sentence by the first declared kind whose pattern matches it, so a new kind
is one row here and one test."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from engine.core.text import safe_text


@dataclass(frozen=True)
class WarningKind:
    """key: the name report.json and the warnings file carry; summary: what every warning of
    the kind says, in one line; pattern: what its sentences look like (searched, not matched)."""

    key: str
    summary: str
    pattern: str


# Most frequent on real files first; "other" last, matching anything.
WARNING_KINDS = (
    WarningKind(
        "single_response",
        "a score given to a single response of the item: its parameters cannot be estimated there",
        r"^Score '.*' in column '.*' has a single response",
    ),
    WarningKind(
        "second_rater_only",
        "a score only the second rater gave in the item: its parameters cannot be estimated",
        r"appears only in the second rater's column",
    ),
    WarningKind(
        "two_scales",
        "a second score or read column on another scale than the score's (a sum beside a read?)",
        r"look like two scales",
    ),
    WarningKind(
        "memorised",
        "in-sample figures more than .05 above their cross-fitted twins: lead with the latter",
        r"show an in-sample kappa more than",
    ),
    WarningKind(
        "too_small",
        "items with too few answers per score value for a per-item fit",
        r"answers per score value they use",
    ),
    WarningKind(
        "small_item",
        "fewer usable responses than parm is meant for: imprecise estimates and figures",
        r"^Only \d+ usable responses",
    ),
    WarningKind(
        "not_audited",
        "not audited (too few responses, or a single score)",
        r"^Not audited: ",
    ),
    WarningKind(
        "few_per_score",
        "too few responses per score for the severity's held-out fits",
        r"^Too few responses per score",
    ),
    WarningKind(
        "grid_cut",
        "top-K values not smaller than the item's responses, left out of its tuning",
        r"^Setting '.*': left out ",
    ),
    WarningKind(
        "unordered_scores",
        "text scores with no stated order, treated as nominal (no QWK or near agreement)",
        r"are text with no stated order",
    ),
    WarningKind(
        "separated",
        "scores (nearly) separable by the similarities: parameters and standard errors unreliable",
        r"perfectly separated|reached the bound of",
    ),
    WarningKind(
        "standard_errors",
        "standard errors missing for some parameters",
        r"[Ss]tandard errors could not be computed|^No standard errors",
    ),
    WarningKind("not_converged", "the optimiser did not converge", r"^The optimiser did not"),
    WarningKind("blank_answers", "blank answers, audited alike", r"blank answer\(s\)"),
    WarningKind("embedding_cache", "the embedding cache could not be used", r"^Embedding cache"),
    WarningKind(
        "review_store",
        "the review's decisions could not be saved or read (none in this output set)",
        r"^Review decisions cannot be saved or read",
    ),
    WarningKind(
        "not_kept", "the run could not be kept for resuming", r"^The results could not be kept"
    ),
    WarningKind("file", "how the file was read (encoding, compression, characters)", r"^File "),
    WarningKind("rows", "rows or scores left out or counted as missing", r"row\(s\)|score\(s\)"),
    WarningKind("other", "other warnings", r""),
)
KINDS = {kind.key: kind for kind in WARNING_KINDS}
_PATTERNS = [(kind.key, re.compile(kind.pattern)) for kind in WARNING_KINDS]
# How many items a summary line names before "and N more".
SHOWN_ITEMS = 3


def kind_of(message: str) -> str:
    """The key of the first declared kind whose pattern is found in `message`."""
    return next(key for key, pattern in _PATTERNS if pattern.search(message))


@dataclass(frozen=True)
class RunWarning:
    """One warning: its kind (a key of KINDS), the item it is about (None: the whole file or
    run) and its sentence. Item names and sentences quote the data: show them through
    safe_text (terminal), autoescaping (HTML) or md_text (Markdown)."""

    kind: str
    item: str | None
    message: str

    @classmethod
    def about(cls, message: str, item: str | None = None) -> RunWarning:
        return cls(kind_of(message), item, message)

    @property
    def text(self) -> str:
        """The warning as one line: "Item 'X': sentence", or the sentence."""
        return self.message if self.item is None else f"Item '{self.item}': {self.message}"

    def record(self) -> dict[str, str | None]:
        """As report.json writes it."""
        return {"kind": self.kind, "item": self.item, "message": self.message}


@dataclass(frozen=True)
class WarningGroup:
    """The warnings of one kind, and the items they name (first seen first)."""

    kind: WarningKind
    warnings: tuple[RunWarning, ...]

    @property
    def count(self) -> int:
        return len(self.warnings)

    @property
    def items(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(w.item for w in self.warnings if w.item is not None))

    def line(self, shown: int = SHOWN_ITEMS) -> str:
        """'12 x <summary>: items 'a', 'b', 'c' and 9 more', made safe for a terminal; a kind
        with one warning is that warning, which says more than its kind."""
        if self.count == 1:
            return safe_text(self.warnings[0].text, one_line=True)
        line = f"{self.count} x {self.kind.summary}"
        items = self.items
        if items:
            named = ", ".join(f"'{item}'" for item in items[:shown])
            more = len(items) - shown
            word = "item" if len(items) == 1 else "items"
            line += f": {word} {named}" + (f" and {more} more" if more > 0 else "")
        return safe_text(line, one_line=True)


def grouped(warnings: list[RunWarning] | tuple[RunWarning, ...]) -> list[WarningGroup]:
    """One group per kind present, in the order of WARNING_KINDS."""
    groups = []
    for kind in WARNING_KINDS:
        own = tuple(w for w in warnings if w.kind == kind.key)
        if own:
            groups.append(WarningGroup(kind, own))
    return groups


def summary_lines(
    warnings: list[RunWarning] | tuple[RunWarning, ...], shown: int = SHOWN_ITEMS
) -> list[str]:
    """One line per kind of warning (see WarningGroup.line)."""
    return [group.line(shown) for group in grouped(warnings)]


def warnings_text(warnings: Iterable[RunWarning]) -> str:
    """The full list, one warning a line, for the output set's warnings file: each line made
    safe (control characters replaced), so a line is one warning whatever the data holds."""
    return "".join(safe_text(f"[{w.kind}] {w.text}", one_line=True) + "\n" for w in warnings)
