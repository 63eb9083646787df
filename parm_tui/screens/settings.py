"""Settings: every defaults.json key as a widget, validated live by engine.input.settings.config, with the
engine's message under the field it names and one line of help under the field with the focus;
technical keys in an Advanced section, closed by default; save to and load from a JSON file.
The fields' labels, help and layout are parm_tui.widgets.settings_fields'."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Collapsible, Header, Input, Select, Static, Switch

from engine.core.errors import ConfigError, ParmError
from engine.workspace.settings import (
    ACTIONS,
    ADVANCED,
    CHOSEN_KEYS,
    COLBERT,
    DEFAULT_MODEL,
    FORM,
    MONITOR,
    STATIC_MODEL,
    PowerInterval,
    Setting,
    config_from_dict,
    in_section,
    is_late_interaction,
    load_config,
    load_defaults,
    save_config,
)
from parm_tui.screens import settings_form as form
from parm_tui.widgets.footer import ParmFooter
from parm_tui.widgets.path_input import PathInput, expand
from parm_tui.widgets.plain import plain
from parm_tui.widgets.settings_fields import (
    POWER_MODES,
    TOP_K_MODES,
    error_line,
    field,
    field_row,
    help_line,
    options,
    show_help,
    sub_row,
)
from parm_tui.widgets.toggles import MarkedSwitch

# The settings the form shows, and those whose widget is one of their own (composed below).
SHOWN = (in_section(FORM) + in_section(COLBERT) + in_section(ADVANCED) + in_section(ACTIONS)
         + in_section(MONITOR))  # fmt: skip
OWN_WIDGETS = ("embedding_model", "similarity_power", "similarity_top_k", "score_order")
# The settings of the plain kinds: one widget each, chosen by the kind of its rule.
PLAIN = tuple(setting for setting in SHOWN if setting.name not in OWN_WIDGETS)


def grid_box(key: str, modes, prefix: str, symbol: str, example: str, *more) -> ComposeResult:
    """A setting given as one value, a list to choose from or (`more` rows) an interval: its
    mode, a row for the value and one for the list (`#<prefix>-fixed`, `#<prefix>-list`)."""
    mode = Select(modes, id=f"{prefix}-mode", compact=True, allow_blank=False)
    with Vertical(classes="field-box", id=f"box-{key}"):
        yield from field_row(key, mode)
        fixed = Input(id=f"{prefix}-fixed", compact=True)
        yield from sub_row(symbol, fixed, row_id=f"{prefix}-fixed-row")
        values = Input(id=f"{prefix}-list", compact=True, placeholder=example)
        yield from sub_row(f"{symbol} values", values, row_id=f"{prefix}-list-row")
        for rows in more:
            yield from rows
        yield help_line(key)
        yield error_line(key)


class SettingsScreen(Screen):
    """The settings form. Valid settings are applied to the app as they are typed."""

    SUB_TITLE = "Settings"

    def __init__(self) -> None:
        super().__init__(id="settings-screen")
        self._filling = False

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="settings-form"):
            yield from self.compose_section(in_section(FORM))
            with Vertical(id="colbert-keys"):
                yield from self.compose_section(in_section(COLBERT))
            with Collapsible(
                title="Advanced (speed, memory, where it runs, what is kept)", id="advanced"
            ):
                yield from self.compose_section(in_section(ADVANCED))
            with Collapsible(title="Lead's lists (backreads, third reads, status)", id="actions"):
                yield from self.compose_section(in_section(ACTIONS))
            with Collapsible(title="Monitor (a live session's alert rules)", id="monitor-rules"):
                yield from self.compose_section(in_section(MONITOR))
        # Outside the scrolling form, so it is in view at 80x24.
        yield Static("", id="settings-status")
        with Horizontal(id="settings-file-row"):
            yield PathInput(id="settings-file", compact=True, placeholder="settings.json")
            yield Button("Save", id="settings-save", compact=True)
            yield Button("Load", id="settings-load", compact=True)
            yield Button("Defaults", id="settings-defaults", compact=True)
        yield Static("", id="settings-file-message")
        yield ParmFooter()

    def compose_section(self, settings: tuple[Setting, ...]) -> ComposeResult:
        """Each setting's field, in the table's order: a widget of its own, or the plain one of
        its kind (a switch, a dropdown, a text field)."""
        own = {
            "embedding_model": self.compose_model,
            "similarity_power": self.compose_power,
            "similarity_top_k": self.compose_top_k,
            "score_order": self.compose_score_order,
        }
        for setting in settings:
            if setting.name in own:
                yield from own[setting.name]()
            elif setting.rule.kind == "bool":
                yield from field(setting.name, MarkedSwitch(id=setting.name, animate=False))
            elif setting.rule.kind == "choice":
                box = Select(options(setting), id=setting.name, compact=True, allow_blank=False)
                yield from field(setting.name, box)
            else:
                box = Input(id=setting.name, compact=True, placeholder=setting.placeholder)
                yield from field(setting.name, box)

    def compose_model(self) -> ComposeResult:
        known = [(f"{DEFAULT_MODEL} (bundled)", DEFAULT_MODEL)]
        known.append((f"{STATIC_MODEL} (fast: distilled from the bundled model)", STATIC_MODEL))
        known += [(plain(name), name) for name in form.local_models() if name != DEFAULT_MODEL]
        with Vertical(classes="field-box", id="box-embedding_model"):
            yield from field_row(
                "embedding_model",
                Select(known, id="model-choice", compact=True, prompt="known models…"),
            )
            yield from sub_row("or name/path", Input(id="embedding_model", compact=True))
            yield help_line("embedding_model")
            yield error_line("embedding_model")

    def compose_power(self) -> ComposeResult:
        bounds = [Input(id=f"power-{part}", compact=True, classes="third") for part in
                  ("min", "max", "tol")]  # fmt: skip
        interval = sub_row("min / max / tol", *bounds, row_id="power-interval-row")
        yield from grid_box("similarity_power", POWER_MODES, "power", "p", "0.5, 1, 2, 4", interval)

    def compose_top_k(self) -> ComposeResult:
        yield from grid_box("similarity_top_k", TOP_K_MODES, "top-k", "K", "5, 10, 20, 50")

    def compose_score_order(self) -> ComposeResult:
        """Score labels lowest first, comma-separated: text labels need it to be ordered."""
        placeholder = "e.g. low, medium, high"
        order = Input(id="score_order", compact=True, placeholder=placeholder)
        with Vertical(classes="field-box", id="box-score_order"):
            yield from field_row("score_order", order)
            yield Static("", id="score-order-hint", classes="field-hint")
            yield help_line("score_order")
            yield error_line("score_order")

    def on_descendant_focus(self, event) -> None:
        show_help(self, event.widget)

    def on_screen_resume(self) -> None:
        if self.focused is not None:
            show_help(self, self.focused)

    def on_mount(self) -> None:
        self.fill(self.app.state.config)
        self.watch(self.app, "state", self.show_state, init=False)

    def show_state(self, old, new) -> None:
        """The app's state changed: settings replaced elsewhere (a resumed session's) are filled
        in, unless the form shows them already; the loaded file's labels are shown."""
        if new.config is not old.config and self.replaced(old.config, new.config):
            self.fill(new.config)
        if new.responses is not old.responses or new.file is not old.file:
            self.show_score_labels()

    def replaced(self, old, new) -> bool:
        """Whether `new` changes what the form shows (not only the Load screen's columns) and
        the form does not show it yet."""
        before, after = old.to_dict(), new.to_dict()
        if all(before[key] == after[key] for key in after if key not in CHOSEN_KEYS):
            return False
        try:
            return config_from_dict({**after, **self.settings_dict()}) != new
        except ConfigError:
            return True

    # -- config -> widgets ----------------------------------------------------------------------
    def fill(self, config) -> None:
        """Show `config` in the form (without re-validating each widget as it is set)."""
        self._filling = True
        values = config.to_dict()
        self.query_one("#embedding_model", Input).value = config.embedding_model
        for setting in PLAIN:
            value, kind = values[setting.name], setting.rule.kind
            if kind == "bool":
                self.query_one(f"#{setting.name}", Switch).value = value
            elif kind == "choice":
                self.query_one(f"#{setting.name}", Select).value = (
                    "none" if value is None else value
                )
            else:
                self.query_one(f"#{setting.name}", Input).value = form.shown(value)
        self.query_one("#score_order", Input).value = ", ".join(values["score_order"] or [])
        self.fill_power(config.similarity_power)
        top_k = config.similarity_top_k
        k_mode = "off" if top_k is None else "fixed" if isinstance(top_k, int) else "list"
        self.query_one("#top-k-mode", Select).value = k_mode
        self.query_one("#top-k-fixed", Input).value = str(top_k) if k_mode == "fixed" else "10"
        self.query_one("#top-k-list", Input).value = (
            form.shown_list(top_k) if k_mode == "list" else ""
        )
        self.call_after_refresh(self.end_fill)

    def fill_power(self, power) -> None:
        mode = "interval" if isinstance(power, PowerInterval) else "list"
        mode = "fixed" if isinstance(power, float) else mode
        self.query_one("#power-mode", Select).value = mode
        self.query_one("#power-fixed", Input).value = form.shown(power) if mode == "fixed" else "1"
        self.query_one("#power-list", Input).value = (
            form.shown_list(power) if mode == "list" else ""
        )
        interval = power if mode == "interval" else PowerInterval(0.25, 8.0)
        for part in ("min", "max", "tol"):
            self.query_one(f"#power-{part}", Input).value = form.shown(getattr(interval, part))

    def end_fill(self) -> None:
        self._filling = False
        self.validate()

    # -- widgets -> settings dict ---------------------------------------------------------------
    def value(self, selector: str) -> str:
        return self.query_one(selector, Input).value

    def power_value(self):
        mode = self.query_one("#power-mode", Select).value
        if mode == "fixed":
            return form.number(self.value("#power-fixed"))
        if mode == "list":
            return form.number_list(self.value("#power-list"))
        return {part: form.number(self.value(f"#power-{part}")) for part in ("min", "max", "tol")}

    def top_k_value(self):
        mode = self.query_one("#top-k-mode", Select).value
        if mode == "off":
            return None
        if mode == "fixed":
            return form.number(self.value("#top-k-fixed"), integer=True)
        return form.number_list(self.value("#top-k-list"), integer=True)

    def settings_dict(self) -> dict:
        """The form as a settings dict (JSON form), the data-column keys kept from the app."""
        values = {
            "embedding_model": self.value("#embedding_model").strip(),
            "similarity_power": self.power_value(),
            "similarity_top_k": self.top_k_value(),
            "score_order": self.value("#score_order").strip() or None,
        }
        for setting in PLAIN:
            values[setting.name] = self.plain_value(setting)
        return values

    def plain_value(self, setting: Setting):
        """A plain field's value: text that is not a number stays text, for the engine to name."""
        kind, key = setting.rule.kind, setting.name
        if kind == "bool":
            return self.query_one(f"#{key}", Switch).value
        if kind == "choice":
            choice = self.query_one(f"#{key}", Select).value
            return None if choice == "none" else choice
        if kind == "text":
            return self.value(f"#{key}").strip() or None
        return form.number(self.value(f"#{key}"), integer=kind == "int")

    def field_errors(self, values: dict) -> dict[str, str]:
        """Each key checked on its own against the app's valid config: every bad field shows."""
        base = self.app.state.config.to_dict()
        errors = {}
        for key, value in values.items():
            try:
                config_from_dict({**base, key: value})
            except ConfigError as exc:
                errors[key] = str(exc)
        return errors

    def validate(self):
        """Validate the form; apply it to the app when valid. Returns the config or None."""
        values = self.settings_dict()
        self.query_one("#colbert-keys").display = is_late_interaction(values["embedding_model"])
        self.show_modes()
        errors = self.field_errors(values)
        config = None
        if not errors:
            try:
                config = config_from_dict({**self.app.state.config.to_dict(), **values})
            except ConfigError as exc:
                errors[form.field_of(exc) or "general"] = str(exc)
        for error_box in self.query(".field-error"):
            key = (error_box.id or "").removeprefix("error-")
            error_box.update(plain(errors.get(key, "")))
            error_box.display = key in errors
        status = self.query_one("#settings-status", Static)
        if config is None:
            problem = errors.get("general", "Fix the settings marked above.")
            status.update(plain(problem, "red"))
            # The Run screen refuses to start while the form shows an error.
            self.app.refuse_settings(next(iter(errors.values())))
            return None
        notes = Text("✓ Settings valid and applied.", "green")
        for warning in config.warnings:
            notes.append("\n⚠ " + warning, "yellow")
        status.update(notes)
        state = self.app.state
        if config != state.config or state.settings_problem is not None:
            self.app.apply_settings(config)
        self.show_score_labels()
        return config

    def show_score_labels(self) -> None:
        """The loaded file's score labels in code order, and whether they are ordered."""
        responses = self.app.state.responses
        if responses is None:
            loaded = self.app.state.file is not None
            hint = (
                "The loaded file does not fit these settings: see the Load screen (F2)."
                if loaded
                else "Numbers are ordered numerically; text labels need their order here."
            )
        else:
            how = "ordered" if responses.ordered else "no order: nominal, no QWK or near"
            hint = f"Scores in the file, in code order: {', '.join(responses.labels)} ({how})."
        self.query_one("#score-order-hint", Static).update(Text(hint, "dim"))

    def show_modes(self) -> None:
        power_mode = self.query_one("#power-mode", Select).value
        for mode in ("fixed", "list", "interval"):
            self.query_one(f"#power-{mode}-row").display = power_mode == mode
        k_mode = self.query_one("#top-k-mode", Select).value
        for mode in ("fixed", "list"):
            self.query_one(f"#top-k-{mode}-row").display = k_mode == mode

    @on(Input.Changed)
    @on(Switch.Changed)
    @on(Select.Changed)
    def changed(self, event) -> None:
        if getattr(event, "input", None) is not None and event.input.id == "settings-file":
            return
        if getattr(event, "select", None) is not None and event.select.id == "model-choice":
            if event.value is not Select.NULL:
                self.query_one("#embedding_model", Input).value = str(event.value)
            return
        if not self._filling:
            self.validate()

    # -- save / load ----------------------------------------------------------------------------
    def file_message(self, text: str, error: bool) -> None:
        message = self.query_one("#settings-file-message", Static)
        message.set_class(error, "error")
        message.update(plain(text))

    @on(Button.Pressed, "#settings-save")
    def save(self) -> None:
        self.save_settings()

    def save_settings(self) -> bool:
        text = self.query_one("#settings-file", PathInput).value
        if not text.strip():
            self.file_message("Type a file name to save the settings to.", True)
            self.query_one("#settings-file", PathInput).focus()
            return False
        config = self.validate()
        if config is None:
            self.file_message("Not saved: fix the settings marked above first.", True)
            return False
        path = expand(text)
        try:
            save_config(config, path)
        except (ParmError, OSError) as exc:
            self.file_message(f"Could not save to {path}: {exc}", True)
            return False
        self.file_message(f"Saved settings to {path}", False)
        return True

    @on(Button.Pressed, "#settings-load")
    @on(PathInput.Submitted, "#settings-file")
    def load(self) -> None:
        text = self.query_one("#settings-file", PathInput).value
        try:
            config = load_config(expand(text))
        except ParmError as exc:
            self.file_message(str(exc), True)
            return
        self.fill(config)
        self.app.apply_settings(config)
        self.file_message(f"Loaded settings from {expand(text)}", False)

    @on(Button.Pressed, "#settings-defaults")
    def defaults(self) -> None:
        config = load_defaults()
        self.fill(config)
        self.app.apply_settings(config)
        self.file_message("Settings reset to the defaults.", False)
