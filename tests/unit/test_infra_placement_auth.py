"""The template's part of Placement behind Keystone (issue 16): RP_PLACEMENT_AUTH and RP_PLACEMENT_POLICY
are stack parameters of the API function alone, Keystone's URL and the service's account come from the
RP_COMMITMENTS_SECRET_ID secret (no RP_OPENSTACK_* variable), and only the functions that read that one
secret may (secretsmanager:GetSecretValue on its ARN, nothing else)."""

from __future__ import annotations

import json

import pytest

from infra import build
from infra import definitions as d


@pytest.fixture(scope="module", params=["dev", "prod"])
def template(request: pytest.FixtureRequest) -> dict:
    return build.merge_template(d.Stage.load(request.param))


def test_placement_auth_and_policy_are_parameters_of_the_api_function(template: dict) -> None:
    assert template["Parameters"]["PlacementAuth"]["AllowedValues"] == ["keys", "keystone"]
    assert template["Parameters"]["PlacementAuth"]["Default"] == "keys"
    assert template["Parameters"]["PlacementPolicy"]["AllowedValues"] == ["secure", "legacy"]
    api = template["Resources"][d.function_logical_id(d.API_HANDLER)]["Properties"]
    assert api["Environment"]["Variables"] == {"RP_PLACEMENT_AUTH": {"Ref": "PlacementAuth"},
                                               "RP_PLACEMENT_POLICY": {"Ref": "PlacementPolicy"}}
    assert "RP_OPENSTACK_" not in json.dumps(template)


def test_the_openstack_secret_is_readable_by_its_readers_only_and_only_it(template: dict) -> None:
    readers = {f for f, access in d.FUNCTION_ACCESS.items() if access.reads_commitments_secret}
    assert d.API_HANDLER in readers
    for function in d.FUNCTION_ACCESS:
        role = template["Resources"][d.role_logical_id(function)]["Properties"]["Policies"][0]
        statements = [s for s in role["PolicyDocument"]["Statement"] if "secretsmanager" in json.dumps(s["Action"])]
        if function not in readers:
            assert statements == [], function
            continue
        assert len(statements) == 1 and statements[0]["Action"] == ["secretsmanager:GetSecretValue"]
        assert statements[0]["Resource"]["Fn::Sub"].endswith("/openstack-??????")
