"""The real Placement (PyPI wheel), mounted at a path prefix, served by waitress.

Run by the reference venv's own interpreter (it imports no project code):
    python reference_wsgi.py CONF_DIR PREFIX PORT THREADS
or by gunicorn (devkit/placement/reference.py): `reference_wsgi:gunicorn_application(PREFIX)`.
CONF_DIR holds placement.conf (auth_strategy = noauth2, an sqlite connection `sqlite:///...`).
PORT 0 lets the kernel pick; the chosen address is printed as
`reference listening on http://127.0.0.1:<port>`.

Fresh databases fast: this process imports Placement once, migrates one template database, and
serves from a forked child on the one listening socket. Each `reset` line on its standard input
ends the child and forks a new one on a copy of the template (a fresh, empty Placement with
nothing in its process caches); each child prints `reference ready <n>` once it serves. That
takes a fraction of a second where a new process takes seconds (imports and migrations).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Iterable
from typing import Any

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def mounted(app: WSGIApp, prefix: str) -> WSGIApp:
    """Serve `app` under `prefix` as a WSGI mount does (SCRIPT_NAME), so Placement's own links
    and Location headers carry the prefix, as they do behind a real deployment's prefix."""

    def wrapper(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path != prefix and not path.startswith(prefix + "/"):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not under the prefix\n"]
        environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
        environ["PATH_INFO"] = path[len(prefix):]
        return app(environ, start_response)

    return wrapper if prefix else app


def gunicorn_application(prefix: str) -> WSGIApp:
    """gunicorn's entry (`reference_wsgi:gunicorn_application('/placement')`): the configuration
    directory from OS_PLACEMENT_CONFIG_DIR, built in each worker."""
    from placement import wsgi

    return mounted(wsgi.init_application(), prefix.rstrip("/"))


def serve_child(conf_dir: str, prefix: str, threads: int, sock: socket.socket, generation: int, template: str) -> None:
    """In a forked child: a copy of the template database, Placement built on it, waitress on `sock`."""
    import shutil

    import waitress
    from placement import wsgi

    db = os.path.join(conf_dir, f"placement-{generation}.db")
    shutil.copyfile(template, db)
    write_conf(conf_dir, db)
    server = waitress.create_server(mounted(wsgi.init_application(), prefix), sockets=[sock], threads=threads)
    print(f"reference ready {generation}", flush=True)
    server.run()


def write_conf(conf_dir: str, db: str) -> None:
    """placement.conf with its sqlite connection pointed at `db` (the rest as the caller wrote it)."""
    path = os.path.join(conf_dir, "placement.conf")
    with open(path) as stream:
        lines = stream.read().splitlines()
    lines = [f"connection = sqlite:///{db}" if line.startswith("connection = ") else line for line in lines]
    with open(path, "w") as stream:
        stream.write("\n".join(lines) + "\n")


def fork(target: Callable[..., object], *args: object) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            target(*args)
        finally:
            os._exit(0)
    return pid


def main() -> None:
    import signal

    conf_dir, prefix, port, threads = sys.argv[1], sys.argv[2].rstrip("/"), int(sys.argv[3]), int(sys.argv[4])
    os.environ["OS_PLACEMENT_CONFIG_DIR"] = conf_dir
    import waitress  # noqa: F401 - imported once here, for every child
    from placement import wsgi

    template = os.path.join(conf_dir, "template.db")
    write_conf(conf_dir, template)
    os.waitpid(fork(wsgi.init_application), 0)   # migrates the template in a child: this process stays unused
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    print(f"reference listening on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    generation = 0
    child = fork(serve_child, conf_dir, prefix, threads, sock, generation, template)
    def stop(*_: object) -> None:
        os.kill(child, signal.SIGKILL)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    for line in sys.stdin:
        if line.strip() != "reset":
            continue
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.unlink(os.path.join(conf_dir, f"placement-{generation}.db"))
        generation += 1
        child = fork(serve_child, conf_dir, prefix, threads, sock, generation, template)
    os.kill(child, signal.SIGKILL)


if __name__ == "__main__":
    main()
