"""The pilots' choices (``engine/decisions.py``), one decision a test: each builds the
position a replay showed a misplay in and checks what the pilot does now. A value reads
the state its action acts on (what is damaged, what the Discard Pile holds, what the IP
can still buy, how deep the opponent's pile is, whether the action wins now); policies
stay data, so the same procedure plays every built-in and every policy file."""

from __future__ import annotations

import numpy as np
import pytest
from engine_harness import Table, card

from rnr_sim import enums
from rnr_sim.engine import decisions as D
from rnr_sim.engine import layout as L

MILL_CARDS = [
    card("Midnight Ride", "rights", "eagle", cost=1, effects=["force draw 3"]),
    card("Millstone", "rights", "eagle", cost=1, effects=["mill 3"]),
]


def aoa_declared(t: Table) -> int:
    return len(t.events("aoa"))


# ------------------------------------------------------------------------ force draw
def test_force_draw_is_held_while_the_opponents_pile_is_deep():
    """Eagle Blockade's misplay: ``force draw 3`` into a 45-card pile hands over 3 cards
    for a pile 3 thinner; the mill pilot mills instead and keeps the Ride."""
    t = Table(MILL_CARDS, policy="mill")
    t.draw_pile(1, *["Filler"] * 45)
    t.hand(0, "Midnight Ride", "Millstone")
    t.set_ip(0, pillar=2)
    t.play_phase()
    assert t.plays(0, "Millstone") == [1]
    assert t.plays(0, "Midnight Ride") == []


@pytest.mark.parametrize("pile", [2, 8])
def test_force_draw_is_played_when_the_pile_is_nearly_out(pile):
    """Two cards left: three forced draws deck the opponent (Art. III §4); eight left: the
    race is close enough that the cards handed over no longer outweigh the thinner pile."""
    t = Table(MILL_CARDS, policy="mill")
    t.draw_pile(1, *["Filler"] * pile)
    t.hand(0, "Midnight Ride")
    t.set_ip(0, pillar=1)
    t.play_phase()
    assert t.plays(0, "Midnight Ride") == [1]


# ------------------------------------------------------------------- repair, recover
@pytest.mark.parametrize("damaged,activated", [(False, False), (True, True)])
def test_repair_is_activated_only_when_something_is_damaged(damaged, activated):
    t = Table()
    fort = t.play_area(0, "Fort", dp=5 if damaged else 10)
    t.set_ip(0, pillar=1)
    t.play_phase()
    assert t.sideways(0, fort) is activated


def test_a_second_repair_of_one_dent_is_not_activated():
    """Two Forts, one Wall missing 3 DP: the first repair (3) queued for step vi covers it,
    so the second Fort stays upright (a replay showed Lafayette's kicker and a Garrison
    both repairing one dent)."""
    t = Table()
    t.play_area(0, "Wall", dp=7)
    forts = [t.play_area(0, "Fort"), t.play_area(0, "Fort")]
    t.set_ip(0, pillar=2)
    t.play_phase()
    assert sum(t.sideways(0, f) for f in forts) == 1
    t.resolve_phase()
    assert t.cards_in(0, "play").count("Wall") == 1


@pytest.mark.parametrize("discard,played", [((), False), (("Costly",), True)])
def test_recover_is_played_only_with_a_card_to_recover(discard, played):
    t = Table([card("Reclaim", "rights", cost=0, effects=["recover 1"])])
    t.discard_pile(0, *discard)
    t.hand(0, "Reclaim")
    t.play_phase()
    assert (t.plays(0, "Reclaim") == [0]) is played


def test_recover_counts_no_ua_in_the_discard_pile_r44():
    t = Table([card("Reclaim", "rights", cost=0, effects=["recover 1"])])
    t.discard_pile(0, "UA")
    t.hand(0, "Reclaim")
    t.play_phase()
    assert t.plays(0, "Reclaim") == []


# ------------------------------------------------------------------------------ IP
WINDFALL = [card("Windfall", "rights", cost=0, effects=["ip 2"])]


def test_ip_with_nothing_to_spend_it_on_is_not_taken():
    t = Table(WINDFALL)
    t.hand(0, "Windfall", "Filler")
    t.set_ip(0, pillar=1)
    t.play_phase()
    assert t.plays(0, "Windfall") == []


def test_ip_that_pays_for_a_card_in_hand_is_taken_then_spent_r32():
    t = Table(WINDFALL)
    t.hand(0, "Windfall", "Costly")
    t.set_ip(0, pillar=1)  # Costly takes 3: only with the Windfall's 2
    t.play_phase()
    assert t.plays(0, "Windfall") == [0] and t.plays(0, "Costly") == [3]


def test_ip_arriving_after_the_play_phase_is_worth_nothing_r32_off():
    t = Table(WINDFALL, rules={"ip_effects_immediate": False})
    t.hand(0, "Windfall", "Costly")
    t.set_ip(0, pillar=1)
    t.play_phase()
    assert t.plays(0, "Windfall") == []


