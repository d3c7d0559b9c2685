"""Every response a test sees is checked against the OpenAPI document: devkit/conformance.py
(shared with loadtest/)."""

from devkit.conformance import GENERIC_FAILURES, assert_conforms, document, failure_schema, operation

__all__ = ["GENERIC_FAILURES", "assert_conforms", "document", "failure_schema", "operation"]
