"""Settings: every invalid value is refused with a message naming the key, the value and what
is accepted; K values not below N are dropped with a warning, or refused when none is left."""

from __future__ import annotations

import json
import pickle

import pytest

from engine.core.errors import ConfigError
from engine.input.settings.config import (
    DEFAULTS,
    DEFAULTS_PATH,
    PowerInterval,
    build_config,
    config_from_dict,
    fit_top_k,
    load_config,
    parse_override,
    save_config,
)

INVALID = [
    ("similarity_top_k", 0, "integer >= 1"),
    ("similarity_top_k", -5, "integer >= 1"),
    ("similarity_top_k", [], "non-empty list"),
    ("similarity_top_k", [5, 0], "integer >= 1"),
    ("similarity_top_k", 2.5, "integer >= 1"),
    ("similarity_top_k", True, "integer >= 1"),
    ("similarity_top_k", "ten", "integer >= 1"),
    ("similarity_power", 0, "number > 0"),
    ("similarity_power", -1.5, "number > 0"),
    ("similarity_power", float("nan"), "finite number > 0"),
    ("similarity_power", [], "at least one power"),
    ("similarity_power", {"min": 2, "max": 1}, "min < max"),
    ("similarity_power", {"min": 1, "max": 1}, "min < max"),
    ("similarity_power", {"min": 1}, '"min" and "max"'),
    ("similarity_power", {"min": 0.5, "max": 2, "step": 1}, '"min" and "max"'),
    ("selection_metric", "auc", "accuracy, kappa, qwk, near, f1, nll"),
    ("class_weight", "equal", "balanced, null"),
    ("on_bad_rows", "ignore", "error, skip"),
    ("normalize_similarities", "yes", "true or false"),
    ("embedding_batch_size", 0, "integer >= 1"),
    ("similarity_top_k_chunk", -1, "integer >= 1"),
    ("near_duplicate_threshold", 1.5, "(0, 1]"),
    ("bootstrap_samples", -1, "integer >= 0"),
    ("seed", "x", "integer >= 0"),
    ("text_column", "  ", "non-empty string"),
    ("embedding_model", None, "non-empty string"),
    ("score_order", ["low"], "at least two"),
    ("score_order", ["low", ""], "none empty"),
    ("score_order", "low,medium,low", "each label once (low repeated)"),
    ("score_order", [1, 2, 3], "the score labels lowest first"),
    ("score_order", {"low": 0}, "the score labels lowest first"),
    ("item_column", "", "non-empty string or null"),
    ("rater_column", 3, "non-empty string or null"),
    ("jobs", 0, "integer >= 1"),
    ("saved_runs", 0, "integer >= 1"),
    ("saved_runs", "all", "integer >= 1"),
]


@pytest.mark.parametrize(("key", "value", "accepted"), INVALID)
def test_invalid_setting_message_names_key_value_and_accepted(key, value, accepted):
    with pytest.raises(ConfigError) as caught:
        config_from_dict({key: value})
    message = str(caught.value)
    assert f"'{key}'" in message
    assert json.dumps(value, default=str) in message
    assert accepted in message


@pytest.mark.parametrize(("key", "value", "accepted"), INVALID)
def test_a_settings_error_carries_the_key_it_is_about(key, value, accepted):
    with pytest.raises(ConfigError) as caught:
        config_from_dict({key: value})
    assert caught.value.key == key


def test_errors_about_several_settings_name_the_one_to_change(tmp_path):
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"second_rater_column": "r2"})
    assert caught.value.key == "second_rater_column"
    with pytest.raises(ConfigError) as caught:
        fit_top_k(config_from_dict({"similarity_top_k": 30}), 20)
    assert caught.value.key == "similarity_top_k"
    path = tmp_path / "settings.json"
    path.write_text('{"seed": -1}')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.key == "seed" and str(path) in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"top_kk": 5})
    assert caught.value.key is None


def test_a_settings_error_keeps_its_key_across_processes():
    """Items run on worker processes: their errors come back pickled."""
    error = pickle.loads(pickle.dumps(ConfigError("Setting 'seed' = -1 is invalid.", "seed")))
    assert (str(error), error.key) == ("Setting 'seed' = -1 is invalid.", "seed")


