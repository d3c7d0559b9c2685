"""retained capability (issue 3)."""
