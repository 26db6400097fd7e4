"""The Articles of the Constitution (II-VII), one rule per test, each on a position built
with ``engine_harness`` and named after its section. Article V (deck construction) is
checked by ``validate_deck`` in test_decks_art5.py and test_engine_switches.py."""

from __future__ import annotations

import pytest
from engine_harness import (
    HAND_LIMIT,
    STARTING_LP,
    STEP_DAMAGE,
    Table,
    card,
    catalog_of,
)

from rnr_sim import enums
from rnr_sim.cards import DEFAULT_CATALOG, CatalogError, load_catalog, parse_catalog

PASSIVE = 1e9  # a policy's stop weight that plays nothing


def sixty(*parts: tuple[int, str]) -> list[str]:
    deck = [name for n, name in parts for _ in range(n)]
    assert len(deck) == 60
    return deck


SIMPLE_DECK = sixty((3, "UA"), (20, "Pillar"), (37, "Filler"))


# =========================================================================== Article II
def test_art2_s1_players_start_with_100_lp():
    t = Table(uas=None)
    t.setup([SIMPLE_DECK, SIMPLE_DECK])
    assert [t.lp(0), t.lp(1)] == [STARTING_LP, STARTING_LP] == [100, 100]


def test_art2_s1_lp_zero_loses_at_once():
    t = Table()
    t.set_lp(1, 3)
    jab1, jab2 = t.hand(0, "Jab", "Jab")
    t.play_card(0, jab1)
    t.play_card(0, jab2)
    t.resolve_phase()
    assert (t.over, t.winner, t.path, t.rule) == (True, 0, "life", "lp_zero")
    assert t.lp(1) == 0  # exactly zero loses
    # The game ended the moment LP hit 0: the second Jab never resolved.
    assert len(t.events("lp")) == 1


def test_art2_s1_lp_checked_outside_the_resolve_phase():
    t = Table()
    t.set_lp(1, 5)
    t.apply_effect(0, "lp", 7)  # no phase around it: the check is continuous
    assert (t.over, t.winner, t.path) == (True, 0, "life")


def test_art2_s2_cannot_play_above_the_ip_available():
    t = Table()
    t.set_policy(0, stop=-1e9)  # wants to play anything it may
    (costly,) = t.hand(0, "Costly")  # cost 3
    t.set_ip(0, pillar=2)
    t.play_phase()
    assert t.zone(0, costly) == "hand"
    t.set_ip(0, pillar=3)
    t.play_phase()
    assert t.zone(0, costly) == "play"
    assert t.ip(0) == (0, 0)


def test_art2_s2_unspent_ip_is_lost_at_end_of_turn():
    t = Table()
    t.pillar(0, "Pillar", "Pillar")
    t.set_ip(0, pillar=3, other=2)
    t.end_phase()
    assert t.ip(0) == (0, 0)
    t.set_ip(0, pillar=3, other=2)
    t.independence_phase()  # the pool is the Pillars' output, nothing carried forward
    assert t.ip(0) == (2, 0)


def test_art2_s3_damage_reduces_dp_and_zero_destroys():
    t = Table()
    wall = t.play_area(1, "Wall")
    t.deal_damage(1, wall, 4)
    assert (t.dp(1, wall), t.zone(1, wall)) == (6, "play")
    t.deal_damage(1, wall, 6)
    assert t.zone(1, wall) == "discard"  # its controller's Discard Pile
    assert "Wall" in t.cards_in(1, "discard")


def test_art2_s4_only_declared_petitions_enter_the_petition_area():
    t = Table()
    pet, filler = t.hand(0, "Petition", "Filler")
    t.play_card(0, pet)
    t.play_card(0, filler)
    t.resolve_phase()
    assert t.zone(0, pet) == "petition" and t.n_petitions(0) == 1
    assert t.zone(0, filler) == "discard"


