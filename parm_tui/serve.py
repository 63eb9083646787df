"""`parm serve`: the app in a browser (textual-serve runs one app process per websocket).

textual-serve has no authentication of its own, so everything passes one guard: a request
without the server's token (in the query once, then in the HttpOnly cookie set from it) gets
403 and a fixed body, before any route runs and before any app process starts. Each browser
names its reviewer; the name goes into that connection's app as `--set reviewer=...` in an
argument list (no shell). The page is parm's own (parm_tui/serve_page.py): no external fonts.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ipaddress
import json
import os
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from parm_tui.serve_page import app_page, name_page

TOKEN_ENV = "PARM_SERVE_TOKEN"
MIN_TOKEN_CHARS = 16
MAX_NAME_CHARS = 40
# Beside letters and digits, the characters a person's name may hold; no markup, no quotes
# that end an attribute, no control or bidi characters.
NAME_PUNCTUATION = frozenset(" .-_'@,()+")
FORBIDDEN_BODY = "Forbidden\n"
PROXY_HOWTO = "docs/how-to/serve.md"
STATIC = Path(textual_serve.__file__).parent / "static"


class ServeError(Exception):
    """A plain message for the command line (exit 2)."""


def is_loopback(host: str) -> bool:
    """Whether binding to `host` keeps the server on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_warning(host: str) -> str | None:
    """The warning to print when the server is reachable from other machines."""
    if is_loopback(host):
        return None
    return (
        f"Warning: bound to {host}, not to this machine only: anyone who can reach this port "
        f"and has the link can review. The traffic (token included) is not encrypted; put it "
        f"behind a reverse proxy with TLS ({PROXY_HOWTO})."
    )


def resolve_token(token_file: Path | None, environ=os.environ) -> str:
    """The token: --token-file's contents, else $PARM_SERVE_TOKEN, else a new 256-bit one."""
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ServeError(f"Cannot read the token file {token_file}: {exc}") from None
        source = f"the token file {token_file}"
    elif environ.get(TOKEN_ENV) is not None:
        token, source = environ[TOKEN_ENV].strip(), TOKEN_ENV
    else:
        return secrets.token_urlsafe(32)
    if len(token) < MIN_TOKEN_CHARS:
        raise ServeError(
            f"The token in {source} is {'empty' if not token else 'too short'}: it needs at "
            f"least {MIN_TOKEN_CHARS} characters (parm makes one of 43 when none is given)."
        )
    if not token.isascii() or not token.isprintable() or " " in token:
        raise ServeError(f"The token in {source} must be printable ASCII without spaces.")
    return token


def clean_reviewer(raw: str | None) -> str | None:
    """A reviewer's name as typed, stripped; None when it is empty, longer than 40
    characters or holds anything but letters, digits, spaces and . - _ ' @ , ( ) +."""
    if raw is None:
        return None
    name = raw.strip()
    if not 1 <= len(name) <= MAX_NAME_CHARS:
        return None
    if not all(ch.isalnum() or ch in NAME_PUNCTUATION for ch in name):
        return None
    return name


def name_to_path(name: str) -> str:
    """A name as one URL path segment (base64url: no slash, no percent-decoding questions)."""
    return base64.urlsafe_b64encode(name.encode("utf-8")).decode("ascii").rstrip("=")


def name_from_path(segment: str) -> str | None:
    try:
        padded = segment + "=" * (-len(segment) % 4)
        raw = base64.urlsafe_b64decode(padded.encode("ascii")).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        return None
    return clean_reviewer(raw) if raw == raw.strip() else None


def app_command(target: Path, reviewer: str, config: Path | None, overrides=()) -> list[str]:
    """The app process of one connection, as an argument list (never through a shell). The name
    is JSON-quoted so that `--set` reads it as text whatever it looks like (123, null)."""
    command = [sys.executable, "-m", "parm_tui.launch", "open", str(target)]
    if config is not None:
        command += ["--config", str(config)]
    for item in overrides:
        command += ["--set", item]
    return command + ["--set", "reviewer=" + json.dumps(reviewer)]


