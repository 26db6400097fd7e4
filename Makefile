# Every target installs into a local virtual environment first, if needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache
STAMP := $(VENV)/.installed

.PHONY: install test demo bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check rnr_sim tests

demo: $(STAMP)
	$(BIN)/rnr-sim validate decks/*.txt
	$(BIN)/rnr-sim cards --type freedom

bench: $(STAMP)
	$(BIN)/rnr-sim bench

clean:
	rm -rf $(VENV) $(NUMBA_CACHE_DIR) .pytest_cache .ruff_cache
