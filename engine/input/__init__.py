"""Input: the settings (every defaults.json key, validated in one place; the similarity mode a
model's name selects), reading CSV/TSV tables, choosing the text, score, id, second-score, item
and rater columns, coding score labels, and splitting a file into items.

Produces `AuditConfig`, `Responses` and `Items`. May import engine.core only.
"""
