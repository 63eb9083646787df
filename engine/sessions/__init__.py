"""Sessions: the settings and results of an input file's last run, kept in the data folder so
that reopening the file resumes its audit instead of running it again.

`archive` saves and loads one AuditResult (JSON + .npz, versioned, no pickle); `store` keeps,
per input file (by content digest), the session record that lists a run's results.

Sits above engine.pipeline (it rebuilds `AuditResult`); may import every engine package.
"""
