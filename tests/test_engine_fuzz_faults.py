"""Regression tests for the engine faults the fuzzer found (issue: fuzzing as a standing
check): each builds the smallest position or game that showed the fault and checks the rule
the engine must keep."""

from __future__ import annotations

import numpy as np
from engine_harness import Table, card, catalog_of, play_batch

from rnr_sim import enums
from rnr_sim.engine import game
from rnr_sim.engine import layout as L

INT32_MAX = 2**31 - 1


# ============================================================== more than 64 opposing Attacks
def test_opposing_attacks_past_64_leave_the_next_draw_pile_intact():
    """80 opposing Attacks in play (two opponents, 40 each): noting them for
    Attack-on-Attack once wrote past a 64-entry list into the next player's Draw Pile."""
    t = Table(players=3)
    for q in (1, 2):
        for _ in range(40):
            t.play_area(q, "Raider")
    t.draw_pile(1, *["Pillar"] * 10, "Wall")
    t.draw_pile(2, *["Big Pillar"] * 10)
    before = {q: t.draw_slots(q) for q in (1, 2)}
    n = game.note_threats(t.cards, t.w, t.memo, t.pl, t.sl, t.ls, t.gm, 0)
    assert n == 80
    assert {q: t.draw_slots(q) for q in (1, 2)} == before
    listed = {(q, int(t.ls[q, L.L_SCRATCH, j]))
              for q in (1, 2) for j in range(int(t.pl[q, L.P_N_AOA_TARGETS]))}
    assert listed == {(q, s) for q in (1, 2) for s in t.slots(q, "Raider")}
    assert t.invariant_violations() == 0


def test_attack_on_attack_can_target_an_attack_listed_past_64():
    """Amend. I §1: any opposing Attack in play is a target, however many there are. The
    only Attack seat 0 can beat is seat 2's last, the 81st listed."""
    t = Table([card("Brute", "attack", "liberty_bell", cost=1, damage=50),
               card("Titan", "attack", "liberty_bell", cost=1, damage=90)], players=3)
    for q in (1, 2):
        for _ in range(40):
            t.play_area(q, "Titan")
    weak = t.play_area(2, "Raider")
    (brute,) = t.hand(0, "Brute")
    t.set_ip(0, pillar=2)
    # Only the Raider fight leaves the Brute standing (48 left): worth most when what
    # survives counts far above the damage removed.
    t.set_policy(0, "aggro", aoa=1.0, attack=1e6)
    t.play_phase(0)
    (aoa,) = t.events("aoa")
    assert aoa[1] == 0 and aoa[3] == 2  # seat 0 declared on seat 2
    assert (int(t.sl[0, brute, L.S_TARGET_SEAT]), int(t.sl[0, brute, L.S_TARGET_SLOT])) == (2, weak)
    assert t.invariant_violations() == 0


def test_three_attack_decks_at_three_and_four_players_play_clean():
    """Full games: three or four decks of 42 Attacks (UAs that cannot fall, so the boards
    fill) keep every invariant, and a game's record does not depend on its batch."""
    cat = catalog_of([card("Rock UA", "ua", "liberty_bell", dp=1_000_000, drain=0)])
    deck = [cat.by_name[n] for n in ["Rock UA"] * 3 + ["Big Pillar"] * 15 + ["Raider"] * 42]
    for players in (3, 4):
        seat_deck = np.zeros((24, players), dtype=np.int32)
        whole = play_batch(cat.compile(), [deck], seat_deck, debug=True, seed=3)
        assert int(whole["violations"].sum()) == 0
        alone = play_batch(cat.compile(), [deck], seat_deck[5:9], deal=np.arange(5, 9),
                           debug=True, seed=3)
        for k in ("winner", "path", "turns", "lp", "drawn", "played"):
            assert np.array_equal(whole[k][5:9], alone[k]), k


