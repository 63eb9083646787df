"""The lead's lists: what a rater-lead assigns after a run, as lists a scoring platform can take.

- `rater_status`: per rater and item, qualified, watch, retrain or stop, with the rule that fired and
  its figure (rater_status.csv): validity reads against the expert's score, agreement with the
  other raters of the same answers, parm's verdicts on the rater;
- `backreads`: per active rater, a sample of their reads for a supervisor to read again
  (backreads.csv): a target rate, raised for raters not qualified, a random share (an unbiased
  estimate of the rater's agreement) and the riskiest of the rest;
- `third_reads`: the answers whose reads need a resolution, each assigned to a qualified rater
  who has not read it, most reliable first, within a cap per rater per day (third_reads.csv).

Every function is pure: it reads a `Ledger` (`ledger`: every read of the run with its rater,
time and kind, and what the run knows of it: severity, consensus, reliability, verdicts,
validity) and the rules (`rules.ActionRules`, the settings' "actions" section), plus an optional
`History` (earlier statuses and open assignments; empty for a plain audit, given by the live
session each morning). `plan.plan_actions(session, added, history)` makes all three lists of a
run, seeded by the run's seed, so a run gives the same lists every time.

Sits above engine.results (it reads a SessionResult) and engine.audit, below engine.outputs
(which writes the lists) and the workspace; imports neither Textual nor Rich.
"""
