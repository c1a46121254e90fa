# planetscale.cloud: collection build and test harness.
#
#   make test         everything CI runs (a fresh clone needs nothing else)
#   make demo         the collection's tour against a local emulator of the platform
#   make dataplane    the emulator's database servers (Debian's mariadb-server and postgresql) when missing
#   make help         list the targets
#
# Virtualenvs (created on demand, refreshed when their requirements change):
#   .venv/old       oldest supported ansible-core, requests and urllib3 (requirements/old.txt) on Python $(OLD_PY)
#   .venv/new       newest supported ansible-core + lint/docs tooling (requirements/new.txt) on Python $(NEW_PY)
#   .venv/emulator  platform emulator (tests/emulator/requirements.txt) on Python $(EMULATOR_PY)
#   .venv/docs      the documentation site and its browser test (requirements/docs.txt) on Python $(NEW_PY)
#
# ansible-test, ansible-lint and antsibull-docs run in a fresh copy of the
# working tree at $(COLLECTION) (path shape ansible_collections/NS/NAME),
# re-made before each check; tests/emulator/, hack/ and .ci/ are left out.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules

ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
COLLECTION_PATH := ansible_collections/planetscale/cloud
COLLECTION := build/$(COLLECTION_PATH)
COLLECTION_DIR := $(ROOT)/$(COLLECTION)

# Python versions; PYTHON_OLD / PYTHON_NEW / PYTHON_EMULATOR may name an
# interpreter explicitly (otherwise hack/find-python.sh looks for one).
OLD_PY ?= 3.11
NEW_PY ?= 3.13
EMULATOR_PY ?= 3.11
PYTHON_OLD ?=
PYTHON_NEW ?=
PYTHON_EMULATOR ?=

VENV_OLD := .venv/old
VENV_NEW := .venv/new
VENV_EMULATOR := .venv/emulator
VENV_BENCH := .venv/bench
# the earlier version the benchmark's local profile is compared with, side by side (a git commit; none: not
# compared); by default the last commit before issue 22 (tests/bench/scenarios.py DEFAULT_BASELINE)
BENCH_BASELINE ?=
VENV_DOCS := .venv/docs

# Test requirements files that other parts of the tree may add; installed into
# both ansible venvs when present.
EXTRA_REQS := $(wildcard tests/unit/requirements.txt tests/integration/requirements.txt)

# The integration passes of each core: every target once, in-process (planetscale_in_process=true), and the
# adapter's target (execution_paths: what Ansible does around a module) on the module path too; the execution path
# is the action's and the adapter's property, not each module's (CONTRIBUTING.md, "Tests"). A pass is
# true|false, then :lean for the emulator's lean shapes, then @TARGET,... to run only those (hack/integration.sh).
# Every pass runs at -vvvv and the secret watch searches its output.
INTEGRATION_PASSES ?= true false@execution_paths
# The passes of the newest ansible-core named here run against the emulator's lean shapes
# (--lean: bare lists, cluster_rate_name, "type" keys, as real answers come), at no extra cost:
# the oldest ansible-core runs the same passes with the full shapes. LEAN_PASSES= turns it off.
LEAN_PASSES ?= true
INTEGRATION_PASSES_NEW = $(foreach p,$(INTEGRATION_PASSES),$(if $(filter $(p),$(LEAN_PASSES)),$(p):lean,$(p)))
INTEGRATION_PARALLEL ?= 1
# Each pass's targets are split into this many groups, and every pass and group of a version runs at
# once, each with its own copy and emulator (runs mostly wait on the emulator's clock); INTEGRATION_SHARDS=1
# and INTEGRATION_SERIAL=1 give the old one-run-after-the-other.
INTEGRATION_SHARDS ?= 3
# Extra arguments: e.g. `make sanity-new SANITY_ARGS="--test pylint"`,
# `make integration-old INTEGRATION_ARGS=branch`.
SANITY_ARGS ?=
UNITS_ARGS ?=
INTEGRATION_ARGS ?=
UNITS_WORKERS ?= 3
# `make content-tests CONTENT_ARGS="-k demo"`; each worker runs its own emulator
CONTENT_ARGS ?=
CONTENT_WORKERS ?= 3
# `make test-reliability RELIABILITY_ARGS="-k tls"` or `RELIABILITY_TESTS=tests/reliability/test_tls.py`;
# each worker runs its own emulator, reset before every test, so tests of one file spread over the workers
RELIABILITY_ARGS ?=
RELIABILITY_TESTS ?= tests/reliability
RELIABILITY_WORKERS ?= 4
EMULATOR_ARGS ?=
# Every emulator notes there the requests the collection's plugins sent and the API answered; make api-coverage
# counts the published operations they drove (make test clears it first and counts last)
OPERATIONS_LOG ?= $(ROOT)/build/operations
export EMULATOR_OPERATIONS_LOG := $(OPERATIONS_LOG)
# `make docs-site DOCS_ARGS="-k link"`
DOCS_ARGS ?=

