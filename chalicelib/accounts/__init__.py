"""Accounts reports: the native accounts a Site's agent found for one resource, kept per allocation.

models.py (the message), names.py (Site name rules), decision.py (ordering and
refusals), sets.py (the bucketed, compressed layout), repository.py (items and
reads, including the one-key lookup a launch needs), service.py (one read, one
transaction).
"""
