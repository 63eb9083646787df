"""A hostile input file, written by the tests that use it (never shipped): terminal escape
sequences (OSC 52 clipboard writes, screen erase, C1 CSI), bidi overrides, Markdown and HTML
(`|`, backticks, `#`, `<img onerror>`), Rich/Textual markup (`[/]`, `[bold]`) and spreadsheet
formulas (at the start, after blanks, after a quote, after a newline) in answers, ids, score
labels and column names; plus checks that text or a CSV is inert."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
from helpers import clustered_embeddings

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"  # asks the terminal to put "rm -rf ~" on the clipboard
ERASE = "\x1b[2J\x1b[H"
C1_CSI = "\x9b31m"
BIDI = "\u202eevil\u202c \u2066isolate\u2069"
MARKUP = "[/] [bold]bold[/bold] [link=https://x]l[/link]"
HTML = "<img src=x onerror=alert(1)><script>alert(2)</script>"
MARKDOWN = "| a | b | `code` ``` # heading **strong** [link](javascript:alert(3)) ![i](x) \\|"
FORMULAS = ("=cmd|' /C calc'!A0", " =1+1", '"=HYPERLINK(""http://x"")"', "ok\n=2+2", "@SUM(A1)")

ID_COLUMN = "id" + OSC52 + "|`#"
SECOND_COLUMN = "rater2 " + HTML[:25] + MARKUP[:3]
EXTRA_COLUMN = "note" + ERASE + C1_CSI + BIDI
# Text labels (sorted: the codes follow this order) with formulas, markup and HTML in them.
LABELS = ("+1 low" + OSC52, "=2 mid|" + MARKUP[:9], "@3 <b>high</b>`#")
N = 60

# What must never reach a terminal: C0 controls but tab and newline, DEL, C1, bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\x00")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def hostile_answer(i: int) -> str:
    pieces = [OSC52, ERASE, C1_CSI, BIDI, MARKUP, HTML, MARKDOWN, *FORMULAS]
    lead = FORMULAS[i % len(FORMULAS)]
    return f"{lead} answer {i} " + pieces[i % len(pieces)] + "\r\nsecond line\rthird"


def write_hostile(folder):
    """The hostile CSV (N rows) and matching embeddings; returns (csv path, npy path)."""
    vectors, scores = clustered_embeddings(N, 3, noise=1.2, seed=11)
    path = folder / ("hostile" + ERASE[:4] + ".csv")
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([ID_COLUMN, "answer", "score", SECOND_COLUMN, EXTRA_COLUMN])
        for i in range(N):
            second = LABELS[(scores[i] + (i % 7 == 0)) % 3]
            hostile_id = [OSC52, "=id", BIDI, MARKUP, HTML][i % 5] + f" {i}"
            writer.writerow(
                [hostile_id, hostile_answer(i), LABELS[scores[i]], second, MARKDOWN + str(i)]
            )
    embeddings = folder / "hostile.npy"
    np.save(embeddings, vectors)
    return path, embeddings


def unsafe_characters(text: str) -> list[str]:
    return sorted({repr(c) for c in UNSAFE.findall(text)})


def check_csv_inert(path) -> list[list[str]]:
    """Every field of the file is quoted, every row has the header's width, and no cell would
    start a formula (plain decimal numbers excepted); returns the parsed rows."""
    text = path.read_text(encoding="utf-8")
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    width = len(rows[0])
    for row in rows:
        assert len(row) == width, (path.name, row)
        for cell in row:
            assert not UNSAFE.search(cell), (path.name, cell)
            if cell.startswith("'"):
                continue  # a leading apostrophe: a spreadsheet shows the rest as text
            bare = cell.lstrip(' \t\r\n"')
            if cell.startswith(FORMULA_START) or bare.startswith(FORMULA_START):
                assert NUMBER.fullmatch(cell), (path.name, cell)
    # QUOTE_ALL: writing the parsed rows again with every field quoted gives the same bytes.
    again = io.StringIO()
    csv.writer(again, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    assert again.getvalue() == text, path.name
    return rows