# `make emulator` (foreground)
HOST ?= 127.0.0.1
PORT ?= 8787
TLS ?=
TLS_DIR ?= build/emulator-tls

# make test's steps after setup, cheapest first: a "+" joins steps that run side by side (STEP_JOBS at once, each
# in its own copy of the collection); the static checks stop the run when one fails, within minutes (and stop the
# checks running beside them). Three at once on two cores: each step also waits (on ansible-test's setup, a browser,
# an emulator's clock), and a third fills those gaps (build/logs/steps.tsv gives each target's CPU seconds beside its
# wall seconds). Integration keeps a core to itself (@2): it is the longest step and uses two cores' worth alone.
# STEP_IDLE=N starts a step's further targets only when the CPUs were N percent idle (hack/run-steps.sh): measured
# in one group after setup, it held the checks that wait (the browser's, the emulator's own) behind those that
# compute, so the groups stay, with it off (0).
empty :=
space := $(empty) $(empty)
STATIC_CHECKS := lint sanity-old sanity-new changelog-lint docs-lint
TEST_STEPS := $(subst $(space),+,$(STATIC_CHECKS)) units-new+units-old+emulator-tests \
	integration+docs-site+build+ee+bench-smoke@2 content-tests+test-reliability api-coverage
STEP_JOBS ?= 3
STEP_IDLE ?= 0

# run a command with a venv's bin/ first on PATH (ansible-test looks up pythonX.Y there)
with_old = PATH="$(ROOT)/$(VENV_OLD)/bin:$$PATH"
with_new = PATH="$(ROOT)/$(VENV_NEW)/bin:$$PATH"
# ...and with the build copy as the only installed collection
with_copy = ANSIBLE_COLLECTIONS_PATH="$(ROOT)/build"
# A check's own fresh copy of the working tree, build/steps/TARGET/ansible_collections/planetscale/cloud, so that
# checks run side by side (make test) never share one; cd into it, and it as the only installed collection.
STEP_COPY = $(ROOT)/build/steps/$@/$(COLLECTION_PATH)
in_step_copy = hack/copy-collection.sh $(STEP_COPY) && cd $(STEP_COPY) &&
with_step_copy = ANSIBLE_COLLECTIONS_PATH="$(ROOT)/build/steps/$@"

.PHONY: help test setup setup-old setup-new setup-emulator dataplane setup-bench pip-bootstrap copy \
	lint static sanity sanity-old sanity-new units units-old units-new emulator-tests \
	content-tests bench-smoke test-reliability api-coverage demo db-collections ee setup-rulebook bench changelog \
	integration integration-old integration-new changelog-lint docs-lint build \
	setup-docs docs browser docs-site \
	emulator lock clean distclean

help: ## list targets
	@echo "usage: make TARGET [VAR=value ...]"
	@grep -E '^[a-z][a-z0-9-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{ printf "  %-16s %s\n", $$1, $$2 }'

