"""Packaging promises: defaults.json mirrors the built-in defaults, and the engine stays free of
the front ends' libraries and of heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.input.settings.config import DEFAULTS, DEFAULTS_PATH, config_from_dict, load_defaults

ROOT = Path(__file__).resolve().parent.parent


def test_defaults_json_equals_the_built_in_defaults():
    assert DEFAULTS_PATH == ROOT / "defaults.json"
    on_disk = json.loads((ROOT / "defaults.json").read_text(encoding="utf-8"))
    assert on_disk == DEFAULTS
    assert list(on_disk) == list(DEFAULTS)


def test_defaults_round_trip_through_the_config():
    assert load_defaults() == config_from_dict({})
    assert load_defaults().to_dict() == DEFAULTS


@pytest.fixture(scope="module")
def engine_modules() -> set[str]:
    """Top-level module names loaded by importing every module of the engine in a fresh
    interpreter, but engine.cluster.worker: only a Dask worker loads it, and Dask's
    distributed (the optional extra) imports jinja2 itself."""
    script = (
        "import importlib, pkgutil, engine\n"
        "for info in pkgutil.walk_packages(engine.__path__, 'engine.'):\n"
        "    if info.name != 'engine.cluster.worker':\n"
        "        importlib.import_module(info.name)\n"
        "import sys, json\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_the_engine_loads_neither_textual_nor_rich(engine_modules):
    assert "engine" in engine_modules
    assert not engine_modules & {"textual", "rich", "parm_tui"}


def test_importing_the_engine_does_not_load_torch_or_sentence_transformers(engine_modules):
    """Heavy imports happen inside the embedding step, so `parm --help` stays instant."""
    assert not engine_modules & {"torch", "sentence_transformers", "transformers"}


def test_importing_the_engine_loads_neither_matplotlib_nor_jinja2(engine_modules):
    """report.html's libraries load only when a report is written (engine.outputs.report.report_html,
    engine.outputs.report.plots), so `parm --help` and the app's first screen stay fast."""
    assert not engine_modules & {"matplotlib", "jinja2"}


def test_the_report_template_is_package_data():
    from importlib.resources import files

    template = files("engine.outputs.report") / "templates" / "report.html.j2"
    assert template.is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'engine = ["outputs/report/templates/*.j2", "outputs/report.schema.json"]' in pyproject
    assert (files("engine.outputs") / "report.schema.json").is_file()
