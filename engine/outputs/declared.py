"""Every table parm writes, declared once (engine.outputs.columns): the rater table (raters.csv,
report.md's and report.html's rater tables, the app's Raters tab), items.csv, the rater x item
bias cells, the rater feedback, and the columns of the tables whose rows are built elsewhere
(predictions.csv, tuning.csv, decisions.csv, scores_reviewed.csv), so the output reference
lists every column a file can have. A new column is one entry here plus its computation.
"""

from __future__ import annotations

from engine.audit.raters.pairs import MIN_PAIRS
from engine.audit.raters.table import NOT_JUDGED
from engine.audit.raters.verdicts import (
    BIAS_POINTS,
    BIAS_T,
    FINE,
    LENIENCY_SIZE,
    LENIENCY_Z,
    RULES,
    below_size,
)
from engine.outputs import columns
from engine.outputs.columns import (
    COUNT,
    FIGURE,
    FLAG,
    LABEL,
    POINTS,
    SHARE,
    Column,
    OutputTable,
    figure_columns,
    row_attr,
    row_key,
)
from engine.outputs.declared_actions import ACTION_TABLES
from engine.outputs.live_tables import LIVE_TABLES
from engine.results.lead import GAP, SMALL_RULE

# What the rater table says of a rater with too few scores to judge.
TOO_FEW = NOT_JUDGED


def _effect(name: str):
    """A rater's effect (engine.audit.raters.effects), None where none was measured."""
    return lambda row, _: None if row.effects is None else getattr(row.effects, name)


def _drift(name: str):
    def get(row, _):
        drift = None if row.effects is None else row.effects.drift
        return None if drift is None else getattr(drift, name)

    return get


def rule_text(effects) -> str:
    """'lenient: <figures> (rule: ...); drifting: ...' or 'fine: no rule met'."""
    if effects is None:
        return ""
    if not effects.verdicts:
        small = below_size(effects.leniency, effects.leniency_z, effects.leniency_size)
        return f"{FINE}: no rule met" + ("" if small is None else f" ({small})")
    return "; ".join(f"{v.name}: {v.because} (rule: {RULES[v.name]})" for v in effects.verdicts)


def _reliability(part: int):
    """The rater's reliability (0), its interval's low (1) or high (2) end; None without it."""

    def get(row, raters):
        found = raters.reliability.get(row.rater) if raters is not None else None
        return None if found is None else found[part]

    return get


def _expert(name: str):
    """The rater's figure against the expert (engine.audit.raters.expert); None without one."""

    def get(row, raters):
        found = None if raters is None or raters.expert is None else raters.expert.get(row.rater)
        return None if found is None else getattr(found, name)

    return get


# The columns raters.csv has only with an expert score column (without one the file is as it
# was before validity papers).
WITH_EXPERT = "with an expert score column"


