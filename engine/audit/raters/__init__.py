"""The raters: the rater table (`table.rater_report`), every read as its rater's score whichever
read of the answer it is (`every_read`), the expected score without the rater's own scores
(`expectation`), infit and outfit, spread and disagreement (`fit`), drift over the time column
(`drift`), rater x item bias cells (`bias`), leniency from co-raters and the reference raters
(`pairs`), each rater against the lead's expert scores (`expert`), the comparison with the
reference raters (`effects`) and the plain-words verdicts with their rules (`verdicts`).

May import engine/audit/queue/ (the severity's flags and settings), engine.model, engine.input
and engine.core; never engine/audit/reads/.
"""
