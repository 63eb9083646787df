"""Saved sessions: the settings and results of an input file's last run, kept in the data folder
so that reopening the file resumes its audit instead of running it again (not to be confused
with engine.session, which runs a session's items).

`archive` saves and loads one AuditResult (JSON + .npz, versioned, no pickle); `store` keeps,
per input file (by content digest), the record of its last run, which lists one result per
audited item.

Sits above engine.session and engine.pipeline; rebuilds `engine.results` types; may import every
engine package.
"""
