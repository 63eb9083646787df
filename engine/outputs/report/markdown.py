"""report.md: the audit as a rater-lead reads it, section by section, from `report_dict`.

Everything that comes from data or paths (answers, ids, labels, column names, the file's path,
the model's name, warnings that quote them) goes through `md_text` (in table cells `md_cell`,
at the start of a list item `md_item`): one line, control characters replaced, and a backslash
before each character that would act there, and only those, so the text reads as it was
written (`sample_data/plant_growth.csv`, not `sample\\_data`) while no answer can add HTML, a
column, a heading, a list, a link, code or emphasis:

- everywhere: `` ` `` (code), `*` (emphasis), `[` `]` (links, images), `~` (strikethrough),
  `<` (HTML, autolinks), `&` before an entity name (`&lt;`), and `\\` before punctuation or
  at the end (an escape, a line break);
- `_` unless it stands between two letters or digits, where CommonMark never reads it as
  emphasis (`plant_growth`);
- in table cells `|`; at the start of a list item `#`, `>`, `-`, `+`, `=` and `1.` / `1)`.
"""

from __future__ import annotations

import math
import re

from engine.core.metric_names import METRIC
from engine.core.text import safe_text
from engine.input.settings.config import SINGLE_VECTOR
from engine.input.several_reads import read_pair
from engine.outputs.report.item_content import FIELD_THRESHOLDS, report_dict
from engine.results.item import AuditResult
from engine.results.lead import lead_text, small_note, wrong_phrase

# Characters that act anywhere in a line: code spans, emphasis, links and images, strikethrough,
# raw HTML and autolinks.
_ALWAYS = re.compile(r"[`*\[\]~<]")
# A backslash escapes the punctuation after it and breaks the line at its end.
_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~]|$)")
# `_` opens or closes emphasis unless a letter or digit stands on both sides of it.
_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# An entity or numeric character reference: `&amp;`, `&#60;`.
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
_HASH_END = re.compile(r"#(?=#*$)")
# What would make a list item's text start a block of its own: a heading, a quote, a nested
# list, a setext underline.
_ITEM_START = re.compile(r"^([#>+=-])|^(\d+)([.)])")


class Markup(str):
    """Markdown that parm writes itself (never data): tables pass it through unescaped."""


def _cut(value, limit: int | None = None) -> str:
    text = " ".join(safe_text(value, one_line=True).split())
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def md_text(value, limit: int | None = None) -> str:
    """Untrusted text as inert inline Markdown on one line (cut to `limit` characters), with a
    backslash only before what would act (see the module's docstring)."""
    text = _BACKSLASH.sub(r"\\\\", _cut(value, limit))
    text = _ALWAYS.sub(lambda m: "\\" + m.group(), text)
    text = _UNDERSCORE.sub(r"\\_", text)
    # A heading's closing #s: "## Item Q #" would lose its last word.
    text = _HASH_END.sub(r"\\#", text)
    return _ENTITY.sub(r"\\&", text)


def md_cell(value, limit: int | None = None) -> str:
    """`md_text` for a table cell, where `|` would end the cell."""
    return md_text(value, limit).replace("|", "\\|")


def md_item(value) -> str:
    """`md_text` for the start of a list item, where "- x", "# x" or "1. x" would start a
    block of its own."""
    return _ITEM_START.sub(
        lambda m: "\\" + m.group(0) if m.group(1) else m.group(2) + "\\" + m.group(3),
        md_text(value),
    )


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 configuration', '2 configurations', '1,200 responses' (many: an irregular plural)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def _table(header: list, rows: list[list]) -> str:
    """A GFM table; every cell but `Markup` is escaped with `md_cell`."""

    def cell(value) -> str:
        return value if isinstance(value, Markup) else md_cell(value)

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


