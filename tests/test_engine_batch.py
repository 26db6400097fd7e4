"""Whole games of the sample decks: the state invariants hold after every turn (a
debug-mode run counts the broken ones, ``check_invariants``), every game ends the way a
game may end, and the records depend only on the inputs and the seed: not on the thread
count, nor on how the games are split into calls (docs/engine.md, "Determinism")."""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np
import pytest
from engine_harness import deck_arrays, play_batch

from rnr_sim import enums
from rnr_sim.cards import load_catalog
from rnr_sim.decks import load_deck
from rnr_sim.engine import driver
from rnr_sim.engine.policies import POLICY_NAMES
from rnr_sim.rules import default_profile

DECKS = sorted((Path(__file__).resolve().parent.parent / "decks").glob("*.txt"))
RANDOM = POLICY_NAMES.index("random")
GAMES = {2: 3000, 3: 1500, 4: 1500}  # per player count and policy kind


@pytest.fixture(scope="module")
def sample():
    """(cards, deck card ids, the index of the built-in each deck's pilot builds on) of the
    shipped sample."""
    catalog = load_catalog(None)
    decks = [load_deck(p, catalog) for p in DECKS]
    assert len(decks) >= 4
    from rnr_sim.pilots import load_policy  # each deck's pilot's built-in base

    policies = np.array([POLICY_NAMES.index(load_policy(d.policy or "balanced", relative_to=
                                                        Path(d.path).parent).base)
                         for d in decks], dtype=np.int32)
    return catalog.compile(), [d.card_ids for d in decks], policies


def tables(n_decks: int, players: int, games: int, seed: int) -> np.ndarray:
    """int32[games, players]: distinct decks at each table, drawn at random."""
    rng = np.random.default_rng(seed)
    return np.array([rng.choice(n_decks, players, replace=False) for _ in range(games)],
                    dtype=np.int32)


def run(sample, players: int, policy: str, rules=None, games: int | None = None, seed=7):
    cards, ids, own = sample
    n = games or GAMES[players]
    seat_deck = tables(len(ids), players, n, seed=players)
    seat_policy = own[seat_deck] if policy == "deck" else np.full_like(seat_deck, RANDOM)
    first = (np.arange(n) % players).astype(np.int32)
    return play_batch(cards, ids, seat_deck, seat_policy, first_seat=first,
                      deal=np.arange(n, dtype=np.int64) // players, rules=rules, seed=seed,
                      debug=True)


def check_endings(r, players: int, limit: int | None = None) -> None:
    limit = 200 * players // 2 if limit is None else limit  # R15, R45: 100 rounds
    draw = r["path"] == enums.PATHS.index("draw")
    assert np.all((r["winner"] >= 0) | draw) and np.all(r["winner"][draw] == -1)
    assert np.all(r["winner"] < players) and np.all(r["path"] >= 0)
    assert np.all((r["turns"] >= 1) & (r["turns"] <= limit))


# =========================================================================== invariants
@pytest.mark.parametrize("players", [2, 3, 4])
def test_invariants_hold_in_heuristic_games(sample, players):
    r = run(sample, players, "deck")
    assert int(r["violations"].sum()) == 0
    check_endings(r, players)
    assert len(set(r["path"].tolist())) >= 3  # the games are varied, not all one way


def test_invariants_hold_in_random_games(sample):
    bad = {p: int(run(sample, p, "random")["violations"].sum()) for p in (2, 3, 4)}
    assert bad == {2: 0, 3: 0, 4: 0}


def test_invariants_hold_in_random_games_with_aoa_from_play(sample):  # R55
    """The random pilot picks any legal action alike, fights from play included: the kept
    list of actions stays the rules' list (debug mode compares them) at every table."""
    rules = {"aoa_from_play": True}
    bad = {p: int(run(sample, p, "random", rules=rules)["violations"].sum()) for p in (2, 3, 4)}
    assert bad == {2: 0, 3: 0, 4: 0}


@pytest.mark.parametrize("players", [2, 3, 4])
def test_invariants_hold_in_random_games_without_aoa(sample, players):
    r = run(sample, players, "random", rules={"aoa": False})
    assert int(r["violations"].sum()) == 0
    check_endings(r, players)


@pytest.mark.parametrize("rules", [
    {"attack_lifetime": "one_shot"},
    {"ua_drain_target": "opponent", "ua_drain_when": "every_turn"},
    {"multiplayer": "last_standing", "ip_effects_immediate": False},
    {"p2_free_pillar": "zero_cost_only", "first_player_draws": False, "pillars_per_turn": 1,
     "lp_cap": 100},
    {"turn_limit": 12},
    {"bill_escalation": "per_game", "aoa_from_play": True, "protect_stops_mill": False},
], ids=["one_shot", "drain", "last_standing", "setup", "turn_limit", "r53_r55_r56"])
@pytest.mark.parametrize("policy", ["deck", "random"])
def test_invariants_hold_under_the_switches(sample, rules, policy):
    for players in (2, 3, 4):
        r = run(sample, players, policy, rules=dict(rules, aoa=policy == "deck"), games=300)
        assert int(r["violations"].sum()) == 0
        check_endings(r, players, limit=rules.get("turn_limit", 200) * players // 2)  # R45


# =========================================================================== determinism
def records(sample, n: int, players: int = 2, threads: int | None = None, seed: int = 5,
            lo: int = 0):
    cards, ids, own = sample
    dc, ds = deck_arrays(ids)
    seat_deck = tables(len(ids), players, n, seed=99)[lo:]
    g = np.arange(lo, n, dtype=np.int64)
    return driver.play_games(cards, dc, ds, seat_deck, own[seat_deck], np.zeros_like(g),
                             g // players, (g % players).astype(np.int32),
                             default_profile().compile(), seed, threads=threads, debug=True)


def same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def concat(a, b):
    return type(a)(*(np.concatenate([x, y]) for x, y in zip(a, b, strict=True)))


def test_same_records_for_one_and_two_threads(sample):
    before = numba.get_num_threads()
    try:
        one = records(sample, 2000, threads=1)
        two = records(sample, 2000, threads=2)
    finally:
        numba.set_num_threads(before)
    assert same(one, two)


@pytest.mark.parametrize("players", [2, 4])
def test_same_records_for_any_batch_split(sample, players):
    n, k = 1500, 517  # a split that is not a multiple of the kernel's task size
    whole = records(sample, n, players)
    head = records(sample, k, players)
    tail = records(sample, n, players, lo=k)
    assert same(whole, concat(head, tail))


def test_the_seed_is_the_only_source_of_chance(sample):
    a = records(sample, 500, seed=5)
    assert same(a, records(sample, 500, seed=5))
    b = records(sample, 500, seed=6)
    assert not np.array_equal(a.opening_mask, b.opening_mask)


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_workers_state_copies_never_share_a_cache_line(workers):
    """Each worker's copy of every state array lies whole between its neighbours', with at
    least a cache line (64 bytes) of distance: no false sharing between threads."""
    from rnr_sim.engine.batch import CACHE_LINE, worker_state

    gap, arrays = worker_state(workers)
    assert gap >= 1
    for a in arrays:
        assert a.shape[0] == workers * gap and a.flags.c_contiguous
        row = a[0].nbytes
        for k in range(workers - 1):
            end_k = a[k * gap].ctypes.data + row
            start_next = a[(k + 1) * gap].ctypes.data
            assert start_next - end_k >= CACHE_LINE, (a.dtype, a.shape)
    dc = arrays[6]
    assert (dc == -1).all()  # the deck slots start empty
