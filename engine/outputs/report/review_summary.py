"""The review's decisions in the reports (report.json's `review`, report.md's and report.html's
review section): how many of the flagged responses, and of the whole queue, were decided, kept,
changed and marked unsure, by human score; which scores the changes moved where; and the
model's agreement with the final scores (the human score, or the review's new score where a
decision changed it) beside its agreement with the scores as the file had them.

Without a decision store, or with no decision recorded, the section says there is no review
yet. In a session of several items the counts and the agreement are pooled over the items on
one scale (as the review lists them), and each item's own figures follow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.core.numbers import signed
from engine.model.metrics import agreement
from engine.outputs.report.item_content import _clean
from engine.results.decision import ACTIONS

if TYPE_CHECKING:
    from engine.results.decision import Decision
    from engine.results.review import ReviewSet
    from engine.results.session import SessionResult

NO_REVIEW = "no review yet"
NO_STORE = "no decision store was open (parm audit reads the file's decisions when it can)"
NO_DECISIONS = "no decision has been recorded for this file's responses"
AGREEMENT_NOTE = (
    "model vs original: the audit's predictions against the scores as the file had them; model "
    "vs final: the same predictions against the final scores (the review's new score where it "
    "changed one); kappa change: final minus original. The review looked at the responses the "
    "model flagged, so accepting the model's suggestion raises the agreement by construction: "
    "the change measures how far the review moved the scores towards the model, not how "
    "accurate the model is."
)
COUNT_KEYS = ("responses", "decided", *ACTIONS, "undecided")


def final_codes(review: ReviewSet, decisions: dict[int, Decision]) -> np.ndarray:
    """(N,) the final score codes on the review's pooled scale, in the review's order."""
    responses = review.responses
    codes = responses.scores.copy()
    position = {int(row): i for i, row in enumerate(responses.rows)}
    label_code = {label: k for k, label in enumerate(responses.labels)}
    for row, decision in decisions.items():
        i = position.get(int(row))
        if i is not None and decision.action == "change" and decision.new_score in label_code:
            codes[i] = label_code[decision.new_score]
    return codes


def review_summary(session: SessionResult, decisions: dict[int, Decision] | None) -> dict:
    """report.json's `review`: status, counts, counts by score, changes and agreement."""
    if not decisions:
        return {"status": NO_REVIEW, "why": NO_STORE if decisions is None else NO_DECISIONS}
    review = session.review
    responses = review.responses
    labels = responses.labels
    actions = _actions(review, decisions)
    flagged = review.flagged
    final = final_codes(review, decisions)
    moved = final != responses.scores
    changes = [
        {"from": labels[a], "to": labels[b], "n": int(np.sum(moved & (responses.scores == a) &
                                                             (final == b)))}
        for a in range(len(labels)) for b in range(len(labels))
        if a != b and np.any(moved & (responses.scores == a) & (final == b))
    ]  # fmt: skip
    summary = {
        "status": "reviewed",
        "decisions": len(decisions),
        "counts": {
            "flagged": _counts(actions[flagged]),
            "queue": _counts(actions),
        },
        "by_score": [
            {
                "score": label,
                "flagged": int(flagged[responses.scores == k].sum()),
                **_counts(actions[responses.scores == k]),
            }
            for k, label in enumerate(labels)
        ],  # fmt: skip
        "changes": changes,
        "scores_changed": int(moved.sum()),
        "agreement": _agreement(
            responses.scores, final, review.predicted, len(labels), responses.ordered
        ),  # fmt: skip
    }
    if review.by_item:
        summary["items"] = _items(session, decisions)
    return summary


def _actions(review: ReviewSet, decisions: dict[int, Decision]) -> np.ndarray:
    """(N,) each response's decision ('' when undecided), in the review's order."""
    actions = np.full(len(review.responses), "", dtype=object)
    position = {int(row): i for i, row in enumerate(review.responses.rows)}
    for row, decision in decisions.items():
        i = position.get(int(row))
        if i is not None:
            actions[i] = decision.action
    return actions


def _counts(actions: np.ndarray) -> dict:
    decided = int(np.sum(actions != ""))
    counts = {"responses": int(actions.size), "decided": decided}
    counts.update({action: int(np.sum(actions == action)) for action in ACTIONS})
    counts["undecided"] = int(actions.size) - decided
    return counts


