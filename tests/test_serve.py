"""`parm serve` (parm_tui.serve): the token guard on every route and on the websocket upgrade,
the reviewer's name, the session cap and the idle close. The server runs in-process on
127.0.0.1 with a free port (aiohttp's TestServer); the app of a connection is a small stand-in
process that speaks textual-serve's protocol, so each test takes well under a second or two."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from typer.testing import CliRunner

from engine.input.settings.config import parse_override
from parm_tui import serve_run
from parm_tui.cli import app as cli_app
from parm_tui.serve import (
    FORBIDDEN_BODY,
    TOKEN_ENV,
    Limits,
    ParmAppService,
    ParmServer,
    ServeError,
    app_command,
    bind_warning,
    clean_reviewer,
    is_loopback,
    name_from_path,
    name_to_path,
    resolve_token,
)
from parm_tui.serve_page import app_page, js_string

TOKEN = "T" * 20 + "correct-token-value"
WRONG = "T" * 20 + "correct-token-valuf"  # same length, last character differs
COOKIE = {"Cookie": f"parm_token={TOKEN}"}

# A stand-in app: the prelude textual-serve waits for, one data packet (its reviewer argument
# and whether the token reached its environment), then it waits for the quit packet.
STAND_IN = r"""
import os, sys
out, inp = sys.stdout.buffer, sys.stdin.buffer
out.write(b"__GANGLION__\n")
said = ("app for " + sys.argv[-1] + " token:" + str("PARM_SERVE_TOKEN" in os.environ)).encode()
out.write(b"D" + len(said).to_bytes(4, "big") + said)
out.flush()
while True:
    head = inp.read(5)
    if len(head) < 5:
        break
    body = inp.read(int.from_bytes(head[1:], "big"))
    if head[:1] == b"M" and b'"quit"' in body:
        break
"""


@pytest.fixture
def stand_in(tmp_path):
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN, encoding="utf-8")
    return lambda reviewer: [sys.executable, str(script), f"reviewer={reviewer}"]


@contextlib.asynccontextmanager
async def serving(command_for, max_sessions=4, idle_seconds=600.0):
    """The server and a client of it, the client closed after the test's block."""
    server = ParmServer(TOKEN, command_for, Limits(max_sessions, idle_seconds))
    client = TestClient(TestServer(server.make_app(), host="127.0.0.1"))
    await client.start_server()
    try:
        yield server, client
    finally:
        await client.close()


def ws_path(name: str = "Ann Lee") -> str:
    return f"/ws/{name_to_path(name)}?width=80&height=24"


async def test_every_route_without_the_right_token_is_refused_with_a_fixed_body(stand_in):
    async with serving(stand_in) as (server, client):
        for path in ("/", "/?reviewer=Ann", "/static/js/textual.js", "/static/css/xterm.css",
                     "/nothing", ws_path()):  # fmt: skip
            for headers in ({}, {"Cookie": f"parm_token={WRONG}"}):
                response = await client.get(path, headers=headers)
                assert response.status == 403
                assert await response.text() == FORBIDDEN_BODY
                assert "Set-Cookie" not in response.headers
            wrong = await client.get(path + ("&" if "?" in path else "?") + f"token={WRONG}")
            assert wrong.status == 403 and await wrong.text() == FORBIDDEN_BODY
        assert server.launched == []


