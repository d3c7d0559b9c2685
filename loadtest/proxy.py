"""A loopback TCP proxy between the service and its store that can cut the store off.

Modes:
- `up`: bytes flow both ways (the store as it is).
- `down`: the store is gone. The listening socket is closed (a new connection is
  refused at once) and every open connection is reset (RST), so pooled keep-alive
  connections fail on their next use.
- `lost_replies`: requests reach the store, but the answers to those that name a given
  operation (by default DynamoDB's TransactWriteItems) never come back: the write is
  applied and the client times out. Other requests pass. This is the fault that tests
  "nothing half-applied, nothing doubled" hardest: the service answers 503 for a write
  that did happen, and the repeat must find it.

The store process keeps running behind the proxy, so nothing it holds is lost; only the
service's view of it changes. Only 127.0.0.1 is used.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from dataclasses import dataclass, field

HOST = "127.0.0.1"
UP, DOWN, LOST_REPLIES = "up", "down", "lost_replies"
TRANSACT_WRITE = b"TransactWriteItems"


def _reset(sock: socket.socket) -> None:
    """Close with RST rather than FIN: the peer sees ECONNRESET, as when a host dies."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


@dataclass(eq=False)
class _Link:
    client: socket.socket
    upstream: socket.socket
    drop_replies: bool = False  # the request in flight on this connection loses its answer
    closed: threading.Event = field(default_factory=threading.Event)

    def reset(self) -> None:
        self.closed.set()
        _reset(self.client)
        _reset(self.upstream)

    def close(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        for sock in (self.client, self.upstream):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()


class FaultProxy:
    def __init__(self, upstream_port: int) -> None:
        self._upstream = (HOST, upstream_port)
        self._lock = threading.Lock()
        self._mode = DOWN
        self._lost_marker = TRANSACT_WRITE
        self._listener: socket.socket | None = None
        self._accepting: threading.Thread | None = None
        self._links: set[_Link] = set()
        self.port = 0
        self.connections = 0
        self.replies_lost = 0  # requests whose answers were dropped

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def mode(self) -> str:
        return self._mode

    # --- control ------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        with self._lock:
            self._mode = UP
        self._open_listener()
        return self

    def cut(self) -> None:
        """The store goes away: refuse new connections and reset the open ones."""
        with self._lock:
            self._mode = DOWN
        self._close_listener()
        self._reset_all()

    def lose_replies(self, marker: bytes = TRANSACT_WRITE) -> None:
        """Requests naming `marker` reach the store; their answers are lost."""
        with self._lock:
            self._mode = LOST_REPLIES
            self._lost_marker = marker
        self._reset_all()
        self._open_listener()

    def restore(self) -> None:
        """The store is back, on the same address."""
        with self._lock:
            self._mode = UP
        self._reset_all()  # connections still waiting for a lost answer are dropped
        self._open_listener()

    def close(self) -> None:
        with self._lock:
            self._mode = DOWN
        self._close_listener()
        self._reset_all()

    # --- internals ----------------------------------------------------------------------

    def _open_listener(self) -> None:
        with self._lock:
            if self._listener is not None:
                return
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((HOST, self.port))  # port 0 the first time; the same port after a cut
            listener.listen(128)
            self.port = listener.getsockname()[1]
            self._listener = listener
            self._accepting = threading.Thread(target=self._accept, args=(listener,), daemon=True)
            self._accepting.start()

    def _close_listener(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            accepting, self._accepting = self._accepting, None
        if listener is None:
            return
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        with contextlib.suppress(OSError):
            listener.close()
        if accepting is not None:
            accepting.join(timeout=5)

    def _reset_all(self) -> None:
        with self._lock:
            links, self._links = self._links, set()
        for link in links:
            link.reset()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # the listener was closed
            try:
                upstream = socket.create_connection(self._upstream, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _reset(client)
                continue
            link = _Link(client, upstream)
            with self._lock:
                if self._mode == DOWN:
                    link.reset()
                    continue
                self._links.add(link)
                self.connections += 1
            threading.Thread(target=self._requests, args=(link,), daemon=True).start()
            threading.Thread(target=self._replies, args=(link,), daemon=True).start()

    def _forget(self, link: _Link) -> None:
        with self._lock:
            self._links.discard(link)
        link.close()

    def _requests(self, link: _Link) -> None:
        try:
            while True:
                data = link.client.recv(65536)
                if not data:
                    break
                if data[:5] in (b"POST ", b"GET /", b"PUT /"):  # a new request (clients do not pipeline)
                    with self._lock:
                        link.drop_replies = self._mode == LOST_REPLIES and self._lost_marker in data
                        self.replies_lost += 1 if link.drop_replies else 0
                link.upstream.sendall(data)
        except OSError:
            pass
        finally:
            self._forget(link)

    def _replies(self, link: _Link) -> None:
        try:
            while True:
                data = link.upstream.recv(65536)
                if not data:
                    break
                if link.drop_replies:
                    continue  # the store answered; the answer never arrives
                link.client.sendall(data)
        except OSError:
            pass
        finally:
            self._forget(link)
