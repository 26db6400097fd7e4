"""A stand-in for ``rnr_sim.engine.driver`` with the same interface, for runner tests.

Each game's records are a pure function of (seed, table_id, deal, first_seat) and the
deck sizes, from a vectorised splitmix64 in numpy: no batch, order or thread dependence,
like the real engine. The games mean nothing; the records have the right shapes, dtypes
and invariants (a draw has winner -1 and path ``draw``; masks only hold deck slots).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

from rnr_sim import enums
from rnr_sim.engine.records import GameRecords, game_records, new_records  # noqa: F401 (the real types)
from rnr_sim.errors import InputError

POLICY_NAMES: tuple[str, ...] = ("balanced", "aggro", "mill", "breaker", "petition", "random")
N_WEIGHTS = 4

#: Calls to ``play_games`` as (n_games, threads); tests read and reset it.
CALLS: list[tuple[int, int | None]] = []
COMPILED = False

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_G = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def policy_index(name: str) -> int:
    if name not in POLICY_NAMES:
        raise InputError(f"unknown policy '{name}'; valid policies: {', '.join(POLICY_NAMES)}")
    return POLICY_NAMES.index(name)


def policy_table() -> np.ndarray:
    return np.arange(len(POLICY_NAMES) * N_WEIGHTS, dtype=np.float64).reshape(-1, N_WEIGHTS)


def needs_compile() -> bool:
    return not COMPILED


def play_games(cards, deck_cards, deck_size, seat_deck, seat_policy, table_id, deal,
               first_seat, profile, seed, threads=None, policies=None):
    """Fake records for ``n = len(table_id)`` games of ``P = seat_deck.shape[1]`` seats."""
    global COMPILED
    COMPILED = True
    n, p = seat_deck.shape
    assert cards.dtype == np.int32 and cards.shape[1] == enums.N_CARD_COLS
    assert deck_cards.dtype == np.int32 and deck_cards.shape[1] == enums.MAX_SLOTS
    assert deck_size.dtype == np.int32 and seat_deck.dtype == np.int32
    assert seat_policy.dtype == np.int32 and seat_policy.shape == (n, p)
    assert table_id.dtype == np.int64 and deal.dtype == np.int64
    assert first_seat.dtype == np.int32 and profile.dtype == np.int64
    assert 0 <= seed < 2**64
    CALLS.append((n, threads))

    with np.errstate(over="ignore"):
        key = _mix(np.uint64(seed) + _G)
        key = _mix(key ^ (table_id.astype(np.uint64) * _G))
        key = _mix(key ^ (deal.astype(np.uint64) * _M1 + _M2))
        key = _mix(key ^ (first_seat.astype(np.uint64) * _M2 + _G))
        seat_key = _mix(key[:, None] ^ (np.arange(p, dtype=np.uint64)[None, :] + _M1))
        more = _mix(seat_key ^ _G)

    r = (key % np.uint64(1000)).astype(np.int64)
    draw = r < 20
    # The first seat wins a little more often: something for the seat tests to cancel.
    bonus = (r % 7 == 0)
    winner = np.where(bonus, first_seat, ((key >> np.uint64(20)) % np.uint64(p)).astype(np.int32)).astype(np.int8)
    winner[draw] = -1
    path = ((key >> np.uint64(40)) % np.uint64(4)).astype(np.int8)
    path[draw] = enums.PATH_DRAW

    size = deck_size[seat_deck].astype(np.uint64)  # [n, p]
    full = np.where(size >= 64, np.uint64(2**64 - 1),
                    (np.uint64(1) << np.minimum(size, np.uint64(63))) - np.uint64(1))
    drawn = seat_key & full
    opening = drawn & more
    played = drawn & (more >> np.uint64(3))
    seat = np.arange(p)[None, :]
    games, seats = new_records(n, p)
    games["winner_seat"] = winner
    games["path"] = path
    games["turns"] = 10 + (key >> np.uint64(8)) % np.uint64(60)
    seats["final_lp"] = np.where(seat == winner[:, None], 40, 0) + (seat_key % np.uint64(30))
    seats["uas_lost"] = (seat_key >> np.uint64(5)) % np.uint64(4)
    seats["petitions"] = (seat_key >> np.uint64(9)) % np.uint64(4)
    seats["scroll_pillars"] = (seat_key >> np.uint64(13)) % np.uint64(4)
    seats["mulligan"] = ((more >> np.uint64(17)) % np.uint64(5)) == 0
    seats["p2_right"] = (seat == ((first_seat[:, None] + 1) % p)) \
        & (((more >> np.uint64(21)) & np.uint64(1)) == 1)
    seats["opening_mask"] = opening
    seats["drawn_mask"] = drawn
    seats["played_mask"] = played
    return game_records(games, seats)


# ---------------------------------------------------------------------------- test helpers
# Shared by tests/test_runner*.py: which engine to run on, and decks to run.

#: The real engine when it is importable; the runner tests fall back to this fake only
#: while it is not, or when RNR_SIM_FAKE_ENGINE=1 (to test the runner alone).
REAL_ENGINE = (importlib.util.find_spec("rnr_sim.engine.driver") is not None
               and os.environ.get("RNR_SIM_FAKE_ENGINE") != "1")
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SAMPLE_CATALOG = REPO / "rnr_sim" / "data" / "foundation.toml"

_BOOTSTRAP = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import fake_engine, rnr_sim.engine
sys.modules["rnr_sim.engine.driver"] = fake_engine
rnr_sim.engine.driver = fake_engine
from rnr_sim.cli import main
sys.exit(main(sys.argv[1:]))
"""


