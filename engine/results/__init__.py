"""Results: the types a run produces, which front ends, outputs and saved sessions read.

`AuditResult` is one item's audit (engine.pipeline.run_audit makes it); `SessionResult` is a
file's (engine.session.run_session makes it, engine.saved restores it): every audited item's
result, the items skipped, the rater table; a file without an item column is a session of one
item. `ReviewSet` is a session's review queue: every item's responses on one pooled scale, with
what the review reads (`engine.results.queue` filters and orders it).

May import engine.audit, engine.model, engine.graph, engine.embedding, engine.input and
engine.core; never engine.pipeline, engine.session, engine.saved or a front end.
"""
