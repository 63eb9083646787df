"""The front door (engine.workspace) is the front ends' only way into the engine: the
import-linter contract in pyproject.toml names every other package of the engine, and no module
of parm_tui imports one (annotations under TYPE_CHECKING aside)."""

from __future__ import annotations

import ast
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: import-linter's own reader
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
# Open to the front ends, on purpose (pyproject.toml says why): the door, the floor's
# vocabulary, the result types the door returns.
OPEN = {"engine.workspace", "engine.core", "engine.results"}
CONTRACT = "The front ends reach the engine only through the workspace (and read core and results)"


def _engine_packages() -> set[str]:
    found = set()
    for path in (ROOT / "engine").iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            found.add(f"engine.{path.name}")
        elif path.suffix == ".py" and path.name != "__init__.py":
            found.add(f"engine.{path.stem}")
    return found


def _contract() -> dict:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = data["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == CONTRACT)


def test_the_contract_closes_every_package_but_the_open_ones():
    contract = _contract()
    assert contract["source_modules"] == ["parm_tui"]
    forbidden = set(contract["forbidden_modules"])
    assert forbidden | OPEN == _engine_packages()
    assert not forbidden & OPEN


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _engine_imports(tree: ast.AST):
    """(line, module) of every import of the engine outside `if TYPE_CHECKING:` blocks."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            skipped.update(id(inner) for inner in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "engine":
            names = [f"engine.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        yield from ((node.lineno, n) for n in names if n.split(".")[0] == "engine")


def _open(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in OPEN)


def test_no_front_end_module_imports_a_closed_package():
    closed = []
    for path in sorted((ROOT / "parm_tui").rglob("*.py")):
        for line, module in _engine_imports(ast.parse(path.read_text())):
            if not _open(module):
                closed.append(f"{path.relative_to(ROOT)}:{line} {module}")
    assert closed == []


def test_the_scan_sees_a_closed_import_and_skips_annotations():
    source = (
        "from engine.input.settings.config import build_config\n"
        "import engine.outputs.names\n"
        "from engine.workspace import run\n"
        "from engine import workspace, pipeline\n"
        "if TYPE_CHECKING:\n    from engine.saved.store import SavedSession\n"
        "def f():\n    from engine.outputs.report.conclusions import conclusions\n"
    )
    found = [m for _, m in _engine_imports(ast.parse(source)) if not _open(m)]
    assert found == [
        "engine.input.settings.config",
        "engine.outputs.names",
        "engine.pipeline",
        "engine.outputs.report.conclusions",
    ]


def test_the_door_hands_the_front_ends_what_they_used_to_reach_for():
    from engine.input.settings import config, declared
    from engine.outputs.report import conclusions, reads_outputs
    from engine.workspace import reporting, settings

    assert settings.build_config is config.build_config
    assert settings.Setting is declared.Setting
    assert reporting.conclusions is conclusions.conclusions
    assert reporting.prmse_text is reads_outputs.prmse_text


def test_the_reports_names_are_each_imported_from_their_module_when_asked():
    """engine.workspace.reporting loads a name's module when the name is first asked for: its
    list of names is whole, each is the module's own object, and a name it lacks is an error."""
    import importlib

    import pytest

    from engine.workspace import reporting

    assert sorted(reporting.__all__) == sorted(reporting._SOURCES)
    for name, (module, attribute) in reporting._SOURCES.items():
        assert getattr(reporting, name) is getattr(importlib.import_module(module), attribute)
    with pytest.raises(AttributeError):
        reporting.not_a_report_name  # noqa: B018