RATERS = OutputTable(
    "raters.csv",
    "rater, the farthest from the rest first (raters with too few scores last)",
    (
        Column("rater", "the rater's id, as the file has it (a rater column's value, or the "
               "score column's name where a wide file has no rater column)", row_attr("rater")),
        Column("verdict", "in plain words, strongest first: lenient, harsh, noisy, central "
               "tendency, drifting, or fine; too few to judge for a rater not judged",
               row_attr("verdict")),
        Column("n", "scores the rater gave: every read of theirs, the audited one or not",
               row_attr("n"), COUNT),
        Column("items", "items the rater scored", row_attr("items"), COUNT),
        Column("exact", "the rater's scores against the model's predictions: exact agreement",
               row_attr("exact"), FIGURE),
        Column("kappa", "Cohen's kappa of the rater's scores against the model's predictions",
               row_attr("kappa"), FIGURE),
        Column("qwk", "quadratic weighted kappa against the model's predictions (ordered scores)",
               row_attr("qwk"), FIGURE),
        Column("model_differs", "the rater's scores the model would change (not the likely "
               "wrong scores flagged in the queue)", row_attr("model_differs"), COUNT),
        Column("model_differs_share", "the share of the rater's scores the model would change",
               row_attr("model_differs_share"), SHARE, "model differs",
               interval=("model_differs_low", "model_differs_high")),
        Column("model_differs_low", "its Wilson 95% interval: low end",
               row_attr("model_differs_low"), SHARE),
        Column("model_differs_high", "its Wilson 95% interval: high end",
               row_attr("model_differs_high"),
               SHARE),
        Column("leniency", "score points above (positive) or below the typical rater, within "
               "items, against models fitted without the rater's scores", row_attr("leniency"),
               POINTS, interval=("leniency_low", "leniency_high")),
        Column("leniency_low", "its 95% interval: low end", row_attr("leniency_low"), POINTS),
        Column("leniency_high", "its 95% interval: high end", row_attr("leniency_high"), POINTS),
        Column("second_n", "the rater's reads of answers another rater read too",
               row_attr("second_n"), COUNT),
        Column("second_exact", "exact agreement with the other raters' reads of those answers "
               "(each pair of reads)", row_attr("second_exact"), FIGURE),
        Column("second_kappa", "Cohen's kappa with the other raters' reads of those answers",
               row_attr("second_kappa"), FIGURE),
        Column("note", f"'{TOO_FEW}' for a rater not judged",
               lambda row, _: "" if row.judged else TOO_FEW),
        Column("rule", "the figures and the rule behind each verdict",
               lambda row, _: rule_text(row.effects)),
        Column("leniency_z", "leniency in standard errors", _effect("leniency_z"), FIGURE),
        Column("leniency_size", "leniency over the reads' residual standard deviation (lenient "
               f"or harsh needs at least {LENIENCY_SIZE:g} either way besides {LENIENCY_Z:g} "
               "standard errors)",
               _effect("leniency_size"), FIGURE),
        Column("co_reads", "pairs of the rater's reads with a co-rater's read of the same "
               "answer (leniency combines them with the model's figure from "
               f"{MIN_PAIRS} on)", _effect("co_reads"), COUNT),
        Column("reference", "'yes' for the reference raters the others are measured against "
               "(judged raters with no verdict whose leniencies agree); 'expert' where "
               "leniency is measured against the expert's scores (validity papers)",
               lambda row, _: "" if row.effects is None else "expert" if row.effects.anchored
               else "yes" if row.effects.in_reference else "no"),
        Column("infit", "information-weighted fit mean-square (1: as variable as the model "
               "expects)", _effect("infit"), FIGURE),
        Column("infit_z", "infit as a ZSTD (Wilson-Hilferty)", _effect("infit_z"), FIGURE),
        Column("outfit", "outlier-sensitive fit mean-square", _effect("outfit"), FIGURE),
        Column("outfit_z", "outfit as a ZSTD", _effect("outfit_z"), FIGURE),
        Column("noise", "infit over the reference raters' median infit", _effect("noise"),
               FIGURE, "noise x ref."),
        Column("noise_z", "noise on the log scale, in standard errors", _effect("noise_z"),
               FIGURE),
        Column("spread", "the spread of the rater's scores against what the model expects, "
               "over the reference raters' (below 1: a narrower range)", _effect("spread"),
               FIGURE),
        Column("central_z", "slope of (score - expected) on expected, against the reference "
               "raters', in standard errors", _effect("central_z"), FIGURE),
        Column("middle_share", "the share of the rater's scores in the middle categories",
               _effect("middle_share"), SHARE, "middle"),
        Column("middle_expected", "the share the model expects there", _effect("middle_expected"),
               SHARE),
        Column("middle_z", "middle over-use in standard errors", _effect("middle_z"), FIGURE),
        Column("low_z", "use of the item's lowest score against the reference raters'",
               _effect("low_z"), FIGURE),
        Column("high_z", "use of the item's highest score against the reference raters'",
               _effect("high_z"), FIGURE),
        Column("fair_average", "the rater's average score had they scored as the model expects",
               _effect("fair_average"), FIGURE, "fair avg"),
        Column("observed_average", "the rater's average score", _effect("observed_average"),
               FIGURE),
        Column("disagreement", "unordered labels: the model's improbability of the rater's "
               "scores against its expectation (1 under the model)", _effect("disagreement"),
               FIGURE),
        Column("disagreement_z", "disagreement in standard errors", _effect("disagreement_z"),
               FIGURE),
        Column("drift", "change in leniency from the rater's first score to their last, in "
               "points", _drift("change"), POINTS, when="with a time column"),
        Column("drift_se", "its HC3 standard error", _drift("se"), FIGURE,
               when="with a time column"),
        Column("drift_t", "its t", _drift("t"), FIGURE, when="with a time column"),
        Column("drift_p", "its p-value", _drift("p"), FIGURE, when="with a time column"),
        Column("bias_cells", "how many of the rater's rater x item cells are beyond the rule "
               "(rater_item_bias.csv)",
               lambda row, raters: len(raters.listed_bias(row.rater)), COUNT, "bias cells"),
        Column("reliability", "the consensus's estimate of the chance that a read of the "
               "rater's is the true score (engine.audit.reads.consensus)", _reliability(0), SHARE,
               interval=("reliability_low", "reliability_high"),
               when="with answers read twice or more"),
        Column("reliability_low", "its Jeffreys 95% interval: low end", _reliability(1), SHARE,
               when="with answers read twice or more"),
        Column("reliability_high", "its Jeffreys 95% interval: high end", _reliability(2),
               SHARE, when="with answers read twice or more"),
        Column("expert_n", "the rater's reads of answers the expert (the lead) scored",
               _expert("n"), COUNT, "expert n", when=WITH_EXPERT),
        Column("expert_exact", "exact agreement with the expert's scores", _expert("exact"),
               FIGURE, "expert exact", when=WITH_EXPERT),
        Column("expert_adjacent", "agreement within one step of the item's scale with the "
               "expert's scores (ordered scores)", _expert("adjacent"), FIGURE,
               "expert adjacent", when=WITH_EXPERT),
        Column("expert_difference", "mean (rater - expert) in points (ordered scores)",
               _expert("difference"), POINTS, "vs expert",
               interval=("expert_low", "expert_high"), when=WITH_EXPERT),
        Column("expert_low", "its 95% t interval: low end", _expert("low"), POINTS,
               when=WITH_EXPERT),
        Column("expert_high", "its 95% t interval: high end", _expert("high"), POINTS,
               when=WITH_EXPERT),
    ),
)  # fmt: skip

