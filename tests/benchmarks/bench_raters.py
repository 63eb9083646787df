"""Which raters need a word, proven by simulation: planted rater effects in sessions built from
real answers of the shared data, found by parm's rater verdicts, and FACETS' rules of thumb on
the same sessions.

    PARM_DATA_ROOT=../shared/data PARM_CACHE_DIR=... nice -n 10 \\
        python tests/benchmarks/bench_raters.py               # 100 sessions (about 25 minutes)
    python tests/benchmarks/bench_raters.py --sessions 20 --datasets asap-sas

Sessions (rater_sim.py): 6-10 raters of 150-300 scores each, the answers of several items dealt
to them at random, a scoring order; the data's own first score is what a neutral rater gives.
Ordered data (ASAP short answers, ASAP essays, Mohler) get three planted raters (of lenient,
harsh, noisy, central tendency, drifting) and a biased rater x item cell; SciEntsBank (nominal
labels) one or two noisy raters. Each session is audited by `run_session` with the default
settings (bootstrap and cross-fitting off: they change no rater figure) and a time column.

Issue 35's designs (rater_sim.Design): --double 0.2 (a fifth of the answers read twice, the
second read by another rater as the design deals), --same-way (up to half the raters with effects
pushing the same way), --standard (effects at 0.5 of the neutral raters' residual sd, measured on
an unplanted session of each dataset first), --expert 0.05 (validity papers: the data's first
human score, the one the effects are planted around, as an expert score on a share of the
answers, chosen at random apart from the session's own stream so the sessions stay the same).
--keep DIR saves each session's audited results;
--judge DIR re-judges them with the current rules (no audit: seconds per session) and fits the
many-facet Rasch baseline (mfrm.py, text-blind) on the same sessions:

    nice -n 10 python tests/benchmarks/bench_raters.py --sessions 30 \
        --datasets asap-sas asap-aes mohler --shipped-only --seed 35 --standard --double 0.2 \
        --same-way --keep /tmp/raters-B
    python tests/benchmarks/bench_raters.py --judge /tmp/raters-B --datasets asap-sas asap-aes mohler
    python tests/benchmarks/bench_raters.py --judge /tmp/raters-B --datasets asap-sas asap-aes mohler \
        --expert 0.05        # the same sessions, with expert scores on 5% of the answers

Reported, per dataset and over the ordered ones:
- detection: the share of planted raters whose verdicts include their effect;
- false alarms: the share of neutral raters with any verdict but "fine" (all rules together);
- FACETS' rules of thumb on the same raters: infit or outfit outside 0.7-1.3 (0.5-1.5) counts as
  a finding; "noisy" is detected when a mean-square is above the band, "central tendency" when
  one is below it; a neutral rater outside the band is a false alarm;
- MFRM's lenient and harsh detection (with --judge) at |z| >= 3 and at parm's own lenient/harsh
  false-alarm rate;
- the bias cell: the share of planted cells listed with the right sign, and the share of the
  other cells listed;
- shrinkage: measured leniency / planted shift (mean points the effect added) of lenient and
  harsh raters, for the shipped expectation (the embedding classifier cross-fitted by rater) and
  the alternatives it was chosen over: PARM's in-sample probabilities (what leniency used
  before), PARM refitted by rater with the held-out raters' scores masked out of the neighbour
  features, the equal mixture of the two rater-left-out models, and that mixture cross-fitted
  over stratified folds (which sees the rater's other scores). Each alternative gets its own
  detection and false-alarm figures from the same rules.
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mfrm import fit_mfrm, leniency_z, session_reads  # noqa: E402
from rater_sim import ORDERED, Design, build_session, load_dataset  # noqa: E402

from engine.audit.raters import expectation  # noqa: E402
from engine.audit.raters.additive import two_way  # noqa: E402
from engine.audit.raters.table import rater_report  # noqa: E402
from engine.input.items import split_items  # noqa: E402
from engine.input.settings.config import config_from_dict  # noqa: E402
from engine.model.classifier import out_of_fold_proba, stratified_folds  # noqa: E402
from engine.model.cross_fit import masked_features  # noqa: E402
from engine.model.pseudo_likelihood import fit, proba  # noqa: E402
from engine.session import run_session  # noqa: E402

DATASETS = ("asap-sas", "asap-aes", "scientsbank", "asap-sas", "mohler")
EFFECT_VERDICT = {
    "lenient": "lenient", "harsh": "harsh", "noisy": "noisy", "central": "central tendency",
    "drifting": "drifting",
}  # fmt: skip
SHIPPED = "shipped: classifier by rater"
BANDS = {"FACETS 0.7-1.3": (0.7, 1.3), "FACETS 0.5-1.5": (0.5, 1.5)}
SETTINGS = {
    "item_column": "item", "rater_column": "rater", "time_column": "time", "id_column": None,
    "bootstrap_samples": 0, "cross_fit_folds": 0,
}  # fmt: skip
DOUBLE = {"second_score_column": "score2", "second_rater_column": "rater2"}


def parm_by_rater(result, parts) -> np.ndarray:
    """PARM refitted (unweighted, the selected K and p) for each fold's answers on the other
    folds' scores, the fold's scores masked out of every answer's neighbour features."""
    r, best = result.responses, result.selected
    out = np.zeros((len(r), r.n_classes))
    for held in parts:
        train = np.ones(len(r), dtype=bool)
        train[held] = False
        t, s = masked_features(result.graph, r.scores, train, r.n_classes, best.top_k,
                               best.power, True)  # fmt: skip
        fitted = fit(t[train], s[train], r.scores[train], None)
        out[held] = proba(fitted.theta, t[held], s[held])
    return out


