"""Fleet's domain errors (pure): what the module methods, the planner and apply refuse, and why.

They say nothing of HTTP: the compute family renders each as one error code of
its envelope (chalicelib/http/compute.py). `message` None means the family's own
sentence for that code; `details` name fields (JSON pointers), methods and
permissions, never input values. Invalid input is the shared `InvalidInput`
(chalicelib/compute/validation.py).
"""

from __future__ import annotations

from typing import Any


class FleetError(Exception):
    def __init__(self, message: str | None = None, **details: Any) -> None:
        super().__init__(message or type(self).__name__)
        self.message = message
        self.details = details


class UnknownObject(FleetError):
    """The object (or a Site) referred to does not exist."""


class NameTaken(FleetError):
    """An object of this identity exists already (or a Placement provider holds the pool's uuid or name)."""


class WrongState(FleetError):
    """The object's state does not allow the change (archived, in use, an offer to the pool's owner, blocked)."""


class PlanChanged(FleetError):
    """The fleet changed since the plan was made (details: expected, actual)."""


class NotServed(FleetError):
    """This deployment cannot do it: a planned method it does not serve, a plan beyond one transaction."""


class CallRefused(FleetError):
    """The caller may not call a method the plan needs (details: method, permission)."""


class Contended(FleetError):
    """Writes of the tenant kept racing past every retry; the caller repeats the request."""
