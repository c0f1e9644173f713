# evaljig front door. On a machine with only Python and pip, every target bootstraps pinned
# uv and nox into .tools/ first, then hands over to nox (see noxfile.py for the sessions).
.DEFAULT_GOAL := help
SHELL := /bin/bash

UV_VERSION  := 0.13.9
NOX_VERSION := 2026.10.20
PYTHON      ?= python3
TOOLS       := .tools
STAMP       := $(TOOLS)/.installed-uv$(UV_VERSION)-nox$(NOX_VERSION)
export PATH := $(CURDIR)/$(TOOLS)/bin:$(PATH)
NOX         := $(TOOLS)/bin/nox
NOXFLAGS    ?=

$(STAMP):
	@echo "==> bootstrapping uv $(UV_VERSION) and nox $(NOX_VERSION) into $(TOOLS)/"
	@rm -rf $(TOOLS) && $(PYTHON) -m venv $(TOOLS)
	@$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)" "nox==$(NOX_VERSION)"
	@touch $@

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}'

.PHONY: setup
setup: $(STAMP) ## bootstrap tools and sync the workspace venv (.venv) from uv.lock
	@$(TOOLS)/bin/uv sync --locked --all-packages --all-groups

.PHONY: ci
ci: $(STAMP) ## everything CI runs: lint, typecheck, tests + goldens, wheels, the LEV matrix, the merged report
	@$(NOX) $(NOXFLAGS) -s lint typecheck tests package lighteval report

.PHONY: report
report: $(STAMP) ## merge the newest run's reports into reports/<run>/merged/ (report.html)
	@$(NOX) $(NOXFLAGS) -s report

.PHONY: package
package: $(STAMP) ## build every wheel, check its contents, test the installed corpus
	@$(NOX) $(NOXFLAGS) -s package

.PHONY: lighteval
lighteval: $(STAMP) ## the main job: the LEV contract matrix against the real lighteval
	@$(NOX) $(NOXFLAGS) -s lighteval

.PHONY: regen
regen: $(STAMP) ## rebuild fixtures/ byte-for-byte (make regen-check: fail on any drift)
	@$(NOX) $(NOXFLAGS) -s regen

.PHONY: regen-check
regen-check: $(STAMP) ## rebuild fixtures/ into a temporary folder and fail on any byte of drift
	@$(NOX) $(NOXFLAGS) -s regen -- --check

.PHONY: tests
tests: $(STAMP) ## unit, snapshot and replay tests of every package (xdist, network blocked)
	@$(NOX) $(NOXFLAGS) -s tests

.PHONY: lint
lint: $(STAMP) ## ruff check + format check
	@$(NOX) $(NOXFLAGS) -s lint

.PHONY: typecheck
typecheck: $(STAMP) ## mypy --strict over packages/*/src
	@$(NOX) $(NOXFLAGS) -s typecheck

.PHONY: golden-update
golden-update: $(STAMP) ## rewrite golden/ from the current code (then: make review)
	@$(NOX) $(NOXFLAGS) -s snapshots -- --snapshot-update

.PHONY: review
review: ## Markdown review of golden/ changes against the last commit
	@$(PYTHON) ci/golden_review.py

.PHONY: bench
bench: $(STAMP) ## benchmarks (figures and ratios, no timed asserts)
	@$(NOX) $(NOXFLAGS) -s bench

.PHONY: clean
clean: ## remove tools, venvs, caches and reports
	rm -rf $(TOOLS) .nox .venv reports .litellm_cache .pytest_cache .mypy_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
