"""Retained accounts: the accounts a Site keeps for work its Projects accepted, computed from the
Site's items and the view (rules.py pure, reader.py bounded reads), stored until an input changes
(materialized.py) and answered with a revision that never lies (service.py)."""
