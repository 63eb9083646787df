"""parm's engine: the PARM method, importable without Textual or Rich.

The stages are packages, in the order the data flows (docs/architecture.md has the map):
input -> embedding -> graph -> model -> audit -> results -> outputs, with
`engine.pipeline.run_audit` (one item) and `engine.session.run_session` (a file) on top and
`engine.core` (errors, progress, files, folders) underneath. A package imports only the
packages below it.

Importing it first asks OpenBLAS for one set of kernels on every x86-64 machine
(`engine.core.machine.kernels`), so results do not depend on the CPU. The names below are loaded on first use, so importing a light module such as
`engine.core.places` does not load numpy, pandas or the pipeline.
"""

from __future__ import annotations

import importlib

from engine.core.machine.kernels import pin_blas_kernels

# Before any module of the engine loads numpy: the same BLAS kernels on every machine.
pin_blas_kernels()

_EXPORTS = {
    "AuditConfig": "engine.input.settings.config",
    "config_from_dict": "engine.input.settings.config",
    "load_config": "engine.input.settings.config",
    "load_defaults": "engine.input.settings.config",
    "Responses": "engine.input.responses",
    "load_responses": "engine.input.responses",
    "Cancelled": "engine.core.errors",
    "ParmError": "engine.core.errors",
    "CancelToken": "engine.core.progress",
    "ProgressEvent": "engine.core.progress",
    "AuditResult": "engine.results.item",
    "SessionResult": "engine.results.session",
    "ReviewSet": "engine.results.review",
    "run_audit": "engine.pipeline",
    "run_session": "engine.session",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
