"""Write the generated parts of the reference pages from the code, so they cannot drift.

A page under docs/ holds a generated block between two markers,

    <!-- BEGIN generated: NAME -->
    ...
    <!-- END generated: NAME -->

and this script replaces what lies between them with GENERATORS[NAME]() (the CLI from the
Typer app's click tree, the settings from engine.input.settings.declared, the output columns from
engine.outputs.declared, the app's keys from the BINDINGS of its screens and widgets, the exit
codes and error kinds from parm_tui.headless and engine.core.errors). The text around the
markers is written by hand.

    python docs/make_reference.py          # rewrite the blocks
    python docs/make_reference.py --check  # exit 1, naming the pages, when a block is stale

tests/test_docs.py runs the check, so a change to the code without this script fails the tests.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

from marked_blocks import ROOT, changed, marked_block, pages_with, write_or_check

BLOCK = marked_block("generated")


def cell(text) -> str:
    """One Markdown table cell: a single line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


# --- the CLI ----------------------------------------------------------------------------------
def cli_commands():
    """(path, click command) for every command of the Typer app, depth first, `parm` first."""
    from typer.main import get_command

    from parm_tui.cli import app

    root = get_command(app)

    def walk(path, command):
        yield path, command
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            yield from walk(f"{path} {name}", sub)

    return list(walk("parm", root))


def _option_names(param) -> str:
    names = [*param.opts, *param.secondary_opts]
    return ", ".join(f"`{name}`" for name in names)


def _default(param) -> str:
    if param.param_type_name == "argument" or param.is_flag or param.default in (None, ()):
        return ""
    return f"`{param.default}`"


def help_blocks(text: str | None) -> list[str]:
    """Click help as Markdown: a paragraph click keeps as written (marked \\b) as a text block,
    the others as prose."""
    out = []
    for paragraph in inspect.cleandoc(text or "").split("\n\n"):
        if paragraph.startswith("\b\n"):
            out += ["```text", paragraph[2:], "```", ""]
        elif paragraph.strip():
            out += [" ".join(paragraph.split()), ""]
    return out


def cli_reference() -> str:
    """Every command with its usage, help and a table of its arguments and options."""
    import click

    out = []
    for path, command in cli_commands():
        context = click.Context(command, info_name=path)
        out += [f"### `{path}`", "", "```text", command.get_usage(context).strip(), "```", ""]
        out += help_blocks(command.help)
        params = [p for p in command.params if not getattr(p, "hidden", False)]
        if params:
            out += [
                "| argument or option | value | default | what it does |",
                "| --- | --- | --- | --- |",
            ]
            for param in params:
                if param.param_type_name == "argument":
                    names = f"`{param.metavar or param.name.upper()}`"
                    value = "(required)" if param.required else "(optional)"
                else:
                    names = _option_names(param)
                    value = "" if param.is_flag else f"`{param.metavar or param.type.name.upper()}`"
                help_text = getattr(param, "help", None) or ""
                out.append(f"| {names} | {value} | {cell(_default(param))} | {cell(help_text)} |")
            out.append("")
        out += help_blocks(command.epilog)
    return "\n".join(out)


# --- the app's keys ---------------------------------------------------------------------------
def key_holders():
    """(class, its own BINDINGS) for the app and every screen and widget that declares keys, in
    module order."""
    import parm_tui.screens
    import parm_tui.widgets
    from parm_tui.app import ParmApp

    holders = [(ParmApp, ParmApp.BINDINGS)]
    for package in (parm_tui.screens, parm_tui.widgets):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ == module.__name__ and "BINDINGS" in vars(cls):
                    holders.append((cls, vars(cls)["BINDINGS"]))
    return holders


def _keys_shown(binding) -> str:
    keys = [k.strip() for k in binding.key.split(",")]
    if binding.key_display:
        keys = [binding.key_display, *keys[1:]]
    return ", ".join(f"`{key}`" for key in keys)


def _where(cls) -> str:
    doc = inspect.getdoc(cls) or ""
    first = doc.split("\n\n")[0].replace("\n", " ")
    return f"`{cls.__module__}.{cls.__name__}`" + (f": {first}" if first else "")


def keys_reference() -> str:
    """One table per class that declares keys: key, what it does, whether the footer shows it."""
    out = []
    for cls, bindings in key_holders():
        out += [f"### {cls.__name__}", "", _where(cls), ""]
        out += ["| key | does | action | in the footer |", "| --- | --- | --- | --- |"]
        for binding in bindings:
            shown = "yes" if binding.show else "no"
            out.append(
                f"| {_keys_shown(binding)} | {cell(binding.description)} | "
                f"`{cell(binding.action)}` | {shown} |"
            )
        out.append("")
    return "\n".join(out)


