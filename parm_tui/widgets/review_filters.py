"""The filter row of the review screen: text search, human and model score, "off by 2 or
more", and the view: which responses to list (flagged, the whole queue, the undecided, unsure,
changed, kept or noted ones, the answers whose consensus needs a third read, today's backreads,
and after a re-run the decided ones that lost their flag and the new flags nobody decided). It
only collects choices; engine.results.queue does the filtering."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Select

from engine.results.queue import DECISION_VIEWS, decision_view, rows_view
from parm_tui.widgets.plain import plain
from parm_tui.widgets.review_list import short_labels
from parm_tui.widgets.toggles import MarkedCheckbox

# Which responses the list holds: the views by decision are engine.results.queue's
# DECISION_VIEWS; the re-run views appear only after a re-run.
VIEW_FLAGGED, VIEW_ALL, VIEW_UNFLAGGED, VIEW_NEW = "flagged", "all", "unflagged", "new"
# Answers read twice or more whose consensus is unsure, least sure first (engine.audit.reads.consensus).
VIEW_THIRD = "third read"
# The answers with a backread today (engine.actions.backreads); a read typed here is a backread.
VIEW_BACKREADS = "backreads"


def view_options(rerun: bool, third_reads: bool = False, backreads: bool = False):
    options = [(Text("flagged"), VIEW_FLAGGED), (Text("whole queue"), VIEW_ALL)]
    if third_reads:
        options.append((Text("needs 3rd read"), VIEW_THIRD))  # whole in the 80-column row
    if backreads:
        options.append((Text("backreads today"), VIEW_BACKREADS))
    options += [(Text(view), view) for view in DECISION_VIEWS]
    if rerun:
        options += [(Text("unflagged"), VIEW_UNFLAGGED), (Text("new flags"), VIEW_NEW)]
    return options


class ReviewFilters(Vertical):
    """The filter widgets; `criteria(changes)` turns them into review_view's arguments.
    rerun: offer the two re-run views (engine.results.queue.RerunChanges); ordered: whether the
    scores have an order ("off by 2" means nothing for unordered text labels, so it is hidden);
    third_reads: offer the third-read view (some answer's consensus is unsure); backreads: the
    data rows of today's backreads (their view is offered when there are some)."""

    def __init__(
        self, labels, rerun: bool = False, ordered: bool = True, items=(), raters=(),
        third_reads: bool = False, backreads=frozenset(), **kwargs,
    ) -> None:  # fmt: skip
        super().__init__(**kwargs)
        self.labels = labels
        self.rerun = rerun
        self.third_reads = third_reads
        self.backreads = frozenset(backreads)
        self.ordered = ordered
        self.items = list(items)  # offered only when there are several
        self.raters = list(raters)

    def compose(self) -> ComposeResult:
        shown = short_labels(self.labels)  # long text labels shortened, as the list shows them
        human = [(Text(f"human {label}"), code) for code, label in enumerate(shown)]
        model = [(Text(f"model {label}"), code) for code, label in enumerate(shown)]
        with Horizontal(classes="filter-row"):
            yield Input(placeholder="/ search answers or ids", id="review-search", compact=True)
            yield Select(human, prompt="human any", id="filter-human", compact=True)
            yield Select(model, prompt="model any", id="filter-model", compact=True)
            off_by_two = MarkedCheckbox(
                "off≥2", id="filter-off2", compact=True, disabled=not self.ordered
            )
            off_by_two.display = self.ordered
            yield off_by_two
            yield Select(
                view_options(self.rerun, self.third_reads, bool(self.backreads)),
                value=VIEW_FLAGGED,
                allow_blank=False,
                id="filter-view",
                compact=True,
            )
        if len(self.items) > 1 or self.raters:
            # A session's item and rater filters get a row of their own (80 columns are full).
            with Horizontal(classes="filter-row"):
                if len(self.items) > 1:
                    choices = [(plain(f"item {item}"), item) for item in self.items]
                    yield Select(choices, prompt="item: any", id="filter-item", compact=True)
                if self.raters:
                    choices = [(plain(f"rater {rater}"), rater) for rater in self.raters]
                    yield Select(choices, prompt="rater: any", id="filter-rater", compact=True)

    def _chosen(self, selector: str) -> str | None:
        """The item or rater chosen in a filter (None: any, or no such filter)."""
        found = self.query(selector)
        value = found.first(Select).value if found else None
        return value if isinstance(value, str) else None

    @property
    def view(self) -> str:
        return self.query_one("#filter-view", Select).value

    def set_view(self, view: str) -> None:
        self.query_one("#filter-view", Select).value = view

    def toggle_all(self) -> None:
        self.set_view(VIEW_FLAGGED if self.view == VIEW_ALL else VIEW_ALL)

    def toggle_third_reads(self) -> bool:
        """The third-read view, or back to the flagged; False when it is not offered."""
        if not self.third_reads:
            return False
        self.set_view(VIEW_FLAGGED if self.view == VIEW_THIRD else VIEW_THIRD)
        return True

    def offer_third_reads(self, offered: bool) -> None:
        """Offer the third-read view or not (reads typed in the review changed the consensus);
        when it is on show and no longer offered, the list goes back to the flagged."""
        if offered == self.third_reads:
            return
        self.third_reads = offered
        select = self.query_one("#filter-view", Select)
        view = select.value
        select.set_options(view_options(self.rerun, offered, bool(self.backreads)))
        select.value = view if offered or view != VIEW_THIRD else VIEW_FLAGGED

    def choose(self, item: str | None = None, rater: str | None = None) -> None:
        """Filter to one item and one rater (None: any); the other filters are cleared."""
        for selector, value in (("#filter-item", item), ("#filter-rater", rater)):
            found = self.query(selector)
            if found:
                select = found.first(Select)
                select.value = value if value is not None else Select.NULL
        self.query_one("#filter-human", Select).clear()
        self.query_one("#filter-model", Select).clear()
        self.query_one("#review-search", Input).value = ""

    def criteria(self, review=None, changes=None, decisions=None, conflicted=frozenset()) -> dict:
        """Keyword arguments of engine.results.queue.review_view (all but `folded`); a re-run view
        lists the responses `changes` marks at this moment, a view by decision those of
        `decisions` (of `review`; `conflicted`: the data rows with unsettled conflicts) at this
        moment."""
        human = self.query_one("#filter-human", Select).value
        model = self.query_one("#filter-model", Select).value
        view = self.view
        subset = None
        if changes is not None and view == VIEW_UNFLAGGED:
            subset = changes.no_longer_flagged
        elif changes is not None and view == VIEW_NEW:
            subset = changes.newly_flagged
        elif view in DECISION_VIEWS and review is not None:
            subset = decision_view(review, decisions or {}, view, conflicted)
        elif view == VIEW_BACKREADS and review is not None:
            subset = rows_view(review, self.backreads)
        return {
            "item": self._chosen("#filter-item"),
            "rater": self._chosen("#filter-rater"),
            "show_all": view in (VIEW_ALL, VIEW_THIRD, VIEW_BACKREADS),
            "third_read": view == VIEW_THIRD,
            "human": human if isinstance(human, int) else None,
            "predicted": model if isinstance(model, int) else None,
            "off_by_two": self.query_one("#filter-off2", MarkedCheckbox).value,
            "search": self.query_one("#review-search", Input).value.strip(),
            "subset": subset,
        }
