"""Guessing a scoring file's columns from their names and values (engine.input.column_guess
chooses with the guesses for both front ends): the text, the score (and every read's), the id,
the item, the rater, the time, the expert score, the question and the reference answer.

A score column must look like scores: few distinct values for its rows, short values, not a
count (`dup_count`, `n_words`); a score-like name (`score`, `grade`, `label`, ...) beats one
that is not. When no candidate has a score-like name and there are several, or the only one
looks like a number of something, the guess is doubtful and says its candidates: `parm audit`
then stops and asks for --score-col, and the app asks on its Load screen.
"""

from __future__ import annotations

import re

import pandas as pd

from engine.input.labels import two_scales
from engine.input.table import as_number

ID_NAMES = (
    "id",
    "uid",
    "response_id",
    "student",
    "student_id",
    "respondent",
    "respondent_id",
    "participant",
    "participant_id",
    "pupil",
    "pupil_id",
    "learner",
    "learner_id",
    "candidate",
    "candidate_id",
    "examinee",
    "examinee_id",
    "user_id",
)

# Names of the item (question) and rater columns of a scoring session's export.
ITEM_NAMES = ("item", "question", "prompt", "essayset", "task", "itemid", "questionid")
RATER_NAMES = ("rater", "scorer", "marker", "grader", "reader", "judge")
# A time column (when, or in which order, each score was given) is guessed only beside a rater
# column: it dates a rater's scores (time_column needs rater_column).
TIME_NAMES = ("time", "timestamp", "datetime", "date", "scoredat", "markedat", "gradedat",
              "ratedat", "scoringtime", "markingtime")  # fmt: skip
# Validity papers: the lead's (expert's) score of some answers, the raters' anchor.
EXPERT_NAMES = ("expertscore", "expert", "validity", "validityscore", "gold", "goldscore")


# What each read is (first, second, validity, backread, resolution): a live session's reads.
KIND_NAMES = ("kind", "readkind", "readtype", "kindofread", "readrole", "scoringkind")
# The question and the reference answer of each item (shown beside the answers in the review).
QUESTION_NAMES = ("question", "questiontext", "prompttext", "stem", "questionstem")
REFERENCE_NAMES = ("referenceanswer", "reference", "modelanswer", "referencetext",
                   "exemplar", "answerkey", "key", "desiredanswer")  # fmt: skip
# Names that say "score", and names that say "a number of something" (never a score).
SCORE_HINTS = ("score", "grade", "mark", "rating", "label", "points", "correct", "result")
COUNT_NAME = re.compile(
    r"(^|_)(n|num|number|count|cnt|len|length|size|freq|frequency|total|index|idx|rank|"
    r"dups?|duplicates?|words?|chars?|characters?|tokens?)(_|$)|count$|^dup|^n_"
)
# A score column has at most this many distinct values (engine.input.responses refuses more)
# and no more than this share of its rows (a file of at least SHARE_ROWS rows): a rubric's
# scores each go to several answers. engine.input.score_check refuses a column named as the
# score that breaks either rule, so what the guess passes over is what a run refuses.
MAX_SCORE_VALUES = 50
MAX_SCORE_SHARE = 0.5
SHARE_ROWS = 20
# Rows a guess reads to tell whether two score columns are on two scales (the run itself checks
# every read: engine.input.labels.scale_notes).
SCALE_ROWS = 2000


def too_many_values(distinct: int, rows: int) -> bool:
    """Whether a column with `distinct` values in `rows` non-empty cells has more values than a
    rubric's scores could: more than MAX_SCORE_VALUES, or more than MAX_SCORE_SHARE of its
    rows (from SHARE_ROWS rows on)."""
    return distinct > MAX_SCORE_VALUES or (rows >= SHARE_ROWS and distinct > MAX_SCORE_SHARE * rows)


