"""The file's reads against what parm wrote of them: the consensus respects the reads, every
rater has their row, raters are named as the file names them, and two shapes of the same reads
(long, wide) give the same raters, agreement and consensus."""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from invariants.figures import CSV_TOLERANCE, Breach, number, read_csv
from invariants.text import NUMBERED_RATER, html_parts, markdown_parts


# -- the file's reads: consensus and raters --------------------------------------------------------
@dataclass(frozen=True)
class FileReads:
    """The reads a file gives: (item, id) -> [(rater, score as written)], blank reads left out;
    `ordered`: whether the scores are ordered (numbers)."""

    answers: dict[tuple[str, str], list[tuple[str, str]]]
    ordered: bool

    @property
    def raters(self) -> Counter:
        return Counter(rater for reads in self.answers.values() for rater, _ in reads)


def wide_reads(frame, id_column: str, item_column, score_columns, rater_columns=None) -> FileReads:
    """A wide file's reads: each score column a read, given by the rater its rater column names
    (default: the score column itself)."""
    answers: dict = {}
    for _, row in frame.iterrows():
        key = (str(row[item_column]) if item_column else "", str(row[id_column]))
        reads = answers.setdefault(key, [])
        for k, column in enumerate(score_columns):
            score = str(row[column]).strip()
            if score and score.lower() != "nan":
                rater = str(row[rater_columns[k]]) if rater_columns else column
                reads.append((rater, score))
    return _file_reads(answers)


def long_reads(frame, id_column: str, item_column, rater_column: str, score_column: str):
    answers: dict = {}
    for _, row in frame.iterrows():
        key = (str(row[item_column]) if item_column else "", str(row[id_column]))
        score = str(row[score_column]).strip()
        if score and score.lower() != "nan":
            answers.setdefault(key, []).append((str(row[rater_column]), score))
    return _file_reads(answers)


def _file_reads(answers: dict) -> FileReads:
    scores = {score for reads in answers.values() for _, score in reads}
    return FileReads(answers, all(number(s) is not None for s in scores))


def _same_score(a: str, b: str) -> bool:
    x, y = number(a), number(b)
    return a.strip() == b.strip() if x is None or y is None else abs(x - y) < 1e-9


def consensus_breaches(folder: Path, reads: FileReads) -> list[Breach]:
    """consensus.csv against the file's reads: every answer read twice or more has its row,
    listing the file's reads; the consensus is the reads' score where they all agree, else
    within their range (one of them for unordered labels); its probability in [0, 1]."""
    several = {key: r for key, r in reads.answers.items() if len(r) >= 2}
    path = folder / "consensus.csv"
    if not path.exists():
        return [Breach("consensus", "consensus.csv", f"missing; {len(several)} answers read twice")] if several else []  # fmt: skip
    found, seen = [], set()
    for k, row in enumerate(read_csv(path), start=2):
        key = (row.get("item") or "", row["id"])
        if key not in reads.answers and ("", row["id"]) in reads.answers:
            key = ("", row["id"])
        where = f"consensus.csv line {k} (item {key[0]!r}, id {key[1]!r})"
        if key not in reads.answers:
            found.append(Breach("consensus", where, "an answer the file does not have"))
            continue
        seen.add(key)
        found += _one_consensus(row, reads.answers[key], reads.ordered, where)
    lost = sorted(set(several) - seen)
    if lost:
        found.append(Breach("consensus reads kept", "consensus.csv",
                            f"{len(lost)} answers read twice or more have no row: {lost[:5]}"))  # fmt: skip
    return found


def _one_consensus(row: dict, given: list[tuple[str, str]], ordered: bool, where: str):
    found = []
    listed = [v for c, v in row.items() if c.startswith("score_") and (v or "").strip()]
    scores = [score for _, score in given]
    if sorted(map(_key, listed)) != sorted(map(_key, scores)) or _int(row.get("reads")) != len(scores):  # fmt: skip
        found.append(Breach("consensus reads kept", where,
                            f"file reads {scores}, consensus.csv lists {listed} (reads={row.get('reads')})"))  # fmt: skip
    consensus, p = (row.get("consensus") or "").strip(), number(row.get("consensus_p") or "")
    if p is not None and not 0 <= p <= 1:
        found.append(Breach("in range", where, f"consensus_p {p}"))
    if not consensus:
        return found
    if all(_same_score(s, scores[0]) for s in scores):
        if not _same_score(consensus, scores[0]):
            found.append(Breach("consensus = agreeing reads", where,
                                f"reads {scores}, consensus {consensus} (p {row.get('consensus_p')})"))  # fmt: skip
        return found
    if ordered and number(consensus) is not None:
        values = [number(s) for s in scores]
        inside = min(values) - 1e-9 <= number(consensus) <= max(values) + 1e-9
    else:
        inside = any(_same_score(consensus, s) for s in scores)
    if not inside:
        found.append(Breach("consensus within the reads", where,
                            f"reads {scores}, consensus {consensus} (p {row.get('consensus_p')})"))  # fmt: skip
    return found


