"""Resource class names: the standard ones (the `os-resource-classes` package, in its id
order, which is the order Placement lists them and joins them in messages) and CUSTOM_*."""

from __future__ import annotations

import re
from collections.abc import Iterable

import os_resource_classes

STANDARD: tuple[str, ...] = tuple(os_resource_classes.STANDARDS)
_STANDARD_INDEX = {name: i for i, name in enumerate(STANDARD)}
CUSTOM_PREFIX = "CUSTOM_"
_CUSTOM = re.compile(r"^CUSTOM_[A-Z0-9_]+$")


def is_standard(name: str) -> bool:
    return name in _STANDARD_INDEX


def is_custom(name: str) -> bool:
    return bool(_CUSTOM.match(name))


def class_order(names: Iterable[str]) -> list[str]:
    """Standard classes in id order first, then custom ones by name."""
    return sorted(set(names), key=lambda n: (0, _STANDARD_INDEX[n], "") if n in _STANDARD_INDEX else (1, 0, n))