# =========================================================================== Article III
def test_art3_s1_life_victory_goes_to_the_active_player():
    t = Table()
    t.set_lp(1, 5)
    (ko,) = t.hand(0, "Knockout")
    t.play_card(0, ko)
    t.resolve_phase()
    assert (t.winner, t.path, t.rule) == (0, "life", "lp_zero")


def test_art3_s2_third_ua_destroyed_wins_attack():
    t = Table()
    ua1, ua2, ua3 = t.slots(1, "UA")
    t.destroy(1, ua1)
    t.destroy(1, ua2)
    assert not t.over and t.uas_lost(1) == 2  # two of three is not yet victory
    t.set_dp(1, ua3, 5)
    t.play_area(0, "Volley")  # 5 damage
    t.attack_damage_step()
    assert (t.over, t.winner, t.path, t.rule) == (True, 0, "attack", "third_ua")


@pytest.mark.parametrize("petitions,scroll,other_pillars,lp,wins", [
    (3, 3, 0, 20, True),
    (2, 3, 0, 100, False),  # two Petitions
    (3, 2, 5, 100, False),  # two Scroll Pillars: other Branches' Pillars do not count
    (3, 3, 0, 19, False),  # 19 LP
    (4, 5, 0, 20, True),  # "three or more"
])
def test_art3_s3_petition_needs_all_three(petitions, scroll, other_pillars, lp, wins):
    t = Table()
    t.petition(1, *["Petition"] * petitions)
    t.pillar(1, *["Scroll Pillar"] * scroll, *["Pillar"] * other_pillars)
    t.set_lp(1, lp)
    t.petition_check()
    assert t.over is wins
    if wins:
        assert (t.winner, t.path, t.rule) == (1, "petition", "petition")


def test_art3_s3_petition_checked_only_at_step_v():
    t = Table()
    t.pillar(0, "Scroll Pillar", "Scroll Pillar", "Scroll Pillar")
    t.petition(0, "Petition", "Petition")
    t.draw_pile(0, "Filler")
    t.hand(0, "Petition", "Study")
    t.set_policy(0, stop=-1e9)  # plays both: the third Petition, then Study
    t.play_phase(0)
    assert t.n_petitions(0) == 3 and t.n_hand(0) == 0
    assert not t.over  # the condition holds in the Play Phase: not checked there
    t.resolve_phase()
    assert (t.winner, t.path) == (0, "petition")
    kinds = [e[0] if e[0] != "resolve_step" else f"step{e[2]}" for e in t.events()]
    assert kinds.index("step4") < kinds.index("victory")
    assert "step6" not in kinds and "draw" not in kinds  # step vi never came


def test_art3_s4_empty_draw_pile_loses():
    t = Table()
    t.take_turn(0)  # seat 0 has no Draw Pile
    assert (t.over, t.winner, t.path, t.rule) == (True, 1, "deck_out", "deck_out_draw_phase")


def test_art3_s4_drawing_the_last_card_is_not_a_loss():
    t = Table()
    t.set_policy(0, stop=PASSIVE)
    t.draw_pile(0, "Filler")
    t.take_turn(0)
    assert not t.over and t.n_draw(0) == 0
    t.take_turn(0)
    assert (t.winner, t.path) == (1, "deck_out")


def test_art3_s4_forced_draw_beyond_the_pile_loses():
    t = Table()
    t.draw_pile(1, "Filler", "Filler")
    t.apply_effect(0, "force draw", 3)
    assert t.n_hand(1) == 2  # both cards drawn, then the third draw fails
    assert (t.over, t.winner, t.path, t.rule) == (True, 0, "deck_out", "deck_out_effect")


# =========================================================================== Article IV
def test_art4_s1_pillars_generate_ip_each_independence_phase():
    t = Table()
    t.pillar(0, "Pillar", "Pillar", "Big Pillar")
    t.independence_phase()
    assert t.ip(0) == (5, 0)


def test_art4_s1_scroll_pillars_count_toward_petition():
    t = Table()
    scroll, plain = t.hand(0, "Scroll Pillar", "Pillar")
    t.play_card(0, scroll)
    t.play_card(0, plain)
    assert (t.n_pillars(0), t.n_scroll_pillars(0)) == (2, 1)
    assert t.zone(0, scroll) == "pillar"


