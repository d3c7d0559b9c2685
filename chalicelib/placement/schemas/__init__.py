"""JSON Schemas of Placement's request bodies and query strings, one module per resource.

They have Placement's shape (property names directly under `properties`, the same
patterns and bounds) because the `jsonschema` messages built from them are part of the
API: Placement's tests match `Failed validating 'minimum' in schema['properties']['total']`.
"""
