"""Which columns a run reads, chosen the same way by both front ends (the app's Load screen and
`parm audit`): a column named explicitly is read as named; a file with a `final_score` column
(the reviewed scores of a scores_reviewed.csv) is audited on it; otherwise the settings' column
where the file has it, and the guess (engine.input.table.guess_columns) where it does not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.input.settings import declared as settings

if TYPE_CHECKING:  # the app's first screen must not load pandas
    import pandas as pd

    from engine.input.settings.config import AuditConfig

# The settings that name a file's columns (engine.input.settings.declared declares them), with the key
# of engine.input.table.guess_columns and the word a sentence uses for each.
COLUMN_KEYS = settings.COLUMN_KEYS
GUESS_KEYS = {key: settings.BY_NAME[key].guess for key in COLUMN_KEYS}
ROLE_NAMES = {key: settings.BY_NAME[key].role for key in COLUMN_KEYS + settings.FILE_KEYS}
# Everything the Load screen and the column flags choose: the columns and the file's shape.
CHOSEN_KEYS = settings.CHOSEN_KEYS
# The reviewed scores a scores_reviewed.csv carries (engine.outputs.reviewed writes them).
REVIEWED_SCORE = "final_score"


@dataclass(frozen=True)
class ColumnChoice:
    """The columns chosen ({setting: column or None}); `guessed`: the settings whose column
    differs from what the settings said (in COLUMN_KEYS order); `reviewed`: the score column is
    final_score because the file has one; `doubtful`: the candidates for the score column when
    its guess is not sure (engine.input.guess), else ()."""

    columns: dict[str, str | None]
    guessed: tuple[str, ...]
    reviewed: bool
    doubtful: tuple[str, ...] = ()

    def question(self) -> str | None:
        """What to ask when the score column is a doubtful guess, else None."""
        if not self.doubtful:
            return None
        shown = ", ".join(self.doubtful[:6]) + (", ..." if len(self.doubtful) > 6 else "")
        return (
            f"Which column holds the scores? The guess, {self.columns['score_column']!r}, is "
            f"not sure: the columns that could be scores are {shown}."
        )

    def sentence(self) -> str | None:
        """'Guessed columns: second score = score2, item = item.' (None when nothing was)."""
        if not self.guessed:
            return None
        parts = []
        for key in self.guessed:
            column = self.columns[key]
            shown = "none" if column is None else column
            if isinstance(column, tuple):
                shown = ", ".join(column) + f" ({len(column)} reads)"
            if key == "reads":
                shown = f"{column} (one row per {'read' if column == 'long' else 'answer'})"
            if key == "id_column" and column is None:
                shown = "none (row numbers identify the responses)"
            parts.append(f"{ROLE_NAMES[key]} = {shown}")
        text = "Guessed columns: " + ", ".join(parts) + "."
        if self.reviewed:
            text += (
                f" The file has a {REVIEWED_SCORE} column (the reviewed scores of a "
                "scores_reviewed.csv), so it is the score column; name another to audit it."
            )
        return text


def choose_columns(
    frame: pd.DataFrame, config: AuditConfig, given: frozenset[str] | set[str] = frozenset()
) -> ColumnChoice:
    """The columns to read from `frame`: each setting in `given` (named explicitly: a command
    line flag or --set) as the settings say; the score column `final_score` when the file has
    one; else the settings' column when the file has it, else the guess. A guess is never a
    column already chosen for another role."""
    from engine.input.guess import guess_columns

    names = [str(c) for c in frame.columns]
    guesses = guess_columns(frame)
    chosen: dict = {}
    reviewed = False
    for key in COLUMN_KEYS:
        configured = getattr(config, key)
        if key in given:
            chosen[key] = configured
        elif key == "score_column" and REVIEWED_SCORE in names:
            chosen[key], reviewed = REVIEWED_SCORE, configured != REVIEWED_SCORE
        elif _in(configured, names):
            chosen[key] = configured
        else:
            guess = guesses[GUESS_KEYS[key]]
            chosen[key] = tuple(guess) if isinstance(guess, list) else guess
    _without_twice_read(chosen, config, given)
    if chosen["text_column"] is None and "score_column" in given:
        # The text column named as the score leaves none to guess: say that, not "no text".
        from engine.input.score_check import check_named_score

        check_named_score(frame, chosen["score_column"], chosen["item_column"], "The file")
    _reads_agree(chosen, given)
    for key in settings.FILE_KEYS:
        chosen[key] = getattr(config, key)
    place = frame.attrs.get("place")  # a workbook's: the sheet read (engine.input.workbook)
    if place is not None and "sheet" not in given:
        chosen["sheet"] = place.sheet
    if "reads" not in given and _looks_long(frame, chosen):
        chosen["reads"] = "long"
    guessed = tuple(key for key in CHOSEN_KEYS if chosen[key] != getattr(config, key))
    doubtful = ()
    if "score_column" in guessed and not reviewed and guesses["score_candidates"]:
        doubtful = tuple(guesses["score_candidates"])
    return ColumnChoice(chosen, guessed, reviewed, doubtful)


def unused_columns(names, config: AuditConfig) -> list[str]:
    """The file's columns (`names`, in file order) that no setting of `config` names: what a
    run leaves unread (a score_avg column beside two graders' scores), said once."""
    read: set[str] = set()
    for key in COLUMN_KEYS:
        column = getattr(config, key)
        read |= set(column) if isinstance(column, tuple) else {column}
    return [str(name) for name in names if str(name) not in read]


# The settings naming several columns (every read's), each list starting with its single twin.
LISTS = {"score_columns": "score_column", "rater_columns": "rater_column"}


def _in(configured, names: list[str]) -> bool:
    """Whether the file has the column (every column of a list) the settings name."""
    if isinstance(configured, tuple):
        return all(column in names for column in configured)
    return configured in names


def _without_twice_read(chosen: dict, config: AuditConfig, given) -> None:
    """A guessed column already chosen for another role is dropped (a list's first column is
    its single twin's, as it must be)."""
    single = {key: column for key, column in chosen.items() if isinstance(column, str)}
    for key in COLUMN_KEYS:
        column = chosen[key]
        if key in given or column is None or column == getattr(config, key):
            continue
        if key in LISTS:
            others = {c for k, c in single.items() if k != LISTS[key]}
            if set(column[1:]) & others or column[0] in {c for k, c in single.items()
                                                         if k != LISTS[key]}:  # fmt: skip
                chosen[key] = None
        elif any(other != key and single[other] == column for other in single):
            chosen[key] = None


def _reads_agree(chosen: dict, given) -> None:
    """Several reads as one list: score_columns starts with the score column (which follows a
    list named explicitly), never with a second score column, and rater_columns needs them."""
    reads = chosen["score_columns"]
    if reads is not None and "score_columns" in given and "score_column" not in given:
        chosen["score_column"] = reads[0]
    if reads is not None and (reads[0] != chosen["score_column"] or chosen["second_score_column"]):
        chosen["score_columns"] = None
    raters = chosen["rater_columns"]
    if raters is not None and (chosen["score_columns"] is None
                               or len(raters) != len(chosen["score_columns"])):  # fmt: skip
        chosen["rater_columns"] = None
    elif raters is not None and chosen["rater_column"] not in (None, raters[0]):
        chosen["rater_columns"] = None


def _looks_long(frame, chosen: dict) -> bool:
    """One row per read: the id column repeats within an item, a rater column says who read,
    and no other column holds reads."""
    ids, rater, item = chosen["id_column"], chosen["rater_column"], chosen["item_column"]
    if ids is None or rater is None or chosen["score_columns"] or chosen["second_score_column"]:
        return False
    keys = frame[[item, ids]] if item else frame[[ids]]
    return bool(keys.astype(str).duplicated().any())
