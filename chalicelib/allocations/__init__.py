"""Allocations: one per (Site, resource), with lifecycle, reasons and revision."""
