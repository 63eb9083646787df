"""A hostile input file, written by the tests that use it (never shipped): terminal escape
sequences (OSC 52 clipboard writes, screen erase, C1 CSI), bidi overrides, Markdown and HTML
(`|`, backticks, `#`, `<img onerror>`), Rich/Textual markup (`[/]`, `[bold]`) and spreadsheet
formulas (at the start, after blanks, after a quote, after a newline) in answers, ids, score
labels and column names; plus checks that text or a CSV is inert."""

from __future__ import annotations

import csv
import io
import re
from html.parser import HTMLParser

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


# What report.html may contain: the template's elements and the plots' SVG elements.
HTML_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "div",
    "nav", "a", "section", "p", "strong", "ul", "ol", "li", "span", "table", "thead", "tbody", "tr",
    "th", "td", "figure", "figcaption", "code",
    "svg", "g", "path", "defs", "clippath", "use", "text", "tspan", "rect", "circle", "ellipse",
    "line", "polyline", "polygon", "desc", "lineargradient", "radialgradient", "stop",
}  # fmt: skip
SVG_NAMESPACE, XLINK_NAMESPACE = "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"
# Fragments of the hostile data that must never reach a tag or an attribute.
HOSTILE_FRAGMENTS = ("onerror", "alert(", "javascript:", "http://", "https://", "[bold]", "cmd|",
                     "HYPERLINK", "\ufffd]52")  # fmt: skip


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, attrs))

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        self.text.append(data)


def check_html_inert(text: str) -> str:
    """report.html parsed: only the template's and the plots' elements, no event handler, no
    reference outside the page (href only to #anchors, url() only to #ids, no src), no data in
    any tag or attribute, the Content-Security-Policy that forbids script and every load.
    Returns the page's text (what a reader sees, entities decoded)."""
    assert not UNSAFE.search(text), unsafe_characters(text)
    parser = _Elements()
    parser.feed(text)
    parser.close()
    policy = None
    for tag, attrs in parser.elements:
        assert tag in HTML_TAGS, tag
        for name, value in attrs:
            value = value or ""
            if name.startswith("xmlns"):  # the SVG's own namespaces, nothing to load
                assert value in (SVG_NAMESPACE, XLINK_NAMESPACE), value
                continue
            assert not name.startswith("on") and name not in ("src", "srcset", "action"), name
            if name in ("href", "xlink:href"):
                assert value.startswith("#"), value
            assert "url(" not in value or re.fullmatch(r"url\(#[\w.-]+\)", value), value
            assert "javascript" not in value.lower(), value
            assert not any(f in value for f in HOSTILE_FRAGMENTS), (tag, name, value)
            if tag == "meta" and name == "http-equiv":
                policy = dict(attrs)["content"]
    assert policy is not None and "default-src 'none'" in policy and "script-src" not in policy
    return "".join(parser.text)
