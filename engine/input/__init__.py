"""Input: the settings (`settings`: every defaults.json key declared once and validated in one
place; the similarity mode a model's name selects), reading CSV/TSV tables and workbooks,
choosing the text, score, id, second-score, item and rater columns, coding score labels and
pooling them on one scale across items (`scale`), the reads a file keeps (`several_reads`,
`kept_reads`), and splitting a file into items.

Produces `AuditConfig`, `Responses` and `Items`. May import engine.cluster (the scheduler
setting's check) and engine.core.
"""
