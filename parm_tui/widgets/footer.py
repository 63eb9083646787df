"""The footer at any width: a screen's own keys and `q`, then the F-keys that switch screens as
far as they fit whole. The stock footer cuts whatever passes the edge, which at 80 columns was
the review's keys and `q`; the F-keys left out still work (docs/reference/app.md lists them). While a text
box has the keys, `q` types a q (Textual leaves it out of the footer), so the footer shows
`^q Quit`, which works everywhere."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# The app's screen-switching bindings (ParmApp.action_show): shown last, only when they fit.
NAVIGATION_PREFIX = "show("
QUIT_ACTIONS = ("quit", "app.quit")


def key_width(key: FooterKey) -> int:
    """Cells one key takes in the compact footer: key, space, description, one space after."""
    return len(key.key_display) + (len(key.description) + 1 if key.description else 0) + 1


class ParmFooter(Footer):
    """A compact footer that drops navigation keys, not a screen's own keys, when space runs out."""

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
        room = self.app.size.width - sum(key_width(k) for k in own)
        yield from own
        for key in navigation:
            room -= key_width(key)
            if room < 0:
                break
            yield key

    def on_resize(self) -> None:
        self.call_after_refresh(self.recompose)
