"""The rulings (docs/rulings.md R1-R51) the Articles and Amendments
tests do not already pin down, each on a position built with ``engine_harness``.
docs/rules-coverage.md maps every ruling to its tests."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from engine_harness import Table, card, catalog_of, play_batch

from rnr_sim.cards import CatalogError, parse_catalog
from rnr_sim.decks import parse_deck, validate_deck
from rnr_sim.rules import default_profile
from rnr_sim.runs import planning

PASSIVE = 1e9
DECK = ["UA"] * 3 + ["Pillar"] * 20 + ["Filler"] * 37


# =========================================================================== setup
def test_r1_the_sixty_include_the_uas_and_57_are_shuffled():
    t = Table(uas=None)
    t.set_policy(1, p2_right=0)
    t.setup([DECK, DECK])
    for q in (0, 1):
        assert len(t.cards_in(q, "ua")) == 3
        assert t.n_draw(q) + t.n_hand(q) == 57 and t.n_draw(q) == 50


def test_r11_a_new_pillar_gives_ip_from_the_next_independence_phase():
    t = Table()
    t.pillar(0, "Pillar")
    t.independence_phase()
    (big,) = t.hand(0, "Big Pillar")
    t.play_card(0, big)
    assert t.ip(0) == (1, 0)  # nothing from the Pillar just played
    t.resolve_phase()
    t.end_phase()
    t.independence_phase()
    assert t.ip(0) == (4, 0)


def test_r12_non_pillar_ip_is_lost_at_end_of_turn_too():
    t = Table()
    t.play_area(0, "Treaty")
    t.independence_phase()
    assert t.ip(0) == (0, 1)
    t.end_phase()
    assert t.ip(0) == (0, 0)


def test_r13_effects_wait_for_the_resolve_phase():
    t = Table()
    t.draw_pile(0, "Filler", "Filler")
    study, jab, salve = t.hand(0, "Study", "Jab", "Salve")
    t.set_lp(0, 50)
    for s in (study, jab, salve):
        t.play_card(0, s)
    assert (t.n_hand(0), t.lp(0), t.lp(1)) == (0, 50, 100)  # paid and placed only
    t.resolve_phase()
    assert (t.n_hand(0), t.lp(0), t.lp(1)) == (1, 54, 97)


# =========================================================================== combat
def test_r16_each_attack_strikes_once_a_turn_and_stays():
    t = Table()
    volley = t.play_area(0, "Volley")
    for _ in range(3):
        t.attack_damage_step()
        assert t.zone(0, volley) == "play"
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [5, 20, 20]


def test_r16_every_attack_strikes_after_an_on_destroy_chain():
    t = Table([card("Booby Trap", "defense", dp=5, effects=["on destroy: strike 4"])])
    decoy = t.play_area(0, "Wall", dp=4)  # seat 0's Defense, before its Attacks on the board
    t.play_area(0, "Volley")
    t.play_area(0, "Volley")
    t.play_area(1, "Booby Trap")
    t.attack_damage_step()
    # The first Volley destroys the Booby Trap, whose strike destroys seat 0's Wall; the
    # second Volley still strikes, now at a UA.
    assert t.zone(0, decoy) == "discard"
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [15, 20, 20]


def test_r18_only_lp_effects_touch_liberty_points():
    t = Table([card("Big Strike", "rights", cost=0, effects=["strike ua 50"])])
    (s,) = t.hand(0, "Big Strike")
    t.play_card(0, s)
    t.resolve_phase()
    assert t.uas_lost(1) == 1 and t.lp(1) == 100  # 30 damage past the UA went nowhere


def test_r33_an_attack_whose_target_fell_earlier_is_not_wasted():
    t = Table()
    wall = t.play_area(1, "Wall", dp=5)
    t.play_area(0, "Volley")
    t.play_area(0, "Volley")
    t.attack_damage_step()
    # Targets are chosen as each Attack's damage is applied, in play order: the first
    # Volley destroys the Wall, the second finds a UA.
    assert t.zone(1, wall) == "discard"
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [15, 20, 20]


# =========================================================================== victory
@pytest.mark.parametrize("cause,winner,path,rule", [
    ("lp effect", 0, "life", "lp_zero"),
    ("own ua drain", 1, "life", "lp_zero"),
    ("third ua", 0, "attack", "third_ua"),
    ("empty pile in draw phase", 1, "deck_out", "deck_out_draw_phase"),
    ("forced draw", 0, "deck_out", "deck_out_effect"),
    ("own draw effect", 1, "deck_out", "deck_out_effect"),
    ("petition", 1, "petition", "petition"),
])
def test_r25_the_other_player_wins_by_the_path_of_the_cause(cause, winner, path, rule):
    t = Table(uas="Drain UA")
    if cause == "lp effect":
        t.set_lp(1, 3)
        t.apply_effect(0, "lp", 3)
    elif cause == "own ua drain":
        t.set_lp(0, 6)
        t.drain_step()
    elif cause == "third ua":
        for s in t.slots(1, "Drain UA"):
            t.deal_damage(1, s, 20)
    elif cause == "empty pile in draw phase":
        t.take_turn(0)
    elif cause == "forced draw":
        t.apply_effect(0, "force draw", 1)
    elif cause == "own draw effect":
        t.apply_effect(0, "draw", 1)
    else:
        t.pillar(1, "Scroll Pillar", "Scroll Pillar", "Scroll Pillar")
        t.petition(1, "Petition", "Petition", "Petition")
        t.petition_check()
    assert (t.over, t.winner, t.path, t.rule) == (True, winner, path, rule)


def test_r26_an_opponent_brought_down_ends_a_three_player_game():
    t = Table(players=3)
    t.set_lp(2, 3)
    t.apply_effect(0, "lp", 3)  # aimed at the lowest LP: seat 2
    assert (t.over, t.winner, t.path) == (True, 0, "life")
    assert t.alive(1)


def test_r26_losing_on_ones_own_turn_eliminates():
    t = Table(players=3, uas="Drain UA")
    t.set_lp(0, 6)
    t.drain_step()
    assert not t.over and not t.alive(0) and t.alive(1) and t.alive(2)


def test_r42_step_viii_has_nothing_left_to_check():
    """Step viii finds no new loss: the drain brought seat 0 to 0 LP at step vii and the
    game ended there, so step ix (the hand limit) never came. (Step i has no code to test:
    the grammar has no locks or blocks, see docs/rules-coverage.md.)"""
    t = Table(uas="Drain UA")
    t.set_lp(0, 6)
    t.hand(0, *["Filler"] * 9)
    t.resolve_phase()
    assert (t.over, t.winner) == (True, 1)
    assert t.n_hand(0) == 9


# =========================================================================== cards in play
def test_r27_what_stays_in_play_after_resolving():
    t = Table([card("Guard Duty", "rights", cost=0, effects=["activate 1: heal 1"]),
               card("Patriot", "freedom", cost=0, rarity="rare", effects=["each turn: lp 1"]),
               card("Orator", "freedom", cost=0, rarity="rare", effects=["lp 1"])])
    slots = t.hand(0, "Jab", "Petition", "Treaty", "Guard Duty", "Patriot", "Orator")
    for s in slots:
        t.play_card(0, s)
    t.resolve_phase()
    zones = [t.zone(0, s) for s in slots]
    assert zones == ["discard", "petition", "play", "play", "play", "discard"]


# =========================================================================== policies
def test_r37_effects_go_to_the_opponent_they_hurt_most():
    t = Table(players=3)
    t.set_lp(1, 50)
    t.set_lp(2, 30)
    t.draw_pile(1, *["Filler"] * 3)
    t.draw_pile(2, *["Filler"] * 6)
    t.hand(1, "Filler", "Filler")
    t.hand(2, *["Filler"] * 5)
    t.petition(1, "Petition", "Petition")
    t.petition(2, "Petition")
    t.destroy(1, t.slots(1, "UA")[0])
    expected = {"lp": 2, "mill": 1, "exile": 1, "force draw": 1, "discard": 2,
                "destroy petition": 1, "strike": 1, "strike ua": 1}
    assert {v: t.pick_opponent(0, v) for v in expected} == expected
    t.apply_effect(0, "lp", 5)
    assert (t.lp(1), t.lp(2)) == (50, 25)


def test_r37_ties_go_to_the_next_player_in_turn_order():
    t = Table(players=4)
    t.set_active(2)
    assert t.pick_opponent(2, "lp") == 3
    t.set_lp(0, 90)
    t.set_lp(1, 90)
    assert t.pick_opponent(2, "lp") == 0


# =========================================================================== seats
def test_r35_every_deal_is_played_with_each_seat_first():
    games, players, tables = 5, 3, 2
    table, deal, rotation = planning.game_coordinates(np.arange(tables * games * players),
                                                    games, players)
    seen = Counter(zip(table.tolist(), deal.tolist(), strict=True))
    assert set(seen.values()) == {players}
    for key in seen:
        rots = {int(r) for t_, d, r in zip(table, deal, rotation, strict=True)
                if (int(t_), int(d)) == key}
        assert rots == set(range(players))


def test_r35_a_deck_gets_the_same_shuffle_in_every_rotation():
    cat = catalog_of([])
    ids = [[cat.by_name[n] for n in DECK]] * 2
    n = 50
    seat_deck = np.zeros((2 * n, 2), dtype=np.int32)
    seat_deck[:, 1] = 1
    deal = np.repeat(np.arange(n, dtype=np.int64), 2)
    first = np.tile(np.array([0, 1], dtype=np.int32), n)
    r = play_batch(cat.compile(), ids, seat_deck, deal=deal, first_seat=first)
    assert np.array_equal(r["opening"][0::2], r["opening"][1::2])
    assert len({int(m) for m in r["opening"][0::2, 0]}) > n // 2  # deals differ


def test_r41_the_free_pillar_is_placed_not_played():
    t = Table([card("Library", "pillar", "scroll", ip=1, effects=["draw 1"])], uas=None)
    deck = ["UA"] * 3 + ["Library"] * 57
    t.set_policy(1, stop=PASSIVE)
    t.setup([deck, deck], first=0)
    assert t.took_p2_right(1) and t.n_pending(1) == 0
    t.set_active(1)
    t.take_turn(1)
    assert [e[1] for e in t.events("draw")] == [1, 1]  # the two of the right, no more
    assert t.cards_in(1, "pillar") == ["Library"]


# =========================================================================== elimination
def test_r43_eliminated_players_take_no_more_turns():
    t = Table(players=3, rules={"multiplayer": "last_standing"})
    for q in range(3):
        t.set_policy(q, stop=PASSIVE)
        t.draw_pile(q, *["Filler"] * 5)
    t.set_lp(1, 3)
    t.apply_effect(0, "lp", 3)
    assert not t.alive(1) and not t.over
    assert t.play_turns(4) == [0, 2, 0, 2]


def test_r43_eliminated_players_cards_are_out_of_reach():
    t = Table(players=3, rules={"multiplayer": "last_standing"})
    t.set_lp(1, 1)  # seat 1 is the lowest and the most hurt: it would be every target
    t.destroy(1, t.slots(1, "UA")[0])
    t.draw_pile(1, "Filler")
    raider = t.play_area(1, "Raider")
    t.lose(1, "life", "lp_zero")
    assert not t.alive(1)
    for verb in ("lp", "strike", "mill", "discard", "force draw", "destroy petition"):
        assert t.pick_opponent(0, verb) == 2
    t.play_area(0, "Volley")
    t.attack_damage_step()
    assert [t.dp(1, s) for s in t.slots(1, "UA")[1:]] == [20, 20]
    t.set_policy(0, stop=-1e9, random=1.0)
    t.hand(0, "Volley")
    t.set_ip(0, pillar=5)
    t.play_phase()  # no Attack-on-Attack on the eliminated seat's Raider
    assert t.events("aoa") == [] and t.zone(1, raider) == "play"


def test_r43_an_eliminated_player_cannot_win():
    t = Table([card("Do force draw 1", "rights", cost=0, effects=["force draw 1"])], players=3)
    t.draw_pile(2, *["Filler"] * 5)  # seat 1's pile is empty: the thinnest
    study, force = t.hand(0, "Study", "Do force draw 1")
    t.play_card(0, study)  # seat 0's pile is empty too: this draw eliminates seat 0
    t.play_card(0, force)
    t.resolve_phase()
    assert not t.alive(0)
    assert t.winner != 0


# =========================================================================== catalog, decks
def test_r30_r39_the_kicker_counts_and_cannot_be_activated():
    with pytest.raises(CatalogError, match="kicker counted"):
        catalog_of([card("Two Plus", "freedom", effects=["lp 1", "heal 1"],
                         kicker={"cost": 1, "effect": "draw 1"})])
    with pytest.raises(CatalogError, match="cannot be an 'activate K:' effect"):
        parse_catalog('[set]\nname = "x"\n[[cards]]\nname = "K"\ntype = "freedom"\n'
                      'branch = "bison"\nrarity = "rare"\n'
                      'kicker = { cost = 1, effect = "activate 1: lp 2" }\n')


@pytest.mark.parametrize("rights,warned", [(7, True), (8, False), (12, False), (13, True)])
def test_r6_r40_rights_warn_outside_ten_plus_or_minus_two(rights, warned):
    cat = catalog_of([card("Eagle UA", "ua", "eagle"), card("Scroll UA", "ua", "scroll")])
    counts = {"UA": 1, "Eagle UA": 1, "Scroll UA": 1, "Pillar": 57 - rights,
              "Filler": rights}
    text = "".join(f"{n} {name}\n" for name, n in counts.items())
    found = validate_deck(parse_deck(text, cat), cat, default_profile())
    assert [v.warning for v in found] == ([True] if warned else [])


# =========================================================================== R47-R51
def test_r47_by_step_on_destroy_draw_waits_for_step_vi():
    """Literal timing: an 'on destroy: draw 1' triggered by step iii damage fires at step
    vi, after the step-vi marker, not inside step iii."""
    t = Table([card("Scout Post", "defense", "eagle", cost=1, dp=5,
                    effects=["on destroy: draw 1"])], rules={"on_destroy_timing": "by_step"})
    t.play_area(0, "Volley")
    t.play_area(1, "Scout Post")
    t.draw_pile(1, "Filler")
    t.resolve_phase()
    kinds = [e[0] if e[0] != "resolve_step" else f"step{e[2]}" for e in t.events()]
    assert kinds.index("destroy") < kinds.index("step4") < kinds.index("step6") \
        < kinds.index("draw")
    assert t.n_hand(1) == 1


def test_r49_one_attack_on_attack_per_opposing_attack_a_turn():
    """Amend. I pairs two Attacks: a second Attack of ours may not join a fight already
    declared against the same opposing Attack this turn."""
    t = Table([card("Brute", "attack", "liberty_bell", cost=0, damage=8)])
    t.play_area(1, "Volley")
    t.hand(0, "Brute", "Brute")
    t.set_ip(0, pillar=10)
    t.set_policy(0, "aggro", aoa=1e6)
    t.play_phase(0)
    assert len(t.events("aoa")) == 1


def test_r51_a_loss_on_another_players_turn_goes_to_the_active_player():
    """3 players, UAs draining every turn (R21 switched): seat 1's own UA brings it to 0
    LP during seat 0's Resolve Phase; under first_victory (R26) seat 0 wins by Life."""
    t = Table(players=3, uas="Drain UA", rules={"ua_drain_when": "every_turn"})
    t.set_lp(1, 2)
    t.drain_step(0)
    assert (t.over, t.winner, t.path) == (True, 0, "life")


