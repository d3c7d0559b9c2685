"""The real Placement (PyPI wheel), mounted at a path prefix, served by waitress.

Run by the reference venv's own interpreter (it imports no project code):
    python reference_wsgi.py CONF_DIR PREFIX PORT THREADS
CONF_DIR holds placement.conf (auth_strategy = noauth2, an sqlite connection). PORT 0 lets the
kernel pick; the chosen address is printed as `reference listening on http://127.0.0.1:<port>`.
"""

from __future__ import annotations

import os
import sys


def mounted(app, prefix):  # type: ignore[no-untyped-def]
    """Serve `app` under `prefix` as a WSGI mount does (SCRIPT_NAME), so Placement's own links
    and Location headers carry the prefix, as they do behind a real deployment's prefix."""

    def wrapper(environ, start_response):  # type: ignore[no-untyped-def]
        path = environ.get("PATH_INFO", "")
        if path != prefix and not path.startswith(prefix + "/"):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not under the prefix\n"]
        environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
        environ["PATH_INFO"] = path[len(prefix):]
        return app(environ, start_response)

    return wrapper if prefix else app


def main() -> None:
    conf_dir, prefix, port, threads = sys.argv[1], sys.argv[2].rstrip("/"), int(sys.argv[3]), int(sys.argv[4])
    os.environ["OS_PLACEMENT_CONFIG_DIR"] = conf_dir
    import waitress
    from placement import wsgi

    server = waitress.create_server(mounted(wsgi.init_application(), prefix), host="127.0.0.1", port=port,
                                    threads=threads, backlog=128)
    print(f"reference listening on http://127.0.0.1:{server.effective_port}", flush=True)
    server.run()


if __name__ == "__main__":
    main()