# --------------------------------------------------------------------------- Pillars
def test_a_free_pillar_is_played_past_the_pillar_target():
    """Pillars used to stop at the target (8): more IP still pays for Bills and kickers."""
    t = Table()
    t.pillar(0, *["Pillar"] * 9)
    t.hand(0, "Pillar")
    t.play_phase()
    assert t.plays(0, "Pillar") == [0] and t.n_pillars(0) == 10


HERALDS = [card("Herald Pillar", "pillar", ip=2, effects=["draw 3"]),
           card("Grand Herald", "pillar", ip=1, effects=["draw 6"])]


def p2_choice(t: Table) -> str | None:
    s = int(D.choose_p2_pillar(t.cards, t.w, t.pl, t.sl, t.ls, t.gm, t.rng, 1, False))
    return None if s < 0 else t.name_of(int(t.sl[1, s, L.S_CARD]))


def test_p2_right_places_the_plain_pillar_and_keeps_the_effect_pillar_r41():
    """A placed Pillar's on-resolve effect is lost (R41): the pilot places the plain
    Pillar, though the Herald gives more IP, and plays the Herald later for its draws."""
    t = Table(HERALDS)
    t.draw_pile(1, *["Filler"] * 40)
    t.hand(1, "Herald Pillar", "Pillar", "Filler")
    assert p2_choice(t) == "Pillar"


def test_p2_right_is_declined_when_placing_would_lose_more_than_it_gives():
    t = Table(HERALDS)
    t.draw_pile(1, *["Filler"] * 40)
    t.hand(1, "Grand Herald", "Filler")
    assert p2_choice(t) is None
    t.set_policy(1, p2_right=0)
    t.hand(1, "Pillar")
    assert p2_choice(t) is None  # the weight still switches the right off


def test_p2_right_random_pilot_sometimes_declines():
    taken = set()
    for seed in range(40):
        t = Table(HERALDS, policy="random", seed=seed)
        t.hand(1, "Herald Pillar", "Pillar")
        taken.add(p2_choice(t))
    assert taken == {None, "Herald Pillar", "Pillar"}


# ---------------------------------------------------------------- Attack-on-Attack
@pytest.mark.parametrize("aoa,declared", [(2.0, 1), (0.5, 0)])
def test_aoa_even_trade_is_weighed_not_refused(aoa, declared):
    """Volley against Volley: both are destroyed (Amend. I §4). The pilot used to refuse
    every fight it did not win; now the trade is worth the damage it removes (``aoa``)."""
    t = Table()
    t.play_area(1, "Volley")
    t.hand(0, "Volley")
    t.set_policy(0, aoa=aoa)
    t.set_ip(0, pillar=2)
    t.play_phase()
    assert aoa_declared(t) == declared


def test_aoa_blocks_a_bigger_attack():
    """A Raider (2) against a Cannon (8): the Raider is lost, the Cannon keeps 6; a pilot
    that values defence (``aoa`` over ``attack``) takes 2 damage a turn off the threat."""
    t = Table([card("Cannon", "attack", "liberty_bell", cost=3, damage=8)])
    cannon = t.play_area(1, "Cannon")
    t.hand(0, "Raider")
    t.set_policy(0, aoa=2.0)
    t.set_ip(0, pillar=2)
    t.play_phase()
    assert aoa_declared(t) == 1
    t.resolve_aoa()
    assert t.dp(1, cannon) == 6


# ------------------------------------------------------------------------ wins first
def test_the_third_petition_is_played_before_a_bigger_play():
    """Art. III §3: with two Petitions and three Scroll Pillars, a third Petition wins at
    step v; the pilot plays it before the 10-damage card it values more otherwise."""
    t = Table([card("Dear Petition", "rights", "scroll", cost=2, keywords=["petition"])])
    t.petition(0, "Petition", "Petition")
    t.pillar(0, "Scroll Pillar", "Scroll Pillar", "Scroll Pillar")
    t.hand(0, "Costly", "Dear Petition")
    t.set_ip(0, pillar=3)
    t.play_phase()
    assert t.plays(0, "Dear Petition") == [2] and t.plays(0, "Costly") == []


def test_the_strike_at_the_last_ua_is_played_before_a_bigger_play():
    """Art. III §2: the opponent's last UA has 4 DP and no Defense covers it: the Lancer
    (4) wins at step iii, so it goes before the 30-damage card."""
    t = Table([card("Bomb", "rights", cost=3, effects=["lp 30"])], uas=None)
    t.uas(1, "UA", dp=4)
    t.pl[1, L.P_UAS_LOST] = 2  # two of three already destroyed
    t.pl[1, L.P_N_UAS] = 3
    t.hand(0, "Bomb", "Lancer")
    t.set_ip(0, pillar=3)
    t.play_phase()
    assert t.plays(0, "Lancer") == [1] and t.plays(0, "Bomb") == []


