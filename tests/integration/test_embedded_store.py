"""The embedded store's transactions keep DynamoDB's all-or-nothing semantics (moto, sped up)."""

from importlib.metadata import version

import pytest
from botocore.exceptions import ClientError

from chalicelib.store.codec import key, to_item
from chalicelib.store.schema import ensure_table
from devkit.embedded_store import start_embedded_store
from devkit.moto_transactions import WRITTEN_FOR_MOTO, MotoVersionMismatch, check_moto_version
from tests.conftest import make_settings


@pytest.fixture(scope="module")
def client():
    from chalicelib.runtime import build_services

    store = start_embedded_store()
    svc = build_services(make_settings(store.endpoint, "embedded-check"))
    ensure_table(svc.client, "embedded-check")
    yield svc.client
    store.stop()


def put(pk, **cond):
    return {"Put": {"TableName": "embedded-check", "Item": {**key(pk), **to_item({"v": 1})}, **cond}}


def get(client, pk):
    return client.get_item(TableName="embedded-check", Key=key(pk), ConsistentRead=True).get("Item")


def test_a_failed_condition_applies_nothing_and_names_the_item(client):
    client.put_item(TableName="embedded-check", Item={**key("exists"), **to_item({"v": 0})})
    with pytest.raises(ClientError) as err:
        client.transact_write_items(TransactItems=[
            put("new-1"), put("exists", ConditionExpression="attribute_not_exists(pk)")])
    reasons = [r["Code"] for r in err.value.response["CancellationReasons"]]
    assert reasons == ["None", "ConditionalCheckFailed"]
    assert get(client, "new-1") is None
    assert get(client, "exists")["v"] == {"N": "0"}


def test_conditions_see_the_state_before_the_transaction(client):
    client.transact_write_items(TransactItems=[
        put("a1", ConditionExpression="attribute_not_exists(pk)"),
        {"Update": {"TableName": "embedded-check", "Key": key("a2"), "UpdateExpression": "ADD n :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
    ])
    assert get(client, "a1") is not None and get(client, "a2")["n"] == {"N": "1"}


def test_two_operations_on_one_item_are_refused(client):
    with pytest.raises(ClientError) as err:
        client.transact_write_items(TransactItems=[put("dup"), put("dup")])
    assert err.value.response["Error"]["Code"] == "ValidationException"
    assert get(client, "dup") is None


def test_the_transaction_patch_is_for_the_installed_moto():
    assert version("moto") == WRITTEN_FOR_MOTO
    check_moto_version(WRITTEN_FOR_MOTO)


@pytest.mark.parametrize("other", ["5.2.4", "5.2.6", "6.0.0"])
def test_the_transaction_patch_refuses_another_moto(other):
    with pytest.raises(MotoVersionMismatch, match=f"moto {other} is installed"):
        check_moto_version(other)
