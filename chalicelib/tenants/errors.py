"""Tenants' domain errors (pure); the compute family renders them (chalicelib/http/compute.py)."""

from __future__ import annotations


class UnknownPrincipal(Exception):
    """No principal of this name in the tenant."""


class SiteNameTaken(Exception):
    """The tenant has a Site of this name already."""