QWK_THRESHOLD = FIELD_THRESHOLDS["qwk"]
MEANINGS = (
    "95% interval: the range the agreement figure would plausibly take on another sample of "
    "responses like these, with the model's predictions held fixed (bootstrap over responses; "
    "Wilson's interval for accuracy).",
    "Cross-fitted kappa: agreement when every response is predicted by a model whose K, p and "
    "parameters were chosen without its own score; the gap to the in-sample kappa shows how "
    "optimistic selecting and fitting on the same scores is.",
    "Standard errors (neighbour sandwich): how much each parameter estimate would vary between "
    "samples of scores on the same responses; they count that neighbours' scores enter each "
    "other's features, and a 95% interval is the estimate +/- 1.96 SE (report.json has the "
    "formula). The dense graph has none.",
    "Severity: the probability that another read would give the answer another score, on one "
    "scale across items, from models that never saw the response's score; from 0 to 1, it "
    "orders the review queue. Flagged: likely wrong, among the top of the item's queue, as "
    "many as the item's estimated wrong scores.",
)


def markdown_report(
    result: AuditResult,
    top: int = 20,
    title: str = "parm audit report",
    depth: int = 1,
    decisions: str = "",
    brief: bool = False,
    data: dict | None = None,
    summary: str = "",
    small: bool = False,
) -> str:
    """A readable report for a rater-lead. depth: the title's heading level (a session of many
    items puts each item's report under its own second-level heading); decisions: the review's
    section (engine.outputs.report.review_summary), after the responses to review; brief: an item of a
    session (the figures' meanings come once, for the session) that is not among those needing
    attention most: BRIEF_TOP of its queue and near-duplicates, no parameters or warnings
    (report.json, report.html's appendix and warnings.txt have them); data: its report_dict,
    when made already; summary: what the lead concludes (a file of one item: it comes first);
    small: the item is too small for its scores (engine.results.lead): its in-sample figures say
    so instead of their values."""
    data = report_dict(result) if data is None else data
    top = min(top, BRIEF_TOP) if brief else top
    sections = [
        summary,
        _summary_section(result, data),
        _settings_section(result, data),
        _agreement_section(result, data, small),
        _second_rater_section(result, data, small),
        _confusion_section(result, data),
        _review_section(result, top),
        decisions,
        _duplicates_section(result, data, BRIEF_TOP if brief else 50),
        "" if brief else _parameters_section(data),
        "" if depth > 1 else MEANINGS_SECTION,
    ]
    if result.warnings and not brief:
        sections.append("## Warnings\n\n" + "\n".join(f"- {md_item(w)}" for w in result.warnings))
    # Every section starts with its "## " heading: moved one level down per level of depth.
    sections = ["#" * (depth - 1) + s for s in sections if s]
    return "#" * depth + f" {title}\n\n" + "\n\n".join(sections) + "\n"


def _summary_section(result: AuditResult, data) -> str:
    responses = result.responses
    lines = [
        "## Data",
        "",
        f"- File: {md_text(responses.source)} ({plural(len(responses), 'response')}, "
        f"{len(responses.skipped):,} skipped)",
        f"- Blank answers: {data['input']['blank_answers']:,} (audited, all alike)",
        "- Scores: "
        + ", ".join(f"{md_text(k)}: {v}" for k, v in data["input"]["score_counts"].items()),
        f"- Flagged for review as likely wrong: {plural(data['flagged'], 'response')}; "
        f"{md_text(wrong_phrase(result.wrong_estimate))}",
        # The run every file of the output set names (run_id in report.json and the CSVs).
        f"- Run: {md_text(data['run_id'])}",
    ]
    if result.second_rater is not None:
        # Named as every output names the second reads' rater (engine.input.several_reads.read_pair):
        # a long file has no second score column to name.
        other = read_pair([result.responses.reads])[1]
        lines.append(
            f"- Second rater ({md_text(other)}): "
            f"{plural(result.second_rater.rows_with_both, 'response')} scored twice, "
            f"{int(result.second_rater.disagree.sum()):,} with different scores"
        )
    return "\n".join(lines)


def _settings_section(result: AuditResult, data) -> str:
    config = result.config
    sel = data["selected"]
    graph = "dense graph" if sel["top_k"] is None else f"top-K graph, K = {sel['top_k']}"
    return "\n".join(
        [
            "## Settings",
            "",
            f"- Similarity: {result.mode}, model {md_text(config.embedding_model)}",
            f"- Selected configuration: {graph}, power p = {sel['power']:.3g} "
            f"(by {config.selection_metric}, {plural(len(result.tuning.rows), 'configuration')} "
            "tried)",
            f"- Class weights: {config.class_weight or 'none'}; bootstrap samples: "
            f"{config.bootstrap_samples}; cross-fitting folds: {config.cross_fit_folds}; "
            f"seed: {config.seed}",
            f"- Near-duplicate threshold: cosine similarity above {config.near_duplicate_threshold}",
        ]
    )


