"""The parallel driver: N games on worker threads with per-game seeds, returning record arrays.

A game's result depends only on (inputs, seed, table_id, deal, first_seat): each game seeds
its own streams, and every game writes only its own output rows, so results are identical
for any thread count and any batch or chunk composition (docs/engine.md, "Determinism").
"""

from __future__ import annotations

import hashlib
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import numba
import numpy as np

from rnr_sim.engine.policies import POLICY_NAMES, policy_table  # noqa: F401
from rnr_sim.engine.records import GameRecords, game_records, new_records  # noqa: F401
from rnr_sim.enums import MAX_PLAYERS


def policy_index(name: str) -> int:
    """The row of ``policy_table()`` for a policy name; an unknown name is the user's error
    and lists the valid ones (the kernels' modules know nothing of user errors)."""
    from rnr_sim.errors import InputError

    try:
        return POLICY_NAMES.index(name)
    except ValueError:
        raise InputError(
            f"unknown policy '{name}'; valid policies: {', '.join(POLICY_NAMES)}"
        ) from None


def _c(a, dtype):
    """A C-contiguous, writeable array of ``dtype`` (the kernels' declared layout)."""
    return np.require(a, dtype=dtype, requirements=["C", "W"])


def _as_uint64(seed: int) -> np.uint64:
    return np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)


def play_games(cards, deck_cards, deck_size, seat_deck, seat_policy, table_id, deal, first_seat,
               profile, seed, threads=None, debug=False, policies=None,
               search=None) -> GameRecords:
    """Play games in parallel; see the module docstring for the determinism contract.

    cards int32[n_cards, N_CARD_COLS]; deck_cards int32[n_decks, MAX_SLOTS] (-1 padded);
    deck_size int32[n_decks]; seat_deck, seat_policy int32[n, P]; table_id, deal int64[n];
    first_seat int32[n]; profile int64[N_RULES]; seed: an int in uint64 range; policies
    float64[k, N_WEIGHTS], the rows ``seat_policy`` indexes (default: the built-ins,
    ``policy_table()``); search int64[k, 2] or [k, SEARCH_WIDTH] per policy row, the
    budget columns ``search.B_*`` (rollouts per option and determinization,
    determinizations, gate, open lists; two columns: the default gate and hidden lists),
    rows with rollouts > 0 search pilots (``engine/search.py``; default none).
    """
    seat_deck = _c(seat_deck, dtype=np.int32)
    n, n_players = seat_deck.shape
    if not 2 <= n_players <= MAX_PLAYERS:
        raise ValueError(f"2 to {MAX_PLAYERS} players, not {n_players}")
    game_rec, seat_rec = new_records(n, n_players)
    policies = policy_table() if policies is None else _c(policies, dtype=np.float64)
    if n and not 0 <= int(np.min(seat_policy)) <= int(np.max(seat_policy)) < len(policies):
        raise ValueError(f"seat_policy indexes rows 0..{len(policies) - 1} of the policy table")
    search = _search_rows(search, len(policies), seat_policy)
    if threads is not None:
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    if n:
        prepare_cache()
        if search is not None:
            prepare_search()
        from rnr_sim.engine.batch import play_games_nb  # compiles or loads the kernels

        play_games_nb(
            _c(cards, dtype=np.int32),
            _c(deck_cards, dtype=np.int32),
            _c(deck_size, dtype=np.int32),
            seat_deck,
            _c(seat_policy, dtype=np.int32),
            policies,
            _c(table_id, dtype=np.int64),
            _c(deal, dtype=np.int64),
            _c(first_seat, dtype=np.int32),
            _c(profile, dtype=np.int64),
            _as_uint64(seed),
            np.int64(1 if debug else 0),
            game_rec, seat_rec, search,
        )
    return game_records(game_rec, seat_rec)


def _search_rows(search, n_policies, seat_policy):
    """The search budgets as the kernels take them, or None when no seat searches (the
    heuristic kernel then plays, unchanged)."""
    if search is None:
        return None
    from rnr_sim.engine.layout import B_GATE, DEFAULT_GATE, SEARCH_WIDTH

    search = np.asarray(search, dtype=np.int64).reshape(n_policies, -1)
    if search.shape[1] == 2:
        search = np.hstack([search, np.zeros((n_policies, SEARCH_WIDTH - 2), np.int64)])
        search[:, B_GATE] = DEFAULT_GATE
    if search.shape[1] != SEARCH_WIDTH:
        raise ValueError(f"a search budget row has 2 or {SEARCH_WIDTH} columns")
    search = _c(search, dtype=np.int64)
    if np.any(search < 0):
        raise ValueError("search budgets are counts (0 or more)")
    used = np.asarray(seat_policy).ravel()
    if not len(used) or not np.any(search[used, 0] > 0):
        return None
    search[:, 1] = np.where(search[:, 0] > 0, np.maximum(search[:, 1], 1), 0)
    return search



