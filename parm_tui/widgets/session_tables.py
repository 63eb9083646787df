"""A scoring session's two tables as Rich renderables: the items overview (which items are scored
inconsistently) and the raters (which raters need a word). Figures are read from the session
(engine.results.overview, engine.audit.raters), never computed here; item and rater names go into
Text objects only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.table import Table
from rich.text import Text

from engine.core.text import safe_text
from parm_tui.widgets.metrics import fmt

if TYPE_CHECKING:
    from engine.results.session import SessionResult


TOO_FEW = "too few to judge"


def name(value) -> Text:
    return Text(safe_text(value, one_line=True))


def items_table(session: SessionResult) -> Table:
    """One row per item: size, selected K and p, kappa, QWK, cross-fitted kappa, flags, and the
    two raters' agreement where answers were scored twice; skipped items with their reason."""
    table = Table(
        box=box.SIMPLE_HEAD, title="Items (each audited on its own)", title_justify="left"
    )
    for header, justify in (
        ("item", "left"), ("n", "right"), ("K", "right"), ("p", "right"), ("kappa", "right"),
        ("QWK", "right"), ("x-fit κ", "right"), ("flagged", "right"), ("2 raters κ", "right"),
    ):  # fmt: skip
        table.add_column(header, justify=justify)
    for s in session.overview:
        if s.skipped is not None:
            table.add_row(name(s.item), f"{s.n:,}", Text(f"skipped: {s.skipped}", "dim"))
            continue
        k = "dense" if s.top_k is None else str(s.top_k)
        share = f"{s.flagged:,} ({s.flagged / max(s.n, 1):.0%})"
        table.add_row(
            name(s.item), f"{s.n:,}", k, f"{s.power:.3g}", fmt(s.kappa), fmt(s.qwk),
            fmt(s.cross_fit_kappa), share, fmt(s.human_kappa),
        )  # fmt: skip
    return table


def raters_table(session: SessionResult) -> Table:
    """One row per rater, the farthest from the rest first: the verdict (engine.audit.
    rater_verdicts), agreement with the model, the share of their scores flagged and their
    leniency in score points, each with its 95% interval."""
    table = Table(
        box=box.SIMPLE_HEAD,
        title="Raters (farthest from the rest first)",
        title_justify="left",
        caption="leniency: score points above (+) or below (−) what the model expects, within "
        "items, against the typical rater",
        caption_justify="left",
    )
    for header in ("rater", "verdict", "n", "exact", "kappa", "flagged (95%)", "leniency (95%)"):
        table.add_column(header, justify="left" if header in ("rater", "verdict") else "right")
    for r in session.raters.rows:
        if not r.judged:
            table.add_row(
                name(r.rater), "", f"{r.n:,}", fmt(r.exact), fmt(r.kappa), Text(TOO_FEW, "dim")
            )
            continue
        flagged = f"{r.flagged_share:.0%} ({r.flagged_low:.0%}–{r.flagged_high:.0%})"
        if r.leniency is None:  # unordered text labels: no score points to differ by
            leniency = Text("— (no order)", "dim")
        else:
            leniency = Text(f"{r.leniency:+.2f} ({r.leniency_low:+.2f}…{r.leniency_high:+.2f})")
        if r.leniency is not None and (r.leniency_low > 0 or r.leniency_high < 0):
            leniency.stylize("bold yellow")
            leniency.append(" ▲" if r.leniency > 0 else " ▼")
        verdict = Text(r.verdict, "dim" if r.verdict == "fine" else "bold")
        table.add_row(
            name(r.rater), verdict, f"{r.n:,}", fmt(r.exact), fmt(r.kappa), flagged, leniency
        )
    if session.raters.unassigned:
        table.add_row(Text(f"({session.raters.unassigned:,} scores with no rater)", "dim"))
    return table