def test_r51_last_standing_eliminates_instead():
    t = Table(players=3, uas="Drain UA",
              rules={"ua_drain_when": "every_turn", "multiplayer": "last_standing"})
    t.set_lp(1, 2)
    t.drain_step(0)
    assert not t.over and not t.alive(1) and t.alive(0) and t.alive(2)


@pytest.mark.parametrize("resolve,drawn", [(True, 2), (False, 0)])
def test_r52_a_paid_activation_resolves_when_its_card_is_destroyed(resolve, drawn):
    """Seat 0 pays for its Sentry's 'activate 1: draw 2' (step vi); at step iii its Volley
    destroys a UA whose 'on destroy: strike 10' is aimed back at seat 0 (R36) and destroys
    the Sentry. The activation was paid for and still resolves at step vi, as R50 keeps a
    destroyed card's on-resolve effects; with R50's switch off it fizzles. Nothing of it
    waits after the phase."""
    t = Table([card("Booby UA", "ua", "liberty_bell", dp=2, drain=0,
                    effects=["on destroy: strike 10"]),
               card("Sentry", "defense", "eagle", cost=1, dp=5, effects=["activate 1: draw 2"])],
              uas=None, rules={"destroyed_cards_resolve": resolve})
    t.uas(0, "UA")
    t.uas(1, "Booby UA")
    t.draw_pile(0, "Filler", "Filler", "Filler")
    sentry = t.play_area(0, "Sentry")
    t.play_area(0, "Volley")
    t.activate(0, sentry)
    t.resolve_phase()
    assert t.zone(0, sentry) == "discard" and t.uas_lost(1) == 1
    assert len([e for e in t.events("draw") if e[1] == 0]) == drawn
    t.clear_events()
    t.resolve_phase()  # the next Resolve Phase finds nothing of it waiting
    assert [e for e in t.events("draw") if e[1] == 0] == []
    assert t.invariant_violations() == 0



