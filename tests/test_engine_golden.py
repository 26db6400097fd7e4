"""The engine's games, pinned: 2,000 games of the sample decks (every pairing, both seat
orders, spread over the deals) hash to the digest below, on 1 thread and on 2.

A change to the engine's build (how kernels are compiled, inlined, threaded or laid out)
must leave every game as it was; this test is how such a change shows it. A change to the
rules, a pilot, a sample deck or its policy changes the games on purpose: then put the new
digest below and say so in the commit.
"""

from __future__ import annotations

import hashlib

import numpy as np

GOLDEN = "700cb38a8ea4d965"  # sha256 of the records' fields, first 16 hex digits
GAMES = 2_000


def records_digest(records) -> str:
    h = hashlib.sha256()
    for name in records._fields:
        h.update(name.encode())
        h.update(np.ascontiguousarray(getattr(records, name)).tobytes())
    return h.hexdigest()[:16]


def test_the_sample_games_are_the_pinned_games():
    from rnr_sim import bench

    plan = bench.sample_plan(GAMES)
    inputs = bench.spread_inputs(plan, GAMES)
    digests = {threads: records_digest(bench.play(plan, inputs, threads)) for threads in (1, 2)}
    assert digests == {1: GOLDEN, 2: GOLDEN}, (
        f"the sample games changed: {digests}; if on purpose, set GOLDEN to the new digest")


def test_numba_as_it_ships_plays_the_pinned_games(plain_numba_games):
    """With every numba patch off (``RNR_SIM_PLAIN_NUMBA=1``, engine/patching.py), compiled
    into its own folder of the numba cache, the engine plays the same games."""
    import json

    code, out, err = plain_numba_games
    assert code == 0, err[-3000:]
    result = json.loads(out)
    assert result["patched"] == []
    assert result["cache_dir"].endswith("plain-numba")
    assert result["digests"] == {"1": GOLDEN, "2": GOLDEN}
