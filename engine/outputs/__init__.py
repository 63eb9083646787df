"""Outputs: the report's content (report.json), its Markdown rendering (report.md), the CSV tables
(predictions, tuning, decisions) and writing them as output sets: every file names its run, a
manifest comes last, and the set is switched into place as a whole (sets, manifest, names).

May import every engine package below it (results, audit, model, graph, embedding, input,
core), never engine.pipeline, engine.session or a front end.
"""