ITEMS = OutputTable(
    "items.csv",
    "item: the audited ones in file order, then the skipped ones",
    (
        Column("item", "the item (question)", row_attr("item")),
        Column("status", "audited, or skipped: the reason",
               lambda s, _: "audited" if s.skipped is None else f"skipped: {s.skipped}"),
        Column("n", "responses", row_attr("n"), COUNT),
        Column("scores", "responses per score, 'label:count ...'",
               lambda s, _: " ".join(f"{label}:{n}" for label, n in s.score_counts.items())),
        Column("top_k", "the selected K (empty: the dense graph)", row_attr("top_k"), COUNT,
               "K"),
        Column("power", "the selected power p", row_attr("power"), FIGURE, "p"),
        Column("cross_fit_kappa", "kappa with each score predicted by a model that never saw "
               "it: the figure to lead with", row_attr("cross_fit_kappa"), FIGURE,
               "cross-fit kappa", when="with cross_fit_folds >= 2"),
        Column("kappa", "the model's in-sample kappa against the human scores (optimistic: the "
               "fit saw every score it is judged on)", row_attr("kappa"), FIGURE,
               "in-sample kappa"),
        Column("cross_fit_qwk", "cross-fitted QWK (ordered scores)", row_attr("cross_fit_qwk"),
               FIGURE, "cross-fit QWK", when="with cross_fit_folds >= 2"),
        Column("qwk", "in-sample QWK (ordered scores)", row_attr("qwk"), FIGURE, "in-sample QWK"),
        Column("warning", f"'too small to judge' when the item has {SMALL_RULE} (its "
               "in-sample figures are memorised: the reports show none); else 'in-sample ... "
               "above cross-fitted' when "
               f"the in-sample kappa or QWK exceeds the cross-fitted one by more than {GAP:.2f} "
               "(engine.results.lead)", row_attr("warning")),
        Column("session_model", "the session model's cross-fitted QWK (kappa for unordered "
               "labels): one fit over every item and read, items and raters as random effects",
               row_attr("session_model"), FIGURE, "session model x-fit",
               when="with session_model auto and 2+ items or reads"),
        Column("session_model_in_sample", "the session model's in-sample QWK (kappa for "
               "unordered labels): each audited read decided from every other read of the "
               "session, its answer's other reads too where it has any (then not comparable to "
               "the cross-fitted figure, whose models saw no read of the answer)", row_attr("session_model_in_sample"), FIGURE,
               "session model in-sample", when="with session_model auto and 2+ items or reads"),
        Column("flagged", "the likely wrong scores: as many answers from the top of the item's "
               "queue as it has estimated wrong scores (or the top that reaches flag_precision)",
               row_attr("flagged"), COUNT),
        Column("estimated_wrong", "how many of the item's scores another read would likely "
               "change: from its answers read twice, else the sum of its severities",
               row_attr("estimated_wrong"), FIGURE, "est. wrong",
               interval=("estimated_wrong_low", "estimated_wrong_high")),
        Column("estimated_wrong_low", "its 95% interval: low end", row_attr("estimated_wrong_low"),
               FIGURE),
        Column("estimated_wrong_high", "its 95% interval: high end",
               row_attr("estimated_wrong_high"), FIGURE),
        Column("estimated_from", "what the estimate rests on: second reads or severities",
               row_attr("estimated_from")),
        Column("human_exact", "each answer's audited read against its second read, on the "
               "answers read twice: exact agreement (every pair of raters: agreement.csv)",
               row_attr("human_exact"), FIGURE, when="with a second score"),
        Column("human_kappa", "the audited read against the second read: Cohen's kappa",
               row_attr("human_kappa"), FIGURE, "raters' kappa", when="with a second score"),
    ),
)  # fmt: skip

