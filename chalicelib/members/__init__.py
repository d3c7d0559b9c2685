"""Members: who a Site username is in a provider Project, answered only for Projects with an
allocation at the asking Site (rules.py is pure, service.py reads the view)."""
