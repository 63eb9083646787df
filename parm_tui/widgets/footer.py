"""The footer at any width: a screen's own keys and `q`, then the F-keys that switch screens as
far as they fit whole. The stock footer cuts whatever passes the edge, which at 80 columns was
the review's keys and `q`. A screen's own keys that do not fit on one row take a second row (the
review's at 80 columns), so no key of the screen is cut; the F-keys left out still work, and f1
lists every key (parm_tui.screens.keys). While a text box has the keys, `q` types a q (Textual
leaves it out of the footer), so the footer shows `^q Quit`, which works everywhere."""

from __future__ import annotations

from textual.containers import HorizontalGroup
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# The app's screen-switching bindings (ParmApp.action_show): shown last, only when they fit.
NAVIGATION_PREFIX = "show("
QUIT_ACTIONS = ("quit", "app.quit")
# A footer never takes more rows than this; keys past them are on f1.
MAX_ROWS = 2


def key_width(key: FooterKey) -> int:
    """Cells one key takes in the compact footer: key, space, description, one space after."""
    return len(key.key_display) + (len(key.description) + 1 if key.description else 0) + 1


def rows_of(keys: list[FooterKey], width: int) -> list[list[FooterKey]]:
    """The keys in order, on as few rows of `width` cells as hold them whole."""
    rows: list[list[FooterKey]] = [[]]
    room = width
    for key in keys:
        if rows[-1] and key_width(key) > room:
            rows.append([])
            room = width
        rows[-1].append(key)
        room -= key_width(key)
    return rows


class ParmFooter(Footer):
    """A compact footer that drops navigation keys, not a screen's own keys, when space runs out:
    those take a second row where one is not enough."""

    DEFAULT_CSS = """
    ParmFooter.-rows {
        height: 2;
        layout: vertical;
    }
    ParmFooter .footer-row {
        height: 1;
        width: 1fr;
    }
    """

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("compact", True)
        kwargs.setdefault("show_command_palette", False)
        super().__init__(**kwargs)

    def compose(self):
        keys = list(super().compose())
        own = [k for k in keys if not k.action.startswith(NAVIGATION_PREFIX)]
        if keys and not any(k.action in QUIT_ACTIONS for k in keys):
            own.append(
                FooterKey("ctrl+q", "^q", "Quit", "app.quit").data_bind(compact=Footer.compact)
            )
        navigation = [k for k in keys if k.action.startswith(NAVIGATION_PREFIX)]
        width = self.app.size.width
        rows = rows_of(own, width)[:MAX_ROWS]
        room = width - sum(key_width(k) for k in rows[-1])
        for key in navigation:
            room -= key_width(key)
            if room < 0:
                break
            rows[-1].append(key)
        self.set_class(len(rows) > 1, "-rows")
        if len(rows) == 1:
            yield from rows[0]
            return
        for row in rows:
            with HorizontalGroup(classes="footer-row"):
                yield from row

    def on_resize(self) -> None:
        self.call_after_refresh(self.recompose)
