"""Saved runs: the settings and results of an input file's newest runs, kept in the data folder
so that reopening the file resumes its audit instead of running it again, and an earlier run
can be opened again (not to be confused with engine.session, which runs a session's items).

`archive` saves and loads one AuditResult (JSON + .npz, versioned, no pickle); `store` keeps,
per input file (by content digest), the record of its newest runs (`saved_runs`), each listing
one result per audited item; its docstring states the API.

Sits above engine.session and engine.pipeline; rebuilds `engine.results` types; may import every
engine package.
"""
