"""The check-string evaluator reads oslo.policy's language as oslo.policy does (its cases, and the
corner cases where a careless reading would open a door)."""

from __future__ import annotations

import pytest

from chalicelib.placement.policy import checks


class Book:
    def __init__(self, rules: dict[str, str]) -> None:
        self._rules = {name: checks.parse(text) for name, text in rules.items()}

    def compiled(self, name: str):
        return self._rules.get(name)


CREDS = {"roles": ["Admin", "reader"], "project_id": "p-1", "user_id": "u-1", "system_scope": None,
         "is_admin_project": True, "nested": {"list": [{"id": "a"}, {"id": "b"}]}}
TARGET = {"project_id": "p-1", "user_id": "u-1", "other": "p-2", "enabled": True, "name": "Member"}


def verdict(text: str, rules: dict[str, str] | None = None, creds=None, target=None) -> bool:
    return checks.evaluate(checks.parse(text), TARGET if target is None else target,
                           CREDS if creds is None else creds, Book(rules or {}))


@pytest.mark.parametrize(("text", "expected"), [
    ("", True),
    ("   ", False),  # blanks only: does not parse
    ("@", True),
    ("!", False),
    ("role:admin", True),  # roles compare case-insensitively
    ("role:ADMIN", True),
    ("role:service", False),
    ("project_id:%(project_id)s", True),
    ("project_id:%(other)s", False),
    ("project_id:%(missing)s", False),  # a target without the name fails the check
    ("user_id:%(user_id)s", True),
    ("user_id:u-2", False),
    ("system_scope:all", False),
    ("is_admin_project:True", True),
    ("True:%(enabled)s", True),  # a literal kind compares as that literal's text
    ("False:%(enabled)s", False),
    ("'Member':%(name)s", True),
    ("nested.list.id:b", True),  # dots walk mappings, every element of a list
    ("nested.list.id:c", False),
    ("nested.absent:x", False),
    ("nokind", False),
    ("http://example.invalid/check", False),  # remote checks fail closed
    ("role:admin and role:reader", True),
    ("role:admin and role:service", False),
    ("role:service or role:reader", True),
    ("not role:service", True),
    ("not role:admin", False),
    ("NOT role:admin OR role:reader", True),
    ("role:service or role:admin and not role:reader", False),  # and binds tighter than or
    ("(role:service or role:admin) and not role:reader", False),
    ("role:admin or (role:service and !)", True),
    ("((role:admin))", True),
    ("(role:admin", False),  # unbalanced: the whole string fails closed
    ("role:admin)", False),
    ("role:admin and", False),
    ("and role:admin", False),
    ("role:admin role:reader", False),
    ("'quoted'", False),
    ("role:admin or 'quoted'", False),
])
def test_the_language(text, expected):
    assert verdict(text) is expected


def test_rule_references_and_the_default_rule():
    assert verdict("rule:a", {"a": "role:reader"})
    assert not verdict("rule:b", {"a": "role:reader"})
    assert verdict("rule:b", {"a": "role:reader", "default": "@"})
    assert not verdict("rule:default", {})
    assert not verdict("rule:a or role:admin", {"a": "rule:b", "b": "rule:a"})  # a cycle refuses, all of it
    assert verdict("role:admin or rule:a", {"a": "rule:a"})  # unless decided before the cycle is reached


def test_project_checks_need_the_project_key():
    assert not verdict("project_id:%(project_id)s", creds={"roles": []})
    # As oslo.policy, values compare as text: an absent project on both sides matches.
    assert verdict("project_id:%(project_id)s", creds={"project_id": None}, target={"project_id": None})


def test_roles_that_are_not_a_list_hold_nothing():
    assert not verdict("role:admin", creds={"roles": "admin"})
    assert not verdict("role:admin", creds={})


def test_a_parenthesis_inside_a_match_is_part_of_it():
    assert verdict("(project_id:%(project_id)s)")
    assert str(checks.parse("(role:a or role:b) and not rule:c")) == "((role:a or role:b) and not rule:c)"