def trace_game(cards, deck_cards, deck_size, seat_policy, profile, seed, table_id=0, deal=0,
               first_seat=0, capacity=200_000, policies=None, search=None, with_seats=False):
    """One game with its event trace: (trace int32[k, 8], gm int64[], pl int32[4, F]), and
    with ``with_seats`` its seat records after them (``records.SEAT_RECORD[P]``: the final
    opening hand's slot mask, ...); ``search`` as ``play_games``'s (a search seat's options are
    ``EV_SEARCH`` rows)."""
    prepare_cache()
    from rnr_sim.engine.batch import trace_game_nb

    n_players = len(deck_size)
    table = policy_table() if policies is None else _c(policies, dtype=np.float64)
    search = _search_rows(search, len(table), seat_policy)
    if search is not None:
        prepare_search()
    return trace_game_nb(
        _c(cards, dtype=np.int32),
        _c(deck_cards, dtype=np.int32),
        _c(deck_size, dtype=np.int32),
        np.arange(n_players, dtype=np.int32).reshape(1, n_players),
        np.asarray(seat_policy, dtype=np.int32).reshape(1, n_players),
        table,
        np.array([table_id], dtype=np.int64),
        np.array([deal], dtype=np.int64),
        np.array([first_seat], dtype=np.int32),
        _c(profile, dtype=np.int64),
        _as_uint64(seed),
        capacity,
        search,
        with_seats,
    )


# ----------------------------------------------------------------------- compile cache
def _source_digest() -> str:
    """A digest of every module the kernels are compiled from: all of ``engine/`` (no
    hand-kept list to forget a new file in) and the constants they import."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for path in sorted(here.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    for extra in ("enums.py", "rules.py"):
        h.update((here.parent / extra).read_bytes())
    return h.hexdigest()[:16]


def _cache_dir() -> Path | None:
    """The folder this build of the engine is cached in: the numba cache's root, or the
    checked build's folder in it (``indexing.py``; ``config.py`` points numba there)."""
    from rnr_sim.engine import indexing

    d = os.environ.get("NUMBA_CACHE_DIR")
    return Path(indexing.build_cache_dir(d)) if d else None


def _cached_engine_files(d: Path, pattern: str):
    """The engine's cache files under ``d`` matching ``pattern``, not those of another build
    kept in a folder of ``d`` (the checked build's, one with numba patches off)."""
    from rnr_sim.engine import indexing

    for f in d.rglob(pattern):
        if f.is_file() and "engine" in str(f.parent) and \
                not any(map(indexing.is_build_folder, f.relative_to(d).parts)):
            yield f


def _stamp() -> Path | None:
    d = _cache_dir()
    return None if d is None else d / "rnr_sim_engine.stamp"


def needs_compile() -> bool:
    """True when the engine's compiled kernels are not in the numba cache yet."""
    d = _cache_dir()
    if d is None or not d.exists():
        return True
    stamp = _stamp()
    if not stamp.exists() or stamp.read_text() != _source_digest():
        return True
    return not any(_cached_engine_files(d, "batch.play_games_worker*.nbi"))


_CACHE_PREPARED = False


@contextmanager
def _compile_lock(d: Path, name: str = "engine"):
    """One process at a time compiles into the cache ``d`` (an advisory lock on a file in
    it, one file for the engine's kernels and one for the search pilot's); the others wait,
    then load what it wrote. Where ``fcntl`` is missing, no lock."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    with open(d / f"rnr_sim_{name}.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def prepare_cache() -> None:
    """Call before the kernels' modules (``batch``, ``game``) are first imported; once per
    process. numba's cache is keyed on each kernel's own file and misses edits to the
    constants it imports (numba #1833), so when any engine source changed since the cache
    was written, drop the engine's entries and stamp the cache with the new sources'
    digest. Then load the kernels that compile on import (all with declared signatures, so
    all but the batch workers, which compile at their first call), compiling them when the
    cache lacks them, while holding the cache's lock: processes started together (Ray
    workers on one node, the tests' warm-up) compile those once instead of each compiling
    them, and a cached kernel never names a ``@called`` kernel another process compiled
    meanwhile (``linker.py``)."""
    global _CACHE_PREPARED
    if _CACHE_PREPARED:
        return
    _CACHE_PREPARED = True
    d = _cache_dir()
    if d is None:
        return
    d.mkdir(parents=True, exist_ok=True)
    with _compile_lock(d):
        stamp = _stamp()
        digest = _source_digest()
        if not stamp.exists() or stamp.read_text() != digest:
            for f in _cached_engine_files(d, "*.nb[ic]"):
                f.unlink(missing_ok=True)
            stamp.write_text(digest)
        from rnr_sim.engine import batch  # noqa: F401  (compiles or loads the kernels)


def prepare_search() -> None:
    """After ``prepare_cache``, when some seat searches: load the search pilot's kernels
    (``search.py``, ``state_api.py``: they compile on import), compiling them when the cache
    lacks them while holding a lock of their own, as ``prepare_cache`` does the engine's: two
    processes that reach their first search game together (the demo's yardstick checks and
    deck search, Ray workers on one node) compile them once, and a process that plays no
    search game never waits for that compile."""
    d = _cache_dir()
    if d is None or "rnr_sim.engine.search_batch" in sys.modules:
        return
    with _compile_lock(d, "search"):
        from rnr_sim.engine import search_batch  # noqa: F401  (compiles or loads the kernels)
