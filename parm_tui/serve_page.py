"""The two pages `parm serve` sends: the reviewer's name form, and the app's terminal page
(textual-serve's textual.js draws the app). Every value from a request is HTML-escaped; the
inline scripts carry the response's CSP nonce (`{nonce}`, filled in by parm_tui.serve.html)."""

from __future__ import annotations

from html import escape

STORAGE_KEY = "parm-reviewer"

STYLE = """
@font-face { font-family: "Roboto Mono"; src: url("/static/fonts/RobotoMono-VariableFont_wght.ttf"); }
body { background: #0c181f; color: #e8eef2; margin: 0; font-family: "Roboto Mono", monospace; }
form { max-width: 36rem; margin: 12vh auto; padding: 2rem; background: #12232d; }
label, p { display: block; margin: 0 0 1rem 0; line-height: 1.4; }
input { font: inherit; padding: .5rem; width: 100%; box-sizing: border-box; }
button { font: inherit; margin-top: 1rem; padding: .5rem 1.5rem; background: #5e0ba7;
  color: #fff; border: none; cursor: pointer; }
.error { color: #ffb4a9; }
.closed { display: none; position: fixed; bottom: 0; left: 0; right: 0; padding: .5rem 1rem;
  background: #5e0ba7; color: #fff; }
body.-closed .closed { display: block; }
.closed a { color: #fff; }
"""


def name_page(title: str, refused: bool, max_chars: int) -> str:
    """Ask the reviewer's name (prefilled from this browser's last one)."""
    error = (
        f'<p class="error">That name cannot be used: 1 to {max_chars} letters, digits, spaces '
        "and . - _ ' @ , ( ) + only.</p>"
        if refused
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}: your name</title>
<meta name="referrer" content="no-referrer"><style>{STYLE}</style></head>
<body><form method="get" action="/" autocomplete="off">
<p>{escape(title)}: the review in a browser.</p>
{error}<label for="reviewer">Your name, as decisions.csv will record each of your
decisions:</label>
<input id="reviewer" name="reviewer" maxlength="{max_chars}" required autofocus>
<button type="submit">Start reviewing</button></form>
<script nonce="{{nonce}}">
const field = document.getElementById("reviewer");
field.value = localStorage.getItem("{STORAGE_KEY}") || "";
history.replaceState(null, "", "/");
</script></body></html>"""


def app_page(title: str, reviewer: str, who: str) -> str:
    """The app's page for one reviewer: the websocket at /ws/WHO on this page's own host (so a
    reverse proxy with TLS gets wss:), the name remembered, the token gone from the address."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{escape(title)}: {escape(reviewer)}</title>
<meta name="referrer" content="no-referrer">
<link rel="stylesheet" href="/static/css/xterm.css"><style>{STYLE}</style>
<script src="/static/js/textual.js"></script></head>
<body><div id="terminal" class="textual-terminal" data-font-size="16"></div>
<div class="closed">The session ended. <a href="/">Start again</a></div>
<script nonce="{{nonce}}">
const scheme = location.protocol === "https:" ? "wss:" : "ws:";
document.getElementById("terminal").dataset.sessionWebsocketUrl =
  scheme + "//" + location.host + "/ws/{escape(who)}";
localStorage.setItem("{STORAGE_KEY}", {js_string(reviewer)});
history.replaceState(null, "", "/?reviewer=" + encodeURIComponent({js_string(reviewer)}));
</script></body></html>"""


def js_string(text: str) -> str:
    """A JavaScript string literal that cannot end the script element (every character outside
    letters, digits and spaces as a \\u escape)."""
    return (
        '"' + "".join(ch if ch.isalnum() or ch == " " else f"\\u{ord(ch):04x}" for ch in text) + '"'
    )
