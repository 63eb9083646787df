"""report.md of a session (engine.results.session.SessionResult): one item's report with the
review's decisions and the raters, or the items overview, the review's decisions and the raters
first, then every item's report under its own heading."""

from __future__ import annotations

from engine.audit.raters.expert import MIN_EXPERT_READS
from engine.core.run_warnings import summary_lines
from engine.input.several_reads import read_pair
from engine.outputs import declared
from engine.outputs.declared import TOO_FEW
from engine.outputs.report import (
    action_outputs,
    markdown,
    rater_outputs,
    reads_outputs,
    review_summary,
)
from engine.outputs.report.conclusions import conclusions
from engine.outputs.report.html_items import SHOWN, attention_order
from engine.outputs.report.item_content import report_dict
from engine.results.figures import run_figures
from engine.results.lead import (
    session_model_lead,
    session_wrong,
    wrong_phrase,
)
from engine.results.session import SessionResult

# Fewer shared answers than this and a pair of raters' agreement is too unstable to show.
MIN_PAIR = 20


def session_markdown(session: SessionResult, decisions: dict | None = None, actions=None) -> str:
    """report.md: what the lead concludes first (engine.outputs.report.conclusions), then one item's
    report (the review's decisions after its responses to review, the raters after it), or the
    items overview, the review's decisions, the raters, the model's own fit and every item's
    report under its own heading. actions: the lead's lists (engine.actions), a short section
    after the raters."""
    raters = _raters_section(session) if session.raters is not None else ""
    # Answers read twice or more: the agreement between raters and the consensus.
    agreement = "\n".join(reads_outputs.agreement_markdown(reads_outputs.agreement_dict(session)))
    lists = "" if actions is None else action_outputs.actions_markdown(actions).strip()
    raters = "\n\n".join(part for part in (raters, agreement.strip(), lists) if part)
    summary = review_summary.review_summary(session, decisions)
    review = review_summary.review_markdown(summary)
    first = summary_section(session, summary)
    if not session.by_item:
        text = markdown.markdown_report(session.results[0], decisions=review, summary=first,
                                        small=session.overview[0].small)  # fmt: skip
        modelled = session_model_lead(run_figures(session))
        if modelled is not None:  # one item read several times: the session model is the item
            text += f"\nThe {markdown.md_text(modelled, 2000)} (one fit over every read).\n"
        return text + ("\n" + raters + "\n" if raters else "")
    parts = ["# parm audit report", first, _overview_section(session), review]
    if raters:
        parts.append(raters)
    parts.append(_model_fit_section(session))
    # The items that need attention most have a whole item's report; the others a brief one.
    reports = [report_dict(result) for result in session.results]
    first_items = set(attention_order(session.results, reports)[:SHOWN])
    rows = session.overview
    for k, (result, data) in enumerate(zip(session.results, reports)):
        title = f"Item {markdown.md_text(result.responses.item, 80)}"
        section = markdown.markdown_report(
            result, title=title, depth=2, brief=k not in first_items, data=data,
            small=rows[k].small,
        )  # fmt: skip
        parts.append(section.rstrip())
    parts.append(markdown.MEANINGS_SECTION)
    if session.warnings:
        lines = [f"- {markdown.md_item(line)}" for line in summary_lines(session.warnings)]
        note = "One line per kind of warning; warnings.txt and report.json have every one."
        parts.append("## Warnings\n\n" + note + "\n\n" + "\n".join(lines))
    return "\n\n".join(parts) + "\n"


def summary_section(session: SessionResult, review: dict) -> str:
    """report.md's first section: the conclusions in short, each point, what to do first and
    the review so far, as report.html's first screen says them."""
    from engine.outputs.report.report_html import _review_line

    found = conclusions(session, review)
    lines = ["## Summary", "", f"**{markdown.md_text(found.short, 2000)}**", ""]
    for point in found.points:
        mark = "⚠ " if point.concern else ""
        lines += [f"**{mark}{point.heading}.** " + markdown.md_text(" ".join(point.sentences),
                                                                    4000), ""]  # fmt: skip
    lines += ["**What to do first:**", ""]
    lines += [f"{n}. {markdown.md_text(step, 2000)}" for n, step in enumerate(found.steps, 1)]
    lines += ["", f"**Review so far.** {markdown.md_text(_review_line(review), 2000)}"]
    return "\n".join(lines)