# =========================================================================== issue 42 deviations
def test_r43_an_eliminated_active_player_fires_no_more_lasting_effects():
    """3 players: seat 0's paid 'activate 1: draw 2' empties its Draw Pile and eliminates
    it on its own turn (first_victory, R26); its 'each turn: force draw 1', later on the
    board, must not fire (R43: such a player stops at once). Before the fix it did: it
    eliminated seat 1 (the thinnest pile) and seat 2 won, last standing."""
    t = Table([card("Scholar", "defense", "eagle", cost=1, dp=5,
                    effects=["activate 1: draw 2"]),
               card("Agitator", "rights", "eagle", cost=1,
                    effects=["each turn: force draw 1"])], players=3)
    t.draw_pile(0, "Filler")  # one card: the second draw of the activation loses
    t.draw_pile(2, "Filler", "Filler")  # seat 1's pile is empty: the thinnest
    scholar = t.play_area(0, "Scholar")
    t.play_area(0, "Agitator")
    t.activate(0, scholar)
    t.resolve_phase()
    assert not t.alive(0)
    assert t.alive(1) and t.alive(2) and not t.over
    assert [e for e in t.events("draw") if e[1] == 1] == []


@pytest.mark.parametrize("lifetime,keyword,resolve", [
    ("persistent", True, True), ("one_shot", False, True), ("one_shot", False, False)])