def _agreement_section(result: AuditResult, data, small: bool = False) -> str:
    """Each metric cross-fitted first, then in-sample with its interval ("too small" for an item
    too small for its scores); a figure under the field's minimum marked, the cross-fitted one
    where there is one."""
    intervals = data["uncertainty"]["bootstrap"]["intervals"]
    crossed = data["uncertainty"]["cross_fit"]
    found = {} if crossed is None else crossed["metrics"]
    rows, marked = [], []
    for m, value in data["metrics"].items():
        iv = intervals.get(m)
        ci = "" if iv is None or small else f"{_fmt(iv['low'])} to {_fmt(iv['high'])}"
        judged = found.get(m) if crossed is not None else value
        note = ""
        if not small and below_minimum(m, judged):
            note = Markup(f"**below {FIELD_THRESHOLDS[m]:.2f}**")
            marked.append(METRIC[m].label)
        inside = "too small" if small else _fmt(value)
        rows.append([METRIC[m].label, *([_fmt(found.get(m))] if crossed else []), inside, ci, note])
    out = ["## Agreement between the model and the human scores", ""]
    if crossed is not None:  # the cross-fitted figures lead (engine.results.lead)
        inside = crossed["in_sample"]
        leads = [lead_text(METRIC[m].word, found[m], inside[m], small=small)
                 for m in ("kappa", "qwk") if found.get(m) is not None]  # fmt: skip
        out += [
            f"Cross-fitted ({plural(crossed['folds'], 'fold')}): " + "; ".join(leads)
            + f"; exact agreement {_fmt(found['accuracy'])}.",
            "",
        ]  # fmt: skip
    header = [
        "Metric",
        *(["Cross-fitted"] if crossed else []),
        "In-sample",
        "95% interval (in-sample)",
    ]
    out.append(_table([*header, "Note"], rows))
    notes = []
    if small:
        responses = result.responses
        note = small_note(responses.score_counts.tolist())
        notes.append(note[0].upper() + note[1:] + ".")
    if marked:
        judged = " (cross-fitted)" if crossed is not None else ""
        notes.append(f"Marked: {', '.join(marked)}{judged} below {THRESHOLDS_SENTENCE}.")
    if data["metrics_left_out"] is not None:
        notes.append(data["metrics_left_out"]["reason"] + ".")
    return "\n".join(out + (["", " ".join(notes)] if notes else []))


def below_minimum(metric: str, value) -> bool:
    """Whether an agreement figure is below the field's usual minimum (FIELD_THRESHOLDS)."""
    minimum = FIELD_THRESHOLDS.get(metric)
    return minimum is not None and value is not None and value < minimum


THRESHOLDS_SENTENCE = (
    "the field's usual minimum for agreement with human scores (exact agreement 0.50, near "
    "agreement 0.95, QWK 0.70)"
)


def _second_rater_section(result: AuditResult, data, small: bool = False) -> str:
    from engine.outputs.report.conclusions import degradation, raters_named, sentence
    from engine.outputs.report.html_items import human_columns

    second = data["second_rater"]
    if second is None:
        return ""
    columns = human_columns(result, second)
    first, other = raters_named(result)
    names = {
        "exact": "Exact agreement",
        "adjacent": "Adjacent (within 1)",
        "kappa": "Cohen's kappa",
        "qwk": "Quadratic weighted kappa",
    }
    rows = [
        [label, *(_fmt(None if v is None else v[key]) for _, v in columns)]
        for key, label in names.items()
        if key in second["model_vs_rater1"]
    ]
    out = [
        "## Second rater",
        "",
        _table(["Metric", *(name for name, _ in columns)], rows),
        "",
        f"The figures of {md_text(first, 80)} against {md_text(other, 80)} and of the model "
        f"against {md_text(other, 80)} use the {second['rows_with_both_scores']} responses with "
        "both scores; "
        f"{second['raters_disagree']} of them have different scores "
        "(`raters_disagree` in predictions.csv).",
    ]
    # An item too small for its scores is not judged by its model (engine.results.lead).
    found = None if small or not second["rater1_vs_rater2"] else degradation(result)
    if found is not None:  # the cross-fitted model against the raters (engine.results.compare)
        text = md_text(sentence(found.sentence), 2000)
        out += ["", f"**{text}**" if found.within is False else text]
    return "\n".join(out)


