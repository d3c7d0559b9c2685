"""Where the retained list's own items live (next to `RETAINED#<site>`, the revision item of view/keys.py)."""

from __future__ import annotations

from typing import Any

from chalicelib.store.codec import key


def site_partition(site: str) -> str:
    """The revision item (`-`), the change counters (`changes#NN`) and the list header (`list`)."""
    return f"RETAINED#{site}"


def list_header_key(site: str) -> dict[str, Any]:
    return key(site_partition(site), "list")


def list_chunk_key(site: str, generation: int, index: int) -> dict[str, Any]:
    return key(f"RETAINEDLIST#{site}", f"{generation}#{index}")