def blank_count(session: SessionResult) -> int:
    """Blank answers over the session's items (they are audited, engine.embedding.blank)."""
    return int(sum(result.responses.blank.sum() for result in session.results))


def _overview_section(session: SessionResult) -> str:
    items = session.items
    lines = [
        "## Items",
        "",
        f"File {markdown.md_text(items.source, 200)}: "
        f"{markdown.plural(len(session.results), 'item')} audited, {len(items.skipped)} "
        f"skipped, {markdown.plural(session.n_responses, 'response')} "
        f"({blank_count(session):,} blank), "
        f"{int(session.flagged.sum()):,} flagged for review as likely wrong "
        f"({markdown.md_text(wrong_phrase(session_wrong(session.results)))}). Each item was "
        "audited on its own graph, tuning and parameters.",
        "",
        f"Run: {markdown.md_text(session.run_id, 80)}",
        "",
    ]
    header = ["item", "n", "scores", "K", "p", "cross-fitted kappa", "cross-fitted QWK"]
    header += ["in-sample kappa"]
    header += ["warning", "flagged"]
    # The reads' column only where some item has answers read twice: empty, it asks a question.
    twice = session.second_reads
    if twice:
        first, other = read_pair(result.responses.reads for result in session.results)
        header.append(f"{first} vs {other} (exact, kappa)")
    rows = []
    for s in session.overview:
        if s.skipped is not None:
            rows.append([s.item, s.n, f"skipped: {s.skipped}"] + [""] * (len(header) - 3))
            continue
        scores = ", ".join(f"{k}: {v}" for k, v in s.score_counts.items())
        human = "" if s.human_kappa is None else f"{s.human_exact:.3f}, {s.human_kappa:.3f}"
        k = "dense" if s.top_k is None else s.top_k
        figures = [markdown._fmt(v) for v in (s.cross_fit_kappa, s.cross_fit_qwk)]
        figures.append("too small" if s.small else markdown._fmt(s.kappa))
        rows.append([s.item, s.n, scores, k, f"{s.power:.3g}"])
        rows[-1] += [*figures, s.warning, s.flagged, *([human] if twice else [])]
    lines.append(markdown._table(header, rows))
    return "\n".join(lines)


def _model_fit_section(session: SessionResult) -> str:
    """The model's own fit: the session's figures, cross-fitted against in-sample, the session
    model's, and the items too small for their scores with the rule behind it (as report.html's
    section of the same name)."""
    from engine.outputs.report.report_html import model_fit

    fit = model_fit(session)
    lines = ["## The model's own fit", "",
             "Cross-fitted figures predict every score with a model that never saw it and are "
             "the ones to lead with; an in-sample figure more than 0.05 above its cross-fitted "
             "twin is marked memorised.", ""]  # fmt: skip
    lines += [f"- {markdown.md_item(line)}" for line in fit["lines"]]
    if fit["small"]:
        lines += ["", f"⚠ {markdown.md_text(fit['small'], 2000)}"]
    lines += ["", markdown.md_text(fit["rule"], 2000)]
    return "\n".join(lines)


# The rater table's columns in report.md (engine.outputs.declared.RATERS).
RATER_COLUMNS = ("rater", "verdict", "n", "exact", "kappa", "model_differs_share", "leniency")


