"""Core, the bottom layer: typed errors, progress events, the stages they come from and the
cancel token, the names of the agreement metrics, atomic file writing (and the true cause of a
failed write), holding Ctrl+C and SIGTERM during a switch, exchanging two folders in one step,
the user folders for the cache, decisions and logs, the crash log, and a run's warnings as data
(their declared kinds and one summary line per kind, `run_warnings`), installed packages'
versions (`versions`); how the engine uses the machine (BLAS kernels and threads, memory
checks, worker processes) in `machine`.

Owns nothing of the method. Imports only the standard library (platformdirs lazily); every
other package of the engine may import it.
"""
