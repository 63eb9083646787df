"""Audit: what a rater-lead acts on. Severity and flags (the review queue's order), the evidence
neighbours, agreement with a second rater, near-duplicates scored differently, bootstrap
intervals, the rater table, score labels pooled across items, and the rater-lead's decisions
(SQLite). Sessions with several reads per answer (`reads.ItemReads`): the agreement of rater
pairs and Krippendorff's alpha with bootstrap intervals (`agreement`, `alpha`, `resample`),
PRMSE (`prmse`), and the consensus with its third-read queue and the raters' reliability
(`consensus`, `consensus_fit`, `consensus_layout`, `rater_model`, `text_evidence`). The types a run produces, and the review queue over them, are engine.results.

May import engine.model, engine.graph, engine.embedding, engine.input and engine.core.
"""
