"""The lead's lists (engine.actions, issue 46) measured on simulated sessions over real answers.

    PARM_DATA_ROOT=../shared/data OMP_NUM_THREADS=1 nice -n 10 \\
        python tests/benchmarks/bench_actions.py                  # 5 sessions per dataset
    python tests/benchmarks/bench_actions.py --sessions 2 --datasets asap-sas mohler

A session (`simulate`): real answers of one kind of shared data (ASAP-SAS: 2 prompts x 600
answers; ASAP essays: 2 sets x 600; Mohler: 20 questions; SciEntsBank: 20 questions, nominal
labels), the data's first human score as the truth, 8 raters: 6 neutral (accuracy drawn from
0.85-0.95, an error one step up or down, or another label), 1 planted bad rater (accuracy 0.5,
errors any other score), 1 consistent-error rater (on half their reads one step up, or the next
label: the same error every time). Each answer is read by one rater at random, 30% of them by a
second one; 15% of the answers carry the truth as an expert score (validity papers). The
session runs through parm's `run_session` (given embeddings, bootstrap and cross-fitting off)
and `plan_actions` with the default settings: every threshold is the shipped default, chosen
from the sources (NAEP, RSMTool), never on these sessions.

Reported per dataset:
- backreads: the share of the picked reads that are wrong (the rater's score is not the truth),
  for the bad rater and for all raters, against the share a uniform sample of the same size
  finds (the rater's error rate over the reads the sample is drawn from);
- the random share's agreement estimate: over `--draws` seeds of the backread sample, the share
  of raters whose Wilson 95% interval holds their true agreement over their reads (coverage);
- routed third reads: of the answers assigned, the share whose consensus after the simulated
  third read is the truth, against the same answers given to a random eligible rater (the same
  eligibility and cap; mean of 5 draws), to a random rater of the item who has not read it
  whatever their status (a lead without the lists), and before any third read;
- the cap: the most third reads any rater was assigned;
- status: the share of the bad rater's (and the consistent rater's) rows on retrain or stop,
  the share of neutral raters' rows and of neutral raters (their most severe row) not qualified.
Powergrading's three real graders (every answer read by all three) are run as they are: their
third reads must all have no eligible rater.
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from consensus_data import item_rows  # noqa: E402
from severity_data import DATA, file_vectors  # noqa: E402

from engine.actions.backreads import RANDOM, agreement_estimate, backreads, candidates  # noqa: E402
from engine.actions.ledger import ledger_of  # noqa: E402
from engine.actions.plan import plan_actions  # noqa: E402
from engine.actions.rules import QUALIFIED, RETRAIN, STOP, ActionRules  # noqa: E402
from engine.core.text import safe_text  # noqa: E402
from engine.input.items import split_items  # noqa: E402
from engine.input.settings.config import config_from_dict  # noqa: E402
from engine.results.added_reads import AddedRead, added_audit  # noqa: E402
from engine.session import run_session  # noqa: E402

# dataset: (items in a session, answers per item at most)
SHAPES = {"asap-sas": (2, 600), "asap-aes": (2, 600), "mohler": (20, 40), "scientsbank": (20, 60)}
NEUTRAL, BAD, CONSISTENT = "neutral", "bad", "consistent"
SETTINGS = {"similarity_top_k": [5, 10, 20], "bootstrap_samples": 0, "cross_fit_folds": 0,
            "session_model": "off", "text_column": "answer", "id_column": "id",
            "item_column": "item", "score_column": "score1", "rater_column": "rater1",
            "score_columns": ["score1", "score2"], "rater_columns": ["rater1", "rater2"],
            "expert_column": "expert"}  # fmt: skip


@dataclasses.dataclass
class Item:
    name: str
    texts: list[str]
    gold: np.ndarray  # labels
    scale: list[str]
    ordered: bool
    vectors: np.ndarray


def load(dataset: str) -> list[Item]:
    """Every item of a dataset with its answers' texts, truth (first human score) and vectors."""
    return [
        Item(found.name, [safe_text(x) for x in found.texts], found.labels, found.scale,
             found.ordered, found.vectors)
        for found, _ in item_rows(dataset)
    ]  # fmt: skip


