"""Load and fault tooling: background processes, a loopback fault proxy and the load engine.

Used by `make load` (`python -m loadtest.load`), `make fuzz` (tests/fuzz/run.py) and the
fault test (tests/integration/test_fault_outage.py). Every address is 127.0.0.1.
"""
