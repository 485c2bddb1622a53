# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test install install-dev eval bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/qa-service ingest
	$(BIN)/qa-service serve

test: install-dev  # types and lint first: they take seconds, the suite minutes
	$(BIN)/python -m mypy
	$(BIN)/python -m ruff check qa_service tests bench
	$(BIN)/python -m pytest -q

eval: install
	$(BIN)/qa-service eval tests/data/heldout_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh2_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh3_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh4_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh5_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh8_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh14_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh15_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh16_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh17_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh18_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh19_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh20_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh21_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh22_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh23_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh24_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh25_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh28_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh29_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh30_questions.jsonl
	$(BIN)/qa-service eval tests/data/fresh31_questions.jsonl

clean:
	rm -rf $(VENV) data
