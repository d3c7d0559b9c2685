# The two set-up commands are `make run` and `make test`; both create .venv on a fresh machine.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
STAGE ?= dev

.PHONY: setup run test test-unit test-integration bench lint clean

$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

setup: $(VENV)/.installed

run: setup ## serve the API on http://127.0.0.1:$(PORT) over an embedded in-memory store
	PORT=$(PORT) $(PY) -m chalicelib.local.server

test: setup ## the whole suite: unit and integration
	$(PY) -m pytest tests

test-unit: setup
	$(PY) -m pytest tests/unit

test-integration: setup
	$(PY) -m pytest tests/integration

bench: setup ## figures: reports/s, round trips and capacity per kind, ratio to the bare DynamoDB floor
	$(PY) -m bench.run

lint: setup
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis
