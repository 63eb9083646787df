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


def matplotlib_folder() -> None:
    """Give matplotlib a folder it can write before it is imported. It keeps its settings and
    font cache in the user's folders (~/.config/matplotlib and ~/.cache/matplotlib on Linux);
    where they cannot be written (no home, a read-only one) it makes a temporary folder and
    says so on stderr, which `--quiet` keeps for errors. Unless $MPLCONFIGDIR is set or those
    folders can be written, $MPLCONFIGDIR is set to parm's own: `matplotlib` in the user cache
    folder, else a private folder in the temporary folder."""
    import sys

    if os.environ.get("MPLCONFIGDIR") or "matplotlib" in sys.modules:
        return
    if all(_writable(folder) for folder in _matplotlib_usual()):
        return
    from platformdirs import user_cache_dir

    for folder in (Path(user_cache_dir("parm")) / "matplotlib", _private_temporary()):
        if folder is not None and _writable(folder):
            os.environ["MPLCONFIGDIR"] = str(folder)
            return


def _matplotlib_usual() -> list[Path | None]:
    """Where matplotlib keeps its settings and cache when $MPLCONFIGDIR is not set (None: the
    home folder cannot be found)."""
    import sys

    try:
        home = Path.home()
    except RuntimeError:
        home = None
    if sys.platform.startswith(("linux", "freebsd")):
        bases = [os.environ.get("XDG_CONFIG_HOME"), os.environ.get("XDG_CACHE_HOME")]
        homes = [".config", ".cache"]
        return [Path(b) / "matplotlib" if b else home and home / h / "matplotlib"
                for b, h in zip(bases, homes)]  # fmt: skip
    local = os.environ.get("LOCALAPPDATA") if sys.platform == "win32" else None
    return [Path(local) / "matplotlib" if local else home and home / ".matplotlib"]


def _writable(folder: Path | None) -> bool:
    """Whether the folder is (or can be made) a folder this process can write."""
    if folder is None:
        return False
    try:
        folder = folder.resolve()
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):
        return False
    return folder.is_dir() and os.access(folder, os.W_OK)


def _private_temporary() -> Path | None:
    """parm-matplotlib-<user> in the temporary folder: made private, and used only when it is
    this user's own and nobody else can write it (a shared temporary folder)."""
    import stat
    import tempfile

    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    folder = Path(tempfile.gettempdir()) / f"parm-matplotlib-{user}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    own = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return folder if stat.S_ISDIR(info.st_mode) and own and not info.st_mode & 0o022 else None
