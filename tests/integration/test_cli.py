"""The operator CLI against the store the environment points at."""

import re

from chalicelib import cli
from chalicelib.auth.keys import hash_key


def test_issue_list_revoke(services, monkeypatch, capsys):
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", services.settings.endpoint_url)
    monkeypatch.setenv("RP_TABLE_NAME", services.table)
    assert cli.main(["keys", "issue", "slurm"]) == 0
    out = capsys.readouterr().out
    raw = re.search(r"^key: (\S+)$", out, re.M).group(1)
    key_id = re.search(r"^key id: (\S+)$", out, re.M).group(1)
    record = services.keys.find(hash_key(raw))
    assert record.principal == "site:slurm" and record.active

    assert cli.main(["keys", "list"]) == 0
    listing = capsys.readouterr().out
    assert key_id in listing and raw not in listing

    assert cli.main(["keys", "revoke", key_id]) == 0
    assert not services.keys.find(hash_key(raw)).active
    assert cli.main(["keys", "revoke", key_id]) == 1  # nothing active left with that id


def test_table_create_is_idempotent(services, monkeypatch, capsys):
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", services.settings.endpoint_url)
    monkeypatch.setenv("RP_TABLE_NAME", services.table)
    assert cli.main(["table", "create"]) == 0
    assert "exists" in capsys.readouterr().out


def test_the_shipped_code_never_imports_the_development_kit():
    # `chalice package` ships app.py and chalicelib/ only: devkit/ is not in the Lambda zip.
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = []
    for path in [root / "app.py", *sorted((root / "chalicelib").rglob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.relative_to(root)}: {name}" for name in names if name.split(".")[0] == "devkit"]
    assert offenders == []