# ------------------------------------------------------------------------- targets
def test_strike_spares_the_ua_that_heals_its_controller_when_destroyed():
    t = Table([card("Martyr", "ua", "liberty_bell", dp=4, drain=0,
                    effects=["on destroy: heal 6"])], uas=None)
    martyr = t.ua(1, "Martyr")
    plain = t.ua(1, "UA", dp=4)
    t.apply_effect(0, "strike", 5)
    assert t.zone(1, plain) == "discard" and t.zone(1, martyr) == "ua"


def test_random_pilot_strikes_any_ua_alike():
    hit = set()
    for seed in range(30):
        t = Table(policy="random", seed=seed, uas=None)
        slots = [t.ua(1, "UA", dp=dp) for dp in (20, 10, 15)]
        t.apply_effect(0, "strike", 3)
        hit |= {s for s, dp in zip(slots, (20, 10, 15), strict=True) if t.dp(1, s) == dp - 3}
    assert len(hit) == 3


def test_random_pilot_aims_at_any_opponent_alike():
    hit = set()
    for seed in range(30):
        t = Table(policy="random", seed=seed, players=3)
        t.set_lp(2, 50)  # the heuristic would always pick seat 2
        t.apply_effect(0, "lp", 3)
        hit |= {q for q in (1, 2) if t.lp(q) in (97, 47)}
    assert hit == {1, 2}


# ------------------------------------------------------------------ futile actions
def test_a_pilot_that_plays_everything_still_pays_for_nothing_futile():
    """A stop threshold below 0 (tuned pilots have them: play even marginal cards) still
    never pays for an action that would do nothing: a repair with nothing damaged, a
    recover into an empty Discard Pile, IP with nothing to spend it on."""
    t = Table([card("Reclaim", "rights", cost=0, effects=["recover 1"]), *WINDFALL])
    t.set_policy(0, stop=-5.0)
    fort = t.play_area(0, "Fort")
    t.hand(0, "Reclaim", "Windfall")
    t.set_ip(0, pillar=1)
    t.play_phase()
    assert not t.sideways(0, fort)
    assert t.plays(0, "Reclaim") == [] and t.plays(0, "Windfall") == []


def test_a_futile_kicker_is_not_paid_for():
    t = Table([card("Medic", "freedom", cost=0, rarity="rare", effects=["lp 3"],
                    kicker={"cost": 1, "effect": "repair 4"})])
    t.set_policy(0, stop=-5.0)
    t.hand(0, "Medic")
    t.set_ip(0, pillar=1)
    t.play_phase()
    assert t.plays(0, "Medic") == [0]  # played plain: nothing is damaged


# ------------------------------------------------------------------ noted card values
HEAL_CARDS = [
    card("Homestead", "rights", "bison", cost=0, effects=["heal per pillar 1"]),
    card("Field Hospital", "rights", "bison", cost=0, effects=["heal 5"]),
    card("Town Crier", "rights", "bison", cost=0, effects=["draw 1"]),
]


def test_a_pillar_played_forgets_a_heals_noted_value():
    """Fuzz seed 67 (2 players, game 2): with a ``heal per pillar 1`` queued, what a
    ``heal 5`` can still do shrinks by one LP with each Pillar played; its value, noted
    before the Pillar, went stale (debug mode counted it as a broken invariant). A heal's
    value reads the Pillars (``VERB_TABLE``), so a played Pillar forgets it; a card whose
    value reads neither Pillars nor Petitions keeps its noted value."""
    t = Table(HEAL_CARDS)
    (s,) = t.hand(0, "Field Hospital")
    (kept,) = t.hand(0, "Town Crier")
    t.memo[0, D.PM_VALUE0 + s] = 0.9
    t.memo[0, D.PM_VALUE0 + kept] = 0.7
    t.memo[0, D.PM_QUEUED0 + enums.V_HEAL_PER_PILLAR] = 1.0
    D.forget_pillar_values(t.cards, t.pl, t.sl, t.ls, t.memo, 0)
    assert np.isnan(t.memo[0, D.PM_VALUE0 + s])
    assert t.memo[0, D.PM_VALUE0 + kept] == 0.7


def test_an_effect_queued_forgets_the_noted_values_that_read_the_queue():
    """A ``heal 5`` is worth no more than the LP still missing after the heals queued
    (``effect_value``): a chosen heal forgets the noted value of another heal in hand
    (``CF_VALUE_READS_QUEUE``), not that of a draw."""
    t = Table(HEAL_CARDS)
    (s,) = t.hand(0, "Field Hospital")
    (kept,) = t.hand(0, "Town Crier")
    t.memo[0, D.PM_VALUE0 + s] = 0.9
    t.memo[0, D.PM_VALUE0 + kept] = 0.7
    D.forget_queue_values(t.cards, t.memo, t.sl, t.ls, t.pl, 0)
    assert np.isnan(t.memo[0, D.PM_VALUE0 + s])
    assert t.memo[0, D.PM_VALUE0 + kept] == 0.7
