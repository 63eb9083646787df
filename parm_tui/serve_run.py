"""`parm serve FILE-OR-SESSION`: check the arguments, bind, print the link once, serve until
Ctrl+C (parm_tui.serve holds the guarded server)."""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from engine.core.errors import ConfigError
from engine.workspace.settings import build_config

EXIT_USAGE = 2


@dataclass(frozen=True, kw_only=True)
class ServeRequest:
    target: Path
    host: str = "127.0.0.1"
    port: int = 8000
    token_file: Path | None = None
    config: Path | None = None
    overrides: tuple[str, ...] = ()


def run_serve(request: ServeRequest) -> int:
    """Serve until interrupted; 2 with one plain line for a wrong argument or token."""
    from parm_tui.serve import Limits, ParmServer, ServeError, app_command, resolve_token

    try:
        if not request.target.exists():
            raise ServeError(f"No such file or folder: {request.target}")
        config = build_config(request.config, list(request.overrides))
        token = resolve_token(request.token_file)
    except (ServeError, ConfigError) as exc:
        print(f"parm serve: {exc}", file=sys.stderr)
        return EXIT_USAGE
    target = request.target.resolve()
    config_path = None if request.config is None else request.config.resolve()
    limits = Limits(config.serve_max_sessions, config.serve_idle_minutes * 60)

    def command_for(reviewer: str) -> list[str]:
        return app_command(target, reviewer, config_path, request.overrides)

    server = ParmServer(token, command_for, limits, title=f"parm: {target.name}")
    try:
        asyncio.run(serve_forever(server, request.host, request.port))
    except OSError as exc:
        print(f"parm serve: cannot listen on {request.host}:{request.port}: {exc.strerror}",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


async def serve_forever(server, host: str, port: int) -> None:
    from aiohttp import web

    from parm_tui.serve import bind_warning

    runner = web.AppRunner(server.make_app(), access_log=None)  # the log would hold the token
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1]
    server.cookie = f"parm_token_{bound}"  # cookies ignore ports: one per server on a host
    warning = bind_warning(host)
    if warning:
        print(warning, file=sys.stderr)
    print(f"parm serve: {server.title} for up to {server.limits.max_sessions} reviewers at once.")
    print(f"Open this link (it holds the token; keep it private): {link(host, bound, server)}")
    print("Ctrl+C stops the server and every open app.", flush=True)
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, stopped.set)
        except (NotImplementedError, RuntimeError):
            pass
    try:
        await stopped.wait()
    finally:
        await runner.cleanup()


def link(host: str, port: int, server) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/?token={server.token.decode('utf-8')}"