def test_art4_s2_rights_resolve_then_go_to_the_discard_pile():
    t = Table()
    t.draw_pile(0, "Filler")
    (study,) = t.hand(0, "Study")
    t.play_card(0, study)
    t.resolve_phase()
    assert t.zone(0, study) == "discard"
    assert t.hand_cards(0) == ["Filler"]


def test_art4_s3_uas_begin_in_play_and_are_never_shuffled_in():
    t = Table(uas=None)
    deck = sixty((1, "UA"), (1, "Drain UA"), (20, "Pillar"), (37, "Filler"), (1, "UA"))
    t.setup([deck, deck])
    for q in (0, 1):
        assert t.cards_in(q, "ua") == ["UA", "Drain UA", "UA"]
        assert "UA" not in t.hand_cards(q) + t.draw_cards(q)
        assert "Drain UA" not in t.hand_cards(q) + t.draw_cards(q)


def test_art4_s3_uas_cannot_be_played():
    t = Table()
    t.set_policy(0, stop=-1e9)
    (ua,) = t.hand(0, "UA")  # only a broken position puts one in hand
    t.set_ip(0, pillar=10)
    t.play_phase()
    assert t.zone(0, ua) == "hand" and t.events("play") == []


def test_art4_s3_ua_drains_each_turn_until_destroyed():
    t = Table(uas="Drain UA")
    t.set_policy(0, stop=PASSIVE)
    t.draw_pile(0, "Filler", "Filler", "Filler")
    t.take_turn(0)
    t.take_turn(0)
    assert t.lp(0) == 100 - 2 * 3 * 2
    ua = t.slots(0, "Drain UA")[0]
    t.destroy(0, ua)
    t.take_turn(0)
    assert t.lp(0) == 100 - 12 - 2 * 2


def test_art4_s4_attack_played_in_play_phase_strikes_in_resolve_phase():
    t = Table()
    (volley,) = t.hand(0, "Volley")
    t.play_card(0, volley)
    assert [t.dp(1, s) for s in t.slots(1, "UA")] == [20, 20, 20]
    t.resolve_phase()
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [15, 20, 20]
    assert t.zone(0, volley) == "play"


def test_art4_s5_defense_stays_until_its_dp_is_zero():
    t = Table()
    wall = t.play_area(1, "Wall")  # 10 DP
    t.play_area(0, "Volley")  # 5 damage a turn
    t.attack_damage_step()
    assert (t.zone(1, wall), t.dp(1, wall)) == ("play", 5)
    t.attack_damage_step()
    assert t.zone(1, wall) == "discard"
    assert [t.dp(1, s) for s in t.slots(1, "UA")] == [20, 20, 20]


def test_art4_s6_freedom_kicker_costs_extra_ip():
    t = Table()
    t.draw_pile(0, "Filler", "Filler", "Filler")
    plain, kicked = t.hand(0, "Hero", "Hero")
    t.set_ip(0, pillar=2)
    t.play_card(0, plain, pay=False)
    assert t.ip(0) == (0, 0)
    t.set_ip(0, pillar=4)
    t.play_card(0, kicked, kicked=True, pay=False)
    assert t.ip(0) == (0, 0)  # cost 2 + kicker 2
    t.resolve_phase()
    assert t.lp(1) == 100 - 5 - 5
    assert t.n_draw(0) == 1  # only the kicked copy drew 2


def test_art4_s7_bill_returns_and_doubles():
    t = Table()
    t.draw_pile(0, *["Filler"] * 5)
    (act,) = t.hand(0, "Act")  # cost 1, draw 1
    for expected in (1, 2, 4):
        assert t.cost(0, act) == expected
        t.set_ip(0, pillar=expected)
        t.play_card(0, act, pay=False)
        assert t.ip(0) == (0, 0)
        t.resolve_phase()
        assert t.zone(0, act) == "hand"  # returned, not discarded
        t.end_phase()
    assert t.bill_plays(0, act) == 3