def alternatives(results, embeddings) -> dict[str, list]:
    """Per alternative expectation, each item's (N, C+1) probabilities."""
    out = defaultdict(list)
    for result, vectors in zip(results, embeddings):
        r = result.responses
        folds = expectation.rater_folds(r.raters)
        strata = stratified_folds(r.scores, 5, 0)
        parm = parm_by_rater(result, folds)
        classifier = out_of_fold_proba(vectors, r.scores, r.n_classes, strata, 10.0)
        mixed = 0.5 * (parm_by_rater(result, strata) + classifier)
        out["in-sample PARM (before)"].append(expectation.smooth(result.fitted.proba))
        out["PARM by rater"].append(expectation.smooth(parm))
        out["mixture PARM + classifier by rater"].append(
            expectation.smooth(0.5 * (parm + result.rater_proba))
        )
        out["mixture, stratified folds"].append(expectation.smooth(mixed))
    return out


def dump(results, session, name: str, store: dict) -> None:
    """Keep the pooled scores behind a report (for re-checking thresholds with --dump)."""
    from engine.audit.raters.table import _pool

    roles = {
        "roles": session.roles,
        "bias_cell": session.bias_cell,
        "dataset": session.dataset,
        "shift": {r: session.shift(r) for r in session.roles},
        "shares": session.shares,
    }
    store["dump"].append((name, roles, _pool(results)[0]))


@dataclass
class Truth:
    """What a session planted, as tally reads it (kept with --keep for --judge)."""

    dataset: str
    roles: dict
    shifts: dict
    bias_cell: tuple | None
    shares: dict
    sd: float | None
    # Per audited item, the data's first human score of each answer (the planted effects'
    # truth), for --expert; empty in sessions kept before it.
    gold: list = field(default_factory=list)

    @classmethod
    def of(cls, session, results=()) -> Truth:
        shifts = {r: session.shift(r) for r in session.roles}
        return cls(session.dataset, dict(session.roles), shifts, session.bias_cell,
                   dict(session.shares), session.design.sd, gold_labels(session, results))  # fmt: skip

    def shift(self, rater: str) -> float:
        return self.shifts[rater]