def _confusion_section(result: AuditResult, data) -> str:
    labels = result.responses.labels
    return "## Confusion matrix (rows: human score, columns: model)\n\n" + _table(
        [Markup("human \\ model"), *labels],
        [[labels[i], *row] for i, row in enumerate(data["confusion_matrix"]["counts"])],
    )


def _review_section(result: AuditResult, top: int) -> str:
    """The first `top` flagged responses in the review queue's order: what the app's review
    screen lists first."""
    responses = result.responses
    labels = responses.labels
    queue = result.review_order()
    rows = []
    for i in queue[result.flagged[queue]][:top]:
        rows.append(
            [
                responses.rows[i],
                _cut(responses.ids[i], 40),
                labels[responses.scores[i]],
                labels[result.predicted[i]],
                f"{result.severity[i]:.3f}",
                _cut(responses.texts[i], 160),
                _cut(_evidence_md(result, i), 400),
            ]
        )
    header = ["row", "id", "human", "model", "severity", "text", "evidence"]
    return "\n".join(
        [
            f"## Top {top} responses to review",
            "",
            "Flagged responses (likely wrong: the top of the item's queue, as many as its "
            "estimated wrong scores), most severe first, as the review screen lists them. "
            "Severity: the probability that another read would give another score, from models "
            "that never saw that score (see below). Evidence: the neighbours that drove the "
            "model's prediction, as row (id) score, cosine similarity.",
            "",
            _table(header, rows) if rows else "No responses are flagged.",
        ]
    )


def _evidence_md(result: AuditResult, i: int) -> str:
    responses = result.responses
    parts = []
    for nb in result.evidence[i]:
        j = nb.index
        sim = "" if math.isnan(nb.similarity) else f", {nb.similarity:.3f}"
        parts.append(
            f"{responses.rows[j]} ({responses.ids[j]}) {responses.labels[responses.scores[j]]}{sim}"
        )
    return "; ".join(parts)


# What a brief item report lists of its queue and near-duplicates.
BRIEF_TOP = 5
MEANINGS_SECTION = "## What the uncertainty figures mean\n\n" + "\n".join(
    f"- {m}" for m in MEANINGS
)


def _duplicates_section(result: AuditResult, data, shown: int = 50) -> str:
    pairs = data["near_duplicates"]
    threshold = result.config.near_duplicate_threshold
    out = ["## Consistency: near-duplicates with different scores", ""]
    if result.mode != SINGLE_VECTOR:
        return "\n".join(out + ["Checked only with single-vector (cosine) similarity."])
    if not pairs:
        return "\n".join(out + [f"No pair above similarity {threshold} has different scores."])
    out.append(
        f"{plural(len(pairs), 'pair')} of responses with cosine similarity above {threshold} "
        "received different scores."
    )
    out.append("")
    rows = [
        [
            f"{p['similarity']:.3f}",
            *(f"{p[k]['row']} ({_cut(p[k]['id'], 40)})" for k in ("first", "second")),
            *(p[k]["score"] for k in ("first", "second")),
            *(_cut(p[k]["text"], 200) for k in ("first", "second")),
        ]
        for p in pairs[:shown]
    ]
    out.append(
        _table(["similarity", "row A", "row B", "score A", "score B", "text A", "text B"], rows)
    )
    if len(pairs) > shown:
        out += ["", f"The first {shown} of {len(pairs)} are shown; report.json lists all."]
    return "\n".join(out)


def _parameters_section(data) -> str:
    rows = [[p["name"], _fmt(p["estimate"]), _fmt(p["se"])] for p in data["parameters"]]
    return "\n".join(
        [
            "## Parameters",
            "",
            _table(["parameter", "estimate", f"standard error ({data['standard_errors']})"], rows),
        ]
    )


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"
