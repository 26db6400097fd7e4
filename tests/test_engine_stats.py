"""The engine against exact mathematics: opening hands are hypergeometric (Art. VII §1,
Amend. VII), and a deck that can never win otherwise decks out on the very turn the
arithmetic of Art. VI §1, R8 and Amend. VIII gives. Tolerances come from the sample size
(chi-square p-values computed with ``math`` only, and per-cell binomial bounds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from engine_harness import (
    OPENING_HAND,
    catalog_of,
    chi2_sf,
    chi_square,
    count_slots,
    hypergeometric,
    play_batch,
    policy_row,
)

DEALS = 100_000
ALPHA = 1e-4  # the chance a sound engine fails a test; the seed is fixed, so it never flaps
Z = 5.0  # per-cell bound, in binomial standard deviations
PILLARS = 17  # Pillars among the 57 shuffled cards
SHUFFLED = 57  # R1: 60 cards, 3 UAs placed


@pytest.fixture(scope="module")
def opening_catalog():
    return catalog_of([])


def opening_hands(catalog, policy: np.ndarray, deals: int, seed: int) -> np.ndarray:
    """Pillars in each opening hand: int64[deals, 2], one column per seat."""
    deck = [catalog.by_name[n] for n in ["UA"] * 3 + ["Pillar"] * PILLARS
            + ["Filler"] * (SHUFFLED - PILLARS)]
    r = play_batch(catalog.compile(), [deck], np.zeros((deals, 2), dtype=np.int32),
                   policies=policy[None, :], rules={"turn_limit": 1}, seed=seed)
    return count_slots(r["opening"], range(3, 3 + PILLARS)), r["mulligan"]


def check_distribution(counts: np.ndarray, expected: list[float]) -> None:
    n = counts.size
    observed = np.bincount(counts.ravel(), minlength=len(expected))[: len(expected)]
    assert observed.sum() == n
    for k, (o, p) in enumerate(zip(observed, expected, strict=True)):
        sd = math.sqrt(n * p * (1 - p))
        assert abs(o - n * p) <= Z * sd + 1, f"{k} Pillars: {o} seen, {n * p:.1f} expected"
    stat, df, p_value = chi_square(list(observed), [n * p for p in expected])
    assert p_value > ALPHA, f"chi-square {stat:.1f} on {df} df, p = {p_value:.2e}"


def test_chi2_sf_matches_known_values():
    # Critical values of the chi-square distribution (any table).
    for x, df, p in [(3.841459, 1, 0.05), (9.487729, 4, 0.05), (16.918978, 9, 0.05),
                     (13.276704, 4, 0.01), (0.710723, 4, 0.95), (23.209251, 10, 0.01)]:
        assert chi2_sf(x, df) == pytest.approx(p, abs=1e-6)


def test_hypergeometric_sums_to_one():
    h = hypergeometric(SHUFFLED, PILLARS, OPENING_HAND)
    assert sum(h) == pytest.approx(1.0, abs=1e-12)
    assert h[2] == math.comb(17, 2) * math.comb(40, 5) / math.comb(57, 7)


def test_art7_s1_opening_hand_is_hypergeometric(opening_catalog):
    no_mulligan = policy_row("balanced", mulligan_min=0, mulligan_max=7)
    pillars, mulligan = opening_hands(opening_catalog, no_mulligan, DEALS, seed=11)
    assert not mulligan.any()
    check_distribution(pillars, hypergeometric(SHUFFLED, PILLARS, OPENING_HAND))


def test_amend7_one_final_mulligan_gives_the_exact_mixture(opening_catalog):
    """Keep 2..5 Pillars, else mulligan once and keep whatever comes (Amend. VII §3):
    P(k) = h(k)·[2 <= k <= 5] + (1 - H)·h(k), with H = P(2 <= k <= 5)."""
    lo, hi = 2, 5
    h = hypergeometric(SHUFFLED, PILLARS, OPENING_HAND)
    keep = sum(h[lo:hi + 1])
    expected = [(h[k] if lo <= k <= hi else 0.0) + (1 - keep) * h[k] for k in range(len(h))]
    policy = policy_row("balanced", mulligan_min=lo, mulligan_max=hi)
    pillars, mulligan = opening_hands(opening_catalog, policy, DEALS // 2, seed=12)
    check_distribution(pillars, expected)
    n = mulligan.size
    assert abs(mulligan.sum() - n * (1 - keep)) <= Z * math.sqrt(n * keep * (1 - keep))


def deck_out_turn(first_draws: bool, p2_right: bool) -> tuple[int, int]:
    """(turns played, winner relative to the first seat) of two decks that can do nothing
    but draw: 50 cards each in the Draw Pile after setup (Art. VI §1). The first seat draws
    on its turn 1 if R8 says so; the second draws 2 on its first turn after the right
    (Amend. VIII). A seat loses on its first turn that finds the pile empty (Art. III §4)."""
    pile = 50
    first_loses_on = pile + 1 + (0 if first_draws else 1)  # its own turn number
    second_loses_on = pile + 1 - (1 if p2_right else 0)
    first_index = 2 * (first_loses_on - 1)  # turns counted over both seats, from 0
    second_index = 2 * (second_loses_on - 1) + 1
    if second_index < first_index:
        return second_index + 1, 0
    return first_index + 1, 1


@pytest.mark.parametrize("first_draws", [True, False])
@pytest.mark.parametrize("p2_right", ["any", "off"])
def test_art3_s4_deck_out_on_the_exact_turn(first_draws, p2_right):
    cat = catalog_of([])
    deck = [cat.by_name[n] for n in ["UA"] * 3 + ["Pillar"] * 57]  # no card does anything
    n = 40
    first = (np.arange(n) % 2).astype(np.int32)
    r = play_batch(cat.compile(), [deck], np.zeros((n, 2), dtype=np.int32), first_seat=first,
                   rules={"first_player_draws": first_draws, "p2_free_pillar": p2_right})
    turns, winner_from_first = deck_out_turn(first_draws, p2_right == "any")
    assert set(r["path"].tolist()) == {3}  # deck_out, every game
    assert set(r["turns"].tolist()) == {turns}
    assert np.array_equal(r["winner"], (first + winner_from_first) % 2)
    assert np.array_equal(r["p2_right"][np.arange(n), (first + 1) % 2], np.full(n, p2_right == "any"))
