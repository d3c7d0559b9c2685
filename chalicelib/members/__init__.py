"""members capability (issue 3)."""