@dataclasses.dataclass
class Rater:
    name: str
    role: str
    accuracy: float


def give(rng, rater: Rater, gold: str, item: Item) -> str:
    """One read of an answer whose true label is `gold` (module docstring)."""
    scale, c = item.scale, item.scale.index(gold)
    if rater.role == CONSISTENT:
        if rng.random() < 0.5:
            return (
                scale[min(c + 1, len(scale) - 1)] if item.ordered else scale[(c + 1) % len(scale)]
            )
        return gold
    if rng.random() < rater.accuracy:
        return gold
    if rater.role == BAD or not item.ordered:
        return scale[(c + int(rng.integers(1, len(scale)))) % len(scale)]
    step = int(rng.choice([-1, 1]))
    return scale[c + step] if 0 <= c + step < len(scale) else scale[c - step]


def raters(rng) -> list[Rater]:
    found = [Rater(f"R{j + 1:02d}", NEUTRAL, float(rng.uniform(0.85, 0.95))) for j in range(6)]
    found += [Rater("R07", BAD, 0.5), Rater("R08", CONSISTENT, 0.5)]
    order = rng.permutation(len(found))  # the planted raters' names are not the last ones
    return [dataclasses.replace(found[k], name=f"R{j + 1:02d}") for j, k in enumerate(order)]


def simulate(dataset: str, items: list[Item], seed: int):
    """(frame, vectors, raters, truth {id: label}, chosen items) of one session."""
    rng = np.random.default_rng([seed, len(dataset)])
    count, size = SHAPES[dataset]
    chosen = [items[k] for k in rng.choice(len(items), min(count, len(items)), replace=False)]
    team = raters(rng)
    rows, vectors, truth = [], [], {}
    for item in chosen:
        for a in rng.choice(len(item.texts), min(size, len(item.texts)), replace=False):
            ident = f"{item.name}-{a}"
            gold = item.gold[a]
            who = rng.choice(len(team), 2, replace=False)
            second = rng.random() < 0.3
            row = {"id": ident, "item": item.name, "answer": item.texts[a],
                   "rater1": team[who[0]].name, "score1": give(rng, team[who[0]], gold, item),
                   "rater2": team[who[1]].name if second else "",
                   "score2": give(rng, team[who[1]], gold, item) if second else "",
                   "expert": gold if rng.random() < 0.15 else ""}  # fmt: skip
            rows.append(row)
            vectors.append(item.vectors[a])
            truth[ident] = gold
    frame = pd.DataFrame(rows)
    for _, group in frame.groupby("item"):  # an expert label the reads never use is off scale
        used = set(group["score1"]) | set(group["score2"]) - {""}
        frame.loc[group.index, "expert"] = group["expert"].where(group["expert"].isin(used), "")
    return frame, np.asarray(vectors, np.float32), team, truth, chosen


def audit(frame, vectors, extra=None):
    config = config_from_dict({**SETTINGS, **(extra or {})})
    items = split_items(frame, config, "session.csv")
    embeddings = [vectors[r.rows - 1] for r in items.audited]
    return run_session(items, config, embeddings=embeddings)


def as_label(labels, gold: str) -> str | None:
    """The item's label (as parm writes it: numbers without trailing zeros) of the value `gold`
    (the file's spelling), or None when the reads never gave it."""
    for label in labels:
        if label == gold:
            return label
        try:
            if float(label) == float(gold):
                return label
        except ValueError:
            continue
    return None


def read_truth(ledger, truth) -> np.ndarray:
    """(R,) whether each read's score is the truth."""
    return np.array([ledger.items[k].labels[s] == as_label(ledger.items[k].labels,
                                                            truth[ledger.items[k].ids[a]])
                     for k, a, s in zip(ledger.item, ledger.answer, ledger.score)])  # fmt: skip


