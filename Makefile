# Quick start: `make demo` runs cairn on the embedded default; `make test` runs every test.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_HOME := $(CURDIR)/.demo-home

.PHONY: demo test lint bench clean

$(BIN)/cairn: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(BIN)/cairn

demo: $(BIN)/cairn
	rm -rf $(DEMO_HOME)
	$(BIN)/cairn --home $(DEMO_HOME) ingest examples/coding-agent.jsonl
	$(BIN)/cairn --home $(DEMO_HOME) recall "how should I install dependencies and ship this change?"

test: $(BIN)/cairn
	@# Bytecode once: an editable install has none, and every CLI test's process would
	@# compile the package again (PYTHONDONTWRITEBYTECODE keeps it from being saved).
	$(BIN)/python -m compileall -q src
	$(BIN)/python -m pytest -q -n auto --dist loadfile --durations=25
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

bench: $(BIN)/cairn
	$(BIN)/python benchmarks/recall_latency.py

clean:
	rm -rf $(VENV) $(DEMO_HOME) .pytest_cache .ruff_cache
