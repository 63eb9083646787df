"""Reading a workbook against the same data as CSV: N rows (default 100,000) of id, an answer of
about 140 characters, two scores, a rater and a date and time, written once as CSV and as .xlsx
(openpyxl: numbers as numbers, the date as a date; its strings inline, where Excel shares them,
which calamine parses about a tenth faster: measured once with XlsxWriter), then read
the way `parm audit` reads each (engine.input.workbook.read_file: the CSV/TSV reader, or
python-calamine and engine.input.sheet_table). Alongside, for reference: pandas' read_excel with
the calamine engine (no header finding, no sheet guess, numbers as floats), and openpyxl's
read-only mode on a tenth of the rows (the pure-Python reader parm does not use).

    python tests/benchmarks/bench_workbook.py
    python tests/benchmarks/bench_workbook.py --rows 20000 --repeat 5

Prints best and median seconds of `--repeat` reads each, and the ratio workbook / CSV (the goal:
at most 3).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from machine import machine_line, repeated

from engine.input.workbook import read_file

WORDS = ("roots", "water", "light", "soil", "leaves", "sun", "grow", "plants", "need", "air",
         "because", "the", "and", "they", "make", "food", "from", "carbon", "dioxide", "warm")  # fmt: skip


def data(rows: int, seed: int = 0) -> tuple[list[str], list[list]]:
    rng = np.random.default_rng(seed)
    words = rng.integers(0, len(WORDS), size=(rows, 24))
    start = dt.datetime(2026, 3, 1, 9, 0)
    body = [
        [f"S{i:06d}", " ".join(WORDS[w] for w in words[i]), int(i % 4), int((i + (i % 7 == 0)) % 4),
         f"r{i % 12}", start + dt.timedelta(minutes=int(i))]
        for i in range(rows)
    ]  # fmt: skip
    return ["id", "answer", "score", "score2", "rater", "marked_at"], body


def write_both(folder: Path, rows: int) -> tuple[Path, Path]:
    from openpyxl import Workbook

    header, body = data(rows)
    with open(folder / "answers.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows([*row[:5], row[5].isoformat(sep=" ")] for row in body)
    book = Workbook(write_only=True)
    sheet = book.create_sheet("Scores")
    sheet.append(header)
    for row in body:
        sheet.append(row)
    book.save(folder / "answers.xlsx")
    return folder / "answers.csv", folder / "answers.xlsx"


def openpyxl_read_only(path: Path) -> list:
    from openpyxl import load_workbook

    book = load_workbook(path, read_only=True, data_only=True)
    rows = [list(row) for row in book["Scores"].iter_rows(values_only=True)]
    book.close()
    return rows


def write_results(folder: Path, rows: int) -> float:
    """Seconds to write a predictions sheet of `rows` rows as results.xlsx does
    (engine.outputs.workbook.write_sheet: typed cells, inert text, widths, shading)."""
    from openpyxl import Workbook

    from engine.outputs.columns import COUNT, FIGURE, FLAG, LABEL, TEXT
    from engine.outputs.workbook import write_sheet
    from engine.outputs.workbook_shading import shades

    header, body = data(rows)
    names = ["row", "id", "text", "score", "predicted", "p_0", "p_1", "severity", "flagged"]
    kinds = [COUNT, TEXT, TEXT, LABEL, LABEL, FIGURE, FIGURE, FIGURE, FLAG]
    table = [[i + 1, r[0], r[1], str(r[2]), str(r[3]), "0.250000", "0.750000", f"{i / rows:.6f}",
              r[2] != r[3]] for i, r in enumerate(body)]  # fmt: skip
    started = time.perf_counter()
    book = Workbook(write_only=True)
    sheet = book.create_sheet("predictions")
    write_sheet(sheet, names, table, kinds, shades("predictions.csv", names, rows))
    book.save(folder / "results.xlsx")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(machine_line())
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small"
        small.mkdir()
        started = time.perf_counter()
        csv_path, xlsx_path = write_both(Path(folder), args.rows)
        _, small_xlsx = write_both(small, args.rows // 10)
        print(f"{args.rows:,} rows written in {time.perf_counter() - started:.1f} s: "
              f"CSV {csv_path.stat().st_size / 1e6:.1f} MB, "
              f"xlsx {xlsx_path.stat().st_size / 1e6:.1f} MB")  # fmt: skip
        csv_frame, book_frame = read_file(csv_path), read_file(xlsx_path)
        pd.testing.assert_frame_equal(csv_frame, book_frame, check_dtype=False)
        print("the workbook reads as the CSV: every cell equal")
        results = {
            "CSV (parm: read_file)": repeated(lambda: read_file(csv_path), args.repeat),
            "xlsx (parm: read_file)": repeated(lambda: read_file(xlsx_path), args.repeat),
            "xlsx (pandas read_excel, calamine)": repeated(
                lambda: pd.read_excel(xlsx_path, engine="calamine"), args.repeat
            ),
            f"xlsx {args.rows // 10:,} rows (openpyxl read-only)": repeated(
                lambda: openpyxl_read_only(small_xlsx), args.repeat
            ),
        }
    for name, times in results.items():
        print(f"{name:45s} best {min(times):6.2f} s  median {statistics.median(times):6.2f} s")
    ratio = min(results["xlsx (parm: read_file)"]) / min(results["CSV (parm: read_file)"])
    print(f"workbook / CSV (best): {ratio:.2f}x (goal: at most 3x)")
    with tempfile.TemporaryDirectory() as folder:
        seconds = write_results(Path(folder), args.rows)
    print(f"writing a {args.rows:,}-row predictions sheet as results.xlsx does: {seconds:.1f} s")


if __name__ == "__main__":
    main()