def tally_backreads(ledger, lists, team, right, store, name) -> None:
    pool = candidates(ledger)
    for rater in team:
        r = ledger.raters.index(rater.name)
        mine = pool & (ledger.rater == r)
        picks = np.array([b.read for b in lists.backreads if b.rater == rater.name])
        risk = np.array([b.read for b in lists.backreads if b.rater == rater.name
                         and b.sample != RANDOM], dtype=int)  # fmt: skip
        group = "bad" if rater.role == BAD else "other"
        store[(name, group, "picked wrong")].append(float(np.mean(~right[picks])))
        store[(name, group, "risk wrong")].append(
            float(np.mean(~right[risk])) if risk.size else np.nan
        )
        store[(name, group, "uniform wrong")].append(float(np.mean(~right[mine])))
        store[(name, "all", "picked wrong")].append(float(np.mean(~right[picks])))
        store[(name, "all", "uniform wrong")].append(float(np.mean(~right[mine])))


def tally_coverage(ledger, lists, team, right, draws: int, store, name) -> None:
    rules = ActionRules.of()
    pool = candidates(ledger)
    for seed in range(draws):
        found = backreads(dataclasses.replace(ledger, seed=seed), rules, lists.statuses)
        for rater in team:
            r = ledger.raters.index(rater.name)
            truth = float(np.mean(right[pool & (ledger.rater == r)]))
            agreed = [right[b.read] for b in found if b.rater == rater.name and b.sample == RANDOM]
            _, low, high = agreement_estimate(agreed)
            store[(name, rater.role, "covered")].append(bool(low <= truth <= high))
            store[(name, rater.role, "random n")].append(len(agreed))


def third_read_outcome(run, assignments, team, truth, rng) -> float:
    """The share of the assigned answers whose consensus after the simulated read is the truth."""
    if not assignments:
        return float("nan")
    by_name = {rater.name: rater for rater in team}
    items = {r.responses.item: r for r in run.results}
    added, keys = [], []
    for item_name, ident, rater in assignments:
        responses = items[item_name].responses
        j = responses.ids.index(ident)
        gold = as_label(responses.labels, truth[ident])
        scale = Item("", [], np.array([]), list(responses.labels), responses.ordered, None)
        if gold is None:
            continue
        label = give(rng, by_name[rater], gold, scale)
        added.append(AddedRead(int(responses.rows[j]), ident, rater, label, "2026-01-01T00:00:00"))
        keys.append((item_name, j, gold))
    reads = added_audit(run.results, run.reads, added)
    position = {r.responses.item: k for k, r in enumerate(run.results)}
    correct = [run.results[position[i]].responses.labels[
                   reads.consensus.items[position[i]].consensus[j]] == gold
               for i, j, gold in keys]  # fmt: skip
    return float(np.mean(correct))


def random_eligible(lists, ledger, cap: int, rng, any_status=False) -> list[tuple[str, str, str]]:
    """The routed answers, each given to a random eligible rater (qualified on the item, or with
    `any_status` any rater of the item; has not read it) with fewer than `cap` of them."""
    qualified = defaultdict(set)
    for s in lists.statuses:
        if s.status == QUALIFIED or any_status:
            qualified[s.item].add(s.rater)
    read = defaultdict(set)
    for k, a, r in zip(ledger.item, ledger.answer, ledger.rater):
        read[(ledger.items[k].name, ledger.items[k].ids[a])].add(ledger.raters[r])
    load, found = defaultdict(int), []
    for t in lists.third_reads:
        if not t.assigned_rater:
            continue
        eligible = sorted(qualified[t.item] - read[(t.item, t.id)])
        eligible = [name for name in eligible if load[name] < cap]
        if eligible:
            pick = eligible[int(rng.integers(len(eligible)))]
            load[pick] += 1
            found.append((t.item, t.id, pick))
    return found


