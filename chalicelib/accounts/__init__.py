"""accounts capability (issue 3)."""