BIAS = OutputTable(
    "rater_item_bias.csv",
    "rater x item cell with at least 10 scores, the largest |t| first",
    (
        Column("rater", "the rater", row_attr("rater")),
        Column("item", "the item", row_attr("item")),
        Column("n", "the rater's scores on the item", row_attr("n"), COUNT),
        Column("observed", "their average score", row_attr("observed"), FIGURE),
        Column("expected", "the average the model expects with the rater's overall leniency, "
               "on the item's scale", row_attr("expected"), FIGURE),
        Column("bias", "observed - expected, in points", row_attr("bias"), POINTS, "Obs - Exp"),
        Column("se", "its standard error", row_attr("se"), FIGURE, "SE"),
        Column("t", "its t", row_attr("t"), FIGURE),
        Column("p", "its p-value", row_attr("p"), FIGURE),
        Column("listed", f"beyond the rule (|t| >= {BIAS_T:g} and |bias| >= {BIAS_POINTS:g} "
               "points)", row_attr("listed"), FLAG),
    ),
)  # fmt: skip

FEEDBACK = OutputTable(
    "rater_feedback.csv",
    "score the model would change (a rater's model_differs in raters.csv), the rater table's "
    "raters in order, each rater's most severe first",
    (
        Column("rater", "who gave the score"),
        Column("item", "the item"),
        Column("row", "the data row in the input file", kind=COUNT),
        Column("id", "the response's id"),
        Column("score", "the rater's score", kind=LABEL),
        Column("model_score", "the score the model prefers", kind=LABEL),
        Column("p_score", "the model's probability of the rater's score", kind=FIGURE),
        Column("severity", "the review queue's severity", kind=FIGURE),
        Column("answer", "the answer"),
        Column("neighbours", "the five neighbours that weigh most: 'id (score, similarity)'"),
        Column("nearest_answer", "the nearest neighbour's answer"),
    ),
)

# The columns that name a response, shared by the tables of responses.
ROW = Column("row", "the 1-based data row in the input file", kind=COUNT)
ID = Column("id", "the response's id")
ITEM = Column("item", "the item", when="with an item column")
RATER = Column("rater", "who gave the score", when="with a rater column")
TEXT = Column("text", "the answer")
SCORE = Column("score", "the human score (original label)", kind=LABEL)

