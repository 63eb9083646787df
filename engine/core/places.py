"""The user folders parm writes to: embeddings cache, models parm makes, decisions and settings
data, error logs.

Each honours an environment override ($PARM_CACHE_DIR, $PARM_MODEL_DIR, $PARM_DATA_DIR) so tests
and users can move them; otherwise platformdirs chooses the platform's usual place.
"""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """Decisions, recent files and saved sessions: $PARM_DATA_DIR, else the user data folder."""
    override = os.environ.get("PARM_DATA_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("parm"))


def cache_dir() -> Path:
    """Cached embeddings: $PARM_CACHE_DIR, else the platformdirs user cache folder."""
    override = os.environ.get("PARM_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("parm")) / "embeddings"


def models_dir() -> Path:
    """Models parm makes itself (the distilled static model): $PARM_MODEL_DIR, else `models` in
    the platformdirs user cache folder. Apart from the embedding cache, so that emptying or
    moving one ($PARM_CACHE_DIR) leaves the other, which takes minutes to make, in place."""
    override = os.environ.get("PARM_MODEL_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("parm")) / "models"


def log_dir() -> Path:
    """Internal-error logs: $PARM_DATA_DIR/logs, else the platformdirs user log folder."""
    override = os.environ.get("PARM_DATA_DIR")
    if override:
        return Path(override).expanduser() / "logs"
    from platformdirs import user_log_dir

    return Path(user_log_dir("parm"))
