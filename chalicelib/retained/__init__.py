"""Retained accounts: the accounts a Site keeps for work its Projects accepted, computed from the
Site's items and the view (rules.py pure, reader.py bounded reads, service.py the revision)."""
