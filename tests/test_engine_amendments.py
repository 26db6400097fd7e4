"""The Amendments (I-IX), one rule per test, each on a position built with
``engine_harness`` and named after its section."""

from __future__ import annotations

import pytest
from engine_harness import HAND_LIMIT, Table, card, catalog_of

from rnr_sim.cards import CatalogError

PASSIVE = 1e9  # a policy's stop weight that plays nothing
DECK = ["UA"] * 3 + ["Pillar"] * 20 + ["Filler"] * 37


def aoa_declared(t: Table, p: int = 0) -> int:
    return len([e for e in t.events("aoa") if e[1] == p])


# =========================================================================== Amendment I
def test_amend1_aoa_costs_plus_one():
    t = Table()
    raider = t.play_area(1, "Raider")
    (volley,) = t.hand(0, "Volley")  # cost 1
    t.set_ip(0, pillar=2)
    t.play_card(0, volley, aoa=(1, raider), pay=False)
    assert t.ip(0) == (0, 0) and aoa_declared(t) == 1


@pytest.mark.parametrize("ip,possible", [(1, False), (2, True)])
def test_amend1_s1_aoa_needs_the_extra_ip_available(ip, possible):
    """The random policy picks uniformly among the legal actions: over many seeds it
    declares Attack-on-Attack if and only if the cost + 1 is there."""
    declared = 0
    for seed in range(40):
        t = Table(policy="random", seed=seed)
        t.play_area(1, "Raider")
        t.hand(0, "Volley")
        t.set_ip(0, pillar=ip)
        t.play_phase()
        declared += aoa_declared(t)
    assert (declared > 0) is possible


def test_amend1_s1_only_attacks_declare_aoa():
    t = Table([card("Envoy", "freedom", cost=0, effects=["heal 1"],
                    kicker={"cost": 1, "effect": "draw 5"})])
    t.set_policy(0, ua_attack=0.0, kicker=10.0)  # rank: kicked Envoy > AoA Volley > the rest
    t.draw_pile(0, *["Filler"] * 12)
    raider = t.play_area(1, "Raider")
    volley, envoy = t.hand(0, "Volley", "Envoy")
    t.set_ip(0, pillar=2)  # the AoA is affordable (1 + 1), so it is a candidate
    t.play_phase()
    assert aoa_declared(t) == 0
    assert t.plays(0, "Envoy") == [1]  # 0 + the kicker's 1
    assert t.ip(0) == (1, 0)
    t.resolve_phase()
    assert t.zone(1, raider) == "play" and t.dp(1, raider) == 2


@pytest.mark.parametrize("mine,theirs", [(5, 2), (2, 5)])
def test_amend1_greater_survives_reduced(mine, theirs):
    t = Table()
    target = t.play_area(1, "Raider", dp=theirs)
    (attacker,) = t.hand(0, "Volley")
    t.play_card(0, attacker, aoa=(1, target))
    t.set_dp(0, attacker, mine)
    t.resolve_aoa()
    win_seat, win_slot, lose_seat, lose_slot = (
        (0, attacker, 1, target) if mine > theirs else (1, target, 0, attacker))
    assert t.zone(lose_seat, lose_slot) == "discard"
    assert t.zone(win_seat, win_slot) == "play"
    assert t.dp(win_seat, win_slot) == abs(mine - theirs)  # R17: reduced by the lesser


def test_amend1_equal_damage_destroys_both():
    t = Table()
    target = t.play_area(1, "Volley")
    (attacker,) = t.hand(0, "Volley")
    t.play_card(0, attacker, aoa=(1, target))
    t.resolve_aoa()
    assert (t.zone(0, attacker), t.zone(1, target)) == ("discard", "discard")


def test_amend1_s2_aoa_attacker_strikes_nothing_else_that_turn_r17():
    t = Table()
    target = t.play_area(1, "Raider")
    (attacker,) = t.hand(0, "Volley")
    t.play_card(0, attacker, aoa=(1, target))
    t.resolve_phase()
    assert [t.dp(1, s) for s in t.slots(1, "UA")] == [20, 20, 20]
    t.end_phase()
    t.attack_damage_step()  # its next Resolve Phase: 5 - 2 = 3 damage
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [17, 20, 20]


