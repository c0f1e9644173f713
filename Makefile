# evaljig front door. On a machine with only Python and pip, every target bootstraps pinned
# uv and nox into .tools/ first, then hands over to nox (see noxfile.py for the sessions).
# PYTHON picks the interpreter for .tools/ (any of 3.11-3.13, e.g. PYTHON=/usr/bin/python3.11);
# nox then finds each session's python3.X on PATH, .tools/bin first.
.DEFAULT_GOAL := help
SHELL := /bin/bash

UV_VERSION  := 0.13.9
NOX_VERSION := 2026.10.20
PYTHON      ?= python3
#: the default session Python, the oldest requires-python admits (as noxfile.py's PYTHON): make tests runs it
PY_DEFAULT  := $(shell sed -n 's/^requires-python = ">=\([0-9.]*\).*/\1/p' pyproject.toml)
TOOLS       := .tools
#: the stamp names the interpreter too, so another PYTHON rebuilds .tools/
PYTHON_ID   := $(shell $(PYTHON) -c 'import sys; print(sys.version, sys.executable)' 2>/dev/null | cksum | cut -d' ' -f1)
STAMP       := $(TOOLS)/.installed-uv$(UV_VERSION)-nox$(NOX_VERSION)-py$(PYTHON_ID)
export PATH := $(CURDIR)/$(TOOLS)/bin:$(PATH)
#: uv (nox's venv backend) uses the interpreters on this machine and never downloads one
export UV_PYTHON_DOWNLOADS ?= never
NOX         := $(TOOLS)/bin/nox
NOXFLAGS    ?=
NOX_REPORT  := $(TOOLS)/last-nox-run.json
#: each session's CPU seconds (noxfile.py writes it), which the summary prints beside its wall time
NOX_CPU     := $(TOOLS)/last-nox-cpu.json

# $(call nox,ARGS,TITLE): run nox, then print a short summary (sessions, results, times, Pythons)
define nox
	@rm -f $(NOX_REPORT) $(NOX_CPU); start=$$SECONDS; status=0; \
	$(NOX) $(NOXFLAGS) --report $(NOX_REPORT) $(1) || status=$$?; \
	$(TOOLS)/bin/python ci/nox_summary.py $(NOX_REPORT) "$(2) ($$((SECONDS - start))s wall, exit $$status)" || true; \
	exit $$status
endef

$(STAMP):
	@$(PYTHON) -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] < (3, 14))' 2>/dev/null || { \
	  echo "error: evaljig needs Python >=3.11,<3.14 for PYTHON, but '$(PYTHON)' is $$($(PYTHON) --version 2>&1 | head -1 || echo missing); run e.g. make $(or $(MAKECMDGOALS),help) PYTHON=python3.11" >&2; exit 1; }
	@echo "==> bootstrapping uv $(UV_VERSION) and nox $(NOX_VERSION) into $(TOOLS)/ with $$($(PYTHON) -c 'import sys; print(sys.executable, sys.version.split()[0])')"
	@rm -rf $(TOOLS) && $(PYTHON) -m venv $(TOOLS) || { \
	  echo "error: '$(PYTHON) -m venv' failed: this Python lacks venv/ensurepip (Debian: apt-get install python3-venv)" >&2; exit 1; }
	@$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)" "nox==$(NOX_VERSION)"
	@touch $@

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  \033[36m%-22s\033[0m %s\n", $$1, $$2}'

.PHONY: setup
setup: $(STAMP) ## bootstrap tools and sync the workspace venv (.venv) from uv.lock
	@$(TOOLS)/bin/uv sync --locked --all-packages --all-groups

.PHONY: browser
browser: $(STAMP) ## find Chromium for the report.html browser tests, or install Debian's (root + apt); else they skip, loudly
	@$(TOOLS)/bin/python ci/browser.py ensure

.PHONY: ci
ci: $(STAMP) browser ## everything CI runs: lint, typecheck, tests + goldens (default Python), wheels, the LEV matrix, an outside-repo adoption run, coverage, the merged report
	$(call nox,-s lint typecheck tests-$(PY_DEFAULT) package lighteval adoption coverage report,make ci)

.PHONY: matrix
matrix: $(STAMP) ## the tests on every supported Python (tests-3.11, tests-3.12, tests-3.13) and which ran
	$(call nox,-s tests,make matrix)

.PHONY: report
report: $(STAMP) ## merge the newest run's reports into reports/<run>/merged/ (report.html)
	@$(NOX) $(NOXFLAGS) -s report

.PHONY: package
package: $(STAMP) ## build every wheel, check its contents, test the installed corpus
	@$(NOX) $(NOXFLAGS) -s package

.PHONY: dist
dist: $(STAMP) ## wheels + sdists of every package and the meta-package evaljig into dist/, checked (then: pip install --find-links dist evaljig)
	@$(NOX) $(NOXFLAGS) -s dist

.PHONY: lighteval
lighteval: $(STAMP) ## the main job: the LEV contract matrix against the real lighteval
	$(call nox,-s lighteval,make lighteval)

.PHONY: lighteval-constraints
lighteval-constraints: $(STAMP) ## re-resolve ci/lighteval-constraints.txt for Python 3.11.0+ (current pins kept where they fit)
	@$(TOOLS)/bin/uv pip compile ci/lighteval-requirements.txt --python-version 3.11 --no-annotate \
		--custom-compile-command "make lighteval-constraints" $$($(TOOLS)/bin/python ci/lighteval_stack.py uv-args) \
		-o ci/lighteval-constraints.txt

.PHONY: clients
clients: $(STAMP) ## real clients (openai, litellm, pydantic-ai, langchain-openai, instructor, lm-eval, inspect-ai) against the gateway: the client x feature table
	$(call nox,-s clients,make clients)

.PHONY: regen
regen: $(STAMP) ## rebuild fixtures/ byte-for-byte (make regen-check: fail on any drift)
	@$(NOX) $(NOXFLAGS) -s regen

.PHONY: regen-check
regen-check: $(STAMP) ## rebuild fixtures/ into a temporary folder and fail on any byte of drift
	@$(NOX) $(NOXFLAGS) -s regen -- --check

.PHONY: tests
tests: $(STAMP) ## unit, snapshot and replay tests of every package on the default Python (xdist, network blocked)
	@$(NOX) $(NOXFLAGS) -s tests-$(PY_DEFAULT)

.PHONY: lint
lint: $(STAMP) ## ruff check + format check, actionlint, mkdocs build --strict
	@$(NOX) $(NOXFLAGS) -s lint

.PHONY: typecheck
typecheck: $(STAMP) ## mypy --strict over packages/*/src
	@$(NOX) $(NOXFLAGS) -s typecheck

.PHONY: golden-update
golden-update: $(STAMP) ## rewrite golden/ from the current code (then: make review)
	@$(NOX) $(NOXFLAGS) -s snapshots -- --snapshot-update

.PHONY: review
review: $(STAMP) ## evaljig review: changed goldens, fixtures, cassettes, categorised with key-path diffs (REVIEW_ARGS='--markdown', '--base main', '--reject format-only', ...)
	@$(TOOLS)/bin/uv run --locked --all-packages --all-groups evaljig-review $(REVIEW_ARGS)

.PHONY: bench
bench: $(STAMP) ## benchmarks (figures and ratios, no timed asserts)
	@$(NOX) $(NOXFLAGS) -s bench

.PHONY: clean
clean: ## remove tools, venvs, caches and reports
	rm -rf $(TOOLS) .nox .venv reports .litellm_cache .pytest_cache .mypy_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
