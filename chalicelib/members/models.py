"""The view entities a member answer is made of (pure domain records, built by members/repository.py)."""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.view.keys import SiteBinding as SiteBinding  # the view's record, read by members


@dataclass(frozen=True)
class Username:
    """A (Site, username) as Beto knows it: the Party it names and whether that is verified."""

    party_id: str
    verified: bool


@dataclass(frozen=True)
class Membership:
    """A Party's membership in a Project."""

    state: str
    generation: int