PREDICTIONS = OutputTable(
    "predictions.csv",
    "response, in input-row order",
    (
        ROW, ID, ITEM, RATER, TEXT, SCORE,
        Column("predicted", "the score PARM predicts", kind=LABEL),
        Column("severity", "the review queue's severity, 0 to 1: the probability that another "
               "read would give another score", kind=FIGURE),
        Column("flagged", "likely wrong: among the top of its item's queue, as many as the "
               "item's estimated wrong scores (or the top reaching flag_precision)", kind=FLAG),
        Column("evidence", "the neighbours that drove the prediction, 'row:score:weight;...'"),
        Column("score2", "the second read", kind=LABEL, when="with a second score"),
        Column("raters_disagree", "the two reads differ", kind=FLAG, when="with a second score"),
    ),
    families=(
        Column("p_<label>", "PARM's probability of each score (every score on any item's "
               "scale; empty where a score is not on an item's)", kind=FIGURE),
    ),
)  # fmt: skip

# tuning.csv: the configurations tuned, each with every agreement figure of its fit.
METRIC_FAMILY = Column(
    "<metric>",
    "each agreement figure of the fit: accuracy, kappa, qwk, near, f1, nll (no qwk or near "
    "for unordered labels)",
    kind=FIGURE,
)
TUNING = OutputTable(
    "tuning.csv",
    "configuration tried (per item in a session)",
    (ITEM, Column("top_k", "K (empty: the dense graph)", kind=COUNT),
     Column("power", "the power p", kind=FIGURE),
     Column("selected", "the configuration chosen", kind=FLAG)),
    families=(METRIC_FAMILY,),
)  # fmt: skip

DECISIONS = OutputTable(
    "decisions.csv",
    "review decision (or answer with reads typed in the review), in input-row order",
    (
        ROW, ID, ITEM, RATER, TEXT, SCORE,
        Column("predicted", "this run's predicted score", kind=LABEL),
        Column("severity", "this run's severity", kind=FIGURE),
        Column("action", "keep, change or unsure (empty: no decision, the row is for its "
               "typed reads)"),
        Column("new_score", "the new score of a change", kind=LABEL),
        Column("note", "the reviewer's note"),
        Column("decided_at", "when (UTC, ISO 8601)"),
        Column("reviewer", "who decided (the reviewer setting, by default the login name)"),
        Column("decided_run_id", "the run the decision was made on"),
        Column("decided_settings", "that run's settings digest"),
        Column("decided_predicted", "the score predicted then", kind=LABEL),
        Column("decided_severity", "the severity then", kind=FIGURE),
        Column("conflicts", "other reviewers' imported decisions that differ, not yet settled"),
        Column("consensus", "the consensus score of an answer read twice or more (consensus.csv)",
               kind=LABEL, when="with answers read twice or more"),
        Column("consensus_p", "its probability", kind=FIGURE,
               when="with answers read twice or more"),
        Column("added_reads", "the reads typed in the review of the answer, as JSON: a list of "
               "{rater, score, added_at, reviewer} (`parm review import` brings them in)",
               when="with answers read twice or more"),
    ),
)  # fmt: skip

REVIEWED = OutputTable(
    "scores_reviewed.csv",
    "row of the input file, in input order, with every column as read",
    (
        Column("final_score", "the review's new score where a decision changed it, else the "
               "score as the file had it", kind=LABEL),
        Column("decision", "keep, change, unsure, or empty"),
        Column("note", "the reviewer's note"),
        Column("decided_at", "when"),
        Column("predicted", "this run's predicted score (empty for rows not audited)",
               kind=LABEL),
        Column("severity", "this run's severity", kind=FIGURE),
        Column("consensus", "the consensus score of an answer read twice or more (consensus.csv; "
               "on the row of its audited read, else empty)", kind=LABEL),
        Column("consensus_p", "its probability", kind=FIGURE),
    ),
    families=(Column("<input column>", "every column of the input file, as read, first"),),
)  # fmt: skip

