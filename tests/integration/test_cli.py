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


def test_keys_list_prints_iso_times(services, monkeypatch, capsys):
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", services.settings.endpoint_url)
    monkeypatch.setenv("RP_TABLE_NAME", services.table)
    assert cli.main(["keys", "issue", "k8s"]) == 0
    key_id = re.search(r"^key id: (\S+)$", capsys.readouterr().out, re.M).group(1)
    assert cli.main(["keys", "revoke", key_id]) == 0
    capsys.readouterr()
    assert cli.main(["keys", "list"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(key_id))
    iso = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    assert re.fullmatch(rf"{key_id}\tsite:k8s\tcreated {iso}\trevoked {iso}", line), line


def test_an_unreachable_store_is_named_with_what_to_do(monkeypatch, capsys):
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:9")  # discard: nothing answers
    monkeypatch.setenv("RP_TABLE_NAME", "rp-cli-test")
    monkeypatch.setenv("RP_STORE_CONNECT_TIMEOUT", "0.5")
    monkeypatch.setenv("RP_STORE_MAX_ATTEMPTS", "1")
    assert cli.main(["keys", "list"]) == 3
    err = capsys.readouterr().err
    assert "http://127.0.0.1:9" in err and "rp-cli-test" in err and "AWS_ENDPOINT_URL_DYNAMODB" in err


def test_iso_time():
    assert cli.iso_time(0) == "1970-01-01T00:00:00Z"
    assert cli.iso_time(1772359200) == "2026-03-01T10:00:00Z"


def test_a_setting_that_cannot_be_read_names_the_variable(monkeypatch, capsys):
    monkeypatch.setenv("RP_STORE_READ_TIMEOUT", "later")
    assert cli.main(["keys", "list"]) == 2
    err = capsys.readouterr().err
    assert "RP_STORE_READ_TIMEOUT must be a number" in err and "later" not in err
