"""parm_tui.keymap: every key of the app is declared there once, each list is some class's keys,
each key names an action its class has, and no class takes one key twice."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from textual.binding import Binding

import parm_tui
from parm_tui import keymap


def key_holders() -> list[tuple[type, list[Binding]]]:
    """(class, its own BINDINGS) for every class of parm_tui that declares keys, found by
    importing every module of the package."""
    found = []
    for info in pkgutil.walk_packages(parm_tui.__path__, "parm_tui."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and "BINDINGS" in vars(cls):
                found.append((cls, vars(cls)["BINDINGS"]))
    return found


def declared_lists() -> dict[str, list[Binding]]:
    return {
        name: value
        for name, value in vars(keymap).items()
        if name.isupper() and isinstance(value, list)
    }


def test_every_list_of_the_keymap_is_used_by_a_class():
    used = {id(binding) for _, bindings in key_holders() for binding in bindings}
    for name, bindings in declared_lists().items():
        assert bindings and all(id(b) in used for b in bindings), name


def test_every_key_a_class_declares_comes_from_the_keymap():
    declared = {id(b) for bindings in declared_lists().values() for b in bindings}
    holders = key_holders()
    assert len(holders) >= 15
    for cls, bindings in holders:
        for binding in bindings:
            # The results screen's tab numbers are made from its tabs (one per tab shown).
            if cls.__name__ == "ResultsScreen" and binding.action.startswith("tab_number("):
                continue
            assert id(binding) in declared, (cls.__name__, binding.key)


@pytest.mark.parametrize("cls, bindings", key_holders(), ids=lambda v: getattr(v, "__name__", ""))
def test_each_key_names_an_action_of_its_class_once(cls, bindings):
    keys = [key.strip() for binding in bindings for key in binding.key.split(",")]
    assert len(keys) == len(set(keys)), sorted(keys)
    for binding in bindings:
        action = binding.action.split("(", 1)[0]
        assert callable(getattr(cls, f"action_{action}", None)), (cls.__name__, action)