def guess_columns(frame: pd.DataFrame) -> dict:
    """Guess the text, score, id, second-score, every read's, item, rater, second-rater, time,
    expert, question and reference columns of a table (engine.input.column_guess chooses with it for
    both front ends). A `final_score` column, the reviewed scores of a scores_reviewed.csv, is
    the score column when there is one. `score_candidates`: the candidates when the score's
    guess is doubtful (module docstring), else None."""
    columns = list(frame.columns)
    ids = _id_columns(columns)
    items = _item_columns(columns)
    # A column with one value throughout (EssaySet of one essay set's file) splits nothing: it
    # is not an item column, though named like one (it stays out of the text and the scores).
    varying = [c for c in items if frame[c].astype(str).nunique(dropna=False) > 1]
    raters = _named_columns(columns, RATER_NAMES)
    times = _named_columns(columns, TIME_NAMES)
    experts = _named_columns(columns, EXPERT_NAMES)
    kinds = _named_columns(columns, KIND_NAMES)
    question, reference, text, others = _text_and_others(frame)
    ordered, doubtful = _score_candidates(frame, [c for c in others if c != text])
    numeric = [c for c in ordered if _numeric_share(frame, c) > 0.9]
    score = _read_on_one_scale(frame, ordered[0], numeric) if ordered else None
    second = next(
        (c for c in numeric
         if c != score and any(ch.isdigit() for ch in c) and not _two_scales(frame, score, c)),
        None,
    )  # fmt: skip
    first_raters = [c for c in raters if not any(ch.isdigit() and ch != "1" for ch in c)]
    second_raters = [c for c in raters if c not in first_raters]
    # Three reads or more: the score column's numbered family (G1, G2, G3) is every read's.
    family = _numbered_family(score, numeric) if score is not None else []
    reads = [c for c in family if c == score or not _two_scales(frame, score, c)]
    reads = reads if len(reads) >= 3 else []
    read_raters = _numbered_family(raters[0], raters) if reads and raters else []
    read_raters = read_raters if len(read_raters) == len(reads) else []
    if reads:
        score, second, doubtful = reads[0], None, False
    return {
        "text": text,
        "score": score,
        "score_candidates": ordered if doubtful else None,
        "id": ids[0] if ids else None,
        "second": second,
        "reads": reads or None,
        "read_raters": read_raters or None,
        "item": varying[0] if varying else None,
        "rater": next(iter(read_raters or first_raters), None),
        "second_rater": second_raters[0] if second and second_raters else None,
        "time": times[0] if times and first_raters else None,
        "expert": experts[0] if experts else None,
        "kind": kinds[0] if kinds else None,
        "question": question,
        "reference": reference,
    }


def _read_on_one_scale(frame: pd.DataFrame, score, numeric: list) -> str:
    """The score column, or the first of a numbered family of two or more read columns on one
    scale (rater1_domain1, rater2_domain1) where the score column is on another (ASAP essays'
    domain1_score, the two raters' sum): two reads of one rubric are what an audit compares."""
    if len(_numbered_family(score, numeric)) >= 2:
        return score
    for column in numeric:
        family = _numbered_family(column, numeric)
        same = [c for c in family if not _two_scales(frame, family[0], c)] if family else []
        if len(same) >= 2 and _two_scales(frame, score, same[0]):
            return same[0]
    return score


def _two_scales(frame: pd.DataFrame, first, other) -> bool:
    """Whether two numeric columns' scores of the same rows look like two scales
    (engine.input.labels.two_scales), over the first SCALE_ROWS rows (a guess reads a sample)."""
    head = frame.head(SCALE_ROWS)
    pairs = [
        (a, b)
        for a, b in zip(
            map(as_number, head[first].astype(str)), map(as_number, head[other].astype(str))
        )
        if a is not None and b is not None
    ]
    return bool(pairs) and two_scales([a for a, _ in pairs], [b for _, b in pairs])


def score_candidates(frame: pd.DataFrame) -> list:
    """The columns that look like scores, likeliest first, as guess_columns ranks them: never
    the text, an id, item, rater, time, expert, question or reference column."""
    *_, text, others = _text_and_others(frame)
    return _score_candidates(frame, [c for c in others if c != text])[0]


def _text_and_others(frame: pd.DataFrame) -> tuple:
    """(question, reference, text, the columns left for the text and the scores): an id, item,
    rater, time, expert, question or reference column is never the text or a score, even when
    its name says "response_id" or its values are numbers (EssaySet)."""
    columns = list(frame.columns)
    named = (_id_columns(columns) + _item_columns(columns) + _named_columns(columns, RATER_NAMES)
             + _named_columns(columns, TIME_NAMES) + _named_columns(columns, EXPERT_NAMES)
             + _named_columns(columns, KIND_NAMES))  # fmt: skip
    question = next((c for c in _named_columns(columns, QUESTION_NAMES) if c not in named), None)
    reference = next((c for c in _named_columns(columns, REFERENCE_NAMES) if c not in named), None)
    taken = named + [c for c in (question, reference) if c]
    others = [c for c in columns if c not in taken] or columns
    text_hint = ("answer", "response", "text", "essay")
    text = next((c for c in others if any(h in c.lower() for h in text_hint)), None)
    if text is None:
        text = max(others, key=lambda c: _mean_length(frame, c))
    return question, reference, text, others