def gold_labels(session, results) -> list[np.ndarray]:
    """Per result, the data's first human score of each of its answers (frame row r is the
    session's r-th first read)."""
    first = np.flatnonzero(session.first)
    out = []
    for result in results:
        reads = first[result.responses.rows - 1]
        out.append(np.array([session.items[session.item[i]].labels[session.answer[i]]
                             for i in reads], dtype=object))  # fmt: skip
    return out


def with_expert(results, truth: Truth, share: float, seed) -> None:
    """Give each result's answers the gold score as an expert score on `share` of them (at
    random, from a stream of their own: the same answers with and without other options);
    a gold score off the item's scale as the raters used it stays blank."""
    rng = np.random.default_rng(seed)
    for k, (result, gold) in enumerate(zip(list(results), truth.gold)):
        labels = np.array([float(v) for v in result.responses.labels])
        code = np.array([int(np.argmin(np.abs(labels - float(g)))) for g in gold])
        on_scale = np.abs(labels[code] - gold.astype(float)) < 1e-9
        chosen = (rng.random(len(gold)) < share) & on_scale
        expert = replace(result.responses, expert=np.where(chosen, code, -1))
        results[k] = replace(result, responses=expert)  # the list given, item by item


def judge(args) -> dict:
    """Re-judge the kept sessions (--keep) with the current rules, and with the many-facet Rasch
    baseline (mfrm.py) on the same sessions."""
    store: dict = defaultdict(list)
    started = time.perf_counter()
    for path in sorted(Path(args.judge).glob("session-*.pkl")):
        with open(path, "rb") as handle:
            truth, results = pickle.load(handle)
        if args.expert:
            with_expert(results, truth, args.expert, [args.seed, 2, int(path.stem[8:])])
            tally_expert(results, truth, store)
        tally(rater_report(results), truth, SHIPPED, store)
        if truth.sd:
            store["sd " + truth.dataset] = truth.sd
        if not args.no_mfrm:
            mfrm_tally(results, truth, store)
    store["seconds"] = time.perf_counter() - started
    return store


def tally_expert(results, truth, store: dict) -> None:
    """The session's expert-scored reads and whether leniency was anchored on them."""
    report = rater_report(results)
    store[("expert", truth.dataset, "reads")].append(sum(f.n for f in report.expert.values()))
    store[("expert", truth.dataset, "anchored")].append(report.anchored)


def mfrm_tally(results, truth, store: dict) -> None:
    """The many-facet Rasch fit's leniency z of every rater (kept by role, for detection at a
    matched false-alarm rate in print_tables)."""
    reads = session_reads(results)
    if np.bincount(reads[0]).max(initial=0) < 2:
        return  # single reads: no rater severity without a second read of some answer
    rasch = fit_mfrm(*reads)
    for rater, z in leniency_z(rasch).items():
        role = truth.roles.get(rater)
        if role in ("neutral", "lenient", "harsh"):
            store[("MFRM", truth.dataset, "z " + role)].append(z)


def tally(report, session, name: str, store: dict) -> None:
    """Add one report's raters and bias cells to the counts under `name`."""
    rows = {row.rater: row for row in report.rows if row.effects is not None}
    for rater, role in session.roles.items():
        row = rows.get(rater)
        if row is None:
            continue
        found = {v.name for v in row.effects.verdicts}
        key = (name, session.dataset)
        if role == "neutral":
            store[key + ("false",)].append(bool(found))
            if row.effects.leniency_z is not None:
                store[key + ("neutral z",)].append(row.effects.leniency_z)
            for rule in found:
                store[key + ("false " + rule,)].append(True)
        elif role in EFFECT_VERDICT:
            store[key + (role,)].append(EFFECT_VERDICT[role] in found)
        if role in ("lenient", "harsh", "drifting") and session.sd:
            store[key + ("size " + role,)].append(session.shift(rater) / session.sd)
        if role in ("lenient", "harsh") and session.shift(rater) != 0:
            store[key + ("shrinkage",)].append(row.effects.leniency / session.shift(rater))
        if name == SHIPPED:
            _bands(row, role, key, store)
    if name == SHIPPED and session.bias_cell is not None:
        _cells(report, session, store)


