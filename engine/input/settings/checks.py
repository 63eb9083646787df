"""The rules between settings: each setting alone is checked by its rule
(engine.input.settings.rules); these are the pairs and groups that must agree. `config_from_dict`
calls `check_between` on every config it makes; each message names the key, its value and what
it needs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from engine.core.errors import ConfigError

if TYPE_CHECKING:
    from engine.input.settings.config import AuditConfig


def check_between(config: AuditConfig) -> None:
    """Raise a ConfigError naming the first setting that disagrees with another."""
    _check_candidates(config)
    _check_reads(config)
    _check_actions(config)
    if config.second_rater_column is not None and config.second_score_column is None:
        raise ConfigError(
            f"Setting 'second_rater_column' = {json.dumps(config.second_rater_column)} needs "
            "'second_score_column': it names who gave the second scores.",
            "second_rater_column",
        )
    if config.time_column is not None and config.rater_column is None:
        raise ConfigError(
            f"Setting 'time_column' = {json.dumps(config.time_column)} needs 'rater_column': "
            "the time column dates each rater's scores, to see whether a rater drifts.",
            "time_column",
        )


def _check_reads(config: AuditConfig) -> None:
    """The settings of several reads agree: score_columns starts with score_column and does not
    come with second_score_column; rater_columns goes with score_columns, one per read, and
    starts with rater_column when that is set; a long file has an id and a rater column and
    keeps each read on a row of its own."""

    def refuse(key: str, why: str) -> ConfigError:
        value = json.dumps(getattr(config, key), default=list)
        return ConfigError(f"Setting '{key}' = {value} {why}", key)

    reads = config.score_columns
    if reads is not None:
        if config.second_score_column is not None:
            raise refuse("second_score_column", "and 'score_columns' both name reads: use one.")
        if reads[0] != config.score_column:
            raise refuse("score_columns", f"must start with the audited score column "
                         f"'score_column' ({config.score_column!r}).")  # fmt: skip
    raters = config.rater_columns
    if raters is not None:
        if reads is None or len(raters) != len(reads):
            raise refuse("rater_columns", "needs 'score_columns' with as many columns: one rater "
                         "column per read.")  # fmt: skip
        if config.rater_column is not None and raters[0] != config.rater_column:
            raise refuse("rater_columns", f"must start with 'rater_column' "
                         f"({config.rater_column!r}).")  # fmt: skip
    if config.reads == "long":
        for key, why in (("id_column", "an id column says which answer a row reads"),
                         ("rater_column", "a rater column says who gave each read")):  # fmt: skip
            if getattr(config, key) is None:
                raise refuse("reads", f"needs '{key}': {why}.")
        for key in ("score_columns", "second_score_column"):
            if getattr(config, key) is not None:
                raise refuse(key, "is for a wide file: a long file has one read per row.")
    elif config.answers_file is not None:
        raise refuse("answers_file", "is for a long file (reads \"long\"): a wide file has "
                     "its answers on its rows.")  # fmt: skip


def _check_actions(config: AuditConfig) -> None:
    """The lead's lists (engine.actions): a raised backread rate is not lower than the rate,
    and the status rules' window holds at least the reads they need to judge."""
    if config.backread_watch_rate < config.backread_rate:
        raise ConfigError(
            f"Setting 'backread_watch_rate' = {config.backread_watch_rate:g} is below "
            f"'backread_rate' = {config.backread_rate:g}: the rate on watch is a raised one.",
            "backread_watch_rate",
        )
    if config.status_window < config.status_minimum:
        raise ConfigError(
            f"Setting 'status_window' = {config.status_window} is below 'status_minimum' = "
            f"{config.status_minimum}: no rater could ever be judged.",
            "status_window",
        )


def _check_candidates(config: AuditConfig) -> None:
    """In late-interaction mode the top-K graph is pruned from the colbert_top_k candidates."""
    if not config.late_interaction or config.colbert_top_k is None:
        return
    too_large = [k for k in config.top_k_values if k is not None and k > config.colbert_top_k]
    if too_large:
        raise ConfigError(
            f"Setting 'similarity_top_k' has {', '.join(map(str, too_large))} above "
            f"'colbert_top_k' = {config.colbert_top_k}: in late-interaction mode the top-K graph "
            "is pruned from the colbert_top_k MaxSim candidates, so every similarity_top_k must be "
            "<= colbert_top_k. Raise colbert_top_k or lower similarity_top_k.",
            "similarity_top_k",
        )