test: ## setup, then every check in order, with a summary (FAIL_FAST=1 stops at the first failure)
	@rm -rf $(OPERATIONS_LOG)
	@MAKE="$(MAKE)" STEP_JOBS=$(STEP_JOBS) STEP_IDLE=$(STEP_IDLE) STOP_ON_FAILURE="setup $(STATIC_CHECKS)" hack/run-steps.sh setup $(TEST_STEPS)

static: $(STATIC_CHECKS) ## the static checks: ansible-lint, sanity on both cores, the changelog, the docs' lint

# ---------------------------------------------------------------- setup

setup: ## create/refresh all virtualenvs, side by side (each one's output together when it is done)
	@$(MAKE) --no-print-directory -j3 --output-sync=target setup-old setup-new setup-emulator
	@$(MAKE) --no-print-directory pip-bootstrap

setup-old: ## .venv/old: ansible-core 2.17, and the oldest requests/urllib3 meta/ee-requirements.txt declares, on Python 3.11
	@hack/venv.sh $(VENV_OLD) "$(or $(PYTHON_OLD),$(OLD_PY))" requirements/old.txt $(EXTRA_REQS)

setup-new: ## .venv/new: ansible-core 2.21 + ansible-lint/antsibull on Python 3.13
	@hack/venv.sh $(VENV_NEW) "$(or $(PYTHON_NEW),$(NEW_PY))" requirements/new.txt $(EXTRA_REQS)

setup-emulator: dataplane ## .venv/emulator: the platform emulator's requirements (and its data plane's servers)
	@hack/venv.sh $(VENV_EMULATOR) "$(or $(PYTHON_EMULATOR),$(EMULATOR_PY))" tests/emulator/requirements.txt

dataplane: ## MariaDB and PostgreSQL for the emulator's data plane: Debian's mariadb-server and postgresql, when missing
	@hack/dataplane.sh

# ansible-test --venv bootstraps pip from a download host we cannot reach:
# put an ensurepip-based stand-in where it looks for a cached copy. Also
# create ansible-test's SSH key before parallel runs race to make it.
pip-bootstrap: setup-old setup-new
	@$(VENV_OLD)/bin/python hack/prepare_ansible_test.py
	@$(VENV_NEW)/bin/python hack/prepare_ansible_test.py

copy: ## (re)make the build copy of the collection from the working tree
	@hack/copy-collection.sh $(COLLECTION_DIR)

# ---------------------------------------------------------------- checks

lint: setup-new db-collections ## ansible-lint --profile production: the collection and the examples of its documents
	$(in_step_copy) $(ROOT)/$(VENV_NEW)/bin/python tests/content/examples.py lint-examples && $(with_new) \
		ANSIBLE_COLLECTIONS_PATH="$(ROOT)/build/steps/$@:$(ROOT)/build/collections" ansible-lint --profile production --offline

sanity: sanity-old sanity-new ## ansible-test sanity, oldest and newest ansible-core

sanity-old: setup-old
	@$(VENV_OLD)/bin/python hack/prepare_ansible_test.py
	$(in_step_copy) $(with_old) ansible-test sanity --venv --python $(OLD_PY) $(SANITY_ARGS)

sanity-new: setup-new
	@$(VENV_NEW)/bin/python hack/prepare_ansible_test.py
	$(in_step_copy) $(with_new) ansible-test sanity --venv --python $(NEW_PY) $(SANITY_ARGS)

units: units-old units-new ## ansible-test units (tests/unit), oldest and newest ansible-core

units-old: setup-old
	$(in_step_copy) $(with_old) ansible-test units --local --python $(OLD_PY) --num-workers $(UNITS_WORKERS) $(UNITS_ARGS)

units-new: setup-new
	$(in_step_copy) $(with_new) ansible-test units --local --python $(NEW_PY) --num-workers $(UNITS_WORKERS) $(UNITS_ARGS)

emulator-tests: setup-emulator ## the emulator's own pytest suite
	PYTHONPATH=tests $(VENV_EMULATOR)/bin/python -m pytest tests/emulator/tests -q

