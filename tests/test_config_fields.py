"""engine.input.settings.config.AuditConfig: a plain frozen dataclass whose fields, written out
in its source, are the settings table's (engine.input.settings.declared) in its order, each with
the table's type and the default its rule reads; each annotation admits exactly the values its
rule gives; Setting entries are built by keyword only."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import types
import typing

import pytest

from engine.input.settings import config as config_module
from engine.input.settings.config import AuditConfig, config_from_dict
from engine.input.settings.declared import DEFAULTS, SETTINGS, Setting
from engine.input.settings.rules import PowerInterval

FIELDS = [f for f in dataclasses.fields(AuditConfig) if f.name != "warnings"]
HINTS = typing.get_type_hints(AuditConfig, vars(config_module))
# JSON values of every shape a setting takes (as defaults.json, --set or a form gives them):
# what a rule accepts of these must fit the field's annotation, and together they reach every
# member of it.
PROBES = (None, True, 3, 0.5, 20.0, "x", "a,b", "0.8, 0.7", "local:2", [1, 2], [0.5, 0.25],
          [20.0, 5.0], ["a", "b"], {"min": 1, "max": 2})  # fmt: skip
# The rule kinds whose value type the kind says (the Settings form's plain widgets).
KIND_TYPES = {"bool": bool, "int": int, "number": float}


def members(hint) -> tuple:
    """The members of a union annotation (the annotation itself when it is not one)."""
    is_union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    return typing.get_args(hint) if is_union else (hint,)


def fits(value, hint) -> bool:
    """Whether `value` is of `hint`: a class, a union of them, or tuple[X, ...]."""
    for member in members(hint):
        if member is type(None) and value is None:
            return True
        if typing.get_origin(member) is tuple:
            (item, _) = typing.get_args(member)
            if isinstance(value, tuple) and all(fits(v, item) for v in value):
                return True
        elif isinstance(member, type) and type(value) is member:
            return True
    return False


def accepted(setting: Setting) -> list:
    """What the setting's rule reads from the probes and its choices."""
    out = []
    for value in (*PROBES, *(v for v, _ in setting.rule.choices), setting.default):
        try:
            out.append(setting.rule.read(setting.name, value))
        except Exception:
            continue
    return out


def test_the_fields_are_the_tables_settings_in_order_then_the_warnings():
    assert [f.name for f in FIELDS] == [setting.name for setting in SETTINGS] == list(DEFAULTS)
    warnings = dataclasses.fields(AuditConfig)[-1]
    assert warnings.name == "warnings" and warnings.default == () and not warnings.compare


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_each_field_has_the_tables_type_and_the_default_its_rule_reads(setting):
    field = next(f for f in FIELDS if f.name == setting.name)
    assert " ".join(field.type.split()) == setting.type
    read = setting.rule.read(setting.name, setting.default)
    assert field.default == read and type(field.default) is type(read)
    assert AuditConfig().to_dict()[setting.name] == DEFAULTS[setting.name]


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_each_annotation_admits_exactly_what_its_rule_gives(setting):
    hint = HINTS[setting.name]
    values = accepted(setting)
    assert values and all(fits(v, hint) for v in values), (setting.name, values)
    # Not wider than the rule: every member of the annotation is reached by some value.
    for member in members(hint):
        assert any(fits(v, member) for v in values), (setting.name, member)
    if setting.rule.kind in KIND_TYPES:
        assert set(members(hint)) - {type(None)} == {KIND_TYPES[setting.rule.kind]}
    if setting.rule.kind == "choice":
        assert set(members(hint)) == {type(v) for v, _ in setting.rule.choices}


def test_the_fields_are_written_out_in_the_class_not_made_at_run_time():
    tree = ast.parse(inspect.getsource(AuditConfig))
    (klass,) = tree.body
    written = [
        (node.target.id, ast.unparse(node.annotation))
        for node in klass.body
        if isinstance(node, ast.AnnAssign)
    ]
    expected = [(s.name, s.type) for s in SETTINGS] + [("warnings", "tuple[str, ...]")]
    assert written == expected
    assert "make_dataclass" not in inspect.getsource(config_module)


def test_the_config_is_frozen_and_refuses_a_setting_it_does_not_have():
    config = config_from_dict({"seed": 3})
    assert config == AuditConfig(seed=3) and config.seed == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.seed = 4  # type: ignore[misc]
    with pytest.raises(TypeError, match="sed"):
        AuditConfig(sed=3)  # type: ignore[call-arg]
    grid = config_from_dict({"similarity_power": {"min": 1, "max": 4}})
    assert grid.similarity_power == PowerInterval(1.0, 4.0) and grid.power_values is None


def test_a_setting_is_built_by_keyword_only():
    entry = SETTINGS[0]
    with pytest.raises(TypeError):
        Setting(entry.name, entry.default, entry.rule, entry.type, entry.section,  # type: ignore[misc]
                entry.label, entry.help, entry.meaning)  # fmt: skip
    assert dataclasses.replace(entry) == entry