def tally_third_reads(run, ledger, lists, team, truth, store, name) -> None:
    routed = [(t.item, t.id, t.assigned_rater) for t in lists.third_reads if t.assigned_rater]
    cap = ActionRules.of().third_read_cap
    counts = defaultdict(int)
    for _, _, rater in routed:
        counts[rater] += 1
    store[(name, "third", "most assigned")].append(max(counts.values(), default=0))
    store[(name, "third", "needed")].append(len(lists.third_reads))
    store[(name, "third", "assigned")].append(len(routed))
    before = []
    for item_name, ident, _ in routed:
        result = next(r for r in run.results if r.responses.item == item_name)
        j = result.responses.ids.index(ident)
        found = run.reads.consensus.items[run.results.index(result)].consensus[j]
        gold = as_label(result.responses.labels, truth[ident])
        before.append(found >= 0 and result.responses.labels[found] == gold)
    store[(name, "third", "correct before")].append(float(np.mean(before)) if before else np.nan)
    rng = np.random.default_rng(0)
    store[(name, "third", "correct routed")].append(
        third_read_outcome(run, routed, team, truth, rng)
    )
    for key, any_status in (("correct random", False), ("correct any", True)):
        draws = [third_read_outcome(run, random_eligible(lists, ledger, cap, np.random.default_rng(d),
                                                         any_status),
                                    team, truth, np.random.default_rng(100 + d)) for d in range(5)]  # fmt: skip
        store[(name, "third", key)].append(float(np.nanmean(draws)))


def tally_status(lists, team, store, name) -> None:
    role = {rater.name: rater.role for rater in team}
    worst, other = {}, {}
    for s in lists.statuses:
        store[(name, role[s.rater], "rows")].append(s.status)
        worst[s.rater] = max(worst.get(s.rater, 0), s.severity)
        if not s.rule.startswith("parm's verdict"):  # the rules apart from parm's verdicts
            other[s.rater] = max(other.get(s.rater, 0), s.severity)
    for rater, severity in worst.items():
        store[(name, role[rater], "raters")].append(severity)
        store[(name, role[rater], "raters but verdicts")].append(other.get(rater, 0))


def run(args) -> dict:
    store: dict = defaultdict(list)
    for dataset in args.datasets:
        items = load(dataset)
        for seed in range(args.sessions):
            started = time.time()
            frame, vectors, team, truth, _ = simulate(dataset, items, args.seed + seed)
            session = audit(frame, vectors)
            lists = plan_actions(session)
            ledger = ledger_of(session)
            right = read_truth(ledger, truth)
            tally_backreads(ledger, lists, team, right, store, dataset)
            tally_coverage(ledger, lists, team, right, args.draws, store, dataset)
            tally_third_reads(session, ledger, lists, team, truth, store, dataset)
            tally_status(lists, team, store, dataset)
            print(f"{dataset} session {seed}: {len(frame)} answers, {len(lists.backreads)} "
                  f"backreads, {len(lists.third_reads)} third reads, "
                  f"{time.time() - started:.0f} s", flush=True)  # fmt: skip
    if "powergrading" in args.real:
        powergrading(store)
    return store


def powergrading(store) -> None:
    """The real three graders: every answer read by all three."""
    frame = pd.read_csv(DATA / "powergrading" / "answers.csv", dtype=str, keep_default_na=False)
    vectors = file_vectors(DATA / "powergrading" / "answers.csv", "answer")
    frame = frame.rename(columns={"question_id": "item"})
    frame["id"] = [f"pg-{i}" for i in range(len(frame))]
    extra = {"score_column": "G1", "score_columns": ["G1", "G2", "G3"], "rater_column": None,
             "rater_columns": None, "expert_column": None}  # fmt: skip
    lists = plan_actions(audit(frame, vectors, extra))
    store[("powergrading", "third", "needed")].append(len(lists.third_reads))
    store[("powergrading", "third", "no eligible")].append(
        sum("no eligible rater" in t.why for t in lists.third_reads)
    )
    store[("powergrading", "third", "assigned")].append(
        sum(bool(t.assigned_rater) for t in lists.third_reads)
    )
    store[("powergrading", "status", "rows")].append(
        ", ".join(
            f"{s.rater}/{s.item}: {s.status}" for s in lists.statuses if s.status != QUALIFIED
        )
        or "all qualified"
    )


def mean(values) -> str:
    values = [v for v in values if v == v]
    return f"{np.mean(values):.3f}" if values else "n/a"