class ParmAppService(AppService):
    """textual-serve's AppService, started from an argument list, without the token in its
    environment."""

    def __init__(self, argv: list[str], **kwargs) -> None:
        super().__init__(" ".join(argv), **kwargs)
        self.argv = argv

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment.pop(TOKEN_ENV, None)
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24):
        pipe = asyncio.subprocess.PIPE
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=pipe,
            stdout=pipe,
            stderr=pipe,
            env=self._build_environment(width, height),
        )
        self._stdin = process.stdin
        return process


@dataclass
class Limits:
    max_sessions: int = 4
    idle_seconds: float = 30 * 60


@dataclass(eq=False)
class Connection:
    reviewer: str
    last_input: float = field(default_factory=time.monotonic)


class ParmServer:
    """The guarded aiohttp application. `command_for(reviewer)` gives a connection's app
    argument list; `launched` records each one started (tests count them)."""

    def __init__(self, token: str, command_for, limits: Limits, title: str = "parm") -> None:
        self.token = token.encode("utf-8")
        self.command_for = command_for
        self.limits = limits
        self.title = title
        self.cookie = "parm_token"
        self.open: set[Connection] = set()
        self.launched: list[list[str]] = []
        self.sockets: set[web.WebSocketResponse] = set()
        self.downloads = DownloadManager()

    def make_app(self) -> web.Application:
        app = web.Application(middlewares=[self.guard])
        app.add_routes(
            [
                web.get("/", self.index),
                web.get("/ws/{who}", self.websocket),
                web.static("/static", STATIC, show_index=False, follow_symlinks=False),
            ]
        )
        app.on_shutdown.append(self.close_all)
        return app

    def authorised(self, request: web.Request) -> tuple[bool, bool]:
        """(whether the request carries the token, whether it came in the query)."""
        in_query = "token" in request.query
        supplied = request.query.get("token") if in_query else request.cookies.get(self.cookie)
        if not supplied:
            return False, in_query
        return secrets.compare_digest(supplied.encode("utf-8"), self.token), in_query

    @web.middleware
    async def guard(self, request: web.Request, handler):
        allowed, in_query = self.authorised(request)
        if not allowed or not self.same_origin(request):
            return web.Response(status=403, text=FORBIDDEN_BODY, headers=SECURITY_HEADERS)
        response = await handler(request)
        if in_query and not response.prepared:
            secure = request.secure or request.headers.get("X-Forwarded-Proto") == "https"
            response.set_cookie(
                self.cookie, self.token.decode("utf-8"), httponly=True, samesite="Strict",
                secure=secure, path="/",
            )  # fmt: skip
        if not response.prepared:
            response.headers.update(SECURITY_HEADERS)
        return response

    @staticmethod
    def same_origin(request: web.Request) -> bool:
        """A websocket opened by another site's page (its Origin another host) is refused even
        with the cookie: cookies are shared between the ports of one host."""
        origin = request.headers.get("Origin")
        if origin is None or request.headers.get("Upgrade", "").lower() != "websocket":
            return True
        return origin.split("://", 1)[-1] == request.host

    async def index(self, request: web.Request) -> web.Response:
        typed = request.query.get("reviewer")
        reviewer = clean_reviewer(typed)
        if reviewer is None:
            status = 200 if typed is None else 400
            return html(name_page(self.title, typed is not None, MAX_NAME_CHARS), status)
        return html(app_page(self.title, reviewer, name_to_path(reviewer)), 200)

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        reviewer = name_from_path(request.match_info["who"])
        if reviewer is None:
            return web.Response(status=400, text="Bad reviewer name\n")
        socket = web.WebSocketResponse(heartbeat=15)
        if len(self.open) >= self.limits.max_sessions:
            await socket.prepare(request)
            await socket.send_bytes(full_message(self.limits.max_sessions))
            await socket.close()
            return socket
        connection = Connection(reviewer)
        self.open.add(connection)  # before any await: the cap holds under a burst
        try:
            await socket.prepare(request)
            self.sockets.add(socket)
            await self.run_app(request, socket, connection)
        finally:
            self.open.discard(connection)
            self.sockets.discard(socket)
        return socket

    async def run_app(self, request, socket, connection: Connection) -> None:
        argv = self.command_for(connection.reviewer)
        self.launched.append(argv)
        service = ParmAppService(
            argv, write_bytes=socket.send_bytes, write_str=socket.send_str, close=socket.close,
            download_manager=self.downloads,
        )  # fmt: skip
        width = bounded(request.query.get("width"), 80)
        height = bounded(request.query.get("height"), 24)
        await service.start(width, height)
        watchdog = asyncio.create_task(self.close_when_idle(socket, connection))
        try:
            await relay(socket, service, connection)
        finally:
            watchdog.cancel()
            await stop(service)

    async def close_when_idle(self, socket, connection: Connection) -> None:
        idle = self.limits.idle_seconds
        while not socket.closed:
            await asyncio.sleep(min(idle / 4, 30))
            if time.monotonic() - connection.last_input > idle:
                minutes = round(idle / 60)
                await socket.send_bytes(
                    f"\r\n parm serve: closed after {minutes} idle minutes (serve_idle_minutes); "
                    f"your decisions are saved. Reload the page to start again.\r\n".encode()
                )
                await socket.close()

    async def close_all(self, app: web.Application, grace: float = 15.0) -> None:
        """On shutdown: close every browser's connection and wait for their apps to leave."""
        for socket in list(self.sockets):
            await socket.close()
        deadline = time.monotonic() + grace
        while self.open and time.monotonic() < deadline:
            await asyncio.sleep(0.05)


SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def html(text: str, status: int) -> web.Response:
    nonce = secrets.token_urlsafe(16)
    policy = (
        f"default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
        "connect-src 'self' ws: wss:; img-src 'self' data:; font-src 'self'; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )
    return web.Response(
        status=status,
        text=text.replace("{nonce}", nonce),
        content_type="text/html",
        headers={"Content-Security-Policy": policy},
    )


def full_message(cap: int) -> bytes:
    return (
        f"\r\n parm serve: {cap} browser sessions are open already (serve_max_sessions). "
        f"Try again when one closes.\r\n"
    ).encode()


def bounded(value: str | None, default: int) -> int:
    try:
        return min(max(int(value), 10), 500)
    except (TypeError, ValueError):
        return default


async def relay(socket: web.WebSocketResponse, service: AppService, connection) -> None:
    """The browser's messages to the app; keys and resizes count as activity (pings do not)."""
    async for message in socket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            kind, *data = json.loads(message.data)
        except (ValueError, TypeError):
            continue
        if kind == "stdin" and data and isinstance(data[0], str):
            connection.last_input = time.monotonic()
            await service.send_bytes(data[0].encode("utf-8"))
        elif kind == "resize" and data and isinstance(data[0], dict):
            connection.last_input = time.monotonic()
            size = data[0]
            await service.set_terminal_size(
                bounded(size.get("width"), 80), bounded(size.get("height"), 24)
            )
        elif kind == "ping" and data:
            await socket.send_json(["pong", str(data[0])[:32]])
        elif kind in ("blur", "focus"):
            await (service.blur() if kind == "blur" else service.focus())


async def stop(service: ParmAppService, grace: float = 10.0) -> None:
    """Ask the app to quit; kill it when it has not left within `grace` seconds."""
    try:
        await asyncio.wait_for(service.stop(), grace)
    except (TimeoutError, asyncio.TimeoutError, ConnectionError):
        pass
    process = service._process
    if process is not None and process.returncode is None:
        process.kill()
        await process.wait()