def rater_cells(raters, r) -> list:
    """One rater's row of the tables people read (report.md, report.html): the declared
    columns' cells, a rater with too few scores marked so."""
    table = declared.RATERS
    cells = [table.cell(name, r, raters) or "n/a" for name in RATER_COLUMNS]
    cells[2] = r.n
    if not r.judged:
        return [*cells[:1], "", *cells[2:5], TOO_FEW, ""]
    if r.leniency is None:
        cells[-1] = "n/a (unordered labels)"
    return cells


# The columns of the table against the expert (validity papers) in report.md and report.html.
EXPERT_COLUMNS = ("rater", "expert_n", "expert_exact", "expert_adjacent", "expert_difference")


def expert_rows(raters) -> tuple[list[str], list[list]]:
    """The table of each rater against the expert: (header, rows), the rater table's order;
    raters without an expert-scored read are left out."""
    table = declared.RATERS
    rows = [[table.cell(name, r, raters) or "n/a" for name in EXPERT_COLUMNS]
            for r in raters.rows if r.rater in raters.expert]  # fmt: skip
    return [table.heading(name) for name in EXPERT_COLUMNS], rows


def expert_sentence(raters) -> str:
    """Whether leniency is measured against the expert, and why (engine.audit.raters.expert)."""
    reads = sum(f.n for f in raters.expert.values())
    counted = f"{reads:,} read(s) of answers the expert scored"
    if raters.anchored:
        return (
            f"{counted}: leniency is measured against the expert's scores (the reference is "
            "the expert, not the typical rater; reference = expert in raters.csv). The "
            "difference is the rater's mean score minus the expert's, with a 95% t interval."
        )
    return (
        f"{counted}, fewer than the {MIN_EXPERT_READS} that anchor leniency on them: leniency "
        "is measured against the reference raters. The difference is the rater's mean score "
        "minus the expert's, with a 95% t interval."
    )


def _raters_section(session: SessionResult) -> str:
    raters = session.raters
    assert raters is not None  # written only for a session with raters (session_markdown)
    header = [declared.RATERS.heading(name) for name in RATER_COLUMNS]
    rows = [rater_cells(raters, r) for r in raters.rows]
    lines = [
        "## Raters",
        "",
        "Farthest from the rest first. Leniency is in score points: how much higher (positive) "
        "or lower (negative) a rater scores than the model expects, compared within items and "
        "against the typical rater (the median of the reference raters). Model differs: the share "
        "of their scores the model would change (not the likely wrong scores flagged in the "
        "queue). Verdicts and their rules below.",
        "",
        markdown._table(header, rows),
    ]
    if raters.expert is not None:
        header, rows = expert_rows(raters)
        lines += ["", "### Against the expert (validity papers)", "", expert_sentence(raters)]
        lines += ["", markdown._table(header, rows)] if rows else []
    lines += rater_outputs.verdicts_section(session)
    if raters.unassigned:
        unassigned = markdown.plural(raters.unassigned, "score")
        verb = "has" if raters.unassigned == 1 else "have"
        lines += ["", f"{unassigned} {verb} no rater recorded and are not counted."]
    if raters.pairs:
        lines += ["", *_pairs_lines(raters.pairs)]
    return "\n".join(lines)


def _pairs_lines(pairs) -> list[str]:
    """Each pair of raters once, with n; fewer than MIN_PAIR shared answers: too few to judge."""
    rows = []
    for p in pairs:
        figures = [markdown._fmt(p.exact), markdown._fmt(p.kappa)]
        rows.append([p.first, p.second, p.n, *(figures if p.n >= MIN_PAIR else [TOO_FEW, ""])])
    few = sum(p.n < MIN_PAIR for p in pairs)
    lines = [
        "Pairs of raters on the answers both scored (each pair once, whichever scored first):",
        "",
        markdown._table(["rater", "rater", "n", "exact", "kappa"], rows),
    ]
    if few:
        lines += [
            "",
            f"{markdown.plural(few, 'pair')} with fewer than {MIN_PAIR} shared answers "
            f"{'is' if few == 1 else 'are'} too few to judge: their agreement is not shown.",
        ]
    return lines