# =========================================================================== Amendment II
def test_amend2_defense_first():
    t = Table()
    wall = t.play_area(1, "Wall")
    t.play_area(0, "Volley")
    t.attack_damage_step()
    assert t.dp(1, wall) == 5
    assert [t.dp(1, s) for s in t.slots(1, "UA")] == [20, 20, 20]


def test_amend2_s2_without_defenses_attacks_hit_a_ua():
    t = Table()
    t.play_area(0, "Volley")
    t.attack_damage_step()
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [15, 20, 20]


def test_amend2_s3_attacks_never_touch_liberty_points():
    t = Table()
    t.play_area(1, "Wall", dp=1)
    t.set_dp(1, t.slots(1, "UA")[0], 1)
    t.play_area(0, "Volley")
    t.play_area(0, "Volley")
    t.attack_damage_step()
    assert t.uas_lost(1) == 1 and t.lp(1) == 100


def test_amend2_no_overflow():
    """§5: all of an Attack's damage goes to one target; what is left over is lost."""
    t = Table()
    small = t.play_area(1, "Wall", dp=3)
    other = t.play_area(1, "Wall", dp=3)
    t.play_area(0, "Volley")  # 5 damage
    t.attack_damage_step()
    assert sorted([t.zone(1, small), t.zone(1, other)]) == ["discard", "play"]
    assert 3 in (t.dp(1, small), t.dp(1, other))  # the other Wall untouched
    assert [t.dp(1, s) for s in t.slots(1, "UA")] == [20, 20, 20] and t.lp(1) == 100


def test_amend2_s4_attacker_chooses_the_defense_r33():
    t = Table()
    big = t.play_area(1, "Wall", dp=8)
    small = t.play_area(1, "Wall", dp=4)
    t.play_area(0, "Volley")  # 5: the attacker's choice is the Wall it can destroy
    t.attack_damage_step()
    assert (t.zone(1, small), t.dp(1, big)) == ("discard", 8)


# =========================================================================== Amendment III
def test_amend3_protect_stops_discard_not_exile():
    t = Table()
    t.hand(1, "Guarded Filler", "Filler", "Guarded Filler")
    t.apply_effect(0, "discard", 3)
    assert t.hand_cards(1) == ["Guarded Filler", "Guarded Filler"]
    t.draw_pile(1, "Filler", "Guarded Filler", "Guarded Filler")
    t.apply_effect(0, "exile", 2)
    assert t.draw_cards(1) == ["Filler"] and t.cards_in(1, "exile") == ["Guarded Filler"] * 2


def test_amend3_protect_does_not_stop_damage():
    t = Table([card("Shield", "defense", dp=4, keywords=["protect"])])
    shield = t.play_area(1, "Shield")
    t.play_area(0, "Volley")
    t.attack_damage_step()
    assert t.zone(1, shield) == "discard"


def test_amend3_own_effects_may_discard_own_protect_cards():
    t = Table()
    t.hand(0, *["Guarded Filler"] * (HAND_LIMIT + 2))
    t.hand_limit_step()
    assert t.n_hand(0) == HAND_LIMIT
    assert t.cards_in(0, "discard") == ["Guarded Filler"] * 2


# =========================================================================== Amendment IV
def test_amend4_drain_hits_controller():
    t = Table(uas="Drain UA")  # drain 2 each
    t.drain_step()
    assert (t.lp(0), t.lp(1)) == (94, 100)


def test_amend4_s2_each_ua_drains_once_per_resolve_phase():
    t = Table(uas="Drain UA")
    t.resolve_phase()
    assert [e[2] for e in t.events("drain")] == [t.card_id("Drain UA")] * 3
    assert t.lp(0) == 94


def test_amend4_s3_partial_damage_does_not_reduce_drain():
    t = Table(uas="Drain UA", rules={})
    t.set_dp(0, t.slots(0, "Drain UA")[0], 1)
    t.drain_step()
    assert t.lp(0) == 94


