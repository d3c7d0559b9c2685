"""A faster TransactWriteItems for the embedded moto store (make run, tests, bench).

moto 5.2 deep-copies every table a transaction names, once per item, so that
it can roll back: each transaction costs O(table size), and a few thousand
events through `make run` take minutes. DynamoDB evaluates every condition
against the state before the transaction and refuses two operations on one
item, so the same outcome is reached by checking all conditions first and
only then applying the writes; a failure while applying restores just the
items this transaction touched. This is only correct because the embedded
store runs one request at a time (embedded.py), which DynamoDB's own
isolation gives for free.
"""

from __future__ import annotations

import copy
from importlib.metadata import version
from typing import Any

# The moto release whose DynamoDBBackend.transact_write_items this replaces (requirements-dev.txt pins
# it). Another release may have changed that method or the exceptions it raises: read its
# transact_write_items, bring this module in line, then move this pin.
WRITTEN_FOR_MOTO = "5.2.5"

_installed = False


class MotoVersionMismatch(RuntimeError):
    """The installed moto is not the release this patch was written for."""


def check_moto_version(installed: str) -> None:
    if installed != WRITTEN_FOR_MOTO:
        raise MotoVersionMismatch(
            f"devkit/moto_transactions.py replaces TransactWriteItems of moto {WRITTEN_FOR_MOTO}, but moto "
            f"{installed} is installed: compare moto's DynamoDBBackend.transact_write_items with this patch, "
            "update it, then WRITTEN_FOR_MOTO (or install the pinned moto: make setup)"
        )


def install() -> None:
    global _installed
    if _installed:
        return
    check_moto_version(version("moto"))
    from moto.dynamodb.comparisons import get_filter_expression
    from moto.dynamodb.exceptions import (
        ConditionalCheckFailed,
        MockValidationException,
        MultipleTransactionsException,
        TooManyTransactionsException,
        TransactionCanceledException,
        TransactWriteSingleOpException,
    )
    from moto.dynamodb.models import DynamoDBBackend

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        if len(transact_items) > 100:
            raise TooManyTransactionsException()
        targets: set[tuple[str, str]] = set()
        plans: list[tuple[str, dict[str, Any], str, dict[str, Any], Any]] = []
        errors: list[tuple[Any, Any, Any]] = []
        for entry in transact_items:
            if len(entry) > 1:
                raise TransactWriteSingleOpException
            op_type, op = next(iter(entry.items()))
            original: dict[str, Any] | None = None
            try:
                if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
                    raise ValueError("Unsupported transaction operation")
                table_name = op["TableName"]
                if op_type == "Put":
                    table = self.get_table(table_name)
                    key = {table.hash_key_attr: op["Item"][table.hash_key_attr]}
                    if table.range_key_attr is not None:
                        key[table.range_key_attr] = op["Item"][table.range_key_attr]
                else:
                    key = op["Key"]
                target = (str(table_name), str(dict(sorted(key.items()))))
                if target in targets:
                    raise MultipleTransactionsException()
                targets.add(target)
                current = self.get_item(table_name, key)
                condition = op.get("ConditionExpression")
                if condition is not None:
                    check = get_filter_expression(
                        condition, op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
                    )
                    if not check.expr(current):
                        if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current:
                            original = current.to_json()["Attributes"]
                        raise ConditionalCheckFailed(item=original)
                plans.append((op_type, op, table_name, key, copy.deepcopy(current)))
                errors.append((None, None, None))
            except (MultipleTransactionsException, MockValidationException):
                raise
            except ConditionalCheckFailed as exc:
                errors.append(("ConditionalCheckFailed", str(exc.message), original))
            except Exception as exc:  # noqa: BLE001 - reported per item, as moto does
                errors.append((type(exc).__name__, str(exc), original))
        if any(code is not None for code, _, _ in errors):
            raise TransactionCanceledException(errors)

        applied: list[tuple[str, dict[str, Any], Any]] = []
        try:
            for op_type, op, table_name, key, before in plans:
                names, values = op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
                if op_type == "Put":
                    self.put_item(table_name, op["Item"], expression_attribute_names=names,
                                  expression_attribute_values=values)
                elif op_type == "Delete":
                    self.delete_item(table_name, key, expression_attribute_names=names,
                                     expression_attribute_values=values)
                elif op_type == "Update":
                    self.update_item(table_name, key, update_expression=op["UpdateExpression"],
                                     expression_attribute_names=names, expression_attribute_values=values)
                applied.append((table_name, key, before))
        except Exception:
            for table_name, key, before in reversed(applied):
                if before is None:
                    self.delete_item(table_name, key)
                else:
                    self.put_item(table_name, before.to_json()["Attributes"])
            raise

    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
    _installed = True
