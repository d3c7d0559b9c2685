"""A recording EventBridge at the HTTP level: boto3's `events` client talks to it over a socket.

It answers PutEvents (the only call fleet makes) and keeps every entry it
accepted; `refuse` makes the next N calls fail as a 500 would, so a publisher
crash between the outbox write and the publication can be staged.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3


class RecordingEventBridge:
    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.refuse = 0
        self._lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                target = self.headers.get("x-amz-target", "")
                with recorder._lock:
                    refused = recorder.refuse > 0
                    if refused:
                        recorder.refuse -= 1
                    elif target == "AWSEvents.PutEvents":
                        recorder.entries.extend(body.get("Entries", []))
                if refused or target != "AWSEvents.PutEvents":
                    self._answer(400 if not refused else 500, {"__type": "InternalException", "message": "no"})
                    return
                self._answer(200, {"FailedEntryCount": 0,
                                   "Entries": [{"EventId": str(uuid.uuid4())} for _ in body.get("Entries", [])]})

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/x-amz-json-1.1")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def client(self) -> Any:
        from botocore.config import Config

        return boto3.client("events", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="test", aws_secret_access_key="test",
                            config=Config(retries={"max_attempts": 1}))

    def __enter__(self) -> RecordingEventBridge:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
