"""engine.input.settings.declared: every setting is declared once, and everything made from the table
agrees with it: defaults.json, AuditConfig's fields and defaults, the column settings, the
settings digest, the Settings form (every setting not a column has its field), the Load
screen's column choices and the settings reference page (docs/reference/settings.md)."""

from __future__ import annotations

import json
import re

import pytest
from helpers import ROOT

from engine.input.settings import declared as settings
from engine.input.settings.config import AuditConfig, config_from_dict, settings_digest
from engine.input.settings.declared import (
    COLUMN_KEYS,
    COLUMNS,
    DEFAULTS,
    HELP_WIDTH,
    SECTIONS,
    SETTINGS,
)


def test_defaults_json_is_the_tables_defaults():
    on_disk = json.loads((ROOT / "defaults.json").read_text(encoding="utf-8"))
    assert on_disk == DEFAULTS


def test_the_config_has_one_field_per_setting_in_the_tables_order_with_its_default():
    names = [name for name in AuditConfig.__dataclass_fields__ if name != "warnings"]
    assert names == [setting.name for setting in SETTINGS]
    assert AuditConfig().to_dict() == DEFAULTS == config_from_dict({}).to_dict()


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_every_setting_is_described_and_its_rule_reads_its_default(setting):
    assert setting.section in SECTIONS
    assert setting.label and setting.meaning and setting.rule.accepted
    assert setting.help and len(setting.help) <= HELP_WIDTH
    setting.rule.read(setting.name, setting.default)  # does not raise


def test_the_column_settings_are_those_of_the_columns_section():
    assert COLUMN_KEYS == tuple(s.name for s in SETTINGS if s.section == COLUMNS)
    assert all(settings.BY_NAME[key].role and settings.BY_NAME[key].guess for key in COLUMN_KEYS)
    import pandas as pd

    from engine.input.guess import guess_columns

    guesses = guess_columns(pd.DataFrame({"answer": ["a"], "score": ["1"]}))
    assert {settings.BY_NAME[key].guess for key in COLUMN_KEYS} <= set(guesses)


def test_only_settings_that_change_nothing_computed_are_left_out_of_the_digest():
    base = config_from_dict({})
    for setting in SETTINGS:
        other = {"saved_runs": 3, "scheduler": "local:2", "scheduler_timeout": 5.0,
                 "device": "cpu", "reviewer": "ana", "embedding_cache_mb": 10,
                 "long_answers": "windows"}.get(setting.name)  # fmt: skip
        if other is None:
            continue
        changed = config_from_dict({setting.name: other})
        assert (settings_digest(changed) == settings_digest(base)) is not setting.digested


def test_the_defaults_keep_the_digest_of_earlier_versions():
    """Settings added later are left out of the digest while at their default, so a run saved
    by an earlier version is still found (this is the digest of the defaults before them)."""
    assert settings_digest(config_from_dict({})) == "75164134355a"
    later = [s for s in SETTINGS if s.later]
    assert {"long_answers", "reads", "score_columns"} <= {s.name for s in later}
    changed = config_from_dict({"long_answers": "windows"})
    assert settings_digest(changed) != settings_digest(config_from_dict({}))


def test_the_settings_form_and_the_load_screen_show_every_setting_once():
    from parm_tui.screens.load import COLUMN_ROLES
    from parm_tui.screens.settings import SHOWN

    shown = [s.name for s in SHOWN]
    assert sorted(shown + [key for key, _ in COLUMN_ROLES.values()]) == sorted(DEFAULTS)
    assert len(set(shown)) == len(shown)


def test_the_settings_reference_page_is_the_tables():
    page = (ROOT / "docs" / "reference" / "settings.md").read_text(encoding="utf-8")
    assert settings.reference_table() in page
    rows = re.findall(r"^\| `(\w+)` \|", settings.reference_table(), flags=re.M)
    assert rows == [s.name for s in SETTINGS]


@pytest.mark.parametrize(
    "rule, value, expected",
    [
        ("column_list", "G1, G2,G3", ("G1", "G2", "G3")),
        ("column_list", ("G1", "G2"), ("G1", "G2")),
        ("column_list", None, None),
        ("column_list", ["G1"], "at least two column names"),
        ("column_list", "G1,G1", "at least two column names"),
        ("column_list", "G1,,G2", "at least two column names"),
        ("column_list", ["G1", 2], "at least two column names"),
        ("column_list", "G1,G\x1b[2J", "control characters are not allowed in column names"),
        ("names", "Ann", ("Ann",)),
        ("names", "Ann, Bo", ("Ann", "Bo")),
        ("names", "", "names, each once"),
        ("names", ["Ann", "Ann"], "names, each once"),
        ("names", ["Ann\x07"], "control characters are not allowed in names"),
    ],
)
def test_lists_of_names_and_columns_are_read_from_a_list_or_a_comma_string(rule, value, expected):
    from engine.core.errors import ConfigError
    from engine.input.settings import rules

    read = getattr(rules, rule)().read
    if isinstance(expected, str):
        with pytest.raises(ConfigError, match=re.escape(expected)):
            read("key", value)
    else:
        assert read("key", value) == expected