def test_amend4_destroyed_ua_does_not_drain():
    t = Table([card("Spite", "defense", dp=5, effects=["on destroy: strike ua 20"])],
              uas="Drain UA")
    t.play_area(1, "Spite")
    t.play_area(0, "Volley")
    t.resolve_phase()
    # Step iii: the Volley destroys Spite, whose strike destroys one of seat 0's UAs; at
    # step vii only the two left drain.
    assert t.uas_lost(0) == 1
    assert [e[2] for e in t.events("drain")] == [t.card_id("Drain UA")] * 2
    assert t.lp(0) == 100 - 2 * 2


# =========================================================================== Amendment V
def test_amend5_sideways_once_per_turn():
    t = Table()
    t.set_policy(0, stop=-1e9)  # would activate anything it may
    fort = t.play_area(0, "Fort", dp=2)
    t.set_ip(0, pillar=5)
    t.play_phase()
    assert len(t.events("activate")) == 1 and t.sideways(0, fort)
    assert t.ip(0) == (4, 0)


def test_amend5_s4_pillar_cannot_carry_an_activate_effect_r34():
    """Pillars are "not subject to effect activation" (Amend. V §4): the catalog refuses
    one, naming the card and the rule; an 'each turn' effect on a Pillar stays legal."""
    with pytest.raises(CatalogError, match=r"Granary.*Amend\. V §4"):
        catalog_of([card("Granary", "pillar", ip=1, effects=["activate 1: draw 1"])])
    catalog_of([card("Granary", "pillar", ip=1, effects=["each turn: draw 1"])])


# =========================================================================== Amendment VI
def test_amend6_other_ip_spent_first():
    t = Table()
    t.set_ip(0, pillar=3, other=2)
    t.pay(0, 3)
    assert t.ip(0) == (2, 0)
    t.set_ip(0, pillar=3, other=2)
    (wall,) = t.hand(0, "Wall")  # cost 1
    t.play_card(0, wall, pay=False)
    assert t.ip(0) == (3, 1)


def test_amend6_non_pillar_ip_is_its_own_pool_r12():
    t = Table([card("Mint", "pillar", ip=1, effects=["each turn: ip 1"])])
    t.pillar(0, "Pillar", "Mint")
    t.play_area(0, "Treaty")  # a Rights card: each turn: ip 1
    t.independence_phase()
    assert t.ip(0) == (3, 1)  # a Pillar's own 'each turn: ip' is Pillar IP


# =========================================================================== Amendment VII
def test_amend7_mulligan_once():
    t = Table(uas=None)
    t.set_policy(0, mulligan_min=8)  # no hand is ever good enough
    t.set_policy(1, mulligan_min=8)
    t.setup([DECK, DECK])
    assert [e[1] for e in t.events("mulligan")] == [0, 1]  # once each, the second hand final
    assert (t.mulliganed(0), t.mulliganed(1)) == (True, True)
    assert t.n_hand(0) == 7 and t.n_draw(0) == 50


def test_amend7_s4_keeping_is_allowed():
    t = Table(uas=None)
    t.set_policy(0, mulligan_min=0, mulligan_max=7)
    t.set_policy(1, mulligan_min=0, mulligan_max=7)
    t.setup([DECK, DECK])
    assert t.events("mulligan") == [] and not t.mulliganed(0)


def test_amend7_s5_players_mulligan_independently():
    t = Table(uas=None)
    t.set_policy(0, mulligan_min=8)
    t.set_policy(1, mulligan_min=0, mulligan_max=7)
    t.setup([DECK, DECK])
    assert (t.mulliganed(0), t.mulliganed(1)) == (True, False)


# =========================================================================== Amendment VIII
def test_amend8_p2_right_draws_two():
    t = Table(uas=None)
    t.set_policy(0, stop=PASSIVE)
    t.set_policy(1, stop=PASSIVE)
    t.setup([DECK, DECK], first=0)
    assert t.took_p2_right(1) and not t.took_p2_right(0)
    assert (t.n_pillars(1), t.n_hand(1), t.n_draw(1)) == (1, 6, 50)
    t.play_turns(2)
    assert [e[1] for e in t.events("draw")] == [0, 1, 1]
    assert t.draws_next(1) == 1  # only the first Draw Phase


