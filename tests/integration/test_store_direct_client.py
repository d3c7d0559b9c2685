"""The direct transport (chalicelib/store/direct_client.py, decision 0052) against DynamoDB Local: every
answer, error and failure is what boto3's client gives for the same call, and connections the store (or
the network) dropped are replaced without the caller noticing.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

from chalicelib.config import Settings
from chalicelib.store.client import make_client
from chalicelib.store.direct_client import DirectClient, ResponseBody
from loadtest.proxy import FaultProxy
from tests.conftest import make_settings
from tests.support.faults import THROTTLED, store_answers


def key(pk: str, sk: str = "-") -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


ITEM = {**key("BIN"), "data": {"B": b"\x00\x01binary\xff"}, "set": {"BS": [b"a", b"\xfe"]},
        "nested": {"M": {"B": {"S": "an attribute named B"}, "blob": {"B": b"\x10"}}},
        "list": {"L": [{"B": b"\x20"}, {"N": "7"}]}, "n": {"N": "3"}}


@pytest.fixture
def both(services) -> tuple[Any, Any]:
    """(the service's client, a plain boto3 client) on the same table."""
    assert isinstance(services.client, DirectClient)
    return services.client, make_client(Settings(**{**services.settings.__dict__, "store_transport": "botocore"}))


def without_metadata(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k != "ResponseMetadata"}


def test_reads_answer_exactly_as_boto3(services, both) -> None:
    direct, boto = both
    table = services.table
    direct.put_item(TableName=table, Item=ITEM)
    calls = [
        ("get_item", {"TableName": table, "Key": key("BIN"), "ConsistentRead": True}),
        ("batch_get_item", {"RequestItems": {table: {"Keys": [key("BIN"), key("NONE")], "ConsistentRead": True}}}),
        ("query", {"TableName": table, "KeyConditionExpression": "pk = :p",
                   "ExpressionAttributeValues": {":p": {"S": "BIN"}}, "ConsistentRead": True}),
        ("transact_get_items", {"TransactItems": [{"Get": {"TableName": table, "Key": key("BIN")}}]}),
    ]
    for method, params in calls:
        ours = getattr(direct, method)(**params)
        assert without_metadata(ours) == without_metadata(getattr(boto, method)(**params)), method
        assert ours["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert direct.get_item(TableName=table, Key=key("BIN"))["Item"]["data"] == {"B": b"\x00\x01binary\xff"}


def test_errors_are_boto3s_classes_with_boto3s_response(services, both) -> None:
    direct, boto = both
    table = services.table
    direct.put_item(TableName=table, Item={**key("C"), "v": {"N": "1"}})
    condition = {"TableName": table, "Item": {**key("C"), "v": {"N": "2"}},
                 "ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
    transaction = {"TransactItems": [
        {"Put": {"TableName": table, "Item": key("NEW")}},
        {"ConditionCheck": {"TableName": table, "Key": key("C"), "ConditionExpression": "v = :two",
                            "ExpressionAttributeValues": {":two": {"N": "2"}}}}]}
    invalid = {"TableName": table, "Key": key("C"), "UpdateExpression": "SET"}
    for method, params, error in (("put_item", condition, "ConditionalCheckFailedException"),
                                  ("transact_write_items", transaction, "TransactionCanceledException"),
                                  ("update_item", invalid, "ValidationException")):
        with pytest.raises(ClientError) as ours:
            getattr(direct, method)(**params)
        with pytest.raises(ClientError) as theirs:
            getattr(boto, method)(**params)
        # each client has its own error classes: the service's client's own, named as boto3's
        assert type(ours.value) is direct.exceptions.from_code(error)
        assert type(ours.value).__name__ == type(theirs.value).__name__  # ClientError when not modeled
        assert ours.value.response["Error"]["Code"] == error
        assert without_metadata(ours.value.response) == without_metadata(theirs.value.response)
        assert ours.value.operation_name == theirs.value.operation_name
    assert direct.get_item(TableName=table, Key=key("NEW")).get("Item") is None  # the transaction did nothing


def test_an_unsendable_value_is_refused_before_the_wire(services) -> None:
    with pytest.raises(TypeError):
        services.client.put_item(TableName=services.table, Item={**key("X"), "v": {"S": object()}})


def test_a_transaction_keeps_its_idempotency_token_across_retries(services) -> None:
    tokens: list[str] = []

    def record(request: Any, **_: Any) -> None:
        tokens.append(json.loads(request.body)["ClientRequestToken"])

    services.client.meta.events.register("before-send.dynamodb.TransactWriteItems", record)
    try:
        with store_answers(services.client, "TransactWriteItems", THROTTLED[0], times=1) as seen:
            services.client.transact_write_items(TransactItems=[{"Put": {"TableName": services.table,
                                                                          "Item": key("T")}}])
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", record)
    assert seen[0] == 2 and len(tokens) == 2 and tokens[0] == tokens[1]  # one token, sent twice
    assert services.client.get_item(TableName=services.table, Key=key("T"))["Item"] == key("T")


def test_an_answer_whose_checksum_does_not_match_is_asked_again(services) -> None:
    services.client.put_item(TableName=services.table, Item=key("K"))
    body = json.dumps({"Item": key("CORRUPTED")}).encode()
    sent = [0]

    def corrupt_once(request: Any, **_: Any) -> AWSResponse | None:
        sent[0] += 1
        if sent[0] > 1:
            return None
        return AWSResponse(str(request.url), 200, {"x-amz-crc32": str((zlib.crc32(body) + 1) & 0xFFFFFFFF),
                                                   "Content-Length": str(len(body))}, ResponseBody(body))

    services.client.meta.events.register("before-send.dynamodb.GetItem", corrupt_once)
    try:
        answer = services.client.get_item(TableName=services.table, Key=key("K"), ConsistentRead=True)
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.GetItem", corrupt_once)
    assert sent[0] == 2 and answer["Item"] == key("K")


class ChunkedStore(BaseHTTPRequestHandler):
    """Answers every call with `{}` split in chunks, then `Connection: close` when asked to."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for part in (b'{"Item":{"pk":', b'{"S":"chunked"}}}'):
            self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, *_: Any) -> None:
        pass


def test_a_chunked_answer_is_read_whole() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChunkedStore)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = make_client(Settings.from_env({"AWS_ENDPOINT_URL_DYNAMODB": f"http://127.0.0.1:{server.server_port}",
                                                "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}))
        for _ in range(3):  # on one kept connection
            assert client.get_item(TableName="t", Key=key("x"))["Item"] == {"pk": {"S": "chunked"}}
    finally:
        server.shutdown()
        server.server_close()


def test_the_transport_is_a_setting() -> None:
    assert isinstance(make_client(Settings.from_env({"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1"})),
                      DirectClient)
    plain = make_client(Settings.from_env({"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1",
                                           "RP_STORE_TRANSPORT": "botocore"}))
    assert not isinstance(plain, DirectClient) and hasattr(plain, "get_item")


# --- connections ---------------------------------------------------------------------------------------


class DroppingProxy:
    """A byte pipe to the store that closes every connection it carries at once (a FIN the client sees while
    idle, as after an idle timeout); loadtest's FaultProxy resets them only when the client next sends."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.accepted = 0
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            with self._lock:
                self.accepted += 1
                self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def drop_all(self) -> None:
        with self._lock:
            dropped, self._sockets = self._sockets, []
        for sock in dropped:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self.listener.close()
        self.drop_all()


def through(proxy_endpoint: str, services, store_server) -> Any:
    """The service's client to the store through a proxy: one attempt per call, a short read timeout."""
    return make_client(make_settings(proxy_endpoint, services.table, **store_server.settings,
                                     max_attempts=1, read_timeout=0.5))


@pytest.fixture
def faulty(services, store_server) -> Iterator[tuple[FaultProxy, Any]]:
    proxy = FaultProxy(urlsplit(store_server.endpoint).port or 80).start()
    try:
        yield proxy, through(proxy.endpoint, services, store_server)
    finally:
        proxy.close()


def test_one_connection_carries_the_calls_and_a_dropped_one_is_replaced(services, store_server) -> None:
    proxy = DroppingProxy(store_server.endpoint)
    client = through(proxy.endpoint, services, store_server)
    try:
        one_connection_then_another(services, proxy, client)
    finally:
        proxy.close()


def one_connection_then_another(services, proxy: DroppingProxy, client: Any) -> None:
    services.client.put_item(TableName=services.table, Item=key("K"))
    for _ in range(5):
        assert client.get_item(TableName=services.table, Key=key("K"))["Item"] == key("K")
    assert proxy.accepted == 1  # keep-alive
    proxy.drop_all()
    # one attempt allowed: the dropped connection is noticed before the call is sent on it
    assert client.get_item(TableName=services.table, Key=key("K"))["Item"] == key("K")
    assert proxy.accepted == 2


def test_a_connection_reset_under_a_request_is_sent_again_once(services, faulty) -> None:
    """loadtest's proxy resets its links by closing their sockets while its own threads wait on them: the
    reset reaches us only when we send, so the kept connection looks alive until the request is on it."""
    proxy, client = faulty
    services.client.put_item(TableName=services.table, Item=key("K"))
    assert client.get_item(TableName=services.table, Key=key("K"))["Item"] == key("K")
    for round_ in range(3):
        proxy.restore()  # every link reset
        before = proxy.connections
        client.put_item(TableName=services.table, Item={**key("K"), "round": {"N": str(round_)}})
        assert proxy.connections == before + 1  # one new connection, one attempt
    assert client.get_item(TableName=services.table, Key=key("K"))["Item"]["round"] == {"N": "2"}
    proxy.cut()  # refused: no second chance at a new connection
    with pytest.raises(EndpointConnectionError):
        client.get_item(TableName=services.table, Key=key("K"))


def test_a_store_that_does_not_answer_is_a_read_timeout(services, faulty) -> None:
    proxy, client = faulty
    proxy.lose_replies(b"GetItem")  # the read reaches the store, its answer never comes back
    with pytest.raises(ReadTimeoutError):
        client.get_item(TableName=services.table, Key=key("K"))


def test_threads_have_their_own_connections(services, faulty) -> None:
    proxy, client = faulty
    services.client.put_item(TableName=services.table, Item=key("K"))
    barrier = threading.Barrier(4)
    found: list[Any] = []

    def read() -> None:
        barrier.wait()
        for _ in range(10):
            found.append(client.get_item(TableName=services.table, Key=key("K"))["Item"])

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [key("K")] * 40 and proxy.connections == 4