def test_unknown_key_is_refused_and_known_keys_listed():
    with pytest.raises(ConfigError, match="Unknown setting.*top_kk.*Known settings: .*seed"):
        config_from_dict({"top_kk": 5})


def test_non_string_keys_are_reported_not_crashed_on():
    with pytest.raises(ConfigError, match="Unknown setting"):
        config_from_dict({1: 2, "zz": 3})


def test_settings_must_be_an_object():
    with pytest.raises(ConfigError, match="JSON object, got list"):
        config_from_dict([1, 2])


@pytest.mark.parametrize(
    "text, message",
    [
        # Not JSON: the file, line and column named.
        (
            '{"similarity_top_k": [5, 10,\n oops}',
            r"settings.json is not valid JSON \(line 2, column 2\)",
        ),
        # A value out of range: the file named before the setting's own message.
        ('{"similarity_power": -2}', r"settings.json: Setting 'similarity_power' = -2"),
    ],
    ids=["not-json", "invalid-value"],
)
def test_a_bad_config_file_is_named_in_the_error(tmp_path, text, message):
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_config_file_missing_is_named(tmp_path):
    with pytest.raises(ConfigError, match="Config file not found: .*nothere.json"):
        load_config(tmp_path / "nothere.json")


def test_config_file_with_bom_is_read(tmp_path):
    path = tmp_path / "settings.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"seed": 3}')
    assert load_config(path).seed == 3


def test_defaults_json_equals_the_builtin_defaults():
    assert json.loads(DEFAULTS_PATH.read_text()) == DEFAULTS


def test_interval_and_grid_are_parsed():
    config = config_from_dict({"similarity_power": {"min": 0.5, "max": 4}})
    assert config.similarity_power == PowerInterval(0.5, 4.0, 0.02)
    assert config.power_values is None
    grid = config_from_dict({"similarity_power": [2, 1, 2], "similarity_top_k": [10, 5, 10]})
    assert grid.power_values == (1.0, 2.0)
    assert grid.top_k_values == (5, 10)


def test_score_order_is_a_list_or_a_comma_separated_string():
    listed = config_from_dict({"score_order": ["low", "medium", "high"]})
    typed = config_from_dict({"score_order": " low, medium ,high"})
    assert listed.score_order == typed.score_order == ("low", "medium", "high")
    assert listed.to_dict()["score_order"] == ["low", "medium", "high"]
    assert config_from_dict({}).score_order is None


def test_score_order_round_trips_through_a_config_file(tmp_path):
    path = tmp_path / "settings.json"
    config = config_from_dict({"score_order": ["poor", "fair", "good"]})
    save_config(config, path)
    assert json.loads(path.read_text())["score_order"] == ["poor", "fair", "good"]
    assert load_config(path) == config
    assert load_config(path).score_order == ("poor", "fair", "good")


def test_score_order_from_the_command_line_goes_through_build_config():
    config = build_config(columns={"score_order": "low,medium,high"})
    assert config.score_order == ("low", "medium", "high")
    overridden = build_config(
        columns={"score_order": "low,medium,high"}, overrides=['score_order=["a","b"]']
    )
    assert overridden.score_order == ("a", "b")


def test_round_trip_through_to_dict():
    config = config_from_dict({"similarity_power": {"min": 0.5, "max": 4}, "on_bad_rows": "skip"})
    assert config_from_dict(config.to_dict()) == config


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("similarity_top_k=[5,10]", ("similarity_top_k", [5, 10])),
        ("text_column=answer", ("text_column", "answer")),
        ("second_score_column=null", ("second_score_column", None)),
    ],
)
def test_override_value_is_json_else_text(item, expected):
    assert parse_override(item) == expected


@pytest.mark.parametrize(
    ("item", "message"),
    [("similarity_top_k", "KEY=VALUE"), ("top_kk=3", "Unknown setting 'top_kk'")],
)
def test_bad_override_is_refused(item, message):
    with pytest.raises(ConfigError, match=message):
        parse_override(item)