def _numeric_share(frame: pd.DataFrame, column) -> float:
    values = [v for v in frame[column].astype(str).head(200) if v.strip()]
    return sum(as_number(v) is not None for v in values) / max(len(values), 1)


def _mean_length(frame: pd.DataFrame, column) -> float:
    return frame[column].astype(str).head(200).str.len().mean()


def _score_candidates(frame: pd.DataFrame, columns: list) -> tuple[list, bool]:
    """The columns that look like scores, likeliest first (final_score, then score-like names,
    then numbers, then short labels), and whether the first is doubtful: no score-like name and
    another candidate beside it."""

    def named_so(column) -> bool:
        return any(hint in column.lower() for hint in SCORE_HINTS)

    def looks_like_scores(column) -> bool:
        values = frame[column].astype(str).str.strip()
        distinct = values[values != ""].nunique()
        # Few values for the rows (a tiny file aside); one value only for a column named so.
        few = not too_many_values(distinct, len(frame))
        return (
            few and distinct >= (1 if named_so(column) else 2) and _mean_length(frame, column) <= 25
        )

    candidates = [c for c in columns if not COUNT_NAME.search(c.lower()) and looks_like_scores(c)]
    named = [c for c in candidates if named_so(c)]
    numbers = [c for c in candidates if c not in named and _numeric_share(frame, c) > 0.9]
    ordered = named + numbers + [c for c in candidates if c not in named + numbers]
    if "final_score" in columns:
        # The reviewed scores of a scores_reviewed.csv (engine.outputs.reviewed): audited first.
        ordered = ["final_score"] + [c for c in ordered if c != "final_score"]
    family = _numbered_family(ordered[0], numbers) if ordered else []
    doubtful = bool(ordered) and not named and len(ordered) > 1 and len(family) < 3
    return ordered, doubtful


def _item_columns(columns: list) -> list:
    """Item columns by name, those named as ids first; beside one (question_id), a column named
    like a question's text (question) is the question, not an item."""
    found = _named_columns(columns, ITEM_NAMES)
    squashed = {c: re.sub(r"[\s\-_]+", "", c.lower()) for c in found}
    ided = [c for c in found if squashed[c].endswith("id")]
    questions = set(_named_columns(columns, QUESTION_NAMES)) - set(ided)
    return ided + [c for c in found if c not in ided and not (ided and c in questions)]


def _numbered_family(column: str, columns: list[str]) -> list[str]:
    """The columns named like `column` but for their numbers (G1, G2, G3; rater1_domain1,
    rater2_domain1), in the order of their first number; [] when `column` has no number."""

    def stem(name: str) -> str:
        return re.sub(r"\d+", "#", name.lower())

    def number(name: str) -> int:
        found = re.search(r"\d+", name)
        assert found is not None  # the family has only names with a digit
        return int(found.group())

    if not re.search(r"\d", column):
        return []
    family = [c for c in columns if re.search(r"\d", c) and stem(c) == stem(column)]
    return sorted(family, key=number)


def _named_columns(columns: list[str], names: tuple[str, ...]) -> list[str]:
    """Columns whose name is one of `names` (case, spaces, dashes and underscores ignored),
    optionally followed by a number or "_id" (rater2, grader_id), in the order of `names`."""
    found = []
    for name in names:
        pattern = re.compile(rf"{name}(\d*|id)")
        found += [
            c
            for c in columns
            if c not in found and pattern.fullmatch(re.sub(r"[\s\-_]+", "", c.lower()))
        ]
    return found


def _id_columns(columns: list[str]) -> list[str]:
    """Columns that look like ids, the likeliest first: a known name (id, student, respondent,
    ... in the order of ID_NAMES; case, spaces, dashes and underscores ignored, so StudentID
    counts), then any other name ending in _id."""
    squashed = [name.replace("_", "") for name in ID_NAMES]
    names = {c: re.sub(r"[\s\-]+", "_", c.strip().lower()) for c in columns}
    rank = {
        c: squashed.index(names[c].replace("_", ""))
        for c in columns
        if names[c].replace("_", "") in squashed
    }
    known = sorted(rank, key=rank.__getitem__)
    suffixed = [c for c in columns if c not in rank and names[c].endswith("_id")]
    return known + suffixed