# ============================================================== LP in 32 bits (R46)
def test_r46_healing_stops_at_the_top_of_lp():
    t = Table()
    t.set_lp(0, INT32_MAX - 10)
    t.apply_effect(0, "heal", 1_000_000)
    assert t.lp(0) == INT32_MAX and t.alive(0) and not t.over
    t.apply_effect(0, "heal", 1_000_000)  # again, at the top: no wrap to a negative LP
    assert t.lp(0) == INT32_MAX and t.alive(0) and not t.over



def test_r46_drain_stops_at_the_bottom_of_lp():
    """UA drain lands without change_lp (the drains are simultaneous, R24) and stops at
    LP_MIN as change_lp's losses do: two UAs draining 2,000,000,000 each (beyond any legal
    catalog, whose numbers stop at 1,000,000: set in the compiled table) leave the
    controller at -2,147,483,647 and lost, where int32 arithmetic wrapped it to +294,967,396
    and kept it alive."""
    t = Table(uas=None)
    t.uas(0, "UA", "Drain UA", "Drain UA")
    t.uas(1, "UA")
    t.cards[t.card_id("Drain UA"), enums.C_DRAIN] = 2_000_000_000
    t.drain_step(0)
    assert t.lp(0) == L.LP_MIN and t.over and t.winner == 1 and t.path == "life"

# ============================================================== Bill escalation (R28)
def test_r28_bill_cost_doubles_past_twenty_plays():
    t = Table([card("Free Act", "bill", "scroll", cost=0, effects=["draw 1"]),
               card("Dear Act", "bill", "scroll", cost=1_000_000, effects=["draw 1"])])
    (act,) = t.hand(0, "Act")
    (free,) = t.hand(0, "Free Act")
    (dear,) = t.hand(0, "Dear Act")
    t.set_bill_plays(0, act, 20)
    assert t.cost(0, act) == 2**20  # printed cost 1 x 2^20, not a cap at 2^30
    t.set_bill_plays(0, act, 40)
    assert t.cost(0, act) == 2**40
    t.set_bill_plays(0, free, 25)
    assert t.cost(0, free) == 0  # 0 x 2^k stays free
    t.set_bill_plays(0, dear, 50)
    assert t.cost(0, dear) == L.COST_MAX  # saturates, never wraps negative
    t.set_bill_plays(0, act, 100)
    assert t.cost(0, act) == L.COST_MAX


# ============================================================== a card seen without a draw
def test_a_recovered_card_counts_as_seen():
    """'Seen' is any route into the hand: a card milled, then recovered, is in drawn_mask."""
    t = Table()
    (s,) = t.discard_pile(0, "Costly")
    t.apply_effect(0, "recover", 1)
    assert t.zone(0, s) == "hand"
    assert int(t.masks[0, L.M_DRAWN]) >> s & 1 == 1


# ============================================================== turn limit at 3-4 players
def test_r45_turn_limit_counts_rounds_at_every_table():
    cat = catalog_of([])
    deck = [cat.by_name[n] for n in ["UA"] * 3 + ["Pillar"] * 57]
    for players in (2, 3, 4):
        seat_deck = np.zeros((4, players), dtype=np.int32)
        scaled = play_batch(cat.compile(), [deck], seat_deck, rules={"turn_limit": 8})
        assert set(scaled["turns"]) == {8 * players // 2} and set(scaled["winner"]) == {-1}
        flat = play_batch(cat.compile(), [deck], seat_deck,
                          rules={"turn_limit": 8, "turn_limit_scales": False})
        assert set(flat["turns"]) == {8}


def test_r45_four_players_reach_a_natural_deck_out_under_the_default_limit():
    cat = catalog_of([])
    deck = [cat.by_name[n] for n in ["UA"] * 3 + ["Pillar"] * 57]
    r = play_batch(cat.compile(), [deck], np.zeros((4, 4), dtype=np.int32))
    assert set(r["path"]) == {3}  # deck-out decides, not the turn limit