def _bands(row, role, key, store) -> None:
    e = row.effects
    if e.infit is None:
        return
    for band, (low, high) in BANDS.items():
        above = max(e.infit, e.outfit) > high
        below = min(e.infit, e.outfit) < low
        bkey = (band, key[1])
        if role == "neutral":
            store[bkey + ("false",)].append(above or below)
        elif role == "noisy":
            store[bkey + ("noisy",)].append(above)
        elif role == "central":
            store[bkey + ("central",)].append(below)


def _cells(report, session, store) -> None:
    rater, item = session.bias_cell
    sign = np.sign(session.shares[rater])
    for cell in report.bias:
        if (cell.rater, cell.item) == (rater, item):
            store[("bias", session.dataset, "planted")].append(cell.listed and cell.bias * sign > 0)
        elif session.roles.get(cell.rater) == "neutral":
            store[("bias", session.dataset, "other")].append(cell.listed)


def audit(session, number: int):
    """The session through parm's run_session (second reads as score2/rater2 when it has them)."""
    frame, vectors = session.frame()
    config = config_from_dict({**SETTINGS, **(DOUBLE if "score2" in frame else {})})
    items = split_items(frame, config, f"session-{number}.csv")
    embeddings = [vectors[r.rows - 1] for r in items.audited]
    return frame, embeddings, run_session(items, config, embeddings=embeddings)


def residual_sd(rng, dataset: str, items, design: Design) -> float:
    """The neutral raters' residual sd in points: sd of e in X - E = a_item + b_rater + e over an
    unplanted session of the dataset (its own random stream), the unit of standardized effects."""
    session = build_session(rng, dataset, items, plant=False, design=design)
    from engine.audit.raters.table import _pool

    scores = _pool(audit(session, -1)[2].results)[0]
    _, item_of = np.unique(scores.item, return_inverse=True)
    _, rater_of = np.unique(scores.rater, return_inverse=True)
    e = two_way(scores.value - scores.expected, item_of, rater_of)[2]
    return float(np.std(e))


def run(args) -> dict:
    data = {name: load_dataset(name) for name in dict.fromkeys(args.datasets)}
    rng = np.random.default_rng(args.seed)
    store: dict = defaultdict(list)
    started = time.perf_counter()
    designs = {}
    for dataset in dict.fromkeys(args.datasets):
        sd = None
        if args.standard and dataset != "scientsbank":
            plain = Design(double=args.double)
            sd = residual_sd(np.random.default_rng([args.seed, 1]), dataset, data[dataset], plain)
            print(f"{dataset}: neutral raters' residual sd {sd:.3f} points", flush=True)
            store["sd " + dataset] = sd
        designs[dataset] = Design(double=args.double, same_way=args.same_way or args.up_only,
                                  sd=sd, up_only=args.up_only)  # fmt: skip
    for number in range(args.sessions):
        dataset = args.datasets[number % len(args.datasets)]
        session = build_session(rng, dataset, data[dataset], design=designs[dataset])
        frame, embeddings, audited = audit(session, number)
        truth = Truth.of(session, audited.results)
        raters = audited.raters
        if args.expert:
            with_expert(audited.results, truth, args.expert, [args.seed, 2, number])
            raters = rater_report(audited.results)
            tally_expert(audited.results, truth, store)
        tally(raters, truth, SHIPPED, store)
        if args.keep:  # the audited results, for re-judging with other rules (--judge)
            Path(args.keep).mkdir(parents=True, exist_ok=True)
            with open(Path(args.keep) / f"session-{number:04d}.pkl", "wb") as handle:
                pickle.dump((truth, audited.results), handle)
        if args.dump:
            dump(audited.results, session, SHIPPED, store)
        if not args.shipped_only:
            saved = [result.rater_proba for result in audited.results]
            for name, probas in alternatives(audited.results, embeddings).items():
                for k, p in enumerate(probas):
                    audited.results[k] = replace(audited.results[k], rater_proba=p)
                tally(rater_report(audited.results), session, name, store)
                if args.dump:
                    dump(audited.results, session, name, store)
            for k, p in enumerate(saved):
                audited.results[k] = replace(audited.results[k], rater_proba=p)
        elapsed = time.perf_counter() - started
        if args.dump:
            with open(args.dump, "wb") as handle:
                pickle.dump(store["dump"], handle)
        print(f"session {number + 1}/{args.sessions} {dataset}: {len(frame)} scores, "
              f"{len(session.roles)} raters, {elapsed:.0f} s", flush=True)  # fmt: skip
    store["seconds"] = time.perf_counter() - started
    return store


