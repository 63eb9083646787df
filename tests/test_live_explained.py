"""engine.live.alerts.explained: an item's day past an item rule that keeps to it without one rater's
double reads is that rater's alert on the item (rater_item), not the item's; a fall every rater
shares stays the item's; a rule the day passes only because too few reads are left is not
explained away."""

from __future__ import annotations

import pandas as pd
from helpers import live_config, live_reads

from engine import workspace
from engine.live.alerts.explained import ItemDays


def _judged(tmp_path, frames, **changes):
    """Every alert of every day of a session of `frames` (added as one file), its reads and
    double reads."""
    path = tmp_path / "all.csv"
    pd.concat(frames, ignore_index=True).to_csv(path, index=False)
    result = workspace.monitor(tmp_path / "s", [path], live_config(**changes)).result
    return result.history, result.reads, result.pairs


def test_one_raters_drift_is_their_alert_on_the_items_not_the_items(tmp_path):
    raters = tuple("ABCDEFGH")  # B reads a quarter of the double reads
    frames = live_reads(days=7, answers_per_day=80, accuracy=0.95, seed=3, drift=("B", 4, 0.9),
                        raters=raters)  # fmt: skip
    alerts, _, _ = _judged(tmp_path, frames)
    late = [a for a in alerts if a.day >= "2026-05-08"]
    assert not [a for a in late if a.kind.startswith("item_") and a.kind != "item_within_day"]
    mine = [a for a in late if a.kind == "rater_item"]
    assert mine and {a.rater for a in mine} == {"B"}
    assert all(a.threshold > a.figure for a in mine)  # the share without B is above the item's


def test_a_fall_every_rater_shares_stays_the_items(tmp_path):
    frames = live_reads(days=7, answers_per_day=60, accuracy=0.95, seed=3, fall=("q1", 4, 0.5))
    alerts, _, _ = _judged(tmp_path, frames)
    falls = [a for a in alerts if a.item == "q1" and a.kind in ("item_target", "item_history_red",
                                                               "item_history_yellow")]  # fmt: skip
    assert falls and not [a for a in alerts if a.kind == "rater_item"]


def test_without_a_rater_the_day_has_only_the_other_raters_pairs(tmp_path):
    frames = live_reads(days=2, answers_per_day=30, seed=1)
    _, reads, pairs = _judged(tmp_path, frames)
    days = ItemDays(reads, pairs)
    day = reads.days[-1]
    raters = days.raters("q1", day)
    whole = sum(1 for a, b in zip(pairs.first, pairs.second)
                if reads.items[reads.item[b]] == "q1" and reads.day[b] == day)  # fmt: skip
    for rater in raters:
        r = reads.raters.index(rater)
        theirs = sum(1 for a, b in zip(pairs.first, pairs.second)
                     if reads.items[reads.item[b]] == "q1" and reads.day[b] == day
                     and r in (reads.rater[a], reads.rater[b]))  # fmt: skip
        assert days.without("q1", day, rater).pairs == whole - theirs
    assert len(raters) >= 2
