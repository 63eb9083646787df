"""A live scoring session (`parm monitor`): reads added file by file, day by day, to a session
kept in one SQLite database in its folder, and judged on every run. Three floors:

- `intake/`: the session's reads kept and read back (the database, the run lock, a read's
  period, a file's reads read as any file parm reads, the reads as arrays with their kinds);
- `alerts/`: what the reads say per item, rater and period (agreement of double reads and
  validity accuracy with intervals, cached per period), the raters' verdicts from co-reads, the
  alert rules and the alerts;
- here: the lead's lists of each run, the backreads, the third reads routed and followed up the
  next morning, each rater's status (`actions`), over the reads as engine.actions reads them,
  each read's risk from the consensus of the reads (`ledger`); what changed since an earlier
  run (`changes`); one run, from files to outputs (`monitor`), and its files: monitor.csv,
  alerts.csv, changes.md, report.html and the three lists (`outputs`, `html`).

It computes from the reads only: no embedding, no audit. Sits above engine.saved and below
engine.workspace, whose `monitor` call both front ends make.
"""
