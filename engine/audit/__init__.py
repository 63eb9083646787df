"""Audit: what a rater-lead acts on, in three packages. `queue`: the review queue's order and one
item's checks (severity, calibration, the flagged list, evidence neighbours, near-duplicates,
the second rater). `raters`: the rater table and each rater's effects (leniency, fit, drift,
bias, against the expert) with their verdicts. `reads`: several reads per answer (agreement,
Krippendorff's alpha, PRMSE, the consensus and the raters' error model behind it). Here: the
intervals every figure carries (`intervals`) and the bootstrap over answers and Wilson
intervals they come from (`resample`). The types a run produces, and the review queue over
them, are engine.results.

May import engine.model, engine.graph, engine.embedding, engine.input and engine.core; the queue
imports neither raters nor reads, and reads imports neither queue nor raters.
"""
