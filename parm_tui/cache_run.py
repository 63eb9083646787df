"""`parm cache` (where the embedding cache is, how much it holds, its bound) and `parm cache
clear` (empty it): the same calm one-line errors and exit codes as `parm audit`
(parm_tui.headless), through the workspace's cache_contents and clear_cache."""

from __future__ import annotations

from rich.console import Console

from engine import workspace
from engine.workspace.settings import build_config
from parm_tui.headless import guarded, say


def run_cache_show(config_path, overrides) -> int:
    """Print the cache's place, contents and bound; returns the exit code."""
    return guarded(lambda _console, _: _show(_stdout(), config_path, overrides))


def run_cache_clear() -> int:
    """Empty the cache and say what went; returns the exit code."""
    return guarded(lambda _console, _: _clear(_stdout()))


def _show(console, config_path, overrides) -> int:
    held, limit = workspace.cache_contents(build_config(config_path, overrides or []))
    bound = f"{limit:,} MB (embedding_cache_mb)" if limit else "0: runs keep nothing"
    lines = [
        f"Embedding cache: {held.folder}",
        f"  answers: {held.answers:,} cached, {_mb(held.answer_bytes)}",
        f"  limit: {bound}; the least recently used answers go first",
    ]
    if held.lists:
        lines.append(
            f"  older entries (earlier versions' sentence vectors, token vectors): "
            f"{held.lists:,} files, {_mb(held.list_bytes)}"
        )
    if held.plots:
        lines.append(
            f"  report plots: {held.plots:,} kept, {_mb(held.plot_bytes)} (at most "
            f"{held.plot_limit:,}; the least recently used go first)"
        )
    lines.append("`parm cache clear` empties it; PARM_CACHE_DIR moves it.")
    for line in lines:
        say(console, line)
    return 0


def _clear(console) -> int:
    held = workspace.clear_cache()
    say(
        console,
        f"Emptied the embedding cache in {held.folder}: {held.answers:,} answers, "
        f"{held.lists:,} older entries and {held.plots:,} report plots, {_mb(held.total_bytes)}.",
    )
    return 0


def _stdout():
    """What these commands say is their output (scripts read it): standard output."""
    return Console(highlight=False, soft_wrap=True)


def _mb(size: int) -> str:
    return f"{size / (1 << 20):,.1f} MB"