def test_k_values_not_below_n_are_dropped_with_a_warning():
    config = config_from_dict({"similarity_top_k": [5, 10, 40, 50]})
    fitted, notes = fit_top_k(config, 40)
    assert fitted.top_k_values == (5, 10)
    assert len(notes) == 1
    assert "K = 40, 50" in notes[0] and "(40)" in notes[0]


def test_k_grid_that_fits_is_unchanged():
    config = config_from_dict({"similarity_top_k": [5, 10]})
    assert fit_top_k(config, 11) == (config, [])
    dense = config_from_dict({"similarity_top_k": None})
    assert fit_top_k(dense, 11) == (dense, [])


@pytest.mark.parametrize("top_k", [30, [30, 31]])
def test_k_with_no_value_below_n_is_refused(top_k):
    with pytest.raises(ConfigError, match="'similarity_top_k'.*smaller than the number.*\\(30\\)"):
        fit_top_k(config_from_dict({"similarity_top_k": top_k}), 30)


def test_a_second_rater_column_needs_a_second_score_column():
    with pytest.raises(ConfigError, match="'second_rater_column'.*needs 'second_score_column'"):
        config_from_dict({"second_rater_column": "rater2"})
    config = config_from_dict({"second_rater_column": "rater2", "second_score_column": "s2"})
    assert config.second_rater_column == "rater2"


def test_item_rater_and_jobs_settings_round_trip_through_a_file(tmp_path):
    from engine.input.settings.config import save_config

    config = config_from_dict({"item_column": "question", "rater_column": "marker", "jobs": 2})
    save_config(config, tmp_path / "settings.json")
    assert load_config(tmp_path / "settings.json") == config


# -- where a run's work happens: scheduler, scheduler_timeout, device --------------------------------
@pytest.mark.parametrize(
    "value", ["tcp://10.0.0.5:8786", "10.0.0.5:8786", "local:2", "local", " local:4 "]
)
def test_a_scheduler_is_an_address_or_local_n(value):
    assert config_from_dict({"scheduler": value}).scheduler == value.strip()


@pytest.mark.parametrize("value", ["local:0", "local:two", "tcp://a b:1", "", 3, "\x1b[2Jx:1"])
def test_a_bad_scheduler_is_refused_naming_the_setting(value):
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"scheduler": value})
    assert caught.value.key == "scheduler" and "'scheduler'" in str(caught.value)


@pytest.mark.parametrize("value", [0, -1, "soon", None])
def test_the_scheduler_timeout_is_a_number_of_seconds_above_zero(value):
    with pytest.raises(ConfigError, match="'scheduler_timeout'.*expected a"):
        config_from_dict({"scheduler_timeout": value})
    assert config_from_dict({"scheduler_timeout": 2}).scheduler_timeout == 2.0


def test_the_device_is_auto_cpu_or_cuda():
    assert config_from_dict({}).device == "auto"
    assert config_from_dict({"device": "cuda"}).device == "cuda"
    with pytest.raises(ConfigError, match="'device' = \"gpu\" is invalid: expected one of auto"):
        config_from_dict({"device": "gpu"})


def test_how_many_runs_are_kept_changes_no_settings_digest():
    """saved_runs says what is kept of a run, not how it runs: the digest that decisions and
    saved runs record stays the same, and stays what earlier parm versions wrote."""
    from engine.input.settings.config import settings_digest

    base = config_from_dict({})
    assert base.saved_runs == 10
    assert settings_digest(base.updated(saved_runs=3)) == settings_digest(base)
    assert settings_digest(base.updated(seed=3)) != settings_digest(base)


def test_where_a_run_happens_changes_no_settings_digest():
    """A cluster's results equal one process's, so the scheduler, its timeout and the device do
    not change the digest that decisions and saved runs record."""
    from engine.input.settings.config import settings_digest

    base = config_from_dict({})
    moved = base.updated(scheduler="local:2", scheduler_timeout=3.0, device="cpu")
    assert settings_digest(moved) == settings_digest(base)
