"""Development kit, never shipped in the Lambda package (`chalice package` takes app.py and
chalicelib/ only): `make run`'s server (an HTTP front playing API Gateway, on waitress), its
embedded store, the stores the tests, bench and load test run on, and the contract conformance check."""