def test_r52_a_one_shot_attacks_paid_activation_resolves(lifetime, keyword, resolve):
    """A one-shot Attack (its keyword, or R16's switch) with a paid 'activate 1: draw 2' is
    discarded after its damage step (step iii), before the activation's step vi: the
    activation was paid for and resolves (R52). The discard is not a destruction, so it
    resolves with R50's switch off too, as the same card's on-resolve effects do. Before
    the fix the discard cleared the mark and nothing was drawn."""
    t = Table([card("Sapper", "attack", "liberty_bell", cost=1, damage=3,
                    keywords=["one_shot"] if keyword else [],
                    effects=["activate 1: draw 2"])],
              rules={"attack_lifetime": lifetime, "destroyed_cards_resolve": resolve})
    t.draw_pile(0, "Filler", "Filler", "Filler")
    sapper = t.play_area(0, "Sapper")
    t.activate(0, sapper)
    t.resolve_phase()
    assert t.zone(0, sapper) == "discard"
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [17, 20, 20]
    assert len([e for e in t.events("draw") if e[1] == 0]) == 2
    t.clear_events()
    t.resolve_phase()  # nothing of it waits after the phase
    assert [e for e in t.events("draw") if e[1] == 0] == []
    assert t.invariant_violations() == 0


def test_r49_no_fight_mark_outlives_an_active_player_eliminated_in_step_ii():
    """3 players: seat 0 declares two fights, against seat 1's Trap and seat 2's Volley.
    The Trap dies and its 'on destroy: force draw 3', aimed back at seat 0 (R36), empties
    seat 0's pile: seat 0 is eliminated on its own turn. Every fight declared was fought
    (Art. VII §5 step ii), so no mark is left on seat 2's Volley, and on seat 1's turn it
    may fight that Volley (R49: the mark lasts until the fight is fought). Before the fix
    the second fight was never fought and its mark stayed for the rest of the game."""
    t = Table([card("Trap", "attack", "liberty_bell", cost=0, damage=1,
                    effects=["on destroy: force draw 3"])], players=3)
    trap = t.play_area(1, "Trap")
    volley = t.play_area(2, "Volley")
    first, second = t.hand(0, "Lancer", "Raider")
    t.play_card(0, first, aoa=(1, trap))
    t.play_card(0, second, aoa=(2, volley))
    t.resolve_phase()
    assert not t.alive(0) and not t.over
    assert t.zone(1, trap) == "discard" and t.dp(2, volley) == 3  # both fights fought
    t.set_active(1)
    (mine,) = t.hand(1, "Lancer")
    t.set_ip(1, pillar=5)
    rows = t.legal_actions(1)
    assert any(r[0] == 3 and r[1] == mine and (r[2], r[3]) == (2, volley) for r in rows)
