"""A live session measured: cost of adding a day against monitoring the whole session at once,
peak memory, and whether the planted drifting rater and falling item are alerted on the right
day while neutral raters and steady items are not (held out across datasets).

Each dataset of the shared data (PARM_DATA_ROOT, else ../shared/data) gives a simulated session:
its real answers (drawn with replacement and given new ids, so any number of answers can be
made), its items, `--days` days of `--answers` answers in all, each read twice by two of
`--raters` raters (long form, with times of day), and each rater reads validity papers (20 per
item, the lead's score the data's) at 2% of their reads. The data's first human score is an
answer's true score; a rater of accuracy a (drawn in 0.90-0.97) reads it, else a neighbouring
score (any other label on a nominal scale). Planted: one rater drifts from day `--drift-day`
(one point up on 40% of their reads below the top), one item falls from day `--fall-day` (every
rater's accuracy on it drops by 0.3; on a nominal scale the drifting rater gives another label
on 40% of their reads). At most 20 items per dataset, the largest. The monitor computes from the reads alone, so no answer is
embedded (no vectors are needed, random or real).

Alerts: the session's whole history judged once (each day on what was known by its end, as the
day's own run judges it). A unit's false-alarm rate: of its days, the share with an alert of its
kind (items: item_*; raters: rater_agreement, rater_drift, rater_validity, rater_item), on the days before
anything is planted (4 to the drift day; the first three have no history) and on every day
(after the drift, the drifting rater lowers the agreement of the items and co-raters they read). The rules' free choices (monitor_alert_p, monitor_drift_points) are chosen on
`--choose` datasets (the most lenient whose false-alarm rate keeps to 1 in 20 while both planted
units are alerted on their day) and reported on the others, held out.

Cost: two `parm monitor` processes, timed with /usr/bin/time (wall, CPU, peak memory) on the
first `--cost` dataset: the whole session as one file into a new session, and day 20 added to a
session that holds days 1-19 (added and judged in one run before); and the same two in this
process (no interpreter start). Run: python tests/benchmarks/bench_monitor.py --answers 20000
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from machine import machine_line, options, timed
from rater_sim import DATA, SOURCES

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from engine import workspace  # noqa: E402
from engine.input.settings.config import load_defaults  # noqa: E402
from engine.live.alerts.figures import double_reads, session_cells  # noqa: E402
from engine.live.intake.reading import read_file_reads  # noqa: E402
from engine.live.intake.session_reads import load_reads  # noqa: E402
from engine.live.intake.store import open_store  # noqa: E402
from engine.live.monitor import judge  # noqa: E402

DATASETS = {**SOURCES, "powergrading": (["powergrading/answers.csv"], "answer", "G1", "G2",
                                        "question_id")}  # fmt: skip
ITEM_KINDS = ("item_target", "item_history_red", "item_history_yellow", "item_within_day")
RATER_KINDS = ("rater_agreement", "rater_drift", "rater_validity", "rater_item")
MAX_ITEMS = 20
COLUMNS = ["id", "item", "answer", "rater", "score", "time", "expert"]


def real_answers(name: str) -> list[tuple[str, list[str], list[str], bool]]:
    """(item, texts, true labels, ordered) of each item of a dataset."""
    files, text, score, _, item_col = DATASETS[name]
    out = []
    for file in files:
        frame = pd.read_csv(DATA / file, dtype=str, keep_default_na=False)
        groups = [(Path(file).stem, frame)] if item_col is None else list(frame.groupby(item_col))
        for item, rows in groups:
            labels = rows[score].str.strip()
            if labels.nunique() >= 2 and len(rows) >= 20:
                out.append((str(item), rows[text].tolist(), labels.tolist(), name != "scientsbank"))
    # At most MAX_ITEMS items, the largest: a day's reads spread over 135 questions give none
    # of them the reads a day's figure needs.
    return sorted(out, key=lambda item: -len(item[1]))[:MAX_ITEMS]


def session_days(name: str, args, seed: int) -> tuple[list[pd.DataFrame], dict]:
    """The days of a simulated session and what was planted."""
    rng = np.random.default_rng(seed)
    items = real_answers(name)
    raters = [f"R{k + 1:02d}" for k in range(args.raters)]
    accuracy = dict(zip(raters, rng.uniform(0.90, 0.97, len(raters))))
    drifter, falling = raters[0], items[int(rng.integers(len(items)))][0]
    scales = {i: sorted(set(labels), key=lambda v: (float(v) if o else 0, v))
              for i, _, labels, o in items}  # fmt: skip
    per_day = args.answers // args.days
    days, number = [], 0
    for day in range(1, args.days + 1):
        date = (pd.Timestamp("2026-03-02") + pd.Timedelta(days=day - 1)).date().isoformat()
        rows = []
        for _ in range(per_day):
            item, texts, labels, ordered = items[int(rng.integers(len(items)))]
            k = int(rng.integers(len(texts)))
            number += 1
            for j, rater in enumerate(rng.choice(raters, 2, replace=False)):
                score = _read(rng, labels[k], scales[item], ordered, accuracy[rater]
                              - (0.3 if item == falling and day >= args.fall_day else 0.0),
                              rater == drifter and day >= args.drift_day)  # fmt: skip
                minute = int(rng.integers(8 * 60, 17 * 60))
                rows.append((f"A{number}", item, texts[k], rater, score,
                             f"{date}T{minute // 60:02d}:{minute % 60:02d}:{j:02d}", ""))  # fmt: skip
        rows += _validity(rng, items, scales, raters, accuracy, drifter, day, date, args)
        days.append(pd.DataFrame(rows, columns=COLUMNS))
    return days, {"drifter": drifter, "falling": falling, "raters": raters,
                  "items": [i for i, *_ in items]}  # fmt: skip


def _read(rng, true: str, scale: list[str], ordered: bool, accuracy: float, drifting: bool) -> str:
    at = scale.index(true)
    if rng.random() > accuracy:
        if ordered:
            at = min(max(at + int(rng.choice((-1, 1))), 0), len(scale) - 1)
        else:
            at = int(rng.choice([k for k in range(len(scale)) if k != at]))
    if drifting and rng.random() < 0.4:
        if ordered and at < len(scale) - 1:
            at += 1
        elif not ordered:  # no "up" on a nominal scale: another label
            at = int(rng.choice([k for k in range(len(scale)) if k != at]))
    return scale[at]


def _validity(rng, items, scales, raters, accuracy, drifter, day, date, args) -> list[tuple]:
    """Each rater's validity papers that day: 2% of their reads, from 20 per item."""
    rows = []
    share = max(1, round(0.02 * 2 * args.answers / args.days / len(raters)))
    for rater in raters:
        for paper in rng.choice(20 * len(items), share, replace=False):
            item, texts, labels, ordered = items[int(paper) // 20]
            k = int(paper) % 20
            score = _read(rng, labels[k], scales[item], ordered, accuracy[rater],
                          rater == drifter and day >= args.drift_day)  # fmt: skip
            rows.append((f"V{item}-{k}", item, texts[k], rater, score,
                         f"{date}T07:{int(paper) % 60:02d}:00", labels[k]))  # fmt: skip
    return rows


def config(**changes):
    return load_defaults().updated(reads="long", id_column="id", item_column="item",
                                   rater_column="rater", time_column="time",
                                   expert_column="expert", text_column="answer", **changes)  # fmt: skip


def history(days: list[pd.DataFrame], settings) -> tuple[list, list[str]]:
    """Every alert of every day of the session, judged as the day-by-day runs judge it."""
    with tempfile.TemporaryDirectory() as folder:
        with open_store(folder) as store:
            store.add(read_file_reads(pd.concat(days, ignore_index=True), settings, "all",
                                      ("", "")), "all", "x", "bench")  # fmt: skip
            reads = load_reads(store)
    cells, _ = session_cells(reads)
    alerts, _ = judge(reads, double_reads(reads), cells, settings)
    return alerts, list(reads.days)


def scores(alerts, dates: list[str], truth: dict, args) -> dict:
    """Detection day of each planted unit, and the false-alarm rates of the others: before the
    drift (days 4 to drift_day - 1: nothing is planted, every alert is false) and over every
    judged day (after the drift, the drifting rater's reads lower the agreement of every item
    and co-rater they read: some of those alerts say something true)."""
    day_of = {d: k + 1 for k, d in enumerate(dates)}
    drift = sorted(
        day_of[a.day] for a in alerts if a.rater == truth["drifter"] and a.kind in RATER_KINDS
    )
    fall = sorted(
        day_of[a.day] for a in alerts if a.item == truth["falling"] and a.kind in ITEM_KINDS
    )
    clean = range(4, args.drift_day)

    def rate(units, planted, field, kinds, days):
        counts = [len({day_of[a.day] for a in alerts if getattr(a, field) == u and a.kind in kinds
                       and day_of[a.day] in days}) for u in units if u != planted]  # fmt: skip
        return sum(counts) / max(len(counts) * len(days), 1), max(counts, default=0) / len(days)

    every = range(4, len(dates) + 1)
    raters, items = (
        (truth["raters"], truth["drifter"], "rater", RATER_KINDS),
        (truth["items"], truth["falling"], "item", ITEM_KINDS),
    )
    return {
        "drift_day": next((d for d in drift if d >= args.drift_day), None),
        "drift_early": sum(d < args.drift_day for d in drift),
        "fall_day": next((d for d in fall if d >= args.fall_day), None),
        "fall_early": sum(d < args.fall_day for d in fall),
        "rater_rate": rate(*raters, clean)[0],
        "worst_rater": rate(*raters, clean)[1],
        "item_rate": rate(*items, clean)[0],
        "worst_item": rate(*items, clean)[1],
        "rater_all": rate(*raters, every)[0],
        "item_all": rate(*items, every)[0],
    }


def good(found: dict, args) -> bool:
    return (found["drift_day"] == args.drift_day and found["fall_day"] == args.fall_day
            and found["rater_rate"] <= 0.05 + 1e-9 and found["item_rate"] <= 0.05 + 1e-9)  # fmt: skip


def choose(sessions: dict, args):
    """The most lenient (p, drift points) that is good on every choosing dataset."""
    grid = [(p, d) for p in (0.01, 0.001, 0.0001) for d in (0.1, 0.2, 0.3)]
    for p, points in grid:
        settings = config(monitor_alert_p=p, monitor_drift_points=points)
        found = {n: scores(*history(days, settings), truth, args)
                 for n, (days, truth) in sessions.items()}  # fmt: skip
        print(f"  choose p={p:g} drift={points:g}: " + "; ".join(
            f"{n} {_line(f)}" for n, f in found.items()))  # fmt: skip
        if all(good(f, args) for f in found.values()):
            return p, points
    return grid[-1]


def _line(found: dict) -> str:
    return (f"drift day {found['drift_day']} (early {found['drift_early']}), fall day "
            f"{found['fall_day']} (early {found['fall_early']}), false alarms before the drift: "
            f"raters {found['rater_rate']:.3f} (worst {found['worst_rater']:.2f}), items "
            f"{found['item_rate']:.3f} (worst {found['worst_item']:.2f}); every day: raters "
            f"{found['rater_all']:.3f}, items {found['item_all']:.3f}")  # fmt: skip


def cost(days: list[pd.DataFrame], folder: Path):
    """The whole session at once against day 20 added, as processes and in this process; the
    in-process whole run's result."""
    for k, frame in enumerate(days):
        frame.to_csv(folder / f"day{k + 1}.csv", index=False)
    pd.concat(days, ignore_index=True).to_csv(folder / "all.csv", index=False)
    pd.concat(days[:-1], ignore_index=True).to_csv(folder / "first.csv", index=False)
    parm = [sys.executable, "-m", "parm_tui.launch", "monitor"]
    last = folder / f"day{len(days)}.csv"
    whole = timed([*parm, str(folder / "all.csv"), "--session", str(folder / "w"),
                   "--out", str(folder / "wo"), "-q"], cwd=ROOT)  # fmt: skip
    timed([*parm, str(folder / "first.csv"), "--session", str(folder / "d"), "--out",
           str(folder / "do"), "-q"], cwd=ROOT)  # fmt: skip
    day = timed([*parm, str(last), "--session", str(folder / "d"), "--out", str(folder / "do"),
                 "-q"], cwd=ROOT)  # fmt: skip
    print(f"  process, whole session at once: {whole['wall']:.1f} s wall, {whole['cpu']:.1f} s "
          f"CPU, peak {whole['peak_gb']:.2f} GB")  # fmt: skip
    print(f"  process, day {len(days)} added: {day['wall']:.1f} s wall, {day['cpu']:.1f} s CPU, "
          f"peak {day['peak_gb']:.2f} GB: {day['wall'] / whole['wall']:.0%} of the whole")  # fmt: skip
    settings = config()
    began = time.perf_counter()
    whole_run = workspace.monitor(folder / "w2", [folder / "all.csv"], settings, folder / "wo2")
    at_once = time.perf_counter() - began
    workspace.monitor(folder / "d2", [folder / "first.csv"], settings, folder / "do2")
    began = time.perf_counter()
    workspace.monitor(folder / "d2", [last], settings, folder / "do2")
    added = time.perf_counter() - began
    print(f"  in process: whole {at_once:.2f} s, day added {added:.2f} s "
          f"({added / at_once:.0%})")  # fmt: skip
    return whole_run.result


def lists_line(result, truth: dict) -> str:
    """The morning's lists of the whole session: the drifting rater's statuses, the neutral
    raters' share not qualified on some item, and the most third reads one rater holds."""
    from collections import Counter

    statuses = result.actions.lists.statuses
    drifter = sorted({s.status for s in statuses if s.rater == truth["drifter"]})
    neutral = {s.rater for s in statuses if s.rater != truth["drifter"]}
    flagged = {s.rater for s in statuses if s.rater in neutral and s.status != "qualified"}
    held = Counter(t.assigned_rater for t in result.actions.lists.third_reads if t.assigned_rater)
    most = max(held.values(), default=0)
    return (f"lists: drifting rater {'/'.join(drifter)}; neutral raters not qualified on some "
            f"item {len(flagged)} of {len(neutral)}; backreads {len(result.actions.lists.backreads):,}; "
            f"third reads {len(result.actions.lists.third_reads):,}, most held by one rater {most} "
            f"(cap {result.config.third_read_cap})")  # fmt: skip


def main() -> None:
    parser = options(__doc__, answers=20000, days=20, raters=20, drift_day=12, fall_day=17, seed=45)
    parser.add_argument("--choose", default="asap-sas,scientsbank")
    parser.add_argument("--report", default="mohler,powergrading,asap-aes")
    parser.add_argument("--cost", default="asap-sas")
    args = parser.parse_args()
    print(machine_line())
    print(f"{args.answers:,} answers over {args.days} days, {args.raters} raters, two reads "
          f"each plus validity papers; drift from day {args.drift_day}, fall from day "
          f"{args.fall_day}")  # fmt: skip
    chosen = {n: session_days(n, args, args.seed) for n in args.choose.split(",") if n}
    p, points = choose(chosen, args)
    print(f"chosen on {args.choose}: monitor_alert_p={p:g}, monitor_drift_points={points:g}")
    settings = config(monitor_alert_p=p, monitor_drift_points=points)
    for name in [n for n in args.report.split(",") if n]:
        days, truth = session_days(name, args, args.seed + 1)
        reads = sum(len(d) for d in days)
        print(
            f"  held out {name} ({reads:,} reads): {_line(scores(*history(days, settings), truth, args))}"
        )
    if args.cost:
        days, truth = session_days(args.cost, args, args.seed + 2)
        print(f"cost on {args.cost}: {sum(len(d) for d in days):,} reads")
        with tempfile.TemporaryDirectory() as folder:
            print("  " + lists_line(cost(days, Path(folder)), truth))


if __name__ == "__main__":
    main()
