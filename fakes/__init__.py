"""Stand-ins for upstream services, spoken to over real HTTP by tests, benches and local runs (never shipped)."""
