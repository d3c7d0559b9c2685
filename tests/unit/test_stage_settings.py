"""Every stage's settings (.chalice/config.json) are readable by the readers the functions use: a value a
reader refuses would otherwise be found only after a deploy (on a family's first request, or by each
commitment pass), not by `make test`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chalicelib.commitments.service import SyncSettings
from chalicelib.commitments.upstream import concurrency_override
from chalicelib.config import read_every_setting
from chalicelib.observability import log_format, log_level

CONFIG = json.loads((Path(__file__).resolve().parents[2] / ".chalice" / "config.json").read_text())
FUNCTIONS = ("api_handler", "view_events", "fleet_drift", "commitments_sync")


def stage_environment(stage: str, function: str) -> dict[str, str]:
    """What Chalice gives one function of one stage: the top level's, the stage's, then the function's."""
    found = CONFIG["stages"][stage]
    return {**CONFIG.get("environment_variables", {}), **found.get("environment_variables", {}),
            **found.get("lambda_functions", {}).get(function, {}).get("environment_variables", {})}


@pytest.mark.parametrize("stage", sorted(CONFIG["stages"]))
@pytest.mark.parametrize("function", FUNCTIONS)
def test_each_function_of_each_stage_reads_its_settings(stage, function):
    env = stage_environment(stage, function)
    read_every_setting(env)
    SyncSettings.from_env(env)
    concurrency_override(env)
    log_level(env)
    log_format(env)


def test_the_stages_are_the_deployed_ones():
    assert sorted(CONFIG["stages"]) == ["dev", "prod"]