def rate(values: list) -> str:
    return f"{np.mean(values):.2f} ({len(values)})" if values else "-"


def print_tables(store: dict, datasets) -> None:
    names = sorted({key[0] for key in store if isinstance(key, tuple) and key[0] not in BANDS
                    and key[0] not in ("bias", "MFRM", "expert")}, key=lambda n: (n != SHIPPED, n))  # fmt: skip
    groups = list(dict.fromkeys(datasets)) + ["ordered (pooled)"]
    columns = [*EFFECT_VERDICT, "false"]
    print("\nDetection of each planted effect and false alarms among neutral raters "
          "(share (count)):")  # fmt: skip
    print("| rules | data | " + " | ".join(columns) + " |")
    print("|---|---|" + "---:|" * len(columns))
    for name in [SHIPPED, *BANDS, *(n for n in names if n != SHIPPED)]:
        for group in groups:
            cells = [rate(_values(store, name, group, c)) for c in columns]
            if any(c != "-" for c in cells):
                print(f"| {name} | {group} | " + " | ".join(cells) + " |")
    shown = [f"{g} {np.mean(v):+.2f} ({np.mean(np.abs(v) >= 2):.2f})" for g in groups
             if (v := np.array(_values(store, SHIPPED, g, "neutral z"))).size]  # fmt: skip
    print("\nNeutral raters' leniency z: mean (share with |z| >= 2): " + ", ".join(shown))
    _print_mfrm(store, groups)
    print("\nFalse alarms by rule (shipped):")
    for group in groups:
        rules = ("lenient", "harsh", "noisy", "central tendency", "drifting")
        neutral = len(_values(store, SHIPPED, group, "false"))
        counts = {r: len(_values(store, SHIPPED, group, "false " + r)) for r in rules}
        if neutral:
            print(f"  {group}: " + ", ".join(f"{r} {c / neutral:.3f}" for r, c in counts.items()))
    sizes = [f"{g} {role} {np.median(v):+.2f}" for g in groups
             for role in ("lenient", "harsh", "drifting")
             if (v := _values(store, SHIPPED, g, "size " + role))]  # fmt: skip
    if sizes:
        sds = ", ".join(f"{k[3:]} {v:.3f}" for k, v in store.items() if str(k).startswith("sd "))
        print(f"\nNeutral residual sd (points): {sds}")
        print("Planted size (median realised mean shift / sd): " + ", ".join(sizes))
    print("\nShrinkage of lenient and harsh raters: median measured leniency / planted shift:")
    for name in names:
        shown = [f"{g} {np.median(v):.2f}" for g in groups
                 if (v := _values(store, name, g, "shrinkage"))]  # fmt: skip
        print(f"  {name}: " + ", ".join(shown))
    print("\nBias cell (rater x item): planted cell listed with its sign; other cells listed:")
    for group in groups:
        planted, other = (
            _values(store, "bias", group, "planted"),
            _values(store, "bias", group, "other"),
        )
        if planted:
            print(f"  {group}: planted {rate(planted)}, other cells {rate(other)}")
    for group in groups:
        reads = _values(store, "expert", group, "reads")
        if reads:
            anchored = _values(store, "expert", group, "anchored")
            print(f"  expert, {group}: {np.median(reads):.0f} expert-scored reads a session "
                  f"(median), anchored in {rate(anchored)} of the sessions")  # fmt: skip
    print(f"\n{store['seconds']:.0f} s in all")


