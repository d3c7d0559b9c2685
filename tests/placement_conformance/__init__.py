"""Placement conformance: upstream's gabbits, the openstack CLI and openstacksdk against our service."""
