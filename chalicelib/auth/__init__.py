"""Bearer keys: one or more per Site (rotation) and the service key for `/api/...` routes."""
