"""The review queue's order and one item's checks: the severity of every score (classifiers
cross-fitted over random folds and over folds of whole groups of similar answers,
`answer_groups`; `severity`), on one scale across items (`calibration`), relearned over a
session from its answers read twice (`read_severity`), the estimate of an item's wrong scores
and the flagged list sized to it (`flagging`), the evidence neighbours behind a prediction
(`evidence`), near-duplicates scored differently (`duplicates`) and the agreement with a second
rater (`second_rater`).

May import engine.audit's own modules (intervals, resample), engine.model, engine.graph,
engine.embedding, engine.input and engine.core; never engine/audit/raters/ or
engine/audit/reads/.
"""
