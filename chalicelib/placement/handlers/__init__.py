"""Placement's request handlers, one module per resource (as upstream's placement/handlers/)."""