def _agreement(original, final, predicted, n_classes: int, ordered: bool) -> dict:
    before = agreement(original, predicted, n_classes, ordered)
    after = agreement(final, predicted, n_classes, ordered)
    return {
        "definition": AGREEMENT_NOTE,
        "model_vs_original": {m: _clean(v) for m, v in before.items()},
        "model_vs_final": {m: _clean(v) for m, v in after.items()},
        "kappa_change": _clean(after["kappa"] - before["kappa"]),
    }


def _items(session: SessionResult, decisions: dict[int, Decision]) -> list[dict]:
    """Each item's decisions and its own agreement before and after, on its own scale."""
    out = []
    for result in session.results:
        responses = result.responses
        code = {label: k for k, label in enumerate(responses.labels)}
        final = responses.scores.copy()
        decided = 0
        for i, row in enumerate(responses.rows):
            decision = decisions.get(int(row))
            if decision is None:
                continue
            decided += 1
            if decision.action == "change" and decision.new_score in code:
                final[i] = code[decision.new_score]
        figures = _agreement(responses.scores, final, result.predicted, responses.n_classes,
                             responses.ordered)  # fmt: skip
        out.append(
            {
                "item": responses.item,
                "decided": decided,
                "scores_changed": int(np.sum(final != responses.scores)),
                "kappa_original": figures["model_vs_original"]["kappa"],
                "kappa_final": figures["model_vs_final"]["kappa"],
                "kappa_change": figures["kappa_change"],
            }
        )
    return out


def review_markdown(summary: dict, depth: int = 2) -> str:
    """report.md's review section from `review_summary`."""
    from engine.core.metric_names import METRIC
    from engine.outputs.report.markdown import _fmt, _table, plural

    heading = "#" * depth + " Review decisions"
    if summary["status"] == NO_REVIEW:
        return f"{heading}\n\nNo review yet: {summary['why']}."
    counts = summary["counts"]
    header = ["", "responses", "decided", "kept", "changed", "unsure", "undecided"]
    rows = [
        [name, *(counts[key][k] for k in COUNT_KEYS)]
        for name, key in (("flagged", "flagged"), ("whole queue", "queue"))
    ]
    by_score = [
        [s["score"], s["responses"], s["flagged"], s["decided"], s["keep"], s["change"],
         s["unsure"]]
        for s in summary["by_score"]
    ]  # fmt: skip
    agreement = summary["agreement"]
    before, after = agreement["model_vs_original"], agreement["model_vs_final"]
    figures = [[METRIC[m].label, _fmt(before[m]), _fmt(after[m])] for m in before]
    lines = [
        heading,
        "",
        f"{plural(summary['decisions'], 'decision')} recorded; the review changed "
        f"{plural(summary['scores_changed'], 'score')}.",
        "",
        _table(header, rows),
        "",
        "By human score:",
        "",
        _table(["score", "responses", "flagged", "decided", "kept", "changed", "unsure"], by_score),
    ]
    if summary["changes"]:
        moves = [[c["from"], c["to"], c["n"]] for c in summary["changes"]]
        lines += ["", "Changes, from the human score to the final score:", ""]
        lines.append(_table(["from", "to", "responses"], moves))
    lines += [
        "",
        "Agreement of the model with the scores before and after the review"
        + (" (pooled over the items, on one scale):" if "items" in summary else ":"),
        "",
        _table(["Metric", "model vs original scores", "model vs final scores"], figures),
        "",
        f"The model's kappa, against the original scores then the final ones: "
        f"{_moved(summary)}. {AGREEMENT_NOTE[AGREEMENT_NOTE.index('The') :]}",
    ]
    if "items" in summary:
        items = [
            [i["item"], i["decided"], i["scores_changed"], _fmt(i["kappa_original"]),
             _fmt(i["kappa_final"]), _signed(i["kappa_change"])]
            for i in summary["items"]
        ]  # fmt: skip
        lines += ["", "By item (each on its own scale):", ""]
        header = ["item", "decided", "changed", "kappa (original)", "kappa (final)", "change"]
        lines.append(_table(header, items))
    return "\n".join(lines)


def _moved(summary: dict) -> str:
    """The review's change of kappa as engine.results.compare states it (report.html's too)."""
    from engine.outputs.report.report_html import review_kappa

    return review_kappa(summary) or "n/a"


def _signed(value) -> str:
    return "n/a" if value is None else signed(value, 3)
