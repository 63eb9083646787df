"""Export: write the chosen outputs into a folder. Existing files are never replaced without
asking; every problem is shown as the engine's message, which names the file or folder. ctrl+t
writes today's lists alone (backreads.csv, third_reads.csv, rater_status.csv: engine.actions)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Header, Input, Label, Static
from textual.worker import Worker, WorkerState

from engine import workspace
from engine.core.errors import ExportError, ParmError
from engine.results.session import SessionResult
from parm_tui import keymap
from parm_tui.screens.error import ErrorRaised
from parm_tui.widgets.confirm import ConfirmModal
from parm_tui.widgets.footer import ParmFooter
from parm_tui.widgets.plain import plain
from parm_tui.widgets.toggles import MarkedCheckbox

DEFAULT_FOLDER = "./parm-out"


def output_folder(value: str) -> Path:
    """The folder typed by the user, `~` expanded; empty means the default."""
    return Path(value.strip() or DEFAULT_FOLDER).expanduser().absolute()


class ConfirmOverwrite(ConfirmModal):
    """Asks before replacing existing outputs: y replaces, n/escape (and enter, on the focused
    button) keeps them."""

    BINDINGS = keymap.REPLACE_FILES
    YES = ("Replace (y)", "warning")
    NO = ("Keep them (n)", "primary")
    FOCUS_YES = False
    WARNING = True

    def __init__(self, folder: Path, existing: list[str]) -> None:
        super().__init__()
        self.folder = folder
        self.existing = existing

    def lines(self) -> list[Widget]:
        return [
            Label(plain(f"{self.folder} already has:", style="bold")),
            Label(Text("\n".join(f"  {name}" for name in self.existing))),
            Label(Text("Replace them?")),
        ]


class ExportScreen(Screen):
    """Choose a folder and the outputs, then write them. folder: where the run's outputs were
    last written (`parm audit --out`, an earlier export), offered first; else ./parm-out."""

    SUB_TITLE = "Export"

    BINDINGS = keymap.EXPORT

    class Written(Message):
        """The outputs were written to `folder` (the app keeps it with the saved run)."""

        def __init__(self, folder: Path) -> None:
            super().__init__()
            self.folder = folder

    def __init__(self, session: SessionResult, store=None, table=None, folder=None) -> None:
        super().__init__()
        self.session = session
        self.folder = folder or DEFAULT_FOLDER
        self.store = store
        # The input file as read: scores_reviewed.csv keeps every row and column of it.
        self.table = table
        self.export_worker: Worker | None = None
        self.import_worker: Worker | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="export-form"):
            yield Static(self.summary(), classes="export-title")
            yield Label("Folder (created if missing; ~ allowed)")
            yield Input(value=str(self.folder), id="export-folder")
            yield Static(id="export-where")
            for group in workspace.OUTPUT_CHOICES:
                if self.offers(group.files):
                    yield MarkedCheckbox(
                        group.label, value=group.default, id=f"export-{group.key}", compact=True
                    )
            yield Button("Write files (ctrl+s)", variant="primary", id="export-write")
            yield Static(id="export-status")
            yield Label("A colleague's decisions.csv to bring into this review (ctrl+i)")
            with Horizontal(id="import-row"):
                yield Input(placeholder="path to their decisions.csv", id="import-path")
                yield Button("Import", id="import-decisions", compact=True)
            yield Static(id="import-status")
        yield ParmFooter()

    def offers(self, files) -> bool:
        """items.csv and the rater files only for a session with items and raters; the
        workbook (results.xlsx, off until chosen) for every session."""
        names = workspace.output_names(self.session.config, table_format="both")
        return all(name in names for name in files)

    def summary(self) -> Text:
        source = self.session.items.source
        name = Path(source).name if source else "input"
        flagged = int(self.session.flagged.sum())
        count = f"{self.session.n_responses:,} responses"
        if self.session.by_item:
            count = f"{len(self.session.results)} items, " + count
        return plain(f"{name} · {count} · {flagged:,} flagged", style="bold")

    def on_mount(self) -> None:
        decisions = self.query_one("#export-decisions", MarkedCheckbox)
        if self.store is None:
            decisions.value = False
            decisions.disabled = True
            decisions.label = "decisions.csv (off: no decision store is open)"
        else:
            decisions.label = self.decisions_label()
        if self.table is None:
            reviewed = self.query_one("#export-reviewed", MarkedCheckbox)
            reviewed.value = False
            reviewed.disabled = True
            reviewed.label = "scores_reviewed.csv (off: the input file is not loaded)"
        self.query_one("#export-folder", Input).focus()
        self.watch(self.app, "state", self.follow_store, init=False)

    def follow_store(self, old, new) -> None:
        """The app's state changed: a new decision store replaces the one decisions.csv is
        written from."""
        if new.store is not old.store:
            self.store = new.store

    def on_screen_resume(self) -> None:
        if self.store is not None:
            self.query_one("#export-decisions", MarkedCheckbox).label = self.decisions_label()

    def decisions_label(self) -> str:
        """'decisions.csv (9 decisions; 2 typed reads counted)': whole at 80 columns."""
        count = len(self.store.all())
        label = f"decisions.csv ({count:,} decision{'' if count == 1 else 's'}"
        typed = len(self.store.added_reads())
        if typed:  # they count in the consensus of every file that has it
            label += f"; {typed:,} typed read{'' if typed == 1 else 's'} counted"
        return label + ")"

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "export-folder":
            where = plain(f"→ {output_folder(event.value)}", style="dim")
            self.query_one("#export-where", Static).update(where)

    def chosen_names(self) -> list[str]:
        names: list[str] = []
        for group in workspace.OUTPUT_CHOICES:
            if not self.offers(group.files):
                continue
            box = self.query_one(f"#export-{group.key}", MarkedCheckbox)
            if box.value and not box.disabled:
                names += group.files
        return names

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "import-path":
            self.action_import_decisions()
        else:
            self.action_export()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "export-write":
            event.stop()
            self.action_export()
        elif event.button.id == "import-decisions":
            event.stop()
            self.action_import_decisions()

    def action_import_decisions(self) -> None:
        """Bring a colleague's decisions.csv into the open review (engine.workspace)."""
        status = self.query_one("#import-status", Static)
        path = self.query_one("#import-path", Input).value.strip()
        if self.store is None:
            status.update(Text("No review is open: decisions cannot be imported.", "yellow"))
            return
        if not path:
            self.query_one("#import-path", Input).focus()
            status.update(Text("Type the path of their decisions.csv first.", "yellow"))
            return
        status.update(plain(f"Importing {path}…"))
        self.import_worker = self.import_file(Path(path).expanduser())

    @work(thread=True, exclusive=True, exit_on_error=False, group="import")
    def import_file(self, path: Path):
        return workspace.import_review(self.store, path)

    def action_export_lists(self) -> None:
        """Today's lists alone, into the folder (one key: the lead's morning export)."""
        lists = next((g.files for g in workspace.OUTPUT_CHOICES if g.key == "actions"), ())
        if not self.offers(lists):
            self.show_status(Text("This run has no lists: no rater column and no answer read "
                                  "twice.", style="yellow"))  # fmt: skip
            return
        self.action_export(list(lists))

    def action_export(self, names: list[str] | None = None) -> None:
        """Check first; ask before replacing files; then write in a worker thread. names: these
        files (default: the ones ticked)."""
        if self.export_worker is not None and self.export_worker.state == WorkerState.RUNNING:
            return
        folder = output_folder(self.query_one("#export-folder", Input).value)
        names = names or self.chosen_names()
        if not names:
            self.show_status(Text("Choose at least one output.", style="yellow"))
            return
        try:
            workspace.check_outputs(folder, names, force=False)
        except ExportError as exc:
            existing = [n for n in names if (folder / n).exists()]
            # Only regular files can be replaced; a folder in a target's place is the error.
            blocked = any(not (folder / n).is_file() for n in existing)
            if not existing or blocked or (folder.exists() and not folder.is_dir()):
                self.show_status(plain(str(exc), style="red"))
                return
            self.app.push_screen(
                ConfirmOverwrite(folder, existing),
                lambda replace: (
                    self._write(folder, names, True)
                    if replace
                    else self.show_status(
                        Text("Nothing written: the existing files were kept.", style="yellow")
                    )
                ),
            )
            return
        self._write(folder, names, overwrite=False)

    def _write(self, folder: Path, names: list[str], overwrite: bool) -> None:
        self.show_status(plain(f"Writing {len(names)} file(s) to {folder}…"))
        self.export_worker = self.write_files(folder, names, overwrite)

    @work(thread=True, exclusive=True, exit_on_error=False, group="export")
    def write_files(self, folder: Path, names: list[str], overwrite: bool) -> list[Path]:
        # One output set: a failure leaves every previous file in the folder as it was.
        return workspace.export(
            self.session, folder, names, self.store, self.table, force=overwrite
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self.import_worker:
            self.import_done(event)
            return
        if event.worker is not self.export_worker:
            return
        if event.state == WorkerState.SUCCESS:
            written = event.worker.result
            # The folder once, then the names: a path a line ran off the screen at 80x24.
            text = Text(f"Wrote {len(written)} file(s) to ", style="green")
            text.append_text(plain(f"{written[0].parent}:\n" if written else ":\n"))
            text.append_text(plain(", ".join(path.name for path in written)))
            self.show_status(text)
            # Brought into view once laid out with its new height (the form scrolls at 80x24);
            # call_after_refresh came before that layout, a short timer comes after it.
            status = self.query_one("#export-status", Static)
            form = self.query_one("#export-form")
            self.set_timer(0.05, lambda: form.scroll_to_widget(status, animate=False))
            self.notify(f"Wrote {len(written)} file(s).")
            if written:
                self.post_message(self.Written(written[0].parent))
        elif event.state == WorkerState.ERROR:
            self.report_error(event.worker.error)

    def import_done(self, event: Worker.StateChanged) -> None:
        status = self.query_one("#import-status", Static)
        if event.state == WorkerState.SUCCESS:
            report = event.worker.result
            status.update(plain(report.sentence(), style="green" if not report.skipped else ""))
            self.query_one("#export-decisions", MarkedCheckbox).label = self.decisions_label()
            self.notify(report.sentence(), timeout=8)
        elif event.state == WorkerState.ERROR:
            self.report_error(event.worker.error, status, "import")

    def report_error(self, error: BaseException, status: Static | None = None, what="export"):
        """The engine's message in the status line; anything else to the error modal."""
        status = status or self.query_one("#export-status", Static)
        if isinstance(error, ParmError):
            status.update(plain(str(error), style="red"))
        else:
            status.update(Text(f"The {what} failed: see the message.", style="red"))
            self.post_message(ErrorRaised(error))

    def show_status(self, text: Text) -> None:
        self.query_one("#export-status", Static).update(text)