def test_art4_s7_bill_once_per_turn():
    t = Table()
    t.set_policy(0, stop=-1e9)
    t.draw_pile(0, *["Filler"] * 5)
    first, second = t.hand(0, "Act", "Act")  # two copies of one name
    t.set_ip(0, pillar=10)
    t.play_phase()
    assert t.plays(0, "Act") == [1]  # the second copy stays in hand
    t.resolve_phase()
    t.end_phase()
    t.set_ip(0, pillar=10)
    t.play_phase()  # a new turn: the name may be played again, at double cost
    assert t.plays(0, "Act") == [1, 2]


def test_art4_s7_escalation_is_per_name():
    t = Table()
    t.draw_pile(0, "Filler")
    act, decree = t.hand(0, "Act", "Decree")
    t.play_card(0, act)
    t.resolve_phase()
    assert (t.cost(0, act), t.cost(0, decree)) == (2, 1)


# =========================================================================== Article VI
def test_art6_s1_draw_pile_holds_fifty_after_setup():
    t = Table(uas=None)
    t.setup([SIMPLE_DECK, SIMPLE_DECK], first=0)
    assert (t.n_draw(0), t.n_hand(0)) == (50, 7)
    # Seat 1 may have placed a Pillar from its hand (Amend. VIII): 50 in the pile either way.
    assert t.n_draw(1) == 50 and t.n_hand(1) + t.n_pillars(1) == 7


def test_art6_s4_petitions_remain_until_removed():
    t = Table()
    t.set_policy(0, stop=PASSIVE)
    t.draw_pile(0, "Filler", "Filler")
    (pet,) = t.petition(0, "Petition")
    t.take_turn(0)
    t.take_turn(0)
    assert t.zone(0, pet) == "petition"
    t.apply_effect(1, "destroy petition", 1)
    assert t.zone(0, pet) == "discard" and t.n_petitions(0) == 0


def test_art6_s5_uas_leave_their_area_only_when_destroyed():
    t = Table()
    t.set_policy(0, stop=PASSIVE)
    t.draw_pile(0, "Filler")
    uas = t.slots(0, "UA")
    t.take_turn(0)
    assert [t.zone(0, s) for s in uas] == ["ua"] * 3
    t.deal_damage(0, uas[0], 20)
    assert t.zone(0, uas[0]) == "discard"


def test_art6_s6_play_area_keeps_attacks_defenses_and_lasting_rights():
    t = Table()
    volley, wall, treaty, jab = t.hand(0, "Volley", "Wall", "Treaty", "Jab")
    for s in (volley, wall, treaty, jab):
        t.play_card(0, s)
    t.resolve_phase()
    assert [t.zone(0, s) for s in (volley, wall, treaty)] == ["play"] * 3
    assert t.zone(0, jab) == "discard"  # resolved


def test_art6_s7_hand_limit_seven():
    t = Table()
    t.hand(0, *["Filler"] * 10)
    t.resolve_phase()
    assert t.n_hand(0) == HAND_LIMIT == 7
    assert len(t.events("hand_limit")) == 3
    assert t.cards_in(0, "discard") == ["Filler"] * 3


def test_art6_s7_hand_limit_applies_only_at_the_end_of_the_resolve_phase():
    t = Table()
    t.hand(1, *["Filler"] * 9)  # the other player's hand is not the active player's
    t.hand(0, *["Filler"] * 9)
    t.fire_effects(STEP_DAMAGE)
    assert t.n_hand(0) == 9
    t.resolve_phase()
    assert (t.n_hand(0), t.n_hand(1)) == (7, 9)


# =========================================================================== Article VII
def test_art7_s1_setup():
    t = Table(uas=None)
    deck = sixty((20, "Pillar"), (3, "UA"), (37, "Filler"))
    t.setup([deck, deck], first=0)
    assert t.cards_in(0, "ua") == ["UA"] * 3  # placed first, never shuffled
    assert (t.n_draw(0), t.n_hand(0), t.lp(0)) == (50, 7, 100)  # 57 shuffled, 7 drawn
    assert t.turn == 0 and t.active == 0 and not t.over