# Files whose answers are read twice or more (engine.audit.reads.reads_audit).
READS_WHEN = "with answers read twice or more"
CONSENSUS = OutputTable(
    "consensus.csv",
    "answer, by item, then in input-row order",
    (
        Column("id", "the answer's id", row_key("id")),
        Column("item", "the item", row_key("item")),
        Column("reads", "how many reads the answer has (reads typed in the review included)",
               row_key("reads"), COUNT),
        Column("consensus", "the consensus score: the most probable true score between the "
               "lowest and highest read (among the labels given, on nominal labels; the reads' "
               "score where they agree), from the reads weighted by each rater's reliability "
               "and from the text (empty for an answer read once)", row_key("consensus"), LABEL),
        Column("consensus_p", "its probability among the scores the reads allow (1 where they "
               "agree)", row_key("consensus_p"), FIGURE),
        Column("third_read_rank", "1 = read it a third time first; empty when the consensus is "
               "sure (p >= 0.95) or the answer was read once", row_key("third_read_rank"), COUNT),
    ),
    families=(Column("score_<rater>", "each rater's read of the answer (empty where they did not "
                     "read it); raters who gave only reads typed in the review come after the "
                     "file's", kind=LABEL),),
)  # fmt: skip


AGREEMENT = OutputTable(
    "agreement.csv",
    "item and rater pair (rater_a 'all': the item's alpha over every read), then the session's "
    "(item 'all') when the file has several items",
    (
        Column("item", "the item, or 'all' for the session (each pair's item figures weighted by "
               "its shared answers; alpha over every answer of the session as one set of units; "
               "PRMSE from the items' pooled MSE_T and true-score variances)", row_key("item")),
        Column("rater_a", "the first rater of the pair, or 'all'", row_key("rater_a")),
        Column("rater_b", "the second rater of the pair", row_key("rater_b")),
        Column("n", "answers both read (for 'all': answers read twice or more)", row_key("n"),
               COUNT),
        *figure_columns("exact", "exact agreement (Wilson interval)", SHARE),
        *figure_columns("adjacent", "agreement within one score (ordered scores; Wilson "
                         "interval)", SHARE),
        *figure_columns("kappa", "Cohen's kappa (bootstrap interval over answers)", FIGURE),
        *figure_columns("qwk", "quadratic weighted kappa (ordered scores)", FIGURE),
        Column("too_few", "fewer than 20 shared answers: figures too unsure to judge",
               row_key("too_few"), FLAG),
        Column("below", "the figures under RSMTool's thresholds (exact < 0.5, adjacent < 0.95, "
               "QWK < 0.7); none where too_few", row_key("below")),
        *figure_columns("alpha_nominal", "Krippendorff's alpha, nominal ('all' rows)", FIGURE),
        *figure_columns("alpha_ordinal", "Krippendorff's alpha, ordinal (ordered scores)",
                         FIGURE),
        *figure_columns("alpha_interval", "Krippendorff's alpha, interval (ordered scores)",
                         FIGURE),
        *figure_columns("prmse", "PRMSE of the model's cross-fitted expected scores against the true "
                         "score ('all' rows; ordered scores; at most 1, below 0 where the "
                         "scores predict the true score worse than the item's mean)", FIGURE),
        Column("prmse_note", "'not estimable: ' and why, where an 'all' row has no PRMSE (fewer "
               "than 20 answers read twice, a true-score variance not above 0 or whose "
               "interval reaches 0, nominal labels, no cross-fitted scores)",
               row_key("prmse_note")),
    ),
)  # fmt: skip

# Every CSV parm writes, in the order the reference lists them; each has a last `run_id` (a
# live session's tables: engine.outputs.live_tables).
TABLES = (PREDICTIONS, TUNING, ITEMS, RATERS, BIAS, FEEDBACK, DECISIONS, REVIEWED, CONSENSUS,
          AGREEMENT, *ACTION_TABLES, *LIVE_TABLES)  # fmt: skip


def reference_markdown() -> str:
    """The output reference: every CSV's columns, what each means and when a file has it."""
    return columns.reference_markdown(TABLES)
