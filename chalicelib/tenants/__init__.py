"""Tenants: their principals (tokens with grants) and their registered Sites."""