def test_art7_s3_first_seat_takes_the_first_turn_r35():
    t = Table(uas=None)
    t.setup([SIMPLE_DECK] * 3, first=2)
    assert (t.active, t.first) == (2, 2)
    seats = t.play_turns(4)
    assert seats == [2, 0, 1, 2]  # then clockwise


def test_art7_s5_turn_phases_in_order():
    t = Table()
    t.pillar(0, "Pillar")
    t.draw_pile(0, "Filler", "Jab")
    t.take_turn(0)
    kinds = [e[0] if e[0] != "resolve_step" else f"step{e[2]}" for e in t.events()]
    order = ["turn", "draw", "ip", "play", "step2", "step3", "step4", "step6", "step7",
             "turn_end"]
    assert [k for k in kinds if k in order] == order


def test_art7_s5_seat_after_goes_clockwise():
    """Turn order goes clockwise: ``seat_after`` (the engine's ``(p + k) % n`` without a
    division) names the same seat as the modulo for every seat, step and table size."""
    from rnr_sim.engine.state import seat_after

    for n in (2, 3, 4):
        for p in range(n):
            assert [seat_after(p, k, n) for k in range(n + 1)] == [(p + k) % n for k in range(n + 1)]


@pytest.mark.parametrize("pick", ["first", "middle", "last"])
def test_art7_s5_the_kept_list_of_legal_actions_is_the_rules_list(pick):
    """Phase three: after each action the Play Phase keeps its list of legal actions
    (``still_legal``) instead of walking the hand again; the kept list is, row for row and
    in order, what ``legal_actions`` lists from scratch: a Bill's name played once a turn
    (Art. IV §7.1), one Pillar a turn under R10, an Attack-on-Attack target taken (R49),
    an effect activated turned sideways (Amend. V §2), a card played with an 'activate'
    effect listed last, rows out of reach of the IP left dropped (Art. II §2). Each run
    takes the first, middle or last row every time, until none is left."""
    t = Table(rules={"pillars_per_turn": 1, "ip_effects_immediate": False})
    t.hand(0, "Pillar", "Act", "Big Pillar", "Act", "Volley", "Hero", "Fort", "Costly", "Lancer")
    t.play_area(0, "Fort", dp=4)
    t.play_area(1, "Lancer")
    t.play_area(1, "Raider")
    t.set_ip(0, other=7)  # not enough for everything: rows go out of reach
    rows = t.legal_actions(0)
    assert {r[0] for r in rows} == {1, 2, 3, 4}  # ACT_PLAY, _KICKED, _AOA, _ACTIVATE
    taken = []
    while rows:
        k = {"first": 0, "middle": len(rows) // 2, "last": len(rows) - 1}[pick]
        taken.append(rows[k][0])
        kept = t.take_action(0, k)
        assert kept == t.legal_actions(0), f"after {len(taken)} actions"
        rows = kept
    assert len(taken) >= 4
    assert t.ip(0)[1] < 7


def test_art7_s5_resolve_order():
    """ii AoA, iii damage, iv healing, v Petition check, vi other effects, vii drain."""
    t = Table(uas="Drain UA")
    t.draw_pile(0, "Filler")
    raider = t.play_area(1, "Raider")
    study, salve, jab, volley, lancer = t.hand(0, "Study", "Salve", "Jab", "Volley", "Lancer")
    for s in (study, salve, jab, volley):  # played in the reverse of the order they resolve
        t.play_card(0, s)
    t.play_card(0, lancer, aoa=(1, raider))
    t.resolve_phase()
    got = [(e[0], e[1], e[2]) for e in t.events("aoa_result", "damage", "lp", "draw", "drain")]
    assert [k for k, _, _ in got] == ["aoa_result", "damage", "lp", "lp", "draw"] + ["drain"] * 3
    assert got[2][1:] == (1, -3) and got[3][1:] == (0, 4)  # damage at iii, healing at iv

    # v: the Petition check falls after healing and before step vi's effects and the drain.
    t = Table(uas="Drain UA")
    t.pillar(0, "Scroll Pillar", "Scroll Pillar", "Scroll Pillar")
    t.petition(0, "Petition", "Petition", "Petition")
    t.set_lp(0, 16)
    t.draw_pile(0, "Filler")
    study, salve = t.hand(0, "Study", "Salve")
    t.play_card(0, study)
    t.play_card(0, salve)
    t.resolve_phase()
    assert (t.winner, t.path) == (0, "petition")
    assert [e[0] for e in t.events("lp", "draw", "drain", "victory")] == ["lp", "victory"]


def test_art7_s5_step_ii_every_fight_resolves_before_any_consequence():
    """Step ii: "all AoA declarations resolve simultaneously" (Amend. I §2). Seat 0
    declares two fights, each player on its last UA (2 DP): its Volley kills seat 1's
    Martyr, and its own Martyr dies to seat 1's Volley. Each Martyr holds 'on destroy:
    strike ua 5'. Both die in the same step, so both effects are released together and
    the active player's fires first (Amend. IX, R36): seat 0 wins by Attack, whatever
    order the fights were declared in. Before the fix, fight 1's Martyr fired alone and
    seat 1 won; seat 0's Martyr, dying in fight 2, never fired."""
    for order in ((0, 1), (1, 0)):
        t = Table([card("Martyr", "attack", "liberty_bell", cost=0, damage=3,
                        effects=["on destroy: strike ua 5"])], uas=None)
        for q in (0, 1):
            t.ua(q, "UA", dp=2)
            t.set_uas_lost(q, 2)
        theirs = [t.play_area(1, "Martyr"), t.play_area(1, "Volley")]
        mine = t.hand(0, "Volley", "Martyr")
        for k in order:
            t.play_card(0, mine[k], aoa=(1, theirs[k]))
        t.resolve_phase()
        assert (t.over, t.winner, t.path) == (True, 0, "attack"), order
        assert len(t.events("aoa_result")) == 2


def test_art7_s6_activated_card_turns_sideways_until_its_next_turn():
    t = Table()
    t.set_policy(0, stop=PASSIVE)
    t.set_policy(1, stop=PASSIVE)
    t.draw_pile(0, "Filler", "Filler")
    t.draw_pile(1, "Filler")
    fort = t.play_area(0, "Fort")
    t.activate(0, fort)
    assert t.sideways(0, fort)
    t.resolve_phase()
    t.end_phase()
    t.take_turn(1)
    assert t.sideways(0, fort)  # the opponent's turn does not turn it upright
    t.set_active(0)
    t.take_turn(0)
    assert not t.sideways(0, fort)


def test_art4_one_order_per_card():
    """Art. IV (preamble): a card belongs to one Order; the grammar has no dual
    classification, so a card naming two is refused, and every card of the shipped sets
    compiles to exactly one of the seven."""
    with pytest.raises(CatalogError, match="field 'type'"):
        catalog_of([card("Hybrid", "attack") | {"type": ["attack", "defense"]}])
    types = load_catalog(DEFAULT_CATALOG).compile()[:, enums.C_TYPE]
    assert set(types.tolist()) <= set(range(len(enums.CARD_TYPES)))


def test_art7_s7_at_most_two_effects():
    with pytest.raises(CatalogError, match="at most 2"):
        catalog_of([card("Overloaded", effects=["draw 1", "heal 1", "lp 1"])])
    with pytest.raises(CatalogError, match="kicker counted"):
        parse_catalog('[set]\nname = "x"\n[[cards]]\nname = "K"\ntype = "freedom"\n'
                      'branch = "bison"\nrarity = "rare"\neffects = ["draw 1", "heal 1"]\n'
                      'kicker = { cost = 1, effect = "lp 2" }\n')
