"""What a live session's reads say, period by period, and the alerts a lead acts on: per item,
rater and period the agreement of double reads and the validity accuracy with their intervals
(`figures`), an item's day without one rater's reads (`explained`), each rater's verdict from
their co-raters' reads (`verdicts`), the alert rules, one function each, every threshold a
setting (`rules`), and the alert itself with its kinds, declared once (`alert`). Built on the
reads of engine.live.intake; the lead's lists and a run's files sit above it.
"""
