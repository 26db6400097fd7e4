"""Heuristic players pursue their paths (issue 3): measured on the sample decks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rnr_sim.cards import load_catalog
from rnr_sim.decks import load_deck
from rnr_sim.engine import driver
from rnr_sim.enums import MAX_SLOTS, PATHS
from rnr_sim.rules import default_profile

DECKS = sorted(Path(__file__).parent.parent.glob("decks/*.txt"))
POLICY_PATH = {"aggro": "life", "mill": "deck_out", "breaker": "attack", "petition": "petition"}


@pytest.fixture(scope="module")
def sample():
    if not DECKS:
        pytest.skip("no sample decks")
    catalog = load_catalog()
    decks = [load_deck(p, catalog) for p in DECKS]
    deck_cards = np.full((len(decks), MAX_SLOTS), -1, dtype=np.int32)
    for i, d in enumerate(decks):
        deck_cards[i, : len(d.card_ids)] = d.card_ids
    sizes = np.array([len(d.card_ids) for d in decks], dtype=np.int32)
    return catalog.compile(), decks, deck_cards, sizes


def round_robin(sample, deals: int, policy_of):
    """Every pair of sample decks, ``deals`` deals each, both seat orders."""
    cards, decks, deck_cards, sizes = sample
    pairs = [(a, b) for a in range(len(decks)) for b in range(a + 1, len(decks))]
    seat_deck = np.array([(a, b) for a, b in pairs for _ in range(deals) for _ in range(2)],
                         dtype=np.int32)
    table = np.repeat(np.arange(len(pairs)), deals * 2)
    deal = np.tile(np.repeat(np.arange(deals), 2), len(pairs))
    first = np.tile([0, 1], len(pairs) * deals).astype(np.int32)
    seat_policy = np.vectorize(policy_of)(seat_deck).astype(np.int32)
    rec = driver.play_games(cards, deck_cards, sizes, seat_deck, seat_policy, table, deal, first,
                            default_profile().compile(), seed=11)
    return seat_deck, rec


def built_in_of(deck) -> str:
    """The built-in a deck's pilot builds on: its ``Policy:`` header, or that file's base."""
    from rnr_sim.pilots import load_policy

    return load_policy(deck.policy or "balanced", relative_to=Path(deck.path).parent).base


def test_each_focused_policy_wins_mostly_by_its_path(sample):
    _, decks, _, _ = sample
    own = [driver.policy_index(built_in_of(d)) for d in decks]
    seat_deck, rec = round_robin(sample, 60, lambda d: own[d])
    won = rec.winner_seat >= 0
    winner_deck = seat_deck[np.arange(len(seat_deck)), np.maximum(rec.winner_seat, 0)]
    checked = 0
    for i, d in enumerate(decks):
        path = POLICY_PATH.get(built_in_of(d))
        if path is None:
            continue
        mine = won & (winner_deck == i)
        share = np.mean(rec.path[mine] == PATHS.index(path))
        # 60 deals x 2 seats x 8 opponents: over 300 wins; a majority is far outside noise.
        assert mine.sum() > 100 and share > 0.5, f"{d.name} ({built_in_of(d)}): {share:.2f} by {path}"
        checked += 1
    assert checked >= 4


def test_heuristic_players_beat_the_random_floor(sample):
    _, decks, _, _ = sample
    own = [driver.policy_index(built_in_of(d)) for d in decks]
    rnd = driver.policy_index("random")
    # Seat 0 of every pair plays its own policy, seat 1 plays at random.
    seat_deck, rec = round_robin(sample, 30, lambda d: own[d])
    seat_policy = np.stack([np.array(own)[seat_deck[:, 0]], np.full(len(seat_deck), rnd)], axis=1)
    cards, _, deck_cards, sizes = sample
    n = len(seat_deck)
    rec = driver.play_games(cards, deck_cards, sizes, seat_deck, seat_policy,
                            np.repeat(np.arange(n // 60), 60), np.arange(n) // 2,
                            (np.arange(n) % 2).astype(np.int32), default_profile().compile(),
                            seed=12)
    heuristic_wins = np.mean(rec.winner_seat == 0)
    # 2,160 games: a 95% interval is about +-2 points; random play should lose badly.
    assert heuristic_wins > 0.7, heuristic_wins