# The integration runs of the two ansible-core versions are independent (own
# emulator, own copy under build/integration/), so by default they run side
# by side; their output is shown per version once each finishes.
integration: setup-old setup-new setup-emulator ## ansible-test integration against the emulator, both versions, each pass (INTEGRATION_PARALLEL=0: one after the other)
	@$(VENV_NEW)/bin/python hack/prepare_ansible_test.py
ifeq ($(INTEGRATION_PARALLEL),1)
	@echo "integration-old and integration-new run in parallel; each one's output follows when it is done" \
		"(live: tail -f build/logs/integration-*.log)"
	@$(MAKE) --no-print-directory -k -j2 --output-sync=target integration-old integration-new
else
	@$(MAKE) --no-print-directory -k integration-old integration-new
endif

integration-old: setup-old setup-emulator
	@$(VENV_OLD)/bin/python hack/prepare_ansible_test.py
	@hack/copy-collection.sh $(ROOT)/build/integration/old/$(COLLECTION_PATH)
	COLLECTION_DIR=$(ROOT)/build/integration/old/$(COLLECTION_PATH) EMULATOR_ARGS="$(EMULATOR_ARGS)" INTEGRATION_WATCH=named \
		ANSIBLE_TEST_ARGS="$(INTEGRATION_ARGS)" INTEGRATION_SHARDS=$(INTEGRATION_SHARDS) hack/integration.sh $(VENV_OLD) $(OLD_PY) $(INTEGRATION_PASSES)

integration-new: setup-new setup-emulator
	@$(VENV_NEW)/bin/python hack/prepare_ansible_test.py
	@hack/copy-collection.sh $(ROOT)/build/integration/new/$(COLLECTION_PATH)
	COLLECTION_DIR=$(ROOT)/build/integration/new/$(COLLECTION_PATH) EMULATOR_ARGS="$(EMULATOR_ARGS)" \
		ANSIBLE_TEST_ARGS="$(INTEGRATION_ARGS)" INTEGRATION_SHARDS=$(INTEGRATION_SHARDS) hack/integration.sh $(VENV_NEW) $(NEW_PY) $(INTEGRATION_PASSES_NEW)

changelog-lint: setup-new ## antsibull-changelog lint, and CHANGELOG.rst is what changelogs/changelog.yaml generates
	$(in_step_copy) $(with_new) antsibull-changelog lint && $(with_new) antsibull-changelog generate \
		&& diff -u $(ROOT)/CHANGELOG.rst CHANGELOG.rst

