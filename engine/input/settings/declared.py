"""Every setting, declared once: its name, default (as defaults.json writes it), the rule that
checks and reads it (engine.input.settings.rules), its type, where it shows, its label, one line of help
and what it means.

From this table come: the validation and the settings' type (engine.input.settings.config's
`AuditConfig` writes out one field per setting, tests/test_config_fields.py keeps them equal;
`config_from_dict` validates by it), the defaults (defaults.json must equal
`DEFAULTS`: tests/test_packaging.py), the Settings form and the Load screen's column choices
(parm_tui), which settings name columns (`COLUMN_KEYS`), which are left out of the settings
digest, and the settings reference (`reference_table()`, which docs/reference/settings.md
holds: docs/make_reference.py writes it, tests/test_docs.py checks it). A new setting is one entry here, its field in `AuditConfig`, plus what reads it.

Sections: "form", the Settings form; "colbert", the form's late-interaction keys (shown for a
late-interaction model); "advanced", the form's Advanced section (speed, memory, where a run
happens, what is kept, who reviews); "actions", the rules of the lead's lists (backreads, third
reads routed, rater status: engine.actions); "columns", the file's columns (the Load screen, the
CLI's column flags); "file", how the file holds its reads (the Load screen, the CLI's --reads
and --answers); "monitor", the alert rules of a live session (`parm monitor`; the form's Monitor
section).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine.core.metric_names import METRIC_NAMES
from engine.input.settings import rules
from engine.input.settings.rules import Rule

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# How an answer longer than the model's input limit is read (`long_answers`,
# engine.embedding.reading): its first window only, or whole in overlapping windows.
LONG_ANSWERS = ("truncate", "windows")
# The answer cache's bound in MB (`embedding_cache_mb`): about 1.3 million answers of the bundled
# model (1.6 KB each with the database's own share); 0 keeps nothing.
DEFAULT_CACHE_MB = 2048
FORM, COLBERT, ADVANCED, COLUMNS, FILE = "form", "colbert", "advanced", "columns", "file"
ACTIONS = "actions"
# The rules of a live scoring session's alerts (`parm monitor`, engine.live).
MONITOR = "monitor"
SECTIONS = (FORM, COLBERT, ADVANCED, ACTIONS, COLUMNS, FILE, MONITOR)
# One line of help each: at most HELP_WIDTH characters, so it fits at 80 columns.
HELP_WIDTH = 72


@dataclass(frozen=True, kw_only=True)
class Setting:
    """One setting. default: its JSON form; type: the annotation of the value a run uses;
    digested: part of the settings digest a decision and a saved run record (settings that
    change nothing a run computes are not); later: added after digests were first recorded, so
    left out of the digest while it holds its default (which computes what earlier versions
    did), and earlier runs keep their digests; role and guess: for a column, the word sentences
    use and the key of engine.input.table.guess_columns."""

    name: str
    default: object
    rule: Rule
    type: str
    section: str
    label: str
    help: str
    meaning: str
    digested: bool = True
    later: bool = False
    placeholder: str = ""
    role: str = ""
    guess: str = ""


def _column(
    name: str, default: str | None, label: str, role: str, guess: str, meaning: str,
    help_text: str, later: bool = False,
) -> Setting:  # fmt: skip
    nullable = name not in ("text_column", "score_column")
    return Setting(
        name=name, default=default, rule=rules.text(nullable=nullable),
        type="str | None" if nullable else "str", section=COLUMNS, label=label, help=help_text,
        meaning=meaning, role=role, guess=guess, later=later,
    )  # fmt: skip


SETTINGS: tuple[Setting, ...] = (
    Setting(
        name="embedding_model",
        default=DEFAULT_MODEL,
        rule=rules.text(),
        type="str",
        section=FORM,
        label="Embedding model",
        help="The model that turns answers into vectors (the bundled one is offline).",
        meaning=(
            "model name or path; the default resolves to the bundled copy. `static` is the fast "
            "path: a static model distilled from the bundled one on first use (about 140 times "
            "faster to embed on a CPU, audits less well: see [the benchmarks]"
            "(../explanation/benchmarks.md); needs `pip "
            "install -e '.[fast]'`). A name containing `colbert`, `lateon` or `late-interaction` "
            "selects late-interaction (ColBERT) mode"
        ),
    ),
    Setting(
        name="normalize_similarities",
        default=True,
        rule=rules.boolean(),
        type="bool",
        section=FORM,
        label="Normalise similarities",
        help="Rescale similarities to 0-1 over all pairs before the power.",
        meaning="min-max normalise similarities over all off-diagonal pairs to [0, 1]",
    ),
    Setting(
        name="similarity_power",
        default=1.0,
        rule=rules.power(),
        type="float | tuple[float, ...] | PowerInterval",
        section=FORM,
        label="Power p",
        help="Higher p leans harder on the closest neighbours (a grid tunes it).",
        meaning=(
            'power p: a number, a list (grid), or `{"min": 1, "max": 10, "tol": 0.02}` for bounded '
            "Brent per K"
        ),
    ),
    Setting(
        name="similarity_top_k",
        default=[5, 10, 15, 20, 25, 30, 35, 40, 45, 50],
        rule=rules.top_k(),
        type="int | tuple[int, ...] | None",
        section=FORM,
        label="Top-K neighbours",
        help="How many similar answers each score is compared with (a grid is tuned).",
        meaning="K: an integer, a list (grid), or `null` for the dense graph",
    ),
    Setting(
        name="similarity_top_k_symmetric",
        default=True,
        rule=rules.boolean(),
        type="bool",
        section=FORM,
        label="Symmetric top-K",
        help="Two answers are neighbours when either lists the other.",
        meaning="keep the union of the directed K-neighbourhoods, so the graph is symmetric",
    ),
    Setting(
        name="similarity_top_k_chunk",
        default=2048,
        rule=rules.integer(),
        type="int",
        section=ADVANCED,
        label="Chunk size (rows)",
        help="Rows per block of the neighbour search: memory against speed.",
        meaning=(
            "rows (and columns) per tile of the neighbour search (capped at 4,096, a tile of 64 MB)"
        ),
    ),
    Setting(
        name="colbert_top_k",
        default=100,
        rule=rules.integer(nullable=True),
        type="int | None",
        section=COLBERT,
        label="ColBERT top-K",
        help="Candidates per answer found before token-level (MaxSim) scoring.",
        meaning=(
            "candidate neighbours per response retrieved before MaxSim scoring (late "
            "interaction); `null` = all"
        ),
    ),
    Setting(
        name="colbert_batch_size",
        default=256,
        rule=rules.integer(),
        type="int",
        section=COLBERT,
        label="ColBERT batch size",
        help="Answer pairs per MaxSim batch: memory against speed.",
        meaning="response pairs per MaxSim batch",
    ),
    Setting(
        name="colbert_maxsim",
        default="normalised",
        rule=rules.choice(("normalised", "normalised by length"), ("raw", "raw sum (paper)")),
        type="str",
        section=COLBERT,
        label="ColBERT MaxSim",
        help="Normalised: MaxSim over the answer's length; raw: the paper's sum.",
        meaning=(
            '`"normalised"`: each MaxSim direction divided by its query\'s token count; `"raw"`: '
            "the paper's sum over tokens (see [Late interaction]"
            "(../explanation/method.md#late-interaction-colbert))"
        ),
    ),
    Setting(
        name="selection_metric",
        default="kappa",
        rule=rules.choice(*((m, m) for m in METRIC_NAMES)),
        type="str",
        section=FORM,
        label="Selection metric",
        help="The agreement figure that chooses K and p (for nll the lowest wins).",
        meaning="`accuracy`, `kappa`, `qwk`, `near`, `f1` (macro) or `nll` (lowest wins)",
    ),
    Setting(
        name="class_weight",
        default="balanced",
        rule=rules.choice(("balanced", "balanced"), (None, "none")),
        type="str | None",
        section=FORM,
        label="Class weighting",
        help="Balanced: rare scores weigh as much as common ones in the fit.",
        meaning='`"balanced"` (inverse category frequency) or `null`',
    ),
    _column(
        "text_column",
        "answer",
        "Text",
        "text",
        "text",
        "the answers' column",
        "The column holding the answers.",
    ),
    _column(
        "score_column",
        "score",
        "Score",
        "score",
        "score",
        "the audited scores' column",
        "The column holding the scores audited.",
    ),
    _column(
        "id_column",
        "id",
        "Id (opt.)",
        "id",
        "id",
        "the answers' ids (`null`: row numbers are used)",
        "The column identifying each answer (row numbers without one).",
    ),
    _column(
        "second_score_column",
        None,
        "2nd score (opt.)",
        "second score",
        "second",
        "a second rater's score column, for human-human agreement",
        "A second rater's scores, for human-human agreement.",
    ),
    Setting(
        name="score_columns",
        default=None,
        rule=rules.column_list(),
        type="tuple[str, ...] | None",
        section=COLUMNS,
        label="Reads (opt.)",
        help="Every read's score column, the audited one first (wide files).",
        meaning=(
            "a wide file's score columns, one per read, the audited score first (so its first is "
            "`score_column`); each column's reads are its own rater's unless `rater_columns` "
            "names them (`--score-cols G1,G2,G3`)"
        ),
        role="reads",
        guess="reads",
        later=True,
    ),
    Setting(
        name="rater_columns",
        default=None,
        rule=rules.column_list(),
        type="tuple[str, ...] | None",
        section=COLUMNS,
        label="Read raters (opt.)",
        help="Who gave each read, in the order of the score columns.",
        meaning=(
            "who gave each read of `score_columns`, in the same order (its first is "
            "`rater_column`); `null`: each score column is its own rater (`--rater-cols r1,r2,r3`)"
        ),
        role="read raters",
        guess="read_raters",
        later=True,
    ),
    Setting(
        name="reads",
        default="wide",
        rule=rules.choice(("wide", "wide: one row per answer"), ("long", "long: one row per read")),
        type="str",
        section=FILE,
        label="Shape",
        help="One row per answer (wide) or one row per read (long).",
        meaning=(
            '`"wide"`: one row per answer, its reads in score columns; `"long"`: one row per read '
            "(`id_column` the answer read, `score_column` its score, `rater_column` who gave it, "
            "`time_column` when; the text on one of the answer's rows, or in `answers_file`)"
        ),
        role="shape",
        guess="reads_shape",
        later=True,
    ),
    Setting(
        name="answers_file",
        default=None,
        rule=rules.text(nullable=True),
        type="str | None",
        section=FILE,
        label="Answers file",
        help="A file of the answers' texts by id, for a long file without them.",
        meaning=(
            "a long file's answers: a CSV or TSV with `id_column` and `text_column`, joined by id "
            "(`--answers FILE`)"
        ),
        role="answers file",
        guess="answers_file",
        later=True,
    ),
    Setting(
        name="sheet",
        default=None,
        rule=rules.text(nullable=True),
        type="str | None",
        section=FILE,
        label="Sheet",
        help="A workbook's sheet to read (empty: the one with answers and scores).",
        meaning=(
            "a workbook's sheet to read (Excel .xlsx, .xlsm, .xlsb, .xls; OpenDocument .ods); "
            "`null`: the visible sheet with a text column, a score column and at least 10 rows "
            "(asked when two or more have them: see [Excel workbooks](../how-to/excel.md)). A "
            "CSV or TSV has no sheets: there it is not used (`--sheet NAME`)"
        ),
        role="sheet",
        guess="sheet",
        later=True,
    ),
    Setting(
        name="score_order",
        default=None,
        rule=rules.score_order(),
        type="tuple[str, ...] | None",
        section=FORM,
        label="Score order",
        help="Score labels lowest first; text labels need it for QWK and 'off by 2'.",
        meaning=(
            'the score labels lowest first (a list, or `"low,medium,high"`); `null`: numbers in '
            "numeric order, text labels nominal"
        ),
        placeholder="e.g. low, medium, high",
    ),
    _column(
        "item_column",
        None,
        "Item (opt.)",
        "item",
        "item",
        "the item (question) of each answer: each item is audited on its own (see [Items and "
        "raters](../explanation/raters.md))",
        "Each answer's item (question): each item is audited on its own.",
    ),
    _column(
        "rater_column",
        None,
        "Rater (opt.)",
        "rater",
        "rater",
        "who gave each score: the rater table",
        "Who gave each score: the rater table.",
    ),
    _column(
        "second_rater_column",
        None,
        "2nd rater (opt.)",
        "second rater",
        "second_rater",
        "who gave each second score",
        "Who gave each second score.",
    ),
    _column(
        "time_column",
        None,
        "Time (opt.)",
        "time",
        "time",
        "when, or in which order, each score was given (numbers, ISO 8601 dates and times, or "
        "times of day, one kind for the whole column; blank = not recorded): each rater's "
        "drift. Needs `rater_column`",
        "When (or in which order) each score was given: each rater's drift.",
    ),
    _column(
        "expert_column",
        None,
        "Expert (opt.)",
        "expert score",
        "expert",
        "validity papers: the lead's (expert's) score of some answers, on the item's scale "
        "(blank on the answers the lead did not score; in a long file, on any of the answer's "
        "rows): each rater's accuracy on them, and with enough of them the reference for "
        "leniency (see [Items and raters](../explanation/raters.md))",
        "The lead's scores of some answers (validity papers): the raters' anchor.",
        later=True,
    ),
    _column(
        "question_column",
        None,
        "Question (opt.)",
        "question",
        "question",
        "each item's question, shown beside its answers in the review",
        "The question the answers answer, shown in the review.",
        later=True,
    ),
    _column(
        "reference_column",
        None,
        "Reference (opt.)",
        "reference answer",
        "reference",
        "each item's reference (model) answer, shown beside its answers in the review",
        "The reference (model) answer, shown in the review.",
        later=True,
    ),
    _column(
        "kind_column",
        None,
        "Read kind (opt.)",
        "read kind",
        "kind",
        "what each read is: `first`, `second`, `validity` (a pre-scored seed; also `seed`), "
        "`backread` or `resolution` (also `third`); blank or no column: guessed (a read of an "
        "answer with an expert score is a validity read, an answer's earliest read its first, "
        "the others second). Agreement counts first and second reads, validity accuracy the "
        "reads of expert-scored answers (see [Follow a scoring session](../how-to/live-session.md))",
        "What each read is: first, second, validity (seed), backread, resolution.",
        later=True,
    ),
    Setting(
        name="on_bad_rows",
        default="error",
        rule=rules.choice(("error", "error: stop"), ("skip", "skip: leave out")),
        type="str",
        section=FORM,
        label="Bad rows",
        help="Rows with no usable score: stop with a message, or leave them out.",
        meaning=(
            'rows with a missing or non-numeric score: `"error"` stops, `"skip"` leaves them out '
            "with a warning (blank answers are audited, see [Input files](input.md))"
        ),
    ),
    Setting(
        name="embedding_batch_size",
        default=32,
        rule=rules.integer(),
        type="int",
        section=ADVANCED,
        label="Embedding batch",
        help="Answers per embedding batch (32 is fastest on a CPU).",
        meaning="texts per embedding batch (32 is fastest on CPU)",
    ),
    Setting(
        name="long_answers",
        default="truncate",
        rule=rules.choice(
            ("truncate", "truncate: the beginning"), ("windows", "windows: read whole")
        ),
        type="str",
        section=ADVANCED,
        label="Long answers",
        help="Answers past the model's limit: read the beginning, or whole in windows.",
        meaning=(
            "an answer longer than the model's input limit (256 word pieces for the bundled "
            'model): `"truncate"` reads its beginning, `"windows"` reads it whole in windows of '
            "the limit that overlap by a quarter, their vectors averaged (weighted by word "
            "pieces); an answer that fits is read the same way in both (measured no better on ASAP "
            "essay sets 7 and 8: [What a run embeds](../explanation/speed.md))"
        ),
        later=True,
    ),  # fmt: skip
    Setting(
        name="session_model",
        default="auto",
        rule=rules.choice(("auto", "auto: with 2+ items or reads"), ("off", "off")),
        type="str",
        section=ADVANCED,
        label="Session model",
        help="Fit one model over every item and read, cross-fitted (auto), or not.",
        meaning=(
            'the session model (docs/explanation/session-model.md): `"auto"` fits it once per run '
            "when the file has two or more items or an answer read more than once (and "
            "`cross_fit_folds` >= 2), and shows its cross-fitted QWK (kappa for unordered labels) "
            'per item and for the session beside the per-item figures; `"off"` does not'
        ),
        later=True,
    ),  # fmt: skip
    Setting(
        name="embedding_cache_mb",
        default=DEFAULT_CACHE_MB,
        rule=rules.integer(minimum=0),
        type="int",
        section=ADVANCED,
        label="Embedding cache MB",
        help="Most the embedding cache keeps; least recently used go first (0: none).",
        meaning=(
            "the most the embedding cache keeps, in MB (each distinct answer once; the least "
            "recently used go first; 0 keeps nothing). `parm cache` shows it, `parm cache clear` "
            "empties it"
        ),
        digested=False,
    ),
    Setting(
        name="near_duplicate_threshold",
        default=0.95,
        rule=rules.unit(),
        type="float",
        section=FORM,
        label="Near-duplicate cos",
        help="Cosine above which two answers count as the same answer.",
        meaning="cosine similarity above which two responses count as near-duplicates",
    ),
    Setting(
        name="flag_precision",
        default=None,
        rule=rules.unit(nullable=True),
        type="float | None",
        section=FORM,
        label="Flag precision",
        help="Empty: flag as many as the estimated wrong scores; else this precision.",
        meaning=(
            "`null`: each item flags as many answers, from the top of its queue, as it has "
            "estimated wrong scores; a number: the longest top of the queue whose mean severity "
            "(the probability that another read differs) reaches it"
        ),
        later=True,
    ),
    Setting(
        name="bootstrap_samples",
        default=200,
        rule=rules.integer(minimum=0),
        type="int",
        section=FORM,
        label="Bootstrap samples",
        help="Resamples for the 95% intervals (0: none; more is slower).",
        meaning="bootstrap resamples for confidence intervals (0 = none)",
    ),
    Setting(
        name="cross_fit_folds",
        default=5,
        rule=rules.integer(minimum=0),
        type="int",
        section=FORM,
        label="Cross-fit folds",
        help="Folds for the cross-fitted (out-of-sample) figures (0: none).",
        meaning="folds for the cross-fitted kappa (0 = none)",
    ),
    Setting(
        name="seed",
        default=0,
        rule=rules.integer(minimum=0),
        type="int",
        section=FORM,
        label="Seed",
        help="Seed of the bootstrap and the folds: one seed, the same figures.",
        meaning="seed for bootstrap and cross-fitting",
    ),
    Setting(
        name="jobs",
        default=1,
        rule=rules.integer(),
        type="int",
        section=ADVANCED,
        label="Worker processes",
        help="Worker processes auditing a session's items side by side.",
        meaning=(
            "worker processes for the items of a session (1: one after another, in this process)"
        ),
    ),
    Setting(
        name="scheduler",
        default=None,
        rule=rules.scheduler(),
        type="str | None",
        section=ADVANCED,
        label="Dask scheduler",
        help="A Dask cluster for the items (tcp://HOST:8786, local:N); empty: here.",
        meaning=(
            "a Dask scheduler's address (`\"tcp://10.0.0.5:8786\"`): the session's items run on "
            'that cluster; `"local:N"` starts N worker processes here for the run (`"local"`: one '
            "per core); `null`: Dask's own `DASK_SCHEDULER_ADDRESS` when set, else this machine "
            "(`jobs`). Needs `pip install 'parm[dask]'`; see [A session on a Dask "
            "cluster](../how-to/dask-cluster.md)"
        ),
        digested=False,
        placeholder="none: this machine; tcp://HOST:8786 or local:N (Dask)",
    ),
    Setting(
        name="scheduler_timeout",
        default=20.0,
        rule=rules.positive(),
        type="float",
        section=ADVANCED,
        label="Connect timeout s",
        help="Seconds to wait for the scheduler and a worker before stopping.",
        meaning=(
            "seconds to wait for the scheduler to answer and to have a worker before the run stops "
            "with a message (exit 2)"
        ),
        digested=False,
    ),
    Setting(
        name="device",
        default="auto",
        rule=rules.choice(
            ("auto", "auto: a GPU when PyTorch sees one"), ("cpu", "cpu"), ("cuda", "cuda")
        ),
        type="str",
        section=ADVANCED,
        label="Embedding device",
        help="Where the embedding model runs: auto (a GPU if there is one), cpu, cuda.",
        meaning=(
            'where the embedding model runs: `"auto"` (CUDA, or Apple MPS, when PyTorch sees one, '
            'else the CPU), `"cpu"` or `"cuda"` (an error naming the machine when PyTorch there '
            "sees no GPU). On a cluster it is each worker's own PyTorch that decides"
        ),
        digested=False,
    ),  # fmt: skip
    Setting(
        name="saved_runs",
        default=10,
        rule=rules.integer(),
        type="int",
        section=ADVANCED,
        label="Saved runs per file",
        help="How many runs of each file are kept to resume and reopen (the newest).",
        meaning=(
            "how many runs of each input file are kept for resuming and reopening (the newest; at "
            "least 1)"
        ),
        digested=False,
    ),
    Setting(
        name="reviewer",
        default=None,
        rule=rules.text(nullable=True),
        type="str | None",
        section=ADVANCED,
        label="Reviewer",
        help="Who decides in the review (decisions.csv names them); empty: your login.",
        meaning=(
            "who makes the review's decisions (decisions.csv and a colleague's import name them); "
            "`null`: the login name"
        ),
        digested=False,
        placeholder="none: your login name",
    ),
    Setting(
        name="serve_max_sessions",
        default=4,
        rule=rules.integer(),
        type="int",
        section=ADVANCED,
        label="Browser sessions at most",
        help="`parm serve`: app processes open at once; the next browser is refused.",
        meaning=(
            "the most app processes `parm serve` keeps open at once (one per browser connection); "
            "the next connection is refused with a message until one closes"
        ),
        digested=False,
    ),
    Setting(
        name="serve_idle_minutes",
        default=30,
        rule=rules.integer(),
        type="int",
        section=ADVANCED,
        label="Idle minutes (browser)",
        help="`parm serve`: a browser's app closes after this long without input.",
        meaning=(
            "minutes without a key, click or resize after which `parm serve` closes a browser "
            "connection's app (its decisions are already saved); the page offers to start again"
        ),
        digested=False,
    ),
)


# The lead's lists (engine.actions): they change nothing the audit computes, only the lists made
# from a run, so none is in the settings digest. The targets are NAEP's (docs/how-to/lead-actions.md).
def _action(
    name: str, default: object, rule: Rule, kind: str, label: str, help_text: str, meaning: str
) -> Setting:
    return Setting(
        name=name,
        default=default,
        rule=rule,
        type=kind,
        section=ACTIONS,
        label=label,
        help=help_text,
        meaning=meaning,
        digested=False,
    )


ACTION_SETTINGS: tuple[Setting, ...] = (
    _action("backread_rate", 0.05, rules.unit(), "float", "Backread rate",
            "Share of each rater's reads a supervisor re-reads (NAEP: at least 5%).",
            "the share of each active rater's reads listed in backreads.csv for a supervisor "
            "to read again (NAEP backreads at least 5% of each scorer's work)"),
    _action("backread_minimum", 5, rules.integer(minimum=0), "int", "Backreads at least",
            "Fewest backreads of a rater with reads (all of them when fewer).",
            "the fewest backreads a rater with reads gets (all their reads when they have "
            "fewer)"),
    _action("backread_watch_rate", 0.10, rules.unit(), "float", "Backread rate on watch",
            "The raised rate for a rater whose status is not qualified.",
            "the backread rate of a rater whose status on some item is watch, retrain or stop "
            "(at least `backread_rate`)"),
    _action("backread_random_share", 0.5, rules.unit(), "float", "Backreads at random",
            "Share of backreads drawn at random (an unbiased agreement estimate).",
            "the share of each rater's backreads drawn at random from all their reads (a simple "
            "random sample, so their agreement with the supervisor estimates the rater's "
            "without bias); the rest are the riskiest reads"),
    Setting(name="backread_supervisors", default=None, rule=rules.names(),
            type="tuple[str, ...] | None", section=ACTIONS, label="Supervisors",
            help="Who backreads, in turn (backreads.csv's reviewer); empty: none.",
            meaning="the supervisors who backread, given backreads in turn (round-robin, never "
            "their own reads); `null`: the reviewer column is left empty", digested=False,
            placeholder="none: e.g. Ann, Bo"),
    _action("third_read_gap", 2, rules.integer(), "int", "Third read at gap",
            "Reads this many scores apart need a third read (ordered scales).",
            "reads of one answer at least this many steps of the item's scale apart need a "
            "third read (ordered scores; 2: non-adjacent, 1: any disagreement); on unordered "
            "labels any disagreement does"),
    _action("third_read_unsure", True, rules.boolean(), "bool", "Third read if unsure",
            "An answer whose consensus is unsure needs a third read too.",
            "an answer whose consensus is unsure (ranked for a third read, "
            "`consensus.csv`) needs one too, even when its reads are close"),
    _action("third_read_cap", 50, rules.integer(), "int", "Third reads a day",
            "Most third reads one rater holds on a day.",
            "the most third reads one rater holds on a day, those still open from earlier "
            "days counted (the rest go to the next rater, or wait)"),
    _action("exact_targets", [0.85, 0.80, 0.75, 0.75, 0.60], rules.shares_by_size(),
            "tuple[float, ...]", "Exact targets",
            "Exact agreement targets by scale size: 2, 3, 4, 5, 6+ scores.",
            "the exact-agreement target of an item by the size of its scale (the first for 2 "
            "scores, the last for every larger scale; NAEP's: 85% for 2-point items, 80% "
            "3-point, 75% 4-5-point, 60% 6-point): a rater clearly below it on validity "
            "reads is retrained, on reads shared with other raters watched"),
    _action("qualify_targets", [0.90, 0.80, 0.70], rules.shares_by_size(),
            "tuple[float, ...]", "Qualification",
            "Exact agreement to requalify after retraining, by scale size.",
            "the exact agreement on validity reads a retrained or stopped rater must reach "
            "again to be qualified, and a live session's rater keeps over their last "
            "`monitor_validity_window` validity reads of an item (NAEP's qualification: "
            "90/80/70%; by scale size as `exact_targets`)"),
    _action("adjacent_target", 0.95, rules.unit(), "float", "Adjacent target",
            "Exact-or-adjacent agreement on validity reads below which a rater stops.",
            "exact-or-adjacent agreement with the expert (ordered scales of 3 scores or "
            "more) a rater must not be clearly below, else stop (RSMTool's 0.95)"),
    _action("status_minimum", 10, rules.integer(), "int", "Reads to judge",
            "Fewest validity (or shared) reads before a status rule judges.",
            "the fewest validity reads (or reads shared with another rater) of a rater on an "
            "item before a status rule judges them"),
    _action("status_window", 50, rules.integer(), "int", "Window of reads",
            "Status rules read the last this-many validity (or shared) reads.",
            "the status rules read a rater's last this-many validity reads (and reads shared "
            "with another rater) of an item, by time where the file has one"),
)  # fmt: skip

SETTINGS = SETTINGS + ACTION_SETTINGS

# The alert rules of a live session (engine.live.alerts.rules reads them), with the sources of their
# defaults in docs/explanation/monitor-alerts.md. None of them changes what an audit computes.
SETTINGS += (
    Setting(
        name="monitor_min_reads",
        default=20,
        rule=rules.integer(),
        type="int",
        section=MONITOR,
        label="Least reads judged",
        help="Reads (or pairs) a figure needs before an alert is judged on it.",
        meaning=(
            "the least double reads (or validity reads) a period's figure needs before any alert "
            "is judged on it: fewer and it is shown, never alerted"
        ),
        digested=False,
    ),
    Setting(
        name="monitor_alert_p",
        default=0.01,
        rule=rules.unit(),
        type="float",
        section=MONITOR,
        label="Alert p",
        help="An alert is raised when its test's p is below this (how sure it is).",
        meaning=(
            "an alert is raised only when its one-sided test (the figure against its threshold, "
            "its history or the morning) gives p below this; the p is in the alert's sentence"
        ),
        digested=False,
    ),
    Setting(
        name="monitor_adjacent_targets",
        default=[1.0, 0.95, 0.95, 0.95, 0.9],
        rule=rules.shares(5),
        type="tuple[float, ...]",
        section=MONITOR,
        label="Adjacent targets",
        help="Exact-or-adjacent targets for items of 2, 3, 4, 5 and 6+ score points.",
        meaning=(
            "the exact-or-adjacent agreement target of an item of 2, 3, 4, 5 and 6 or more score "
            "points (ordered scores; 0.95 is RSMTool's threshold; 1 never alerts)"
        ),
        digested=False,
    ),
    Setting(
        name="monitor_validity_window",
        default=20,
        rule=rules.integer(),
        type="int",
        section=MONITOR,
        label="Validity window",
        help="A rater's last N validity reads of an item are judged together.",
        meaning=(
            "how many of a rater's latest validity reads of an item the validity rule judges "
            "together (Pearson ePEN and Janison judge a rolling window)"
        ),
        digested=False,
    ),
    Setting(
        name="monitor_history_periods",
        default=3,
        rule=rules.integer(),
        type="int",
        section=MONITOR,
        label="History days",
        help="Past days an item needs before it is judged against its own history.",
        meaning=(
            "the past days (each with `monitor_min_reads` double reads) an item or a rater needs "
            "before a day is judged against their own history"
        ),
        digested=False,
    ),
    Setting(
        name="monitor_history_percentiles",
        default=[20.0, 5.0],
        rule=rules.percentiles(),
        type="tuple[float, ...]",
        section=MONITOR,
        label="History percentiles",
        help="Yellow and red: a day below these percentiles of the item's past days.",
        meaning=(
            "yellow and red: an item's day of exact agreement below these percentiles of its past "
            "days (NAEP since 2010: the 20th and the 5th), and below their pooled rate by the test"
        ),
        digested=False,
    ),
    Setting(
        name="monitor_within_day_drop",
        default=0.05,
        rule=rules.unit(),
        type="float",
        section=MONITOR,
        label="Within-day drop",
        help="The least fall of exact agreement from morning to afternoon alerted.",
        meaning=(
            "the least fall of an item's exact agreement from the morning to the afternoon (NAEP's "
            "example: 90% to 82%) that is alerted, when the test is sure of it"
        ),
        digested=False,
    ),
    Setting(
        name="monitor_drift_points",
        default=0.1,
        rule=rules.positive(),
        type="float",
        section=MONITOR,
        label="Drift points",
        help="The least change of a rater's leniency (points) called drift.",
        meaning=(
            "the least change, in score points, of a rater's leniency against their co-raters from "
            "their own earlier days to the day judged that is alerted as drift, when the test is "
            "sure of it"
        ),
        digested=False,
    ),
)

BY_NAME = {setting.name: setting for setting in SETTINGS}
# Every setting's default in the JSON form defaults.json has.
DEFAULTS: dict[str, Any] = {setting.name: setting.default for setting in SETTINGS}
# The settings that name a file's columns, in the order the Load screen shows them, and those
# that say how it holds its reads.
COLUMN_KEYS = tuple(setting.name for setting in SETTINGS if setting.section == COLUMNS)
FILE_KEYS = tuple(setting.name for setting in SETTINGS if setting.section == FILE)
CHOSEN_KEYS = COLUMN_KEYS + FILE_KEYS
# Settings that change nothing a run computes, only what is kept of it, where it runs or who
# reviews it (a cluster's results equal one process's; the device only moves the same model):
# not in the digest, so the digests of decisions and saved runs stay those of earlier parms.
NOT_DIGESTED = tuple(setting.name for setting in SETTINGS if not setting.digested)


def digested(name: str, value: object) -> bool:
    """Whether setting `name` at `value` (its JSON form) counts in the settings digest."""
    setting = BY_NAME[name]
    return setting.digested and not (setting.later and value == setting.default)


def in_section(section: str) -> tuple[Setting, ...]:
    return tuple(setting for setting in SETTINGS if setting.section == section)


def reference_table() -> str:
    """The settings reference as a Markdown table: key, default, what it accepts, meaning."""
    lines = ["| key | default | accepts | meaning |", "| --- | --- | --- | --- |"]
    for setting in SETTINGS:
        default = _json_text(setting.default)
        meaning = setting.meaning + _digest_note(setting)
        cells = (f"`{setting.name}`", f"`{default}`", setting.rule.accepted, meaning)
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def _digest_note(setting: Setting) -> str:
    if setting.section == ACTIONS:
        return ". Not in the settings digest: it changes the lead's lists, not the audit"
    if not setting.digested:
        return ". Not in the settings digest: it changes nothing a run computes"
    if setting.later:
        return ". At its default, not in the settings digest: earlier runs keep theirs"
    return ""


def _json_text(value: object) -> str:
    return json.dumps(value)
