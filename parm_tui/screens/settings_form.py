"""Turning the settings form's text into a settings dict, and a config back into form text.

Values the user typed that are not numbers are passed on as text, so the engine's own message
(`Setting 'seed' = "abc" is invalid: ...`) is what the user reads.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from engine.core.errors import ConfigError


def number(text: str, integer: bool = False):
    """'12' -> 12, '0.5' -> 0.5, '' -> None, anything else -> the text itself."""
    text = text.strip()
    if not text or text.lower() in ("null", "none"):
        return None
    try:
        value = float(text)
    except ValueError:
        return text
    if integer and value.is_integer() and "." not in text and "e" not in text.lower():
        return int(value)
    if not integer and value.is_integer() and re.fullmatch(r"[+-]?\d+", text):
        return int(value)
    return value


def number_list(text: str, integer: bool = False) -> list:
    """'5, 10 20' -> [5, 10, 20]; items that are not numbers stay text for the engine to name."""
    return [number(item, integer) for item in re.split(r"[,\s;]+", text.strip()) if item]


def shown(value) -> str:
    """A number as the form shows it ('' for None, no trailing '.0' noise)."""
    if value is None:
        return ""
    if isinstance(value, (tuple, list)):  # names, or shares by scale size
        return shown_list(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):  # targets by scale size: "0.85, 0.8, 0.75"
        return shown_list(value)
    return str(value)


def shown_list(values) -> str:
    return ", ".join(shown(v) for v in values)


def field_of(error: ConfigError) -> str | None:
    """The setting an engine error is about (the field its message goes under), or None."""
    return error.key


def local_models() -> list[str]:
    """Sentence-transformers models found on this machine (HF hub cache, sentence-transformers
    cache), as the names or paths that load them. Only folder names are read: no model loads."""
    found: list[str] = []
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME", os.path.expanduser("~/.cache/huggingface")), "hub"
    )
    try:
        for entry in sorted(os.scandir(hub), key=lambda e: e.name):
            if entry.is_dir() and entry.name.startswith("models--"):
                found.append(entry.name[len("models--") :].replace("--", "/"))
    except OSError:
        pass
    st_cache = Path(
        os.environ.get("SENTENCE_TRANSFORMERS_HOME", "~/.cache/torch/sentence_transformers")
    )
    try:
        for entry in sorted(os.scandir(st_cache.expanduser()), key=lambda e: e.name):
            if entry.is_dir():
                found.append(entry.path)
    except OSError:
        pass
    return found