def report(store, datasets) -> None:
    print("\nbackreads: share of picked reads that are wrong, against a uniform sample's")
    print(f"{'dataset':12} {'bad: picked':>12} {'risk only':>10} {'uniform':>8} {'higher':>7} "
          f"{'all: picked':>12} {'uniform':>8}")  # fmt: skip
    for d in datasets:
        picked, uniform = store[(d, "bad", "picked wrong")], store[(d, "bad", "uniform wrong")]
        higher = sum(p > u for p, u in zip(picked, uniform))
        print(f"{d:12} {mean(picked):>12} {mean(store[(d, 'bad', 'risk wrong')]):>10} "
              f"{mean(uniform):>8} {higher:>3}/{len(picked):<3} "
              f"{mean(store[(d, 'all', 'picked wrong')]):>12} "
              f"{mean(store[(d, 'all', 'uniform wrong')]):>8}")  # fmt: skip
    print("\nrandom share: coverage of the 95% Wilson interval of each rater's agreement")
    for d in datasets:
        cells = [f"{role} {mean(store[(d, role, 'covered')])} (n {mean(store[(d, role, 'random n')])})"
                 for role in (NEUTRAL, BAD, CONSISTENT)]  # fmt: skip
        every = sum((store[(d, role, "covered")] for role in (NEUTRAL, BAD, CONSISTENT)), [])
        print(f"{d:12} all {mean(every)} · " + " · ".join(cells))
    print("\nthird reads: consensus right after the read, routed against a random eligible rater")
    print("(random: a qualified rater who has not read it; any: any rater of the item who has not)")
    print(f"{'dataset':12} {'needed':>7} {'assigned':>9} {'before':>7} {'routed':>7} "
          f"{'random':>7} {'any':>7} {'most/cap':>9}")  # fmt: skip
    for d in datasets:
        s = lambda key, d=d: store[(d, "third", key)]  # noqa: E731
        print(f"{d:12} {mean(s('needed')):>7} {mean(s('assigned')):>9} {mean(s('correct before')):>7} "
              f"{mean(s('correct routed')):>7} {mean(s('correct random')):>7} "
              f"{mean(s('correct any')):>7} "
              f"{max(s('most assigned'), default=0):>5}/{ActionRules.of().third_read_cap}")  # fmt: skip
    print(
        "\nstatus: bad and consistent rows on retrain or stop; neutral rows and raters not qualified"
    )
    for d in datasets:

        def share(role, statuses, d=d):
            rows = store[(d, role, "rows")]
            return f"{np.mean([r in statuses for r in rows]):.3f} of {len(rows)}" if rows else "n/a"

        neutral = store[(d, NEUTRAL, "raters")]
        bad = store[(d, BAD, "raters")]
        print(f"{d:12} bad rows {share(BAD, (RETRAIN, STOP))}, raters {sum(s >= 2 for s in bad)}"
              f"/{len(bad)} · consistent rows {share(CONSISTENT, (RETRAIN, STOP))}, not "
              f"qualified {share(CONSISTENT, ('watch', RETRAIN, STOP))} · neutral rows "
              f"{share(NEUTRAL, ('watch', RETRAIN, STOP))} · neutral raters "
              f"{np.mean([s > 0 for s in neutral]):.3f} of {len(neutral)} (without the "
              f"verdict rule {np.mean([s > 0 for s in store[(d, NEUTRAL, 'raters but verdicts')]]):.3f})")  # fmt: skip
    if ("powergrading", "third", "needed") in store:
        s = lambda key: store[("powergrading", "third", key)][0]  # noqa: E731
        print(
            f"\npowergrading (real, three graders): {s('needed')} third reads needed, "
            f"{s('no eligible')} with no eligible rater, {s('assigned')} assigned; status: "
            f"{store[('powergrading', 'status', 'rows')][0]}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--draws", type=int, default=50)
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--real", nargs="*", default=["powergrading"])
    args = parser.parse_args()
    print(f"{platform.node()} · python {platform.python_version()} · sessions {args.sessions} "
          f"· draws {args.draws} · seed {args.seed}")  # fmt: skip
    started = time.time()
    store = run(args)
    report(store, args.datasets)
    print(f"\n{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
