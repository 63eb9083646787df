"""Load: choose a file, preview it, pick the text, score, id, second-score, item, rater,
second-rater and time columns (chosen for you by engine.input.column_guess, as `parm audit`
chooses them), validate. The preview's columns share the terminal's width: each as wide as its
widest cell when they all fit, else the widest cut to one common width."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Label, Select, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from engine import workspace
from engine.core.errors import ParmError
from engine.core.run_warnings import summary_lines
from engine.core.text import safe_text
from engine.workspace import OpenedFile
from engine.workspace.settings import BY_NAME, CHOSEN_KEYS, FILE_KEYS
from parm_tui import keymap
from parm_tui.recent import display_path, recent_files
from parm_tui.screens.resume import offer_resume
from parm_tui.widgets.footer import ParmFooter
from parm_tui.widgets.lists import VimDataTable, VimOptionList
from parm_tui.widgets.path_input import PathInput, expand, path_problem
from parm_tui.widgets.plain import plain

PREVIEW_ROWS = 30
# The most of a cell the preview reads, and the narrowest a column is cut to.
CELL_WIDTH = 300
MIN_COLUMN = 6
# Cells the table takes beyond its columns' widths and padding: its vertical scrollbar.
PREVIEW_FRAME = 2
# Widget id -> (setting, label shown above it): one per column setting and per setting of the
# file's shape (engine.input.settings.declared), in the table's order.
COLUMN_ROLES = {
    f"col-{BY_NAME[key].guess.replace('_', '-')}": (key, BY_NAME[key].label) for key in CHOSEN_KEYS
}
SHEET_WIDGET = "col-sheet"
# How each is chosen: a column from the file, several columns typed "G1, G2, G3", one of the
# setting's choices, a path typed, or one of a workbook's sheets (choosing one reads it).
COLUMN, COLUMNS, CHOICE, PATH, SHEET = "column", "columns", "choice", "path", "sheet"


def kind(key: str) -> str:
    rule = BY_NAME[key].rule.kind
    if key == SHEET:
        return SHEET
    if key in FILE_KEYS:
        return CHOICE if rule == "choice" else PATH
    return COLUMNS if rule == "columns" else COLUMN


def column_widget(widget_id: str, key: str):
    """The widget that chooses `key`: a dropdown of the file's columns or of the setting's
    choices, or a field to type several columns or a path into."""
    how = kind(key)
    if how == COLUMN:
        return Select([], id=widget_id, compact=True, prompt="(none)")
    if how == SHEET:
        return Select([], id=widget_id, compact=True, prompt="(not a workbook)")
    if how == CHOICE:
        choices = [(label, value) for value, label in BY_NAME[key].rule.choices]
        return Select(choices, id=widget_id, compact=True, allow_blank=False)
    hint = "G1, G2, G3" if how == COLUMNS else "answers.csv"
    return Input(id=widget_id, compact=True, placeholder=f"none; e.g. {hint}")


def short(value: str, width: int = CELL_WIDTH) -> Text:
    """A table cell as plain text (never markup), cut to `width` characters on one line."""
    flat = " ".join(safe_text(value, one_line=True).split())
    return Text(flat if len(flat) <= width else flat[: width - 1] + "…")


def fit_widths(natural: list[int], room: int, minimum: int = MIN_COLUMN) -> list[int]:
    """Column widths within `room` cells: each column its natural width when all fit; else
    the widest are cut to one common width (the largest that fits), none below `minimum`."""
    if sum(natural) <= room:
        return list(natural)
    cap = minimum
    for width in range(max(natural), minimum - 1, -1):
        if sum(min(w, width) for w in natural) <= room:
            cap = width
            break
    return [min(w, cap) for w in natural]


def counts_line(items) -> Text:
    """'640 responses (of 640 rows) · score 0: 212, 1: 301, 2: 127 · G2 on 128 · 2 raters', or for
    a file of items '3 items, 600 responses (of 600 rows) · 1 item skipped · 7 raters'."""
    if not items.by_item:
        return responses_line(items.audited[0])
    n = sum(len(r) for r in items.audited)
    parts = [f"{len(items.audited)} item(s), {n:,} responses"]
    if items.file_rows != n:
        parts[0] += f" (of {items.file_rows:,} rows)"
    if items.skipped:
        parts.append(f"{len(items.skipped)} item(s) skipped")
    parts += _raters_part(items.audited)
    return plain(" · ".join(parts))


def _raters_part(audited) -> list[str]:
    """'3 raters': everyone who gave a read, the audited one or not (as raters.csv counts)."""
    raters = set()
    for responses in audited:
        reads = responses.reads
        raters |= set(reads.rater if reads is not None else responses.raters or ())
    raters.discard("")
    return [f"{len(raters):,} rater{'' if len(raters) == 1 else 's'}"] if raters else []


def responses_line(responses) -> Text:
    """'640 responses (of 640 rows) · score 0: 212, 1: 301, 2: 127 · G2 on 128 · 2 raters':
    the second reads by who gave them (engine.input.several_reads.read_pair), and every rater."""
    counts = responses.score_counts
    parts = [f"{len(responses):,} responses"]
    if responses.file_rows != len(responses):
        parts[0] += f" (of {responses.file_rows:,} rows)"
    parts.append("scores " + ", ".join(f"{lab}: {n:,}" for lab, n in zip(responses.labels, counts)))
    if responses.second_scores is not None:
        # Here, not at the top: it loads pandas, which the app's first frame need not wait for.
        from engine.workspace.reporting import read_pair

        second = read_pair([responses.reads])[1]
        parts.append(f"{second} on {int((responses.second_scores >= 0).sum()):,}")
        parts += _raters_part([responses])
    if responses.skipped:
        parts.append(f"{len(responses.skipped):,} rows skipped")
    return plain(" · ".join(parts))


class LoadScreen(Screen):
    """The first screen: a path input, recent files, column selectors, validation, preview."""

    SUB_TITLE = "Load"
    BINDINGS = keymap.LOAD

    def __init__(self, initial_path: Path | None = None) -> None:
        super().__init__(id="load-screen")
        self.initial_path = initial_path
        self._filling = False
        self.score_question: str | None = None
        self.sheet_question: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="path-row"):
            yield PathInput(id="path", compact=True)
            yield Button("Open", id="open", compact=True, variant="primary")
        yield Static("", id="path-message")
        yield VimOptionList(id="recent")
        with Horizontal(id="columns"):
            for widget_id, (key, label) in COLUMN_ROLES.items():
                choice = Vertical(classes="column-choice", id=f"choice-{widget_id}")
                # A workbook's sheet shows only for a workbook (show_sheets).
                choice.display = widget_id != SHEET_WIDGET
                with choice:
                    yield Label(label)
                    yield column_widget(widget_id, key)
        yield Static("", id="validation")
        yield VimDataTable(id="preview", zebra_stripes=True)
        yield ParmFooter()

    def on_mount(self) -> None:
        self.fit_columns()
        self.query_one("#recent", VimOptionList).border_title = "Recent files (enter opens)"
        self.show_recent()
        self.watch(self.app, "state", self.show_state, init=False)
        self.query_one("#preview").border_title = "Preview"
        if self.initial_path is not None:
            # The input shows the path as display_path does (control characters replaced);
            # the file opened is the real one.
            self.query_one("#path", PathInput).value = display_path(self.initial_path)
            self.open_path(str(self.initial_path))
        else:
            self.query_one("#path", PathInput).focus()

    def show_recent(self) -> None:
        recent = self.query_one("#recent", VimOptionList)
        recent.clear_options()
        recent.add_options([Option(plain(display_path(p)), id=str(p)) for p in recent_files()])
        recent.display = recent.option_count > 0

    # -- opening a file -------------------------------------------------------------------------
    @on(PathInput.Submitted, "#path")
    @on(Button.Pressed, "#open")
    def submit_path(self) -> None:
        self.open_path(self.query_one("#path", PathInput).value)

    @on(VimOptionList.OptionSelected, "#recent")
    def open_recent(self, event: VimOptionList.OptionSelected) -> None:
        self.query_one("#path", PathInput).value = display_path(Path(event.option.id))
        self.open_path(event.option.id)

    def open_path(self, text: str) -> None:
        """Check the path, then read the table in a thread (big files take a moment); a live
        session's folder opens on the Monitor screen."""
        if text.strip() and workspace.is_session(expand(text)):
            self.app.call_later(self.app.open_session, expand(text).resolve())
            return
        problem = path_problem(text)
        message = self.query_one("#path-message", Static)
        message.set_class(problem is not None, "error")
        if problem is not None:
            message.update(plain(problem))
            return
        path = expand(text).resolve()
        message.update(plain(f"Reading {display_path(path)} …"))
        self.read_frame(path)

    @work(thread=True, exclusive=True, exit_on_error=False, group="read-table")
    def read_frame(self, path: Path, sheet: str | None = None) -> OpenedFile:
        """The file opened (engine.workspace.open_file): its table (a workbook's `sheet`, or
        the guessed one), the digest of its bytes and its saved runs, newest first (or why
        they cannot be read)."""
        return workspace.open_file(path, sheet=sheet)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "read-table":
            return
        message = self.query_one("#path-message", Static)
        if event.state == WorkerState.SUCCESS:
            file = event.worker.result
            path, frame, runs = file.path, file.frame, file.runs
            message.set_class(False, "error")
            message.update(
                plain(f"{display_path(path)} · {len(frame):,} rows · {frame.shape[1]} columns")
            )
            self.app.open_file(file)
            self.show_sheets(file)
            self.show_frame(frame)
            self.app.choose_columns(self.chosen_columns())
            self.show_recent()

            # A fallback encoding, restored or replaced characters: said once, when the file
            # opens, after the question whether to resume it where one is asked.
            def notes() -> None:
                for warning in file.warnings:
                    self.app.notify(warning, severity="warning", timeout=10)

            await offer_resume(self.app, runs[0] if runs else None, file.runs_problem, notes)
        elif event.state == WorkerState.ERROR:
            error = event.worker.error
            if isinstance(error, ParmError):
                message.set_class(True, "error")
                message.update(plain(str(error)))
            else:
                self.app.show_error(error)

    def show_sheets(self, file: OpenedFile) -> None:
        """A workbook's sheets under Sheet, the one read chosen; a doubtful guess is asked."""
        select = self.query_one(f"#{SHEET_WIDGET}", Select)
        self._filling = True
        try:
            select.set_options([(plain(name), name) for name in file.sheets])
            select.value = file.sheet if file.sheet is not None else Select.NULL
        finally:
            self._filling = False
        self.query_one(f"#choice-{SHEET_WIDGET}").display = bool(file.sheets)
        self.fit_columns()
        self.sheet_question = file.sheet_question()
        if self.sheet_question is not None:
            self.app.notify(
                f"{self.sheet_question} '{file.sheet}' is shown; choose another under Sheet.",
                severity="warning",
                timeout=15,
            )

    # -- columns and validation -----------------------------------------------------------------
    def show_frame(self, frame) -> None:
        """The table's columns in every selector (a column named in the settings wins over a
        guess) and its first rows."""
        choice = workspace.choose_columns(self.app.state.file, self.app.state.config)
        columns = [str(c) for c in frame.columns]
        chosen = {widget_id: choice.columns[key] for widget_id, (key, _) in COLUMN_ROLES.items()}
        self.select_columns([(plain(c), c) for c in columns], chosen)
        self.fill_preview(frame)
        # A doubtful guess of the score column is asked until the user picks the column.
        self.score_question = choice.question()
        if self.score_question is not None:
            self.app.notify(
                self.score_question + " Choose it under Score.", severity="warning", timeout=15
            )
        if choice.reviewed:
            self.app.notify(
                "Score column: final_score, the reviewed scores of a scores_reviewed.csv; "
                "choose another to audit the original scores.",
                timeout=8,
            )

    def select_columns(self, options: list | None, chosen: dict) -> None:
        """Set the widgets to `chosen` ({widget id: column, columns, choice or path}; the column
        dropdowns' options too, when given) without each change choosing columns again."""
        self._filling = True
        try:
            for widget_id, value in chosen.items():
                key = COLUMN_ROLES[widget_id][0]
                how = kind(key)
                if how == SHEET:
                    continue  # the sheet read: show_sheets
                if how in (COLUMNS, PATH):
                    shown = ", ".join(value) if isinstance(value, tuple) else value or ""
                    self.query_one(f"#{widget_id}", Input).value = shown
                    continue
                select = self.query_one(f"#{widget_id}", Select)
                if options is not None and how == COLUMN:
                    select.set_options(options)
                select.value = value if value is not None else Select.NULL
        finally:
            self._filling = False

    def fill_preview(self, frame) -> None:
        """The file's first rows, the columns sharing the width there is."""
        table = self.query_one("#preview", VimDataTable)
        table.clear(columns=True)
        head = frame.head(PREVIEW_ROWS)
        values = [[str(v) for v in row] for row in head.itertuples(index=False)]
        headers = [short(column, 24) for column in frame.columns]
        natural = [
            max([headers[n].cell_len] + [short(row[n]).cell_len for row in values])
            for n in range(len(headers))
        ]
        width = (table.size.width or self.app.size.width - 4) - PREVIEW_FRAME
        widths = fit_widths(natural, width - 2 * len(natural))
        # Widths set here: auto widths were sometimes drawn at the header's width (ids cut).
        for header, column_width in zip(headers, widths):
            table.add_column(header, width=column_width)
        for row in values:
            table.add_row(*[short(v, w) for v, w in zip(row, widths)])
        table.border_subtitle = f"first {min(PREVIEW_ROWS, len(frame))} of {len(frame):,} rows"

    def on_resize(self) -> None:
        self.fit_columns()
        file = self.app.state.file
        if file is not None:
            self.call_after_refresh(self.fill_preview, file.frame)

    def fit_columns(self) -> None:
        """As many column choices a row as the width gives each about 19 cells (4 at 80)."""
        grid = self.query_one("#columns")
        shown = sum(1 for choice in grid.query(".column-choice") if choice.display)
        per_row = max(4, min(shown, self.app.size.width // 19))
        rows = -(-shown // per_row)
        grid.styles.grid_size_columns = per_row
        grid.styles.height = 2 * rows

    @on(Select.Changed)
    @on(Input.Submitted, ".column-choice Input")
    @on(Input.Blurred, ".column-choice Input")
    def column_changed(self, event) -> None:
        if not self._filling and self.app.state.file is not None:
            select = getattr(event, "select", None)
            if select is not None and select.id == SHEET_WIDGET:
                self.sheet_chosen(select.value)
                return
            if select is not None and select.id == "col-score":
                self.score_question = None  # the user chose it
            chosen = self.chosen_columns()
            if chosen != self.app.state.columns:
                self.app.choose_columns(chosen)

    def sheet_chosen(self, value) -> None:
        """Another sheet chosen: the file is read again on it (its columns guessed anew)."""
        file = self.app.state.file
        if value is Select.NULL or value == file.sheet:
            return
        self.sheet_question = None
        self.query_one("#path-message", Static).update(plain(f"Reading sheet '{value}' …"))
        self.read_frame(file.path, str(value))

    def chosen_columns(self) -> dict:
        """The settings the widgets choose: columns (None: none), several columns as a tuple,
        the file's shape, the answers file."""
        chosen = {}
        for widget_id, (key, _) in COLUMN_ROLES.items():
            how = kind(key)
            if how in (COLUMNS, PATH):
                text = self.query_one(f"#{widget_id}", Input).value.strip()
                parts = tuple(part.strip() for part in text.split(",") if part.strip())
                chosen[key] = (parts or None) if how == COLUMNS else (text or None)
                continue
            value = self.query_one(f"#{widget_id}", Select).value
            chosen[key] = None if value is Select.NULL else str(value)
        return chosen

    def show_state(self, old, new) -> None:
        """The app's state changed: the selectors follow its columns (a resumed session's),
        the line under them says what the columns give (counts and warnings, or the
        problem)."""
        if new.file is None:
            return
        if (
            old.file is not None
            and old.file.path == new.file.path
            and (old.file.sheet != new.file.sheet)
        ):  # a saved run of another sheet of the workbook, resumed
            self.show_sheets(new.file)
            self.fill_preview(new.file.frame)
        if new.columns is not None and new.columns != self.chosen_columns():
            ids = {role[0]: select_id for select_id, role in COLUMN_ROLES.items()}
            self.select_columns(None, {ids[key]: column for key, column in new.columns.items()})
        box = self.query_one("#validation", Static)
        box.set_class(new.items is None, "error")
        if new.items is None:
            box.update(plain(new.file_problem or ""))
            return
        lines = Text("✓ ", style="bold green") + counts_line(new.items)
        asked = [(q, w) for q, w in ((self.sheet_question, "Sheet"),
                                     (self.score_question, "Score")) if q is not None]  # fmt: skip
        if asked:
            question, where = asked[0]
            lines = plain(f"? {question} Choose it under {where}.\n", "bold yellow")
            lines.append_text(counts_line(new.items))
        # One line per kind of warning (engine.core.run_warnings), not one per item.
        for line in summary_lines(new.items.notes):
            lines.append_text(plain("\n⚠ " + line, style="yellow"))
        box.update(lines)

    def action_copy_row(self) -> None:
        """Copy the full text of the preview row under the cursor (the chosen text column)."""
        file = self.app.state.file
        column = self.chosen_columns()["text_column"] if file is not None else None
        if column is None:
            self.app.notify("Open a file and choose its text column first.", severity="warning")
            return
        row = self.query_one("#preview", VimDataTable).cursor_row
        self.app.copy_to_clipboard(str(file.frame.iloc[row][column]))
        self.app.notify(f"Copied the answer in data row {row + 1}.")
