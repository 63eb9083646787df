"""A live scoring session (`parm monitor`): reads added file by file, day by day, to a session
kept in one SQLite database in its folder (`store`: reads keyed by item, answer, rater and time,
so a file or an overlapping cumulative export added twice changes nothing, and a changed text or
score is kept as a conflict, never replaced); each read's period, the ISO day with ` am` or
` pm` where times of day are given (`periods`); the reads as parm's readers read any file, wide
or long, guessed columns, workbooks (`reading`); the session's reads as arrays, each with its
kind, first, second, validity, backread or resolution, from a column or guessed (`reads`); per
item, rater and period the agreement of double reads and the validity accuracy with their
intervals, cached per period by the digest of their reads (`figures`); the alerts a lead acts
on, each from a rule of the settings' monitor section, with its test and one sentence
(`rules`, `alerts`); what changed since an earlier run (`changes`); the lead's lists of each
run, the backreads, the third reads routed and followed up the next morning, each rater's
status (`actions`), over the reads as engine.actions reads them, each read's risk from the
consensus of the reads (`ledger`); one run, from files to outputs (`monitor`), and its files:
monitor.csv, alerts.csv, changes.md, report.html and the three lists (`outputs`, `html`). It computes
from the reads only: no embedding, no audit. Sits above engine.saved and below
engine.workspace, whose `monitor` call both front ends make.
"""
