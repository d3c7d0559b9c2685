"""Principals and grants: Site, service and Placement keys, tenant tokens, one authenticator for every family."""