def engine_driver():
    """The driver module the tests run on: the real one, else this fake."""
    if REAL_ENGINE:
        return importlib.import_module("rnr_sim.engine.driver")
    return sys.modules[__name__]


def cli_argv(*args: str) -> list[str]:
    """A subprocess command line running ``rnr-sim ARGS`` on the engine the tests use."""
    if REAL_ENGINE:
        return [sys.executable, "-m", "rnr_sim.cli", *args]
    return [sys.executable, "-c", _BOOTSTRAP, *args]


def sample_decks() -> list[Path]:
    """The shipped sample deck lists, or [] while there are none."""
    return sorted((REPO / "decks").glob("*.txt"))


def generated_deck_text(catalog, branch: str, name: str, policy: str | None) -> str:
    """A legal 60-card deck of ``catalog`` built around ``branch``: 3 UAs, 17 Pillars (one
    of each other Branch), 10 Rights, Attacks and Defenses, no Rares."""
    by: dict[tuple[str, str], list[str]] = {}
    for c in catalog.cards:
        if c.rarity != "rare":
            by.setdefault((c.type, c.branch), []).append(c.name)
    lines = [f"Name: {name}"] + ([f"Policy: {policy}"] if policy else [])
    count = 0

    def add(n: int, card: str) -> None:
        nonlocal count
        lines.append(f"{n} {card}")
        count += n

    def fill(pool: list[str], total: int, copies: int) -> None:
        left = total
        for card in pool:
            n = min(copies, left, 60 - count)
            if n <= 0:
                return
            add(n, card)
            left -= n

    uas = by.get(("ua", branch), []) + [u for b in enums.BRANCHES if b != branch
                                        for u in by.get(("ua", b), [])]
    for ua in uas[:3]:
        add(1, ua)
    for b in enums.BRANCHES:
        if b != branch:
            add(1, by[("pillar", b)][0])
    pillars = by[("pillar", branch)]
    fill(pillars, 14, 4)
    fill(by.get(("rights", branch), []), 10, 3)
    fill(by.get(("attack", branch), []), 18, 4)
    fill(by.get(("defense", branch), []), 14, 4)
    if count < 60:
        add(60 - count, pillars[0])
    return "\n".join(lines) + "\n"


def write_generated_decks(catalog, folder: Path) -> list[Path]:
    """Four legal decks, one per Branch, with a variety of ``Policy:`` headers."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for branch, policy in zip(enums.BRANCHES, ("aggro", None, "breaker", "petition"),
                              strict=True):
        path = folder / f"{branch}.txt"
        title = branch.replace("_", " ").title()
        path.write_text(generated_deck_text(catalog, branch, f"{title} Deck", policy),
                        encoding="utf-8")
        paths.append(path)
    return paths

