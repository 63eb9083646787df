"""Input: the settings (every defaults.json key, validated in one place), reading CSV/TSV tables,
choosing the text, score, id and second-score columns, and coding score labels.

Produces `AuditConfig` and `Responses`. May import engine.core only.
"""
