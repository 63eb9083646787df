"""Figures and sentences in report.md, report.html, warnings.txt and what the command printed:
each report split into prose and tables, figures checked in the range their label, column or
row gives them, and every sentence that compares figures checked against them."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from invariants.figures import Breach, figure_range, interval_breaches, out_of_range


# -- report.md, report.html and what the command printed -------------------------------------------
@dataclass
class Table:
    where: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)


def markdown_parts(text: str, name: str = "report.md") -> tuple[list[str], list[Table]]:
    """A Markdown report's prose (one string per line) and its pipe tables."""
    prose, tables = [], []
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("|") and k + 1 < len(lines) and re.match(r"\|[-| :]+\|$", lines[k + 1]):
            table = Table(f"{name} line {k + 1}", _pipe_cells(line))
            k += 2
            while k < len(lines) and lines[k].startswith("|"):
                table.rows.append(_pipe_cells(lines[k]))
                k += 1
            tables.append(table)
            continue
        prose.append(line)
        k += 1
    return prose, tables


def _pipe_cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


class _HtmlParts(HTMLParser):
    """report.html's visible text: prose blocks and tables (scripts, styles and plots left out)."""

    BLOCKS = {"p", "li", "h1", "h2", "h3", "h4", "div", "section", "figcaption", "caption", "br"}

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name, self.prose, self.tables = name, [""], []
        self.hidden, self.row, self.cell = 0, None, None

    def handle_starttag(self, tag, attrs) -> None:
        if tag in ("script", "style", "svg", "title"):
            self.hidden += 1
        elif tag == "table":
            self.tables.append(Table(f"{self.name} table {len(self.tables) + 1}", []))
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []
        elif tag in self.BLOCKS and self.cell is None:
            self.prose.append("")

    def handle_endtag(self, tag) -> None:
        if tag in ("script", "style", "svg", "title"):
            self.hidden -= 1
        elif tag in ("td", "th") and self.cell is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None and self.tables:
            table = self.tables[-1]
            if not table.header:
                table.header = self.row
            else:
                table.rows.append(self.row)
            self.row = None

    def handle_data(self, data) -> None:
        if self.hidden:
            return
        if self.cell is not None:
            self.cell.append(data)
        elif self.row is None:
            self.prose[-1] += data


def html_parts(text: str, name: str = "report.html") -> tuple[list[str], list[Table]]:
    parser = _HtmlParts(name)
    parser.feed(text)
    prose = [" ".join(block.split()) for block in parser.prose]
    return [p for p in prose if p], parser.tables


FIG = r"(?<![\w.])(-?\d+\.\d+|-?nan|-?inf(?:inity)?)(?![\w.])"
# A figure named just before it: what range it has.
LABELS = (
    r"(?i)\b(kappa|QWK|alpha|PRMSE|in-sample|exact agreement|accuracy|reliability|near agreement)\b"
)
LABELLED = re.compile(LABELS + r"[^\d\n.;,]{0,60}?" + FIG + r"(%?)")
# The label of the figure an interval follows ("PRMSE 0.304 (-1.6e16 to 1.000)").
LABEL_BEFORE = re.compile(LABELS + r"[^\d\n.;,]{0,60}?$")
INTERVAL = re.compile(FIG + r"(%?) \(" + FIG + r"%? to " + FIG + r"%?\)")
COMPARED = re.compile(r"(?<![\w.])(-?\d+\.\d+) ?(<=|>=|<|>|≤|≥) ?(-?\d+\.\d+)(?![\w.])")
LIMIT = re.compile(
    r"(\d+\.\d+) (above|below) [^()]{0,60}\((within|more than|beyond|over|above|below) "
    r"[^()]{0,40}?limit of (\d+\.\d+)\)"
)
LEAD = re.compile(
    r"\b(kappa|QWK) (-?\d+\.\d+) cross-fitted \(in-sample (-?\d+\.\d+)( ⚠ (-?\d+\.\d+) above)?"
)
AGREE_BELOW = re.compile(r"below (\d+\.\d+) \((?:QWK|kappa) (-?\d+\.\d+)\)")
N_OF_M = re.compile(r"(?<![\w.,])(\d[\d,]*) of (\d[\d,]*)(?![\w.,]*\d)")
PERCENT = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)%")
NUMBERED_RATER = re.compile(r"(?i)\b(read|rater) \d+\b")
# Python's None where a name or a figure belongs: "Second rater (None)", "column = None".
PYTHON_NONE = re.compile(r"\(None\)|[=:] None\b")


def _value(token: str, percent: str = "") -> float:
    value = float(token)  # float() reads nan and inf as well
    return value / 100 if percent else value


def _decimals(token: str) -> int:
    return len(token.partition(".")[2]) if "." in token else 0


