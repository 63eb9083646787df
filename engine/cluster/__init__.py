"""Cluster, the optional engine that runs a session's items on a Dask cluster (`pip install
'parm[dask]'`): which scheduler a run uses (`address`, no Dask import), connecting to it or
starting a local one, with Dask's own messages kept out of the terminal (`connect`), running
the items' units there with their inputs scattered once, progress, cancel and a worker that
dies (`run`), and what runs on each worker (`worker`).

Imports only engine.core; Dask (distributed) is imported only when a run has a scheduler, so
parm without the extra is unchanged. A unit is the same `function(task, progress, cancel)` of
plain, picklable inputs that engine.core.machine.workers runs on local processes.
"""
