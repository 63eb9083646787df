"""Audit: what a rater-lead acts on. Severity and flags (the review queue's order), the evidence
neighbours, agreement with a second rater, near-duplicates scored differently, bootstrap
intervals, the rater table, score labels pooled across items, and the rater-lead's decisions
(SQLite). The types a run produces, and the review queue over them, are engine.results.

May import engine.model, engine.graph, engine.embedding, engine.input and engine.core.
"""