def prose_breaches(lines: list[str], where: str, gap: float) -> list[Breach]:
    """Every check on sentences: figures in range and finite, intervals around their estimates,
    comparisons that hold, differences stated as the figures give them."""
    found = []
    for k, line in enumerate(lines):
        at = f"{where} [{k}] {line[:90]!r}"
        found += _figures_in_line(line, at)
        found += _sentences_in_line(line, at, gap)
    return found


def _figures_in_line(line: str, at: str) -> list[Breach]:
    found = []
    for match in LABELLED.finditer(line):
        label, token, percent = match.groups()
        found += _token_breaches(token, percent, figure_range(label, csv_file=False), at, label)
    for match in INTERVAL.finditer(line):
        estimate, percent, low, high = match.groups()
        values = [_value(t, percent) for t in (estimate, low, high)]
        label = LABEL_BEFORE.search(line[: match.start()])
        bounds = figure_range(label.group(1), csv_file=False) if label else None
        for token in (estimate, low, high):
            found += _token_breaches(
                token, percent, bounds, at, label.group(1) if label else "interval"
            )
        tolerance = 0.5 * 10 ** -min(map(_decimals, (estimate, low, high))) + 1e-9
        if all(math.isfinite(v) for v in values):
            found += interval_breaches(f"{at} {match.group(0)!r}", *values, tolerance)
    for match in PERCENT.finditer(line):
        if not 0 <= float(match.group(1)) <= 100:
            found.append(Breach("in range", at, f"{match.group(0)} not in [0%, 100%]"))
    return found


def _token_breaches(token: str, percent: str, bounds, at: str, label: str) -> list[Breach]:
    value = _value(token, percent)
    if not math.isfinite(value):
        return [Breach("finite", at, f"{label} {token}")]
    if bounds is not None and out_of_range(value, bounds, 0.5 * 10 ** -_decimals(token)):
        return [Breach("in range", at, f"{label} {token} not in {bounds}")]
    return []


def _sentences_in_line(line: str, at: str, gap: float) -> list[Breach]:
    found = []
    for a, sign, b in COMPARED.findall(line):
        x, y = float(a), float(b)
        holds = {"<": x < y, ">": x > y, "<=": x <= y, "≤": x <= y, ">=": x >= y, "≥": x >= y}
        if not holds[sign]:
            found.append(Breach("comparison holds", at, f"{a} {sign} {b} is false"))
    for difference, _, verdict, limit in LIMIT.findall(line):
        within = float(difference) <= float(limit)
        if within != (verdict == "within"):
            found.append(Breach("difference and its limit", at,
                                f"{difference} stated {verdict} the limit {limit}"))  # fmt: skip
    for label, crossed, inside, marked, stated in LEAD.findall(line):
        difference = float(inside) - float(crossed)
        if marked and abs(difference - float(stated)) > 0.0051 + 0.001:
            found.append(Breach("stated gap is the figures' difference", at,
                                f"{label}: {inside} - {crossed} = {difference:.3f}, stated {stated}"))  # fmt: skip
        if not marked and difference > gap + 0.001:
            found.append(Breach("memorised figure marked", at,
                                f"{label}: in-sample {inside} is {difference:.3f} above {crossed}"))  # fmt: skip
    for limit, figure in AGREE_BELOW.findall(line):
        if not float(figure) < float(limit):
            found.append(Breach("comparison holds", at, f"{figure} said below {limit}"))
    for shown in PYTHON_NONE.findall(line):
        found.append(Breach("no Python None in a sentence", at, repr(shown)))
    for part, whole in N_OF_M.findall(line):
        if int(part.replace(",", "")) > int(whole.replace(",", "")):
            found.append(Breach("part within its whole", at, f"{part} of {whole}"))
    return found


# "I0: two raters agree with QWK 0.556 on ...; the model's QWK against rater 1 is 0.892, 0.336
# above the raters' (...)": the model's figure set against the raters' agreement.
AGAINST = re.compile(
    r"(?im)^(?:(?P<item>[^:;]+?): )?two raters agree with (?P<metric>QWK|kappa) "
    r"(?P<raters>-?\d+\.\d+)[^;]*; the model's (?:QWK|kappa) against [^,]{1,80}? is "
    r"(?P<model>-?\d+\.\d+), (?P<gap>\d+\.\d+) (?P<side>above|below)"
)


