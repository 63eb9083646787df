"""A live session's reads, kept and read back: one SQLite database in the session's folder
(`store`: reads keyed by item, answer, rater and time, a file added twice changing nothing, a
changed text or score kept as a conflict), one monitor run at a time (`lock`), a read's period,
its ISO day and half day (`periods`), a file's reads as `parm audit` reads any file (`reading`),
and the session's reads as arrays with their kinds and each item's scale (`session_reads`).
Nothing here judges the reads: engine.live.alerts does, above it.
"""