async def test_the_token_in_the_query_sets_a_strict_http_only_cookie_that_then_passes(stand_in):
    async with serving(stand_in) as (server, client):
        first = await client.get(f"/?token={TOKEN}")
        assert first.status == 200
        cookie = first.headers["Set-Cookie"]
        assert cookie.startswith(f"parm_token={TOKEN};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert "Your name" in await first.text()
        assert "nonce-" in first.headers["Content-Security-Policy"]
        assert first.headers["Referrer-Policy"] == "no-referrer"
        # What the page then asks for passes with the cookie alone.
        for path in ("/?reviewer=Ann", "/static/js/textual.js", "/static/css/xterm.css",
                     "/static/fonts/RobotoMono-VariableFont_wght.ttf"):  # fmt: skip
            response = await client.get(path, headers=COOKIE)
            assert response.status == 200, path
            assert "Set-Cookie" not in response.headers
        assert server.launched == []


async def test_a_websocket_without_the_token_or_from_another_origin_starts_no_app(stand_in):
    async with serving(stand_in) as (server, client):
        refusals = (
            {},
            {"Cookie": f"parm_token={WRONG}"},
            {**COOKIE, "Origin": "http://127.0.0.1:1"},  # another page on this host
            {**COOKIE, "Origin": "https://evil.example"},
        )
        for headers in refusals:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await client.ws_connect(ws_path(), headers=headers)
            assert refused.value.status == 403
        assert server.launched == []


async def test_a_websocket_with_the_cookie_runs_the_reviewers_app_without_the_token(stand_in):
    async with serving(stand_in) as (server, client):
        origin = f"http://{client.server.host}:{client.server.port}"
        socket = await client.ws_connect(
            ws_path("José O'Brien"), headers={**COOKIE, "Origin": origin}
        )
        message = await asyncio.wait_for(socket.receive(), 10)
        assert message.data == b"app for reviewer=Jos\xc3\xa9 O'Brien token:False"
        assert server.launched == [stand_in("José O'Brien")]
        await socket.close()


async def test_the_session_cap_refuses_the_next_connection_with_a_message(stand_in):
    async with serving(stand_in, max_sessions=2) as (server, client):
        sockets = [await client.ws_connect(ws_path(name), headers=COOKIE) for name in "AB"]
        for socket in sockets:
            await asyncio.wait_for(socket.receive(), 10)
        third = await client.ws_connect(ws_path("C"), headers=COOKIE)
        refused = await asyncio.wait_for(third.receive(), 10)
        assert b"2 browser sessions are open already (serve_max_sessions)" in refused.data
        assert (await asyncio.wait_for(third.receive(), 10)).type == aiohttp.WSMsgType.CLOSE
        assert len(server.launched) == 2
        await sockets[0].close()
        for _ in range(50):  # the closed one's place frees once its app has left
            if len(server.open) < 2:
                break
            await asyncio.sleep(0.1)
        fourth = await client.ws_connect(ws_path("D"), headers=COOKIE)
        assert (await asyncio.wait_for(fourth.receive(), 10)).data.startswith(b"app for")
        assert len(server.launched) == 3


async def test_an_idle_connection_is_closed_and_its_app_stopped(stand_in):
    async with serving(stand_in, idle_seconds=0.4) as (server, client):
        socket = await client.ws_connect(ws_path(), headers=COOKIE)
        assert (await asyncio.wait_for(socket.receive(), 10)).data.startswith(b"app for")
        notice = await asyncio.wait_for(socket.receive(), 10)
        assert b"idle minutes (serve_idle_minutes)" in notice.data
        assert (await asyncio.wait_for(socket.receive(), 10)).type == aiohttp.WSMsgType.CLOSE
        for _ in range(50):
            if not server.open:
                break
            await asyncio.sleep(0.1)
        assert not server.open


async def raw_get(port: int, target: str, cookie: bool) -> tuple[int, bytes]:
    """A request line sent as written (an HTTP client would normalise the path first)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    extra = f"Cookie: parm_token={TOKEN}\r\n" if cookie else ""
    writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n"
                 .encode())  # fmt: skip
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1]


@pytest.mark.parametrize(
    "target",
    ["/static/../serve.py", "/static/..%2f..%2fserver.py", "/static/%2e%2e/%2e%2e/server.py",
     "/static/js/..%2f..%2fapp_service.py", "/%2e%2e/%2e%2e/etc/passwd", "/static/",
     "/static/js/", "//etc/passwd", "/static/..\\server.py"],
)  # fmt: skip
async def test_path_tricks_are_refused_without_a_leak(stand_in, target):
    async with serving(stand_in) as (server, client):
        port = client.server.port
        assert (await raw_get(port, "/static/js/textual.js", cookie=True))[0] == 200
        status, body = await raw_get(port, target, cookie=False)
        assert status in (400, 403) and body in (FORBIDDEN_BODY.encode(), b"")
        status, body = await raw_get(port, target, cookie=True)
        assert status in (403, 404)
        for leak in (b"Traceback", b"/work", b"site-packages", b"def ", b"import ", b"<a href"):
            assert leak not in body


def test_only_loopback_addresses_bind_without_a_warning():
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        assert is_loopback(host) and bind_warning(host) is None
    for host in ("0.0.0.0", "::", "192.168.1.20", "parm.example.org"):
        warning = bind_warning(host)
        assert warning.startswith(f"Warning: bound to {host}")
        assert "reverse proxy with TLS" in warning and "docs/how-to/serve.md" in warning


def test_the_command_binds_to_loopback_unless_told(monkeypatch, tmp_path):
    asked = []
    monkeypatch.setattr(serve_run, "run_serve", lambda request: asked.append(request) or 0)
    data = tmp_path / "a.csv"
    data.write_text("text,score\nx,1\n", encoding="utf-8")
    assert CliRunner().invoke(cli_app, ["serve", str(data)]).exit_code == 0
    assert CliRunner().invoke(cli_app, ["serve", str(data), "--host", "::1"]).exit_code == 0
    assert [request.host for request in asked] == ["127.0.0.1", "::1"]
    assert asked[0].port == 8000


def test_the_token_comes_from_the_file_then_the_environment_then_secrets(tmp_path):
    made = {resolve_token(None, {}) for _ in range(20)}
    assert len(made) == 20 and all(len(token) >= 43 for token in made)  # 256 bits, urlsafe
    assert resolve_token(None, {TOKEN_ENV: f"  {TOKEN}\n"}) == TOKEN
    file = tmp_path / "token"
    file.write_text(f"\n{TOKEN}  \n", encoding="utf-8")
    assert resolve_token(file, {TOKEN_ENV: "x" * 30}) == TOKEN
    for bad in ("", "   \n", "short-token-15c"):
        file.write_text(bad, encoding="utf-8")
        with pytest.raises(ServeError, match="at least 16 characters"):
            resolve_token(file, {})
        with pytest.raises(ServeError, match=TOKEN_ENV):
            resolve_token(None, {TOKEN_ENV: bad})
    with pytest.raises(ServeError, match="printable ASCII"):
        resolve_token(None, {TOKEN_ENV: "a token with spaces in it"})
    with pytest.raises(ServeError, match="Cannot read"):
        resolve_token(tmp_path / "absent", {})


def test_a_short_token_or_a_missing_file_stops_the_command_with_a_plain_line(tmp_path, capsys):
    data = tmp_path / "a.csv"
    data.write_text("text,score\nx,1\n", encoding="utf-8")
    short = tmp_path / "token"
    short.write_text("abc\n", encoding="utf-8")
    assert serve_run.run_serve(serve_run.ServeRequest(target=data, token_file=short)) == 2
    assert serve_run.run_serve(serve_run.ServeRequest(target=tmp_path / "none.csv")) == 2
    errors = capsys.readouterr().err.splitlines()
    assert (
        errors[0].startswith("parm serve: The token in the token file") and "too short" in errors[0]
    )
    assert errors[1].startswith("parm serve: No such file or folder:")
    assert len(errors) == 2  # no traceback


def test_reviewer_names_are_stripped_and_anything_unsafe_refused():
    assert clean_reviewer("  Ann Lee ") == "Ann Lee"
    assert clean_reviewer("José O'Brien-Smith (lead)") == "José O'Brien-Smith (lead)"
    assert clean_reviewer("x" * 40) == "x" * 40
    refused = ["", "   ", "x" * 41, "Ann\x1b[31m", "Ann\nBob", "Ann\u202eevil", "<b>Ann</b>",
               "[bold]Ann", '"Ann"', "Ann; rm -rf /", "Ann\x00", "Ann`id`", "a/b", None]  # fmt: skip
    assert [clean_reviewer(name) for name in refused] == [None] * len(refused)
    for name in ("Ann Lee", "José", "123", "null"):
        assert name_from_path(name_to_path(name)) == name
        assert "/" not in name_to_path(name) and "%" not in name_to_path(name)
    assert name_from_path("%%%") is None
    assert name_from_path(name_to_path("x") + "/..") is None
    assert name_from_path(name_to_path(" padded ")) is None


def test_the_app_command_is_an_argument_list_that_names_the_reviewer(tmp_path):
    for name in ("Ann Lee", "123", "null", "José O'Brien"):
        command = app_command(tmp_path / "a.csv", name, None, ("saved_runs=3",))
        assert isinstance(command, list) and command[:3] == [
            sys.executable,
            "-m",
            "parm_tui.launch",
        ]
        assert command[3:5] == ["open", str(tmp_path / "a.csv")]
        assert command[-2:] == ["--set", "reviewer=" + json.dumps(name)]
        assert parse_override(command[-1]) == ("reviewer", name)  # text, even "123" and "null"
        assert ["--set", "saved_runs=3"] == command[5:7]
    with_config = app_command(tmp_path / "a.csv", "Ann", tmp_path / "s.json")
    assert with_config[5:7] == ["--config", str(tmp_path / "s.json")]


def test_the_apps_environment_does_not_hold_the_token(monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    service = ParmAppService(["true"], write_bytes=None, write_str=None, close=None,
                             download_manager=None)  # fmt: skip
    environment = service._build_environment(100, 30)
    assert TOKEN_ENV not in environment and environment["COLUMNS"] == "100"


def test_the_page_escapes_the_name_for_html_and_script():
    page = app_page("parm: <b>x</b>.csv", "O'Brien", name_to_path("O'Brien"))
    assert "<b>" not in page and "&lt;b&gt;" in page and "O&#x27;Brien" in page
    assert js_string("</script><script>alert(1)") == (
        '"\\u003c\\u002fscript\\u003e\\u003cscript\\u003ealert\\u00281\\u0029"'
    )
    assert page.count("<script") == 2  # textual.js and the page's own


async def test_a_refused_name_is_asked_again_and_not_echoed(stand_in):
    async with serving(stand_in) as (server, client):
        response = await client.get("/?reviewer=%3Cscript%3Ex", headers=COOKIE)
        assert response.status == 400
        text = await response.text()
        assert "<script>x" not in text and "cannot be used" in text


def test_the_settings_give_the_caps(tmp_path):
    from engine.input.settings.config import build_config

    config = build_config(None, ["serve_max_sessions=2", "serve_idle_minutes=5"])
    assert (config.serve_max_sessions, config.serve_idle_minutes) == (2, 5)
    defaults = build_config(None, [])
    assert (defaults.serve_max_sessions, defaults.serve_idle_minutes) == (4, 30)
    with pytest.raises(Exception, match="serve_max_sessions"):
        build_config(None, ["serve_max_sessions=0"])


def test_the_launched_command_opens_the_app_as_that_reviewer(monkeypatch, tmp_path):
    import parm_tui.app as app_module

    data = tmp_path / "a.csv"
    data.write_text("text,score\nx,1\n", encoding="utf-8")
    opened = []
    monkeypatch.setattr(app_module, "run_app", lambda path, **kw: opened.append((path, kw)))
    command = app_command(data, "123", None)
    result = CliRunner().invoke(cli_app, command[3:])  # what `python -m parm_tui.launch` parses
    assert result.exit_code == 0, result.output
    path, options = opened[0]
    assert path == data
    app = app_module.ParmApp(path, None, None, options["overrides"])
    assert app.startup_error is None and app.state.config.reviewer == "123"
