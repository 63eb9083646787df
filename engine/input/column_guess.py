"""Which columns a run reads, chosen the same way by both front ends (the app's Load screen and
`parm audit`): a column named explicitly is read as named; a file with a `final_score` column
(the reviewed scores of a scores_reviewed.csv) is audited on it; otherwise the settings' column
where the file has it, and the guess (engine.input.table.guess_columns) where it does not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.input import settings

if TYPE_CHECKING:  # the app's first screen must not load pandas
    import pandas as pd

    from engine.input.config import AuditConfig

# The settings that name a file's columns (engine.input.settings declares them), with the key
# of engine.input.table.guess_columns and the word a sentence uses for each.
COLUMN_KEYS = settings.COLUMN_KEYS
GUESS_KEYS = {key: settings.BY_NAME[key].guess for key in COLUMN_KEYS}
ROLE_NAMES = {key: settings.BY_NAME[key].role for key in COLUMN_KEYS}
# The reviewed scores a scores_reviewed.csv carries (engine.outputs.reviewed writes them).
REVIEWED_SCORE = "final_score"


@dataclass(frozen=True)
class ColumnChoice:
    """The columns chosen ({setting: column or None}); `guessed`: the settings whose column
    differs from what the settings said (in COLUMN_KEYS order); `reviewed`: the score column is
    final_score because the file has one."""

    columns: dict[str, str | None]
    guessed: tuple[str, ...]
    reviewed: bool

    def sentence(self) -> str | None:
        """'Guessed columns: second score = score2, item = item.' (None when nothing was)."""
        if not self.guessed:
            return None
        parts = []
        for key in self.guessed:
            column = self.columns[key]
            shown = "none" if column is None else column
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
    from engine.input.table import guess_columns

    names = [str(c) for c in frame.columns]
    guesses = guess_columns(frame)
    chosen: dict[str, str | None] = {}
    reviewed = False
    for key in COLUMN_KEYS:
        configured = getattr(config, key)
        if key in given:
            chosen[key] = configured
        elif key == "score_column" and REVIEWED_SCORE in names:
            chosen[key], reviewed = REVIEWED_SCORE, configured != REVIEWED_SCORE
        elif configured in names:
            chosen[key] = configured
        else:
            chosen[key] = guesses[GUESS_KEYS[key]]
    taken = {key: column for key, column in chosen.items() if column is not None}
    for key in COLUMN_KEYS:
        column = chosen[key]
        if key in given or column is None or column == getattr(config, key):
            continue
        if any(other != key and taken[other] == column for other in taken):
            chosen[key] = None  # a guess that would read one column twice
    guessed = tuple(key for key in COLUMN_KEYS if chosen[key] != getattr(config, key))
    return ColumnChoice(chosen, guessed, reviewed)
