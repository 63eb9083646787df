"""The house's layout as docs/architecture.md states it (issue 48): no folder of the engine with
more than 14 modules directly in it, every package saying in its `__init__` what it holds, and
the map naming every package and only paths that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine"
MAP = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGES = sorted(p.parent for p in ENGINE.rglob("__init__.py"))
MOST_MODULES = 14


def _name(folder: Path) -> str:
    return folder.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("folder", PACKAGES, ids=_name)
def test_no_folder_of_the_engine_holds_more_than_14_modules(folder):
    modules = [p.name for p in folder.glob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= MOST_MODULES, sorted(modules)


@pytest.mark.parametrize("folder", PACKAGES, ids=_name)
def test_every_package_says_what_it_holds(folder):
    tree = ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))
    docstring = ast.get_docstring(tree) or ""
    assert len(docstring.split()) >= 12, f"{_name(folder)}/__init__.py: a paragraph, please"


@pytest.mark.parametrize("folder", PACKAGES, ids=_name)
def test_the_map_names_every_package(folder):
    assert f"`{_name(folder)}" in MAP


def test_every_engine_path_on_the_map_exists():
    named = set(re.findall(r"`(engine/[A-Za-z0-9_/]+(?:\.py)?)`", MAP))
    assert len(named) > 20
    assert sorted(p for p in named if not (ROOT / p.rstrip("/")).exists()) == []


def test_no_engine_module_imports_scipy_stats():
    """scipy.stats takes about 0.9 s to import (docs/explanation/speed.md, start-up); the
    engine takes its quantiles and CDFs from scipy.special, which has the same functions."""
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(n == "scipy.stats" or n.startswith("scipy.stats.") for n in names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
