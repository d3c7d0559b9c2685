"""The direct transport's SigV4 (chalicelib/store/sigv4.py) signs exactly as botocore's SigV4Auth does."""

from __future__ import annotations

import re

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import ReadOnlyCredentials

from chalicelib.store.sigv4 import Credentials, Signer

BODY = b'{"TableName":"t","Key":{"pk":{"S":"a"},"sk":{"S":"-"}},"ConsistentRead":true}'
TARGET = "DynamoDB_20120810.GetItem"


def botocore_signature(credentials: Credentials, url: str, headers: dict[str, str], amz_date: str,
                       region: str) -> tuple[str, str]:
    """(SignedHeaders, Signature) botocore computes for the same request at the same instant."""
    unsigned = {k: v for k, v in headers.items() if k not in ("Authorization", "Host")}
    request = AWSRequest(method="POST", url=url, data=BODY, headers=unsigned)
    request.context["timestamp"] = amz_date
    auth = SigV4Auth(ReadOnlyCredentials(credentials.access_key, credentials.secret_key, credentials.token),
                     "dynamodb", region)
    canonical = auth.canonical_request(request)
    string_to_sign = auth.string_to_sign(request, canonical)
    return auth.signed_headers(auth.headers_to_sign(request)), auth.signature(string_to_sign, request)


def parts(authorization: str) -> tuple[str, str, str]:
    found = re.fullmatch(r"AWS4-HMAC-SHA256 Credential=(\S+), SignedHeaders=(\S+), Signature=([0-9a-f]{64})",
                         authorization)
    assert found, authorization
    return found.group(1), found.group(2), found.group(3)


@pytest.mark.parametrize(("url", "host"), [
    ("https://dynamodb.eu-central-1.amazonaws.com", "dynamodb.eu-central-1.amazonaws.com"),
    ("http://127.0.0.1:8000", "127.0.0.1:8000"),
])
@pytest.mark.parametrize("token", [None, "session-token/with+odd=chars"])
def test_the_signature_is_botocores(url: str, host: str, token: str | None) -> None:
    credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token)
    amz_date = "20261206T221500Z"
    headers = Signer("eu-central-1").headers(credentials, host, TARGET, BODY, amz_date)
    credential, signed, signature = parts(headers["Authorization"])
    assert credential == "AKIDEXAMPLE/20261206/eu-central-1/dynamodb/aws4_request"
    assert (signed, signature) == botocore_signature(credentials, url, headers, amz_date, "eu-central-1")
    assert headers["X-Amz-Date"] == amz_date and headers["X-Amz-Target"] == TARGET
    assert headers.get("X-Amz-Security-Token") == token


def test_the_key_follows_the_day_and_the_secret() -> None:
    signer = Signer("us-east-1")
    one = Credentials("AK", "secret-one")
    signature = parts(signer.headers(one, "h", TARGET, BODY, "20261206T000000Z")["Authorization"])[2]
    assert parts(signer.headers(one, "h", TARGET, BODY, "20261206T000000Z")["Authorization"])[2] == signature
    next_day = signer.headers(one, "h", TARGET, BODY, "20261207T000000Z")
    assert parts(next_day["Authorization"])[2] != signature
    for day, secret in (("20261207T000000Z", "secret-one"), ("20261206T000000Z", "secret-two")):
        credentials = Credentials("AK", secret)
        headers = signer.headers(credentials, "h", TARGET, BODY, day)
        assert parts(headers["Authorization"])[2] == botocore_signature(
            credentials, "http://h", headers, day, "us-east-1")[1]
    for i in range(20):  # many rotated secrets: the cache stays small and every signature stays right
        credentials = Credentials("AK", f"rotated-{i}")
        headers = signer.headers(credentials, "h", TARGET, BODY, "20261206T000000Z")
        assert parts(headers["Authorization"])[2] == botocore_signature(
            credentials, "http://h", headers, "20261206T000000Z", "us-east-1")[1]
    assert len(signer._keys) <= 9


def test_the_key_is_derived_once_per_secret_and_day_and_few_are_kept(monkeypatch) -> None:
    from chalicelib.store import sigv4

    derived = []
    real = sigv4._hmac
    monkeypatch.setattr(sigv4, "_hmac", lambda key, message: derived.append(message) or real(key, message))
    signer = Signer("us-east-1")
    credentials = Credentials("AK", "secret")
    first = signer.headers(credentials, "h", TARGET, BODY, "20261206T000000Z")
    assert derived == ["20261206", "us-east-1", "dynamodb", "aws4_request"]
    again = signer.headers(credentials, "h", TARGET, BODY, "20261206T000001Z")
    assert len(derived) == 4  # the same day's key, from the cache
    assert parts(again["Authorization"])[2] == botocore_signature(
        credentials, "http://h", again, "20261206T000001Z", "us-east-1")[1] != parts(first["Authorization"])[2]
    for i in range(8):  # nine keys are kept; the tenth starts the cache again
        signer.headers(Credentials("AK", f"other-{i}"), "h", TARGET, BODY, "20261206T000000Z")
    assert len(signer._keys) == 9
    signer.headers(Credentials("AK", "tenth"), "h", TARGET, BODY, "20261206T000000Z")
    assert len(signer._keys) == 1
