"""Commitment sync (issue 10): Limes commitments turned into capacity held in Placement.

upstream: the OpenStack client (keystoneauth1) that reads one Snapshot or fails closed.
models, rules: the pure part: selection, status, subtraction, the reservation decision.
"""
