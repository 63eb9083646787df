"""Outputs: every file a run writes. The report, report.json, report.md and report.html, with the
raters' and the reads' parts of every output, is `report`. Here: the tables declared once
(`columns`, `declared`), the rows of predictions.csv, tuning.csv and decisions.csv (`tables`),
scores_reviewed.csv (`reviewed`), results.xlsx (`workbook`, `workbook_shading`), a session's
files put together (`session`) and written as one output set: every file names its run, a
manifest comes last, and the set is switched into place as a whole (`write`, `sets`,
`manifest`, `names`). report.json's JSON Schema, `report.schema.json`, is package data here.

May import every engine package below it (results, audit, model, graph, embedding, input,
core), never engine.pipeline, engine.session or a front end; `report` imports the declarations
here, never the writers.
"""
