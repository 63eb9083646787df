"""The settings, as the front ends build, show, save and check them: the settings table
(engine.input.settings.declared: each setting's name, type, default, help and section) and the
configuration built from defaults.json, a settings file and `key=value` overrides.

Light: only the standard library below it, so the CLI may import it at its top.
"""

from __future__ import annotations

from engine.input.column_guess import unused_columns
from engine.input.settings.config import (
    SINGLE_VECTOR,
    STATIC_MODEL,
    AuditConfig,
    PowerInterval,
    build_config,
    config_from_dict,
    is_late_interaction,
    load_config,
    load_defaults,
    save_config,
)
from engine.input.settings.declared import (
    ACTIONS,
    ADVANCED,
    BY_NAME,
    CHOSEN_KEYS,
    COLBERT,
    DEFAULT_MODEL,
    FILE_KEYS,
    FORM,
    MONITOR,
    Setting,
    in_section,
)

__all__ = [
    "ACTIONS",
    "ADVANCED",
    "BY_NAME",
    "CHOSEN_KEYS",
    "COLBERT",
    "DEFAULT_MODEL",
    "FILE_KEYS",
    "FORM",
    "MONITOR",
    "SINGLE_VECTOR",
    "STATIC_MODEL",
    "AuditConfig",
    "PowerInterval",
    "Setting",
    "build_config",
    "config_from_dict",
    "in_section",
    "is_late_interaction",
    "load_config",
    "load_defaults",
    "save_config",
    "unused_columns",
]
