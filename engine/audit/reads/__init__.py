"""Several reads per answer: an item's reads as arrays (`item_reads.ItemReads`), made from the
input's reads with raters numbered across the session and each item's text evidence
(`session_reads`, `text_evidence`); the agreement of every rater pair and Krippendorff's alpha
with bootstrap intervals over answers (`agreement`, `alpha`), PRMSE (`prmse`), the consensus
score of every answer read twice or more, its third-read ranks and the raters' reliability
(`consensus` over `consensus_layout` and the raters' `error_model`); all of it computed once per
session (`reads_audit.ReadsAudit`).

May import engine.audit's own modules (intervals, resample), engine.model, engine.input and
engine.core; never engine/audit/queue/ or engine/audit/raters/.
"""