changelog: setup-new copy ## release the fragments as version VERSION (make changelog VERSION=0.2.0): changelog.yaml, CHANGELOG.rst
	@test -n "$(VERSION)" || { echo "give the version: make changelog VERSION=x.y.z"; exit 2; }
	cd $(COLLECTION) && $(with_new) antsibull-changelog release --version $(VERSION)
	cp $(COLLECTION)/CHANGELOG.rst $(ROOT)/CHANGELOG.rst
	cp $(COLLECTION)/changelogs/changelog.yaml $(ROOT)/changelogs/changelog.yaml
	git rm -q --ignore-unmatch changelogs/fragments/*.yml changelogs/fragments/*.yaml

docs-lint: setup-new ## antsibull-docs lint-collection-docs --plugin-docs
	$(in_step_copy) $(with_new) $(with_step_copy) antsibull-docs lint-collection-docs --plugin-docs .

setup-docs: ## .venv/docs: antsibull-docs, Sphinx, the Ansible theme, MyST, selenium (requirements/docs.txt)
	@hack/venv.sh $(VENV_DOCS) "$(or $(PYTHON_NEW),$(NEW_PY))" requirements/docs.txt

docs: setup-docs copy ## the documentation site with antsibull-docs and Sphinx (warnings fail it): build/docs/build/html
	@hack/docs.sh

browser: ## headless Chromium for the site's test: Debian's chromium and chromium-driver, when missing
	@hack/browser.sh

docs-site: docs browser ## make docs, then the site in headless Chromium (tests/docs; screenshots: build/docs-artifacts)
	$(VENV_DOCS)/bin/python -m pytest tests/docs -q -p no:cacheprovider $(DOCS_ARGS)

build: setup-new ## ansible-galaxy collection build into build/, then check the tarball's contents
	@mkdir -p build
	rm -f build/planetscale-cloud-*.tar.gz
	$(with_new) ansible-galaxy collection build --force --output-path build .
	$(VENV_NEW)/bin/python hack/check-tarball.py build/planetscale-cloud-*.tar.gz

# ---------------------------------------------------------------- suites beyond ansible-test

content-tests: setup-new setup-emulator db-collections setup-rulebook ## roles, playbooks and extensions/ against the emulator, and the demo from an installed tarball
	$(VENV_NEW)/bin/python -m pytest tests/content -q -p no:cacheprovider --durations=8 -n $(CONTENT_WORKERS) $(CONTENT_ARGS)

bench-smoke: setup-new setup-emulator ## the benchmark's scenarios once each at small sizes: request counts, no-log parity
	$(VENV_NEW)/bin/python -m pytest tests/bench -q -p no:cacheprovider

api-coverage: setup-new ## which published operations the suites drove through a plugin (after them: make test's last step)
	$(VENV_NEW)/bin/python -m pytest tests/api_coverage -q -p no:cacheprovider

test-reliability: setup-new setup-emulator ## faults, unknown outcomes, concurrency, rate limit, bad input, secrets, TLS (logs: build/reliability)
	$(VENV_NEW)/bin/python -m pytest $(RELIABILITY_TESTS) -q -p no:cacheprovider --durations=8 -n $(RELIABILITY_WORKERS) --dist load \
		$(RELIABILITY_ARGS)

# ---------------------------------------------------------------- tools

db-collections: setup-new ## ansible.mysql, community.mysql, community.postgresql (from the pinned ansible package) in build/collections
	@$(VENV_NEW)/bin/python hack/db-collections.py $(VENV_NEW)/bin/pip

demo: setup-new setup-emulator db-collections ## the tour: emulator, demo playbook twice (changed=0), a --check --diff change, the audit report
	@$(VENV_NEW)/bin/python hack/demo.py

setup-rulebook: ## build/rulebook: ansible-rulebook for the event source's end-to-end test (and Java, when missing)
	@hack/rulebook.sh "$(or $(PYTHON_NEW),$(NEW_PY))"

ee: setup-new ## ansible-builder create: an execution environment's build context in build/ee
	@hack/ee.sh

setup-bench: ## .venv/bench: ansible-core as .venv/new pins it, and matplotlib for the chart
	@hack/venv.sh $(VENV_BENCH) "$(or $(PYTHON_NEW),$(NEW_PY))" tests/bench/requirements.txt

bench: setup-bench setup-emulator ## the benchmark against hand-written ansible.builtin.uri: docs/benchmarks.md and .png
	$(VENV_BENCH)/bin/python tests/bench/run.py $(if $(BENCH_BASELINE),--baseline $(BENCH_BASELINE))

emulator: setup-emulator ## run the emulator in the foreground (HOST=127.0.0.1 PORT=8787 TLS=1), through the test harness
	PYTHONPATH=tests exec $(VENV_EMULATOR)/bin/python -m harness emulator run --host $(HOST) --port $(PORT) \
		$(if $(filter 1 true yes,$(TLS)),--tls --cert-dir $(TLS_DIR)) --args "$(EMULATOR_ARGS)"

lock: ## re-pin requirements/old.txt and new.txt from the .in files
	hack/lock.sh old $(OLD_PY)
	hack/lock.sh new $(NEW_PY)
	hack/lock.sh docs $(NEW_PY)

clean: ## remove build output (keeps virtualenvs)
	rm -rf build tests/output

distclean: clean ## also remove the virtualenvs
	rm -rf .venv
