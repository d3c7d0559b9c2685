"""oslo.policy's check-string language, parsed and evaluated (pure).

The syntax, as oslo.policy reads it (decision 0040 says why not oslo.policy itself):

- `@` always passes, `!` never; an empty check string passes.
- `role:NAME` passes when the credential holds the role (case-insensitive).
- `rule:NAME` passes when the named rule does; an unknown name falls back to the rule `default`
  when the rules define one, else fails.
- `KIND:MATCH` (any other kind) is a generic check: the credential's value at KIND (dots walk into
  nested mappings and every element of a list) must equal MATCH; a KIND that reads as a Python
  literal (`True`, `'Member'`, `42`) is compared as that literal instead.
- MATCH may name target values, `%(project_id)s`; a name the target lacks fails the check. As in
  oslo.policy the substituted value is compared as text, so None matches None.
- `not`, `and`, `or` (any case; that precedence) and parentheses combine checks.

Whatever does not parse fails closed: the whole check string becomes `!`, as oslo.policy does.
Kinds oslo.policy resolves by a remote call (`http:`, `https:`) fail closed here: nothing on the
request path may call out. Check nodes are plain slotted classes, not dataclasses: this module loads
on the first Placement request, where class creation shows.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

Target = Mapping[str, Any]
Creds = Mapping[str, Any]

DEFAULT_RULE = "default"  # oslo.policy's [oslo_policy] policy_default_rule
_REMOTE_KINDS = frozenset({"http", "https"})
_WHITESPACE = re.compile(r"\s+")


class CyclicRule(Exception):
    """A rule that refers back to itself: the whole decision is a refusal (oslo.policy's recursion
    fails the request); `evaluate` turns it into False."""


class RuleBook(Protocol):
    """Compiled rules by name, for `rule:` checks."""

    def compiled(self, name: str) -> Check | None: ...


class Check(Protocol):
    def __call__(self, target: Target, creds: Creds, rules: RuleBook, seen: frozenset[str]) -> bool: ...

    def __str__(self) -> str: ...


class Always:
    __slots__ = ("result",)

    def __init__(self, result: bool) -> None:
        self.result = result

    def __call__(self, target: Target, creds: Creds, rules: RuleBook, seen: frozenset[str]) -> bool:
        return self.result

    def __str__(self) -> str:
        return "@" if self.result else "!"


class Not:
    __slots__ = ("check",)

    def __init__(self, check: Check) -> None:
        self.check = check

    def __call__(self, target: Target, creds: Creds, rules: RuleBook, seen: frozenset[str]) -> bool:
        return not self.check(target, creds, rules, seen)

    def __str__(self) -> str:
        return f"not {self.check}"


class AllOf:
    __slots__ = ("checks",)

    def __init__(self, checks: tuple[Check, ...]) -> None:
        self.checks = checks

    def __call__(self, target: Target, creds: Creds, rules: RuleBook, seen: frozenset[str]) -> bool:
        return all(check(target, creds, rules, seen) for check in self.checks)

    def __str__(self) -> str:
        return "(" + " and ".join(str(c) for c in self.checks) + ")"


class AnyOf:
    __slots__ = ("checks",)

    def __init__(self, checks: tuple[Check, ...]) -> None:
        self.checks = checks

    def __call__(self, target: Target, creds: Creds, rules: RuleBook, seen: frozenset[str]) -> bool:
        return any(check(target, creds, rules, seen) for check in self.checks)

    def __str__(self) -> str:
        return "(" + " or ".join(str(c) for c in self.checks) + ")"


class RuleRef:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, target: Target, creds: Creds, rules: RuleBook, seen: frozenset[str]) -> bool:
        if self.name in seen:  # a rule that refers back to itself: oslo.policy recurses until it fails
            raise CyclicRule(self.name)
        check = rules.compiled(self.name)
        if check is None:
            check = rules.compiled(DEFAULT_RULE) if self.name != DEFAULT_RULE else None
            if check is None:
                return False
        return check(target, creds, rules, seen | {self.name})

    def __str__(self) -> str:
        return f"rule:{self.name}"


class Role:
    __slots__ = ("match",)

    def __init__(self, match: str) -> None:
        self.match = match

    def __call__(self, target: Target, creds: Creds, rules: RuleBook, seen: frozenset[str]) -> bool:
        wanted = _substitute(self.match, target)
        if wanted is None:
            return False
        held = creds.get("roles")
        if not isinstance(held, list | tuple | set | frozenset):
            return False
        return wanted.lower() in (str(role).lower() for role in held)

    def __str__(self) -> str:
        return f"role:{self.match}"


class Generic:
    __slots__ = ("kind", "match")

    def __init__(self, kind: str, match: str) -> None:
        self.kind = kind
        self.match = match

    def __call__(self, target: Target, creds: Creds, rules: RuleBook, seen: frozenset[str]) -> bool:
        wanted = _substitute(self.match, target)
        if wanted is None:
            return False
        literal = _literal(self.kind)
        if literal is not _NOT_A_LITERAL:
            return wanted == str(literal)
        return _found(creds, self.kind.split("."), wanted)

    def __str__(self) -> str:
        return f"{self.kind}:{self.match}"


_NOT_A_LITERAL = object()


def _literal(kind: str) -> object:
    try:
        return ast.literal_eval(kind)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT_A_LITERAL


def _substitute(match: str, target: Target) -> str | None:
    """MATCH with `%(name)s` replaced from the target; None when the target lacks a name (or MATCH is
    not a format string), which fails the check."""
    try:
        return match % target
    except (KeyError, ValueError, TypeError):
        return None


def _found(value: Any, path: list[str], wanted: str) -> bool:
    if not path:
        return wanted == str(value)
    if not isinstance(value, Mapping) or path[0] not in value:
        return False
    inner = value[path[0]]
    if isinstance(inner, list):
        return any(_found(item, path[1:], wanted) for item in inner)
    return _found(inner, path[1:], wanted)


def evaluate(check: Check, target: Target, creds: Creds, rules: RuleBook, rule: str | None = None) -> bool:
    """The check's verdict; a cycle of `rule:` references anywhere in it refuses."""
    try:
        return check(target, creds, rules, frozenset() if rule is None else frozenset({rule}))
    except CyclicRule:
        return False


