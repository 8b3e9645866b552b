# The commands a newcomer and CI run. Everything installs into .venv from PyPI.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install example test lint unit

$(BIN)/agentjobs: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/agentjobs

# Read a shipped agent log and print the verdict as JSON.
example: install
	$(BIN)/agentjobs report manifests/examples/transcripts/fix-parser.log

lint: install
	$(BIN)/ruff check operator devcluster tests benchmarks
	$(BIN)/ruff format --check operator devcluster tests benchmarks
	$(BIN)/mypy operator
	$(BIN)/mypy --strict devcluster
	$(BIN)/lint-imports

unit: install
	$(BIN)/pytest tests/unit

test: lint
	$(BIN)/pytest
