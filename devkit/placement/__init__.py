"""Placement tooling shared by the conformance tests and `make bench-placement`: the upstream wheel, the real
Placement 16.0.0 run beside ours, and our service started the way `make run` starts it."""
