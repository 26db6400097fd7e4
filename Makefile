# Every target installs into a local virtual environment first, if needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache
STAMP := $(VENV)/.installed

.PHONY: install test demo bench profile lint clean

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

# The main job end to end: every pairing of the 9 sample decks, 2,800 deals each, both
# seat orders (36 x 2,800 x 2 = 201,600 games), then each deck's pilot skill (rnr-sim
# skill, into the same run dir), then the report; then a quick deck search over the
# Original Set against the sample decks (300,000 games) and its page.
demo: $(STAMP)
	rm -rf runs/demo runs/demo-discover reports/demo
	$(BIN)/rnr-sim run decks/*.txt --games 2800 --out runs/demo
	$(BIN)/rnr-sim skill decks/*.txt --games 1000 --out runs/demo
	$(BIN)/rnr-sim report runs/demo --out reports/demo
	$(BIN)/rnr-sim discover --budget 300000 --out runs/demo-discover
	$(BIN)/rnr-sim report runs/demo-discover --out reports/demo/discovery
	@echo ""
	@echo "Open reports/demo/index.html in a browser (file://$(CURDIR)/reports/demo/index.html)"
	@echo "and the deck search: file://$(CURDIR)/reports/demo/discovery/index.html"

bench: $(STAMP)
	$(BIN)/rnr-sim bench

# Where the engine's time goes (Linux perf): by kernel, then by source function and line.
profile: $(STAMP)
	$(BIN)/rnr-sim bench --profile
	$(BIN)/rnr-sim bench --profile --lines

clean:
	rm -rf $(VENV) $(NUMBA_CACHE_DIR) $(NUMBA_CACHE_DIR)-lines .pytest_cache .ruff_cache