def _key(score: str):
    value = number(score)
    return (0, value, "") if value is not None else (1, 0.0, score.strip())


def _int(cell) -> int | None:
    value = number(cell or "")
    return None if value is None else int(value)


def rater_breaches(folder: Path, reads: FileReads) -> list[Breach]:
    """Every rater of the file in raters.csv, with a verdict and the file's count of their
    reads; no other rater there."""
    expected = reads.raters
    path = folder / "raters.csv"
    if len(expected) < 2:
        return []
    if not path.exists():
        return [Breach("every rater in raters.csv", "raters.csv",
                       f"missing; the file has {len(expected)} raters: {dict(expected)}")]  # fmt: skip
    rows = {row["rater"]: row for row in read_csv(path)}
    found = []
    for rater, count in sorted(expected.items()):
        row = rows.get(rater)
        if row is None:
            found.append(Breach("every rater in raters.csv", "raters.csv",
                                f"{rater!r} ({count} reads) missing; rows: {sorted(rows)}"))  # fmt: skip
            continue
        if not (row.get("verdict") or "").strip():
            found.append(Breach("every rater in raters.csv", f"raters.csv {rater!r}", "no verdict"))
        found += _leniency_breaches(row, rater)
        if _int(row.get("n")) != count:
            found.append(Breach("every rater in raters.csv", f"raters.csv {rater!r}",
                                f"n {row.get('n')}, the file gives {count} reads"))  # fmt: skip
    extra = sorted(set(rows) - set(expected))
    if extra:
        found.append(Breach("raters named as the file names them", "raters.csv", f"rows {extra}"))
    return found


def bias_breaches(folder: Path, reads: FileReads) -> list[Breach]:
    """rater_item_bias.csv: each cell's observed and expected averages within its item's
    scores in the file (a cell's expectation is a score on the item's scale)."""
    path = folder / "rater_item_bias.csv"
    if not path.exists() or not reads.ordered:
        return []
    scores: dict[str, list[float]] = {}
    for (item, _), given in reads.answers.items():
        scores.setdefault(item, []).extend(float(score) for _, score in given)
    found = []
    for row in read_csv(path):
        given = scores.get(row["item"])
        if not given:
            continue
        low, high = min(given), max(given)
        for column in ("observed", "expected"):
            value = number(row[column])
            if value is None or not low - CSV_TOLERANCE <= value <= high + CSV_TOLERANCE:
                found.append(Breach("a bias cell's averages on its item's scale",
                                    f"rater_item_bias.csv {row['rater']!r} x {row['item']!r}",
                                    f"{column} {row[column]}, the item's scores {low:g}-{high:g}"))  # fmt: skip
    return found


# The documented lenient / harsh rule (docs/explanation/raters.md), written out here.
LENIENCY_Z, LENIENCY_SIZE = 3.0, 0.15


def _leniency_breaches(row: dict, rater: str) -> list[Breach]:
    words = {w.strip() for w in (row.get("verdict") or "").split(",")}
    found = []
    for name, sign in (("lenient", 1), ("harsh", -1)):
        if name not in words:
            continue
        z, size = number(row.get("leniency_z") or ""), number(row.get("leniency_size") or "")
        if z is None or sign * z < LENIENCY_Z or size is None or sign * size < LENIENCY_SIZE:
            found.append(Breach("a lenient or harsh verdict has its size and significance",
                                f"raters.csv {rater!r}",
                                f"{name} with leniency_z {row.get('leniency_z')}, "
                                f"leniency_size {row.get('leniency_size')}"))  # fmt: skip
    return found


