"""Shared fixtures: the tiny test catalog, the legal deck built from it, small file writers,
and the runner tests' engine and generated sample decks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rnr_sim.cards import FOUNDATION_CATALOG, Catalog, load_catalog
from rnr_sim.decks import Deck, parse_deck
from rnr_sim.engine import driver

# Before any test module imports the kernels (``batch``, ``game``): drop numba cache entries
# older than the engine's sources (numba #1833), then load or compile the kernels.
driver.prepare_cache()

#: A second process compiling the trace kernel with a search seat (see pytest_sessionstart).
_WARM_UP: subprocess.Popen | None = None


def _xdist_worker(config) -> bool:
    """True in a worker of ``pytest -n N`` (pytest-xdist; ``make test``)."""
    return hasattr(config, "workerinput")


def _xdist_controller(config) -> bool:
    """True in the process that hands tests to the workers of ``pytest -n N``: it runs no
    test itself."""
    return not _xdist_worker(config) and config.getoption("dist", "no") != "no"


def pytest_sessionstart(session) -> None:
    """On a cold numba cache, compile the search kernel (``replay --search-seat``: about
    38 s, the largest compile after the main kernel's 26 s) in a second process, while the
    tests use the main kernel in this one (compiled above by ``prepare_cache``; the second
    process loads it from the cache): a compile uses one core and the machine has two. The
    test that needs it waits for it (``search_trace_compiled``) and then loads it from the
    cache. ``RNR_SIM_TEST_WARM_UP=0`` turns this off.

    With workers (``pytest -n N``), this runs once, in the process that starts them, before
    it starts them, and waits: the batch worker is compiled here meanwhile, so the workers
    load every kernel from the cache instead of each compiling the same ones at once."""
    global _WARM_UP
    if os.environ.get("RNR_SIM_TEST_WARM_UP") == "0" or _xdist_worker(session.config) \
            or not driver.needs_compile():
        return
    decks = sorted((Path(__file__).parent.parent / "decks").glob("*.txt"))[:2]
    if len(decks) < 2:
        return
    code = "import sys; from rnr_sim.cli import main; sys.exit(main(sys.argv[1:]))"
    _WARM_UP = subprocess.Popen(
        [sys.executable, "-c", code, "replay", *map(str, decks), "--game", "1",
         "--search-seat", "0", "--rollouts", "1", "--determinizations", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if _xdist_controller(session.config):
        from rnr_sim import bench

        plan = bench.sample_plan(100)
        bench.play(plan, bench.spread_inputs(plan, 100), 1)  # compiles the batch worker
        _WARM_UP.wait()


#: ``rnr-sim check fuzz`` on the engine's checked build (engine/indexing.py), started with
#: the session when a test asks for it (``checked_fuzz``): its first run compiles that build
#: (about 30 s), in a process of its own while the suite runs.
CHECKED_FUZZ_ARGS = ("check", "fuzz", "--games", "512", "--players", "2,3", "--case-games", "256",
                     "--no-progress", "--json")
_CHECKED_FUZZ: subprocess.Popen | None = None

#: The pinned games played by the engine compiled by numba as it ships
#: (``RNR_SIM_PLAIN_NUMBA=1``, engine/patching.py), in a process of its own started with the
#: session when a test asks for it (``plain_numba_games``): its first run compiles that
#: build into its own folder of the numba cache.
_PLAIN_NUMBA: subprocess.Popen | None = None


def _start_checked_fuzz() -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "RNR_SIM_CHECKED_INDICES"}
    return subprocess.Popen(
        [sys.executable, "-m", "rnr_sim.cli", *CHECKED_FUZZ_ARGS], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=Path(__file__).parent)


def _start_plain_numba() -> subprocess.Popen:
    env = {**os.environ, "RNR_SIM_PLAIN_NUMBA": "1"}
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "engine_golden_run.py")], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def pytest_collection_modifyitems(session, config, items) -> None:
    """The tests that wait for a compile in another process run last, so that the rest of
    the suite runs meanwhile (the order of every other test is kept); the checked build's
    fuzz starts here if a selected test waits for it. In a worker of ``pytest -n N`` each
    worker collects every test, so the process starts with the test that waits for it
    instead (the other worker's tests run meanwhile)."""
    global _CHECKED_FUZZ, _PLAIN_NUMBA
    waits = ("search_trace_compiled", "checked_fuzz", "plain_numba_games")
    waiting = [item for item in items
               if any(f in getattr(item, "fixturenames", ()) for f in waits)]
    if waiting:
        items[:] = [item for item in items if item not in waiting] + waiting
    if _xdist_worker(config):
        return
    if _CHECKED_FUZZ is None and any("checked_fuzz" in getattr(item, "fixturenames", ())
                                     for item in items):
        _CHECKED_FUZZ = _start_checked_fuzz()
    if _PLAIN_NUMBA is None and any("plain_numba_games" in getattr(item, "fixturenames", ())
                                    for item in items):
        _PLAIN_NUMBA = _start_plain_numba()


def pytest_sessionfinish(session, exitstatus) -> None:
    for process in (_WARM_UP, _CHECKED_FUZZ, _PLAIN_NUMBA):
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def checked_fuzz() -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``rnr-sim check fuzz CHECKED_FUZZ_ARGS``, run with the
    session in a process of its own (``pytest_collection_modifyitems``; in a worker of
    ``pytest -n N``, started here)."""
    global _CHECKED_FUZZ
    if _CHECKED_FUZZ is None:
        _CHECKED_FUZZ = _start_checked_fuzz()
    out, err = _CHECKED_FUZZ.communicate(timeout=900)
    return _CHECKED_FUZZ.returncode, out, err


@pytest.fixture
def plain_numba_games() -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of tests/engine_golden_run.py with every numba patch off,
    run with the session in a process of its own (``pytest_collection_modifyitems``; in a
    worker of ``pytest -n N``, started here)."""
    global _PLAIN_NUMBA
    if _PLAIN_NUMBA is None:
        _PLAIN_NUMBA = _start_plain_numba()
    out, err = _PLAIN_NUMBA.communicate(timeout=900)
    return _PLAIN_NUMBA.returncode, out, err


@pytest.fixture
def search_trace_compiled() -> None:
    """Wait for the warm-up compile of ``pytest_sessionstart``, if one runs, so that the
    test loads the trace kernel with a search seat from the cache instead of compiling it
    a second time beside it."""
    if _WARM_UP is not None:
        _WARM_UP.wait()

FIXTURES = Path(__file__).parent / "fixtures"
TINY_CATALOG = FIXTURES / "tiny.toml"
LEGAL_DECK = FIXTURES / "legal.txt"


@pytest.fixture(scope="module")
def module_engine():
    """``engine`` for a whole test module (module-scoped fixtures that play games)."""
    from fake_engine import engine_driver

    from rnr_sim.runs import planning

    driver = engine_driver()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(planning, "engine_driver", lambda: driver)
        yield driver


@pytest.fixture(scope="session")
def tiny() -> Catalog:
    """The tiny catalog of tests/fixtures: every Order and Branch, 27 cards."""
    return load_catalog(TINY_CATALOG)


@pytest.fixture
def legal_counts(tiny: Catalog) -> dict[str, int]:
    """The counts of tests/fixtures/legal.txt, a legal 60-card deck; a fresh copy per test."""
    return dict(parse_deck(LEGAL_DECK.read_text(), tiny).counts)


def deck_text(counts: dict[str, int], name: str = "Test Deck") -> str:
    """A deck list in the text format, one line per name."""
    return f"Name: {name}\n" + "".join(f"{n} {card}\n" for card, n in counts.items() if n)


def deck_of(counts: dict[str, int], catalog: Catalog, name: str = "Test Deck") -> Deck:
    return parse_deck(deck_text(counts, name), catalog, where=f"{name}.txt")


@pytest.fixture
def write(tmp_path: Path):
    """Write ``text`` (or bytes) to ``tmp_path / name`` and return the path."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write


@pytest.fixture
def engine(monkeypatch):
    """The runner plays on the engine of ``fake_engine.engine_driver()`` (the real one when
    it is built, else the stand-in); the runner tests use it for every test."""
    from fake_engine import engine_driver

    from rnr_sim.runs import planning

    driver = engine_driver()
    monkeypatch.setattr(planning, "engine_driver", lambda: driver)
    return driver


@pytest.fixture(scope="session")
def decks(tmp_path_factory) -> list[Path]:
    """Four legal deck lists of the sample catalog (generated: stable for these tests)."""
    from fake_engine import write_generated_decks

    return write_generated_decks(load_catalog(FOUNDATION_CATALOG), tmp_path_factory.mktemp("decks"))
