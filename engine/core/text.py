"""Untrusted text made inert for a terminal: the one function every display of students'
answers, ids, labels, column names, paths and messages that quote them goes through.

A terminal acts on control characters: ESC starts sequences that move the cursor, erase lines
or (OSC 52) write the clipboard, C1 characters such as U+009B (CSI) do the same in one
character, and the Unicode bidi overrides and isolates reorder what is shown (the "Trojan
Source" trick). Each of them is replaced by U+FFFD, so the text keeps its length and the spot
stays visible. Tab and newline are kept (answers have paragraphs); a carriage return becomes a
newline, so "\\r\\n" line ends read as one line end and a lone "\\r" cannot overwrite the line.
"""

from __future__ import annotations

import re

PLACEHOLDER = "\ufffd"
# C0 controls except tab (09) and newline (0a), DEL, C1, and the bidi embeddings, overrides
# (U+202A-U+202E) and isolates (U+2066-U+2069).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_BLANKS = re.compile("[\t\n]")
# A character's UTF-8 bytes read back one by one as Latin-1 (a UTF-8 file opened as Latin-1 and
# saved again as UTF-8): a lead byte, then its continuation bytes as U+0080-U+00BF.
_MISREAD = re.compile(
    "[\u00c2-\u00df][\u0080-\u00bf]|[\u00e0-\u00ef][\u0080-\u00bf]{2}"
    "|[\u00f0-\u00f4][\u0080-\u00bf]{3}"
)
_C1 = re.compile("[\x80-\x9f]")
# What the reading notes say of the characters `repair_misread` restored.
MISREAD_NOTE = (
    "character(s) whose UTF-8 bytes had been read as Latin-1 and saved again (a curly quote "
    "stored as â and two invisible characters); each was restored"
)


def sanitise(text: object) -> tuple[str, int]:
    """`safe_text(text)` and how many characters it replaced with the placeholder (line ends
    not counted). One pass of str.replace and one of a regex: a 28 MB file takes about 0.3 s."""
    text = str(text).replace("\r\n", "\n").replace("\r", "\n")
    return _UNSAFE.subn(PLACEHOLDER, text)


def repair_misread(text: str) -> tuple[str, int]:
    """`text` with each character whose UTF-8 bytes were read back as Latin-1 restored
    ("donâ\\x80\\x99t" -> "don’t", as ASAP's essays hold them), and how many were. Only a
    sequence holding a C1 control is touched: no text holds one, and `sanitise` would make
    each a U+FFFD. Run before `sanitise`, which still replaces what a restored character may
    be (a bidi override)."""
    if _C1.search(text) is None:
        return text, 0
    restored = 0

    def restore(found: re.Match[str]) -> str:
        nonlocal restored
        misread = found.group()
        if _C1.search(misread) is None:
            return misread
        try:
            character = misread.encode("latin-1").decode("utf-8")
        except UnicodeDecodeError:  # not one character's bytes (an overlong form)
            return misread
        restored += 1
        return character

    return _MISREAD.sub(restore, text), restored


def read_safely(text: str) -> tuple[str, int, int]:
    """Text as a file's reader keeps it: misread characters restored (`repair_misread`), then
    made inert (`sanitise`); with how many characters were replaced and how many restored."""
    restored_text, restored = repair_misread(text)
    clean, replaced = sanitise(restored_text)
    return clean, replaced, restored


def before_repair(text: str) -> str:
    """`text` as parm read it before `repair_misread`: each character that function restores
    shown as its UTF-8 bytes read as Latin-1, their C1 controls replaced (’ -> â\ufffd\ufffd).
    A decision made then holds that text's hash (engine.saved.decisions)."""
    if text.isascii():
        return text
    out = []
    for character in text:
        misread = character.encode("utf-8", "surrogatepass").decode("latin-1")
        out.append(_UNSAFE.sub(PLACEHOLDER, misread) if _C1.search(misread) else character)
    return "".join(out)


def safe_text(text: object, one_line: bool = False) -> str:
    """`text` as a string with every control character that a terminal acts on replaced by
    U+FFFD (carriage returns become newlines first).

    one_line: also turn tabs and newlines into spaces, for labels, ids, column names and paths
    shown on one line.
    """
    clean, _ = sanitise(text)
    return _BLANKS.sub(" ", clean) if one_line else clean


def is_safe(text: str) -> bool:
    """Whether `text` holds no character that `safe_text` would replace or change."""
    return "\r" not in text and _UNSAFE.search(text) is None