def naming_breaches(folder: Path, reads: FileReads) -> list[Breach]:
    """Raters named as the file names them in every output: agreement.csv, consensus.csv's
    read columns, raters.csv, report.json; never "read 1" or "rater 1" in the reports."""
    expected = set(reads.raters)
    if len(expected) < 2:
        return []
    used: dict[str, set] = {}
    agreement = folder / "agreement.csv"
    if agreement.exists():
        rows = read_csv(agreement)
        used["agreement.csv"] = {r[c] for r in rows for c in ("rater_a", "rater_b")} - {"", "all"}
    consensus = folder / "consensus.csv"
    if consensus.exists():
        header = next(csv.reader(consensus.open(encoding="utf-8")))
        used["consensus.csv"] = {c[len("score_") :] for c in header if c.startswith("score_")}
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    agreed = report.get("agreement") or {}
    used["report.json agreement"] = set(agreed.get("raters") or ()) | {
        r["rater"] for r in agreed.get("reliability") or ()}  # fmt: skip
    found = [
        Breach(
            "raters named as the file names them",
            where,
            f"{sorted(names - expected)}; the file's: {sorted(expected)}",
        )  # fmt: skip
        for where, names in used.items()
        if names - expected
    ]
    for name in ("report.md", "report.html"):
        text = (folder / name).read_text(encoding="utf-8")
        prose, tables = html_parts(text, name) if name.endswith("html") else markdown_parts(text)
        # Headers, row labels and rater columns (the other cells may quote answers).
        cells = [c for t in tables for c in t.header] + [
            x
            for t in tables
            for r in t.rows
            for h, x in zip(t.header, r)
            if h == t.header[0] or h.strip().lower() == "rater"
        ]
        numbered = sorted({m.group(0) for line in prose + cells for m in NUMBERED_RATER.finditer(line)})  # fmt: skip
        if numbered:
            found.append(Breach("raters named as the file names them", name, f"says {numbered}"))
    return found


# -- two shapes of the same reads ------------------------------------------------------------------
def shape_breaches(one: Path, other: Path) -> list[Breach]:
    """Two output sets of the same reads in two shapes (long, wide): the same raters (names and
    reads), agreement (every pair's figures) and consensus (every answer's score and p)."""
    found = []
    for name, key in (
        ("raters.csv", lambda r: r["rater"]),
        ("agreement.csv", lambda r: (r["item"], frozenset((r["rater_a"], r["rater_b"])))),
        ("consensus.csv", lambda r: (r.get("item", ""), r["id"])),
    ):
        a, b = one / name, other / name
        if not a.exists() or not b.exists():
            if a.exists() or b.exists():
                found.append(Breach("same in both shapes", name,
                                    f"written for {(a if a.exists() else b).parent.name} only"))  # fmt: skip
            continue
        rows_a = {key(r): r for r in read_csv(a)}
        rows_b = {key(r): r for r in read_csv(b)}
        if rows_a.keys() != rows_b.keys():
            only = sorted(map(str, rows_a.keys() ^ rows_b.keys()))
            found.append(Breach("same in both shapes", name, f"rows in one shape only: {only[:6]}"))
        for k in rows_a.keys() & rows_b.keys():
            found += _same_row(rows_a[k], rows_b[k], f"{name} {k}")
    return found


def _same_row(a: dict, b: dict, where: str) -> list[Breach]:
    for column in a.keys() & b.keys():
        if column in ("run_id", "rater_a", "rater_b"):
            continue
        x, y = (a[column] or "").strip(), (b[column] or "").strip()
        nx, ny = number(x), number(y)
        same = abs(nx - ny) <= CSV_TOLERANCE if nx is not None and ny is not None else x == y
        if not same:
            return [Breach("same in both shapes", where, f"{column}: {x!r} != {y!r}")]
    return []


def reads_of(frame, config: dict) -> FileReads:
    """The reads of the columns a run says it read (report.json's settings: its shape, score
    and rater columns), taken from the file itself."""
    ids, item = config["id_column"], config.get("item_column")
    if config.get("reads") == "long":
        return long_reads(frame, ids, item, config["rater_column"], config["score_column"])
    scores = config.get("score_columns") or [
        c for c in (config["score_column"], config.get("second_score_column")) if c
    ]
    raters = config.get("rater_columns")
    if raters is None and config.get("rater_column") and len(scores) <= 2:
        raters = [c for c in (config["rater_column"], config.get("second_rater_column")) if c]
        raters = raters if len(raters) == len(scores) else None
    return wide_reads(frame, ids, item, scores, raters)
