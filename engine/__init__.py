"""parm's engine: the PARM method, importable without Textual or Rich."""

from engine.input.config import AuditConfig, config_from_dict, load_config, load_defaults
from engine.input.responses import Responses, load_responses
from engine.core.errors import Cancelled, ParmError
from engine.pipeline import AuditResult, run_audit
from engine.core.progress import CancelToken, ProgressEvent

__all__ = [
    "AuditConfig",
    "AuditResult",
    "CancelToken",
    "Cancelled",
    "ParmError",
    "ProgressEvent",
    "Responses",
    "config_from_dict",
    "load_config",
    "load_defaults",
    "load_responses",
    "run_audit",
]
