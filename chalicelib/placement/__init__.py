"""Placement-compatible API (OpenStack Placement 16.0.0, microversions 1.0-1.39) on DynamoDB."""
