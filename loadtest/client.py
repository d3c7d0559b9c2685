"""A small keep-alive HTTP/1.1 JSON client for 127.0.0.1 (one per thread; not thread-safe)."""

from __future__ import annotations

import http.client
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Answer:
    status: int
    raw: bytes
    started: float  # time.monotonic() just before the request was written
    finished: float  # time.monotonic() just after the whole answer was read

    @property
    def body(self) -> Any:
        return json.loads(self.raw) if self.raw else None


class Client:
    def __init__(self, base_url: str, key: str | None = None, timeout: float = 30.0) -> None:
        parts = urlsplit(base_url)
        if parts.hostname != "127.0.0.1":
            raise ValueError("loopback only: the base URL must be http://127.0.0.1:PORT")
        self._host, self._port = parts.hostname, parts.port or 80
        self._timeout = timeout
        self._key = key
        self._connection: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def request(self, method: str, path: str, body: bytes | None = None, key: str | None = None) -> Answer:
        headers = {"Content-Type": "application/json"}
        token = key if key is not None else self._key
        if token:
            headers["Authorization"] = f"Bearer {token}"
        # A request is sent once: a dropped keep-alive connection is reopened only before sending.
        if self._connection is None:
            self._connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        started = time.monotonic()
        try:
            self._connection.request(method, path, body=body, headers=headers)
            response = self._connection.getresponse()
            raw = response.read()
        except (ConnectionError, http.client.HTTPException):
            self.close()
            raise
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        return Answer(response.status, raw, started, time.monotonic())

    def post(self, path: str, data: Any, key: str | None = None) -> Answer:
        return self.request("POST", path, json.dumps(data, separators=(",", ":")).encode(), key)

    def get(self, path: str, key: str | None = None) -> Answer:
        return self.request("GET", path, None, key)