def comparison_breaches(lines: list[str], where: str, report: dict) -> list[Breach]:
    """A sentence setting the model's figure against the raters' agreement states their
    difference, and compares the item's cross-fitted figure where there is one (issue 43: the
    figure shown first and compared is the cross-fitted one)."""
    items = {str(item.get("item")): item for item in report.get("items") or ()}
    found = []
    for k, line in enumerate(lines):
        at = f"{where} [{k}] {line[:90]!r}"
        for match in AGAINST.finditer(line):
            model, raters = float(match["model"]), float(match["raters"])
            side = "above" if model > raters else "below"
            if abs(abs(model - raters) - float(match["gap"])) > 0.0011 or (
                model != raters and side != match["side"]
            ):
                found.append(Breach("stated gap is the figures' difference", at,
                                    f"model {model}, raters {raters}: stated {match['gap']} {match['side']}"))  # fmt: skip
            item = items.get((match["item"] or "").strip()) or (
                next(iter(items.values())) if len(items) == 1 else None
            )
            crossed = ((item or {}).get("uncertainty") or {}).get("cross_fit") or {}
            figure = (crossed.get("metrics") or {}).get(match["metric"].lower())
            if figure is not None and abs(figure - model) > 0.0006:
                found.append(Breach("the cross-fitted figure is compared", at,
                                    f"the model's {match['metric']} {model} is not the cross-fitted {figure:.3f}"))  # fmt: skip
    return found


LEAST = re.compile(
    r"Items whose raters agree least \((?P<metric>QWK|kappa)(?P<named> of the "
    r"least-agreeing pair)? under [^)]*\): (?P<listed>[^.]*(?:\.\d+[^.]*)*)\."
)
LEAST_ITEM = re.compile(
    r"(?P<item>[^,(]+?) \((?:(?P<a>[^(),]+) and (?P<b>[^(),]+), )?"
    r"(?P<value>-?\d+\.\d+)\)"
)


def least_pair_breaches(lines: list[str], where: str, report: dict) -> list[Breach]:
    """The attention line's "items whose raters agree least" gives each item its least-agreeing
    pair's figure, and with more than two raters names that pair (Powergrading's item 3 read
    0.511 there beside G1 and G2's 0.700 in the item's table, unnamed)."""
    agreement = report.get("agreement") or {}
    several = len(agreement.get("raters") or ()) > 2
    found = []
    for k, line in enumerate(lines):
        at = f"{where} [{k}] {line[:90]!r}"
        for match in LEAST.finditer(line):
            metric = match["metric"].lower()
            if several != bool(match["named"]):
                found.append(Breach("the least-agreeing pair named", at, f"{several=}"))
            for entry in LEAST_ITEM.finditer(match["listed"]):
                item = entry["item"].removeprefix("and ").strip()
                pairs = [p for p in agreement.get("pairs") or () if str(p["item"]) == item
                         and not p["too_few"]]  # fmt: skip
                figures = {(p["rater_a"], p["rater_b"]): p["figures"][metric]["estimate"]
                           for p in pairs}  # fmt: skip
                value, pair = float(entry["value"]), (entry["a"], entry["b"])
                lowest = min(figures.values(), default=None)
                if lowest is None or abs(lowest - value) > 0.0006:
                    found.append(Breach("the least-agreeing pair named", at,
                                        f"item {item}: {value} is not its lowest pair's {lowest}"))  # fmt: skip
                elif match["named"] and (
                    pair not in figures or abs(figures[pair] - value) > 0.0006
                ):
                    found.append(Breach("the least-agreeing pair named", at,
                                        f"item {item}: {pair} is not the pair at {value}"))  # fmt: skip
    return found


# Table columns that quote the file (answers, ids, items, raters, notes): not figures.
QUOTED = {"text", "answer", "evidence", "nearest_answer", "id", "row", "item", "rater", "note",
          "warning", "scores", "human", "model", "file", "neighbours", "question", "reference"}  # fmt: skip


# Columns whose rows are different figures, each named by its row's first cell.
ROW_LABELLED = {
    "in-sample",
    "cross-fitted",
    "95% interval",
    "95% interval (in-sample)",
    "value",
    "estimate",
}


def table_breaches(table: Table) -> list[Breach]:
    """Each figure of a report's table in the range its column (or its row's label) gives it,
    finite and inside its interval; the cells quoting the file are left alone."""
    found = []
    for k, row in enumerate(table.rows):
        label = row[0] if row else ""
        for column, cell in zip(table.header, row):
            name = column.strip().lower()
            if name in QUOTED:
                continue
            at = f"{table.where} row {k + 1} {column!r}"
            parts = re.search(r"\(([\w ]+), ([\w ]+)\)$", column)
            pieces = cell.split(", ") if parts else [cell]
            names = parts.groups() if parts and len(pieces) == 2 else [column] * len(pieces)
            for piece, named in zip(pieces, names):
                # A column of several figures ("In-sample") takes its range from the row's label.
                own = None if name in ROW_LABELLED else figure_range(named, csv_file=False)
                found += _cell_breaches(piece, own or figure_range(label, False), at)
    return found


def _cell_breaches(cell: str, bounds, at: str) -> list[Breach]:
    if cell.strip().startswith("not estimable"):  # its reason may quote a variance, not a figure
        return []
    found = []
    for token, percent in re.findall(FIG + "(%?)", cell):
        found += _token_breaches(token, percent, bounds, at, repr(cell))
    found += _figures_in_line(cell, at) if " to " in cell else []
    return found