# --- parsing ------------------------------------------------------------------------------------------

_LPAREN, _RPAREN, _AND, _OR, _NOT = "(", ")", "and", "or", "not"


class _Unparsable(Exception):
    pass


def _tokens(text: str) -> list[str | Check]:
    """Whitespace-separated words; parentheses peel off a word's ends (never its inside: `%(x)s`)."""
    out: list[str | Check] = []
    for word in _WHITESPACE.split(text):
        if not word:
            continue
        stripped = word.lstrip("(")
        out.extend([_LPAREN] * (len(word) - len(stripped)))
        if not stripped:
            continue
        core = stripped.rstrip(")")
        trailing = len(stripped) - len(core)
        if core.lower() in (_AND, _OR, _NOT):
            out.append(core.lower())
        elif core:
            if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "'\"":
                raise _Unparsable()  # a quoted string is no check
            out.append(_atom(core))
        out.extend([_RPAREN] * trailing)
    return out


def _atom(word: str) -> Check:
    if word == "@":
        return Always(True)
    if word == "!":
        return Always(False)
    kind, sep, match = word.partition(":")
    if not sep:
        return Always(False)  # oslo.policy: a check it cannot understand fails closed, the rest stands
    if kind == "rule":
        return RuleRef(match)
    if kind == "role":
        return Role(match)
    if kind in _REMOTE_KINDS:
        return Always(False)
    return Generic(kind, match)


class _Parser:
    """or_expr := and_expr ('or' and_expr)*; and_expr := unary ('and' unary)*;
    unary := 'not' unary | '(' or_expr ')' | check."""

    def __init__(self, tokens: list[str | Check]) -> None:
        self._tokens = tokens
        self._at = 0

    def parse(self) -> Check:
        check = self._or()
        if self._at != len(self._tokens):
            raise _Unparsable()
        return check

    def _peek(self) -> str | Check | None:
        return self._tokens[self._at] if self._at < len(self._tokens) else None

    def _take(self) -> str | Check:
        token = self._peek()
        if token is None:
            raise _Unparsable()
        self._at += 1
        return token

    def _or(self) -> Check:
        return self._joined(_OR, self._and, AnyOf)

    def _and(self) -> Check:
        return self._joined(_AND, self._unary, AllOf)

    def _joined(self, word: str, part: Callable[[], Check], combine: Callable[[tuple[Check, ...]], Check]) -> Check:
        checks = [part()]
        while self._peek() == word:
            self._at += 1
            checks.append(part())
        return checks[0] if len(checks) == 1 else combine(tuple(checks))

    def _unary(self) -> Check:
        token = self._take()
        if token == _NOT:
            return Not(self._unary())
        if token == _LPAREN:
            inner = self._or()
            if self._take() != _RPAREN:
                raise _Unparsable()
            return inner
        if isinstance(token, str):
            raise _Unparsable()
        return token


def parse(text: str) -> Check:
    """The check tree of a check string; one that does not parse is `!` (fails closed)."""
    if not text:  # oslo.policy: an empty string passes; one of only blanks does not parse
        return Always(True)
    try:
        return _Parser(_tokens(text)).parse()
    except _Unparsable:
        return Always(False)
