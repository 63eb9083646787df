"""Outputs: the report's content (report.json), its Markdown rendering (report.md), the CSV tables
(predictions, tuning, decisions) and writing them all-or-nothing.

May import every engine package below it (results, audit, model, graph, embedding, input,
core), never engine.pipeline, engine.session or a front end.
"""