# --- exit codes and errors --------------------------------------------------------------------
def exit_codes_reference() -> str:
    from parm_tui.headless import EXIT_CODES

    rows = ["| code | meaning |", "| ---: | --- |"]
    rows += [f"| {code} | {cell(meaning)} |" for code, meaning in EXIT_CODES]
    return "\n".join(rows) + "\n"


def errors_reference() -> str:
    """Every kind of error parm reports, from engine.core.errors, with its docstring."""
    from engine.core import errors

    rows = ["| error | kind of problem | exit code |", "| --- | --- | ---: |"]
    for name, cls in inspect.getmembers(errors, inspect.isclass):
        if issubclass(cls, errors.ParmError) and cls.__module__ == errors.__name__:
            code = 130 if issubclass(cls, errors.Cancelled) else 2
            rows.append(f"| `{name}` | {cell(inspect.getdoc(cls))} | {code} |")
    return "\n".join(rows) + "\n"


def settings_reference() -> str:
    from engine.input.settings import declared as settings

    return settings.reference_table()


def columns_reference() -> str:
    from engine.outputs import declared

    return declared.reference_markdown()


def _schema_type(node: dict) -> str:
    kinds = node.get("type")
    if isinstance(kinds, list):
        return " or ".join(kinds)
    if kinds:
        return kinds
    if "const" in node:
        return f"always {node['const']}"
    if "enum" in node:
        return "one of " + ", ".join(str(v) for v in node["enum"])
    alternatives = node.get("anyOf") or node.get("oneOf") or []
    return " or ".join(_schema_type(a) for a in alternatives if isinstance(a, dict)) or "any"


def report_json_reference(max_depth: int = 3) -> str:
    """Every key of report.json down to `max_depth` levels, from its JSON Schema: the path, the
    type and the schema's description."""
    import json

    schema = json.loads((ROOT / "engine" / "outputs" / "report.schema.json").read_text())

    def resolve(node: dict) -> dict:
        """The node behind a $ref; for alternatives, one object with all their keys."""
        while "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        alternatives = [resolve(a) for a in [*node.get("anyOf", ()), *node.get("oneOf", ())]]
        objects = [a for a in alternatives if "properties" in a]
        if objects:
            kinds = " or ".join(_schema_type(a) for a in alternatives)
            merged = {**node, "type": kinds, "properties": {}}
            for alternative in objects:
                merged["properties"].update(alternative["properties"])
            return merged
        return node

    rows = ["| key | type | what it is |", "| --- | --- | --- |"]

    def walk(node: dict, path: str, depth: int) -> None:
        node = resolve(node)
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            walk(node["items"], path + "[]", depth)
            return
        for name, child in node.get("properties", {}).items():
            shown = resolve(child)
            key = f"{path}.{name}" if path else name
            rows.append(
                f"| `{key}` | {cell(_schema_type(shown))} | "
                f"{cell(child.get('description') or shown.get('description') or '')} |"
            )
            # The settings are listed on the settings page.
            if depth < max_depth and child.get("$ref") != "#/$defs/config":
                walk(child, key, depth + 1)

    walk(schema, "", 1)
    return "\n".join(rows) + "\n"


GENERATORS = {
    "report-json": report_json_reference,
    "cli": cli_reference,
    "settings": settings_reference,
    "columns": columns_reference,
    "keys": keys_reference,
    "exit-codes": exit_codes_reference,
    "errors": errors_reference,
}


def refreshed(text: str) -> str:
    """The page's text with every generated block made again."""

    def fill(match):
        body = GENERATORS[match["name"]]().rstrip("\n") + "\n"
        return match.group(1) + body + match.group(4)

    return BLOCK.sub(fill, text)


def pages() -> list[Path]:
    """The pages that hold a generated block."""
    return pages_with(BLOCK)


def made_again() -> dict[Path, str]:
    """Each page's text with its generated blocks made again."""
    return {page: refreshed(page.read_text(encoding="utf-8")) for page in pages()}


def stale() -> list[Path]:
    """The pages whose generated blocks differ from what the code makes now."""
    return changed(made_again())


def main(argv: list[str]) -> int:
    return write_or_check(made_again(), argv, "make_reference.py")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
