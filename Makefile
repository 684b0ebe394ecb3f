# Rabbithole Lab: `make demo` sets up and runs the main job; `make test` runs every test.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_QUESTION ?= Welche Grenzwerte gelten für beruflich exponierte Personen bei Quantenstrahlung?

.PHONY: setup demo test lint demo-kb bench

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# CPU build of torch from the local wheel; a bare `torch` would pull a multi-GB CUDA build
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/rabbithole doctor --kb kb
	$(BIN)/rabbithole ingest kb
	$(BIN)/rabbithole trail "$(DEMO_QUESTION)" --kb kb --budget-chars 6000
	$(BIN)/rabbithole research "$(DEMO_QUESTION)" --kb kb --no-hitl --out reports/demo

test: $(STAMP)
	$(BIN)/ruff check rabbithole_lab tests bench scripts
	$(BIN)/python -m pytest -q

demo-kb: $(STAMP)
	$(BIN)/python scripts/build_demo_kb.py kb
