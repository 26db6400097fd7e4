# Every target installs into a local virtual environment first, if needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache
# Python's bytecode: pip compiles none (--no-compile: it compiles every file of every package,
# one after another); each module's is written by its first import, into one folder of the
# venv (not beside the sources), so only what the tool imports is compiled, once, even on a
# machine whose shell says not to write bytecode (every import of every command would be
# compiled again: docs/benchmarks.md).
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX := $(CURDIR)/$(VENV)/pycache
# Two stamps: what the tool needs to run (the demo, bench), and that plus the dev extra
# (pytest, pytest-xdist, ruff, hypothesis, pyelftools and Ray) for the tests, lint and the profiler.
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: install test demo bench profile lint clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet --no-compile -e .
	touch $(RUN_STAMP)

$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet --no-compile -e '.[dev]'
	touch $(DEV_STAMP) $(RUN_STAMP)

install: $(DEV_STAMP)

# Two workers, one per core; each runs whole test files (module fixtures built once, and
# the one local Ray in one worker). On a cold cache the session compiles the engine once
# before the workers start (tests/conftest.py), and they load it from NUMBA_CACHE_DIR.
test: $(DEV_STAMP)
	$(BIN)/pytest -n 2 --dist loadfile

lint: $(DEV_STAMP)
	$(BIN)/ruff check rnr_sim tests

# The main job end to end: every pairing of the 9 sample decks, 2,000 deals each, both
# seat orders (36 x 2,000 x 2 = 144,000 games), the first 8 deals of each pairing played
# again with the search pilot in every seat (576 games: does the verdict hold with a
# stronger pilot?), then each deck's pilot skill (rnr-sim skill, into the same run dir),
# then the report; a quick deck search over the Original Set against the sample decks
# (200,000 games, its 3 best elites checked the same way on 2 deals a field deck) and its
# page; quick balance suggestions for
# the sample decks (docs/balance-targets.toml, 400,000 games) and theirs; the deck doctor
# on Eagle Blockade (rnr-sim power --deck: which of its cards to cut, which of the sample
# set's cards to put in, 250,000 games) and its page.
#
# Three steps at a time on two cores (make -j3; -O prints each step's output whole when it
# ends). The first run compiles the engine on one core; beside it the warm-up
# (rnr_sim/warmup.py) compiles on the other what the report and the deck search compile for
# themselves, then, once the engine's own kernels are in the cache, the search pilot's,
# which the yardstick checks play. Skill, balance and the deck doctor need only the engine
# and run as soon as it is built, at a lower priority (nice 10) than that compile, the
# yardstick checks and the report, which wait for each other: so a step of that chain takes
# its core back at once, and never waits behind them for a free slot (the deck doctor after
# balance: one low-priority step at a time beside the deck search). How long it takes on a
# fresh 2-core machine, step by step: docs/benchmarks.md.
DEMO_DECKS := $(sort $(wildcard decks/*.txt))
DEMO_STEPS := demo-warm demo-run demo-skill demo-yardstick demo-report demo-discover \
	demo-discover-page demo-balance demo-balance-page demo-power demo-power-page
.PHONY: demo-pages $(DEMO_STEPS)

demo: $(RUN_STAMP)
	rm -rf runs/demo runs/demo-discover runs/demo-balance runs/demo-power reports/demo
	@$(MAKE) --no-print-directory -j3 -O demo-pages
	@echo ""
	@echo "Open reports/demo/index.html in a browser (file://$(CURDIR)/reports/demo/index.html)"
	@echo "the deck search: file://$(CURDIR)/reports/demo/discovery/index.html"
	@echo "the balance suggestions: file://$(CURDIR)/reports/demo/balance/index.html"
	@echo "and the deck doctor for Eagle Blockade: file://$(CURDIR)/reports/demo/power/index.html"

demo-pages: demo-report demo-discover-page demo-balance-page demo-power-page
demo-warm:
	$(BIN)/python -m rnr_sim.warmup --search
demo-run:
	$(BIN)/rnr-sim run $(DEMO_DECKS) --games 2000 --out runs/demo
demo-skill: demo-run
	nice -n 10 $(BIN)/rnr-sim skill $(DEMO_DECKS) --games 500 --out runs/demo
demo-balance: demo-run
	nice -n 10 $(BIN)/rnr-sim balance --field $(DEMO_DECKS) --targets docs/balance-targets.toml \
		--budget 400000 --out runs/demo-balance
demo-power: demo-balance
	nice -n 10 $(BIN)/rnr-sim power --deck decks/eagle_blockade.txt --field $(DEMO_DECKS) \
		--cards rnr_sim/data/foundation.toml --budget 250000 --out runs/demo-power
demo-yardstick: demo-skill demo-warm
	$(BIN)/rnr-sim run --resume runs/demo --yardstick 8
demo-report: demo-yardstick
	$(BIN)/rnr-sim report runs/demo --out reports/demo
demo-discover: demo-run demo-warm
	nice -n 10 $(BIN)/rnr-sim discover --budget 200000 --yardstick 2 --out runs/demo-discover
demo-discover-page: demo-discover demo-report
	$(BIN)/rnr-sim report runs/demo-discover --out reports/demo/discovery
demo-balance-page: demo-balance demo-report
	$(BIN)/rnr-sim report runs/demo-balance --out reports/demo/balance
demo-power-page: demo-power demo-report
	$(BIN)/rnr-sim report runs/demo-power --out reports/demo/power

bench: $(RUN_STAMP)
	$(BIN)/rnr-sim bench

# Where the engine's time goes (Linux perf): by kernel, then by source function and line.
profile: $(DEV_STAMP)
	$(BIN)/rnr-sim bench --profile
	$(BIN)/rnr-sim bench --profile --lines

clean:
	rm -rf $(VENV) $(NUMBA_CACHE_DIR) $(NUMBA_CACHE_DIR)-lines .pytest_cache .ruff_cache
