"""Operator CLI: `rp` (or `python -m chalicelib.cli`) `keys issue|list|revoke`, `principals
issue|revoke|list`, `sites register|list`, `table create`, `commitments sync|runs|reservations`.

Works against whatever store the environment points at (AWS by default;
AWS_ENDPOINT_URL_DYNAMODB for an emulator such as the one `make run` prints
as `store:`; RP_TABLE_NAME for the table). Issued keys are printed once and
stored only as their SHA-256. Times are printed as UTC ISO 8601.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chalicelib.auth.keys import generate_key, hash_key
from chalicelib.auth.principals import KEY_TARGETS, principal_for
from chalicelib.commitments.service import STATUSES as COMMITMENT_STATUSES
from chalicelib.commitments.service import sync as commitments_sync
from chalicelib.commitments.store import CommitmentStore
from chalicelib.compute.errors import ComputeError
from chalicelib.compute.errors import Unavailable as ComputeUnavailable
from chalicelib.config import ConfigurationError, endpoint_from_env
from chalicelib.errors import Unavailable
from chalicelib.runtime import Services, build_services
from chalicelib.store.schema import ensure_table
from chalicelib.tenants import service as tenants


def use_local_credentials() -> None:
    """Emulators accept any credentials; a laptop may have none configured."""
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


def iso_time(epoch_seconds: Any) -> str:
    """An instant the store keeps as epoch seconds, as people read it: 2026-03-01T10:00:00Z."""
    return datetime.fromtimestamp(int(epoch_seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def store_unavailable(services: Services) -> str:
    """What to say when the store does not answer: where it was looked for, and how to point elsewhere."""
    settings = services.settings
    where = settings.endpoint_url or f"AWS DynamoDB in {settings.region} (no AWS_ENDPOINT_URL_DYNAMODB set)"
    return (f"the store is unavailable: {where}, table {services.table}. Start it, or set "
            "AWS_ENDPOINT_URL_DYNAMODB to one that runs (`make run` prints its own as `store: http://...`).")


def main(argv: list[str] | None = None) -> int:
    prog = "rp" if Path(sys.argv[0]).name == "rp" else "python -m chalicelib.cli"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    groups = parser.add_subparsers(dest="group", required=True)
    keys_group = groups.add_parser("keys", help="Site, service and Placement keys")
    keys = keys_group.add_subparsers(dest="command", required=True)
    issue = keys.add_parser("issue", help="issue a new key and print it once")
    issue.add_argument("principal", choices=list(KEY_TARGETS))
    keys.add_parser("list", help="list keys (ids and principals, never the keys)")
    revoke = keys.add_parser("revoke", help="revoke a key by its id (effective within 60 s)")
    revoke.add_argument("key_id")
    table = groups.add_parser("table", help="the DynamoDB table").add_subparsers(dest="command", required=True)
    table.add_parser("create", help="create the table if it is missing")
    principals_group = groups.add_parser("principals", help="a tenant's principals (tokens with grants)")
    principals = principals_group.add_subparsers(dest="command", required=True)
    p_issue = principals.add_parser("issue", help="issue a token (shown once); replaces the principal's grants")
    p_issue.add_argument("tenant")
    p_issue.add_argument("principal")
    p_issue.add_argument("--grant", action="append", default=[], help="permission@scope (repeatable)")
    p_revoke = principals.add_parser("revoke", help="revoke a principal: all its tokens stop within 60 s")
    p_revoke.add_argument("tenant")
    p_revoke.add_argument("principal")
    p_list = principals.add_parser("list", help="a tenant's principals and grants (never tokens)")
    p_list.add_argument("tenant")
    sites = groups.add_parser("sites", help="a tenant's registered Sites").add_subparsers(dest="command", required=True)
    s_register = sites.add_parser("register", help="register a Site for a tenant")
    s_register.add_argument("tenant")
    s_register.add_argument("name")
    s_register.add_argument("kind", choices=["kubernetes", "slurm", "openstack"])
    s_list = sites.add_parser("list", help="a tenant's Sites")
    s_list.add_argument("tenant")
    _commitments_parser(groups)
    args = parser.parse_args(argv)

    if endpoint_from_env():
        use_local_credentials()  # an emulator (e.g. `make run`'s store) accepts any credentials
    try:
        services = build_services()
    except ConfigurationError as exc:  # names the variable and what it must be, never its value
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    try:
        if args.group == "commitments":
            return _commitments(services, args)
        if args.group in ("principals", "sites"):
            return _tenants(services, args)
        if args.group == "table":
            created = ensure_table(services.client, services.table)
            print(f"table {services.table}: {'created' if created else 'exists'}")
        elif args.command == "issue":
            raw = generate_key()
            record = services.keys.add(hash_key(raw), principal_for(args.principal).name)
            print(f"key id: {record.key_id}\nprincipal: {record.principal}\nkey: {raw}")
            print("The key is shown only now; store it in the agent's secret store.", file=sys.stderr)
        elif args.command == "list":
            for r in services.keys.list():
                state = "active" if r.revoked_at is None else f"revoked {iso_time(r.revoked_at)}"
                print(f"{r.key_id}\t{r.principal}\tcreated {iso_time(r.created_at)}\t{state}")
        elif args.command == "revoke":
            if not services.keys.revoke(args.key_id):
                print(f"no active key with id {args.key_id}", file=sys.stderr)
                return 1
            print(f"revoked {args.key_id}; caches drop it within 60 s")
    except (Unavailable, ComputeUnavailable):
        print(store_unavailable(services), file=sys.stderr)
        return 3
    return 0


def _tenants(services: Services, args: argparse.Namespace) -> int:
    """Tenant principals and Sites, through the same service code as the operator routes."""
    try:
        if (args.group, args.command) == ("principals", "issue"):
            issued = tenants.issue_principal(services.tenants, args.tenant,
                                             {"principal": args.principal, "grants": args.grant})
            print(json.dumps(issued))
            print("The token is shown only now.", file=sys.stderr)
        elif (args.group, args.command) == ("principals", "revoke"):
            tenants.revoke_principal(services.tenants, args.tenant, args.principal)
            print(f"revoked {args.tenant}/{args.principal}; caches drop its tokens within 60 s")
        elif (args.group, args.command) == ("principals", "list"):
            print(json.dumps(tenants.list_principals(services.tenants, args.tenant)))
        elif (args.group, args.command) == ("sites", "register"):
            print(json.dumps(tenants.register_site(services.tenants, args.tenant,
                                                   {"name": args.name, "kind": args.kind})))
        else:
            print(json.dumps(tenants.list_sites(services.tenants, args.tenant)))
    except ComputeError as exc:
        if isinstance(exc, ComputeUnavailable):
            raise
        print(f"{exc.code}: {exc.message} {json.dumps(exc.details) if exc.details else ''}".rstrip(),
              file=sys.stderr)
        return 2 if exc.status == 400 else 1
    return 0


# --- commitment sync (issue 10) -------------------------------------------------------------------


def _commitments_parser(groups: Any) -> None:
    commitments = groups.add_parser("commitments", help="the commitment sync").add_subparsers(
        dest="command", required=True)
    commitments.add_parser("sync", help="run one pass now and print its run record (exit 1 unless ok)")
    c_runs = commitments.add_parser("runs", help="recent runs, newest first")
    c_runs.add_argument("--limit", type=int, default=20)
    c_res = commitments.add_parser("reservations", help="reservations, one JSON object per line")
    c_res.add_argument("--project-id")
    c_res.add_argument("--status", choices=list(COMMITMENT_STATUSES))


def _commitments(services: Services, args: argparse.Namespace) -> int:
    """The same service code as the operator routes under /api/commitments."""
    store = CommitmentStore(services.client, services.table)
    if args.command == "sync":
        run = commitments_sync(services)
        print(json.dumps(run))
        return 0 if run["outcome"] == "ok" else 1
    if args.command == "runs":
        for run in store.runs(max(1, min(args.limit, 100))):
            print(json.dumps(run))
        return 0
    token = None
    while True:
        records, token = store.reservation_page(args.project_id, args.status, token)
        for record in records:
            print(json.dumps(record.to_dict()))
        if token is None:
            return 0


# --- end commitment sync ---------------------------------------------------------------------------


if __name__ == "__main__":
    sys.exit(main())
