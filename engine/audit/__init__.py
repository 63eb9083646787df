"""Audit: what a rater-lead acts on. Severity and flags, the evidence neighbours, agreement with
a second rater, near-duplicates scored differently, bootstrap intervals, the review queue and
the rater-lead's decisions (SQLite).

May import engine.model, engine.graph, engine.embedding, engine.input and engine.core.
"""
