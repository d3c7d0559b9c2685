"""`python -m fakes.openstack --scenario FILE [--port N]`: serve a scenario until interrupted."""

from __future__ import annotations

import argparse
import sys

from fakes.openstack.scenario import load_scenario
from fakes.openstack.server import FakeOpenStack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakes.openstack", description=__doc__)
    parser.add_argument("--scenario", required=True, help="YAML or JSON scenario (fakes/openstack/scenario.py)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = a free port")
    args = parser.parse_args(argv)
    fake = FakeOpenStack(load_scenario(args.scenario), host=args.host, port=args.port)
    # The last line a script waits for: the URL, then the auth URL to put in RP_OPENSTACK_AUTH_URL.
    print(f"fake OpenStack listening on {fake.url} (RP_OPENSTACK_AUTH_URL={fake.auth_url})", flush=True)
    fake.start()
    try:
        fake._thread.join()  # type: ignore[union-attr]
    except KeyboardInterrupt:
        fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