def _print_mfrm(store: dict, groups) -> None:
    """MFRM's lenient and harsh detection at |z| >= 3 and at the false-alarm rate of parm's own
    lenient/harsh rules on the same neutral raters (its threshold the matching quantile of the
    neutral raters' |z|)."""
    if not _values(store, "MFRM", "ordered (pooled)", "z neutral"):
        return
    print("\nMany-facet Rasch (text-blind) on the same sessions: lenient, harsh detection, false "
          "alarms (lenient/harsh only):")  # fmt: skip
    print("| data | threshold | lenient | harsh | false |")
    print("|---|---|---:|---:|---:|")
    for group in groups:
        neutral = np.abs(_values(store, "MFRM", group, "z neutral"))
        if neutral.size == 0:
            continue
        n = len(_values(store, SHIPPED, group, "false"))
        parm_fa = sum(len(_values(store, SHIPPED, group, "false " + r)) for r in
                      ("lenient", "harsh")) / max(n, 1)  # fmt: skip
        matched = float(np.quantile(neutral, 1 - parm_fa)) if parm_fa > 0 else neutral.max()
        for label, c in (("3 SE", 3.0), (f"matched ({parm_fa:.3f})", matched + 1e-9)):
            lenient = [z >= c for z in _values(store, "MFRM", group, "z lenient")]
            harsh = [z <= -c for z in _values(store, "MFRM", group, "z harsh")]
            print(f"| {group} | {label}: {c:.2f} | {rate(lenient)} | {rate(harsh)} | "
                  f"{rate(list(neutral >= c))} |")  # fmt: skip


def _values(store, name, group, column) -> list:
    if group == "ordered (pooled)":
        return [v for d in ORDERED for v in store.get((name, d, column), [])]
    return store.get((name, group, column), [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--shipped-only", action="store_true",
                        help="skip the alternative expectations (faster)")  # fmt: skip
    parser.add_argument("--dump", help="save every report's pooled scores here (pickle)")
    parser.add_argument("--keep", help="keep each session's audited results in this folder")
    parser.add_argument("--judge", help="re-judge the sessions kept in this folder (no audit)")
    parser.add_argument("--no-mfrm", action="store_true", help="with --judge: no Rasch fit")
    parser.add_argument(
        "--double",
        type=float,
        default=0.0,
        help="share of answers read twice by another rater (e.g. 0.2)",
    )
    parser.add_argument("--same-way", action="store_true",
                        help="effects that do not cancel: up to half the raters lenient, "
                             "drifting up, noisy, central")  # fmt: skip
    parser.add_argument(
        "--up-only", action="store_true", help="--same-way with lenient and drifting-up raters only"
    )
    parser.add_argument(
        "--standard",
        action="store_true",
        help="effects at a standardized size (0.5 neutral residual sd)",
    )
    parser.add_argument(
        "--expert",
        type=float,
        default=0.0,
        help="share of answers given an expert score (the data's first human score, e.g. 0.05)",
    )
    args = parser.parse_args()
    print(f"{platform.node()} {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; data {os.environ.get('PARM_DATA_ROOT', '../shared/data')}")  # fmt: skip
    print_tables(judge(args) if args.judge else run(args), args.datasets)


if __name__ == "__main__":
    main()