def test_amend8_right_is_voluntary():
    t = Table(uas=None)
    t.set_policy(1, p2_right=0)
    t.setup([DECK, DECK], first=0)
    assert not t.took_p2_right(1) and t.n_pillars(1) == 0 and t.n_hand(1) == 7
    assert t.draws_next(1) == 1


def test_amend8_only_the_second_seat_r7():
    t = Table(uas=None)
    t.setup([DECK] * 4, first=2)
    assert [t.took_p2_right(q) for q in range(4)] == [False, False, False, True]


# =========================================================================== Amendment IX
@pytest.mark.parametrize("active", [0, 1])
def test_amend9_active_player_wins_ties(active):
    t = Table(uas="Drain UA", rules={"ua_drain_when": "every_turn"})
    t.set_active(active)
    t.set_lp(0, 5)
    t.set_lp(1, 5)
    t.drain_step()  # both fall to -1 at once
    assert (t.over, t.winner, t.path) == (True, active, "life")


@pytest.mark.parametrize("active", [0, 1])
def test_amend9_active_player_wins_simultaneous_petitions(active):
    t = Table()
    t.set_active(active)
    for q in (0, 1):
        t.pillar(q, "Scroll Pillar", "Scroll Pillar", "Scroll Pillar")
        t.petition(q, "Petition", "Petition", "Petition")
    t.petition_check()
    assert (t.winner, t.path) == (active, "petition")


@pytest.mark.parametrize("active", [0, 1])
@pytest.mark.parametrize("timing", ["at_once", "by_step"])
def test_amend9_simultaneous_on_destroy_effects_fire_the_active_players_first(active, timing):
    """An equal Attack-on-Attack destroys both Attacks at once (Amend. I §4), and each holds
    'on destroy: strike ua 5' while both players are on their last UA (2 DP): the two
    effects are released together, and the active player's fires first (Amend. IX), so the
    active player destroys the last UA and wins, whichever seat it is; its opponent's
    effect never fires. The same when the effects wait for step iii (R47 ``by_step``)."""
    t = Table([card("Martyr", "attack", "liberty_bell", cost=0, damage=3,
                    effects=["on destroy: strike ua 5"])],
              uas=None, rules={"on_destroy_timing": timing})
    for q in (0, 1):
        t.ua(q, "UA", dp=2)
        t.set_uas_lost(q, 2)
    other = 1 - active
    theirs = t.play_area(other, "Martyr")
    (mine,) = t.hand(active, "Martyr")
    t.set_active(active)
    t.play_card(active, mine, aoa=(other, theirs))
    t.resolve_phase()
    assert (t.over, t.winner, t.path) == (True, active, "attack")
    assert [e[1] for e in t.events("destroy")] == [other, active, other]  # two Martyrs, a UA


def test_amend9_no_instant_responses():
    """Seat 1 is struck on seat 0's turn while it holds IP, cards and a damaged Fort whose
    'activate 1: repair 3' would answer the blow: it may not act until its own turn (its
    'on destroy' effects, R36, are the only thing of seat 1's that fires on seat 0's
    turn). Then, on its own turn, it does repair."""
    t = Table()
    t.set_policy(1, stop=-1e9)  # would play and activate anything, given the chance
    t.hand(1, "Jab", "Pillar", "Volley")
    t.set_ip(1, pillar=10)
    fort = t.play_area(1, "Fort", dp=9)
    t.draw_pile(0, "Filler", "Filler")
    t.draw_pile(1, "Filler")
    t.play_area(0, "Volley")
    t.set_policy(0, stop=1e9)
    t.take_turn(0)
    assert [e for e in t.events("play", "activate", "aoa", "repair") if e[1] == 1] == []
    assert t.n_hand(1) == 3 and t.dp(1, fort) == 4 and not t.sideways(1, fort)
    t.pillar(1, "Big Pillar", "Big Pillar")  # 6 IP in its own Independence Phase
    t.take_turn(1)
    assert [e for e in t.events("activate") if e[1] == 1] != []
