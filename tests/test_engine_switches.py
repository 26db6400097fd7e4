"""One test per switch of the rules profile (``rules.SWITCHES``): flipping it changes play
the way its ruling says. Construction switches go through ``decks.validate_deck``; play
switches through a position built with ``engine_harness`` or a small batch of games."""

from __future__ import annotations

import numpy as np
import pytest
from engine_harness import Table, card, catalog_of, play_batch

from rnr_sim.decks import is_legal, parse_deck, validate_deck
from rnr_sim.rules import SWITCHES, profile_from_mapping

PASSIVE = 1e9

DECK_CARDS = [card("Eagle UA", "ua", "eagle"), card("Scroll UA", "ua", "scroll"),
              card("Rare UA", "ua", "bison", "rare"),
              card("Rare Pillar", "pillar", rarity="rare"),
              *[card(f"Hero {k}", "freedom", rarity="rare", effects=["lp 1"]) for k in (2, 3)],
              card("Writ", "bill", "scroll", cost=1, effects=["heal 1"])]
#: A legal deck: 60 cards with its 3 UAs, 40 Pillars, 10 Rights, 4 Attacks, 3 Defenses.
LEGAL = {"UA": 1, "Eagle UA": 1, "Scroll UA": 1, "Pillar": 40, "Filler": 10, "Volley": 4,
         "Wall": 3}


@pytest.fixture(scope="module")
def deck_catalog():
    return catalog_of(DECK_CARDS)


def legal(counts: dict[str, int], catalog, **switches) -> bool:
    text = "".join(f"{n} {name}\n" for name, n in counts.items() if n)
    profile = profile_from_mapping(switches, "test", "test")
    return is_legal(validate_deck(parse_deck(text, catalog), catalog, profile))


def swap(counts: dict[str, int], take: str, give: str, n: int = 1) -> dict[str, int]:
    out = dict(counts)
    out[take] -= n
    out[give] = out.get(give, 0) + n
    return out


def test_every_switch_has_a_test():
    names = {n[len("test_switch_"):] for n in globals() if n.startswith("test_switch_")}
    assert names == {s.name for s in SWITCHES}


# =========================================================================== construction
def test_switch_deck_includes_uas(deck_catalog):  # R1
    assert legal(LEGAL, deck_catalog)
    assert not legal(LEGAL, deck_catalog, deck_includes_uas=False)
    sixty_three = dict(LEGAL, Pillar=43)
    assert legal(sixty_three, deck_catalog, deck_includes_uas=False)
    assert not legal(sixty_three, deck_catalog)


def test_switch_min_pillars(deck_catalog):  # R2
    assert legal(LEGAL, deck_catalog)
    assert not legal(LEGAL, deck_catalog, min_pillars=41)
    assert legal(LEGAL, deck_catalog, min_pillars=40)


def test_switch_max_freedom(deck_catalog):  # R3
    two = swap(swap(LEGAL, "Pillar", "Hero 2"), "Pillar", "Hero 3")
    assert legal(two, deck_catalog)
    assert not legal(two, deck_catalog, max_freedom=1)


def test_switch_max_bills(deck_catalog):  # R3
    two = swap(swap(LEGAL, "Pillar", "Act"), "Pillar", "Writ")
    assert legal(two, deck_catalog)
    assert not legal(two, deck_catalog, max_bills=1)


def test_switch_max_copies_attack_defense(deck_catalog):  # R4
    assert legal(LEGAL, deck_catalog)  # 4 Volleys
    assert not legal(LEGAL, deck_catalog, max_copies_attack_defense=3)
    five = swap(LEGAL, "Pillar", "Volley")
    assert not legal(five, deck_catalog)
    assert legal(five, deck_catalog, max_copies_attack_defense=5)


def test_switch_max_rares(deck_catalog):  # R31
    seven = swap(LEGAL, "Pillar", "Rare Pillar", 7)
    assert not legal(seven, deck_catalog)
    assert legal(seven, deck_catalog, max_rares=7)
    six_and_a_rare_ua = swap(swap(LEGAL, "Pillar", "Rare Pillar", 6), "UA", "Rare UA")
    assert legal(six_and_a_rare_ua, deck_catalog)  # Art. V §4: UAs not counted
    assert not legal(six_and_a_rare_ua, deck_catalog, max_rares=5)


# =========================================================================== setup
@pytest.mark.parametrize("mode,pillar,taken", [
    ("any", "Dear Pillar", True),
    ("zero_cost_only", "Dear Pillar", False),
    ("zero_cost_only", "Pillar", True),
    ("off", "Pillar", False),
])
def test_switch_p2_free_pillar(mode, pillar, taken):  # R7
    t = Table(rules={"p2_free_pillar": mode}, uas=None)
    deck = ["UA"] * 3 + [pillar] * 57  # Dear Pillar costs 1 IP
    t.setup([deck, deck], first=0)
    assert t.took_p2_right(1) is taken
    assert t.draws_next(1) == (2 if taken else 1)
    assert t.n_pillars(1) == (1 if taken else 0)


@pytest.mark.parametrize("draws", [True, False])
def test_switch_first_player_draws(draws):  # R8
    t = Table(rules={"first_player_draws": draws}, uas=None)
    t.set_policy(0, stop=PASSIVE)
    deck = ["UA"] * 3 + ["Pillar"] * 20 + ["Filler"] * 37
    t.setup([deck, deck], first=1)
    t.take_turn(1)
    assert len(t.events("draw")) == (1 if draws else 0)
    t.set_active(0, turn=1)
    t.take_turn(0)  # the second player always draws
    assert [e[1] for e in t.events("draw")][-1] == 0


# =========================================================================== play
@pytest.mark.parametrize("limit,played", [(0, 3), (1, 1), (2, 2)])
def test_switch_pillars_per_turn(limit, played):  # R10
    t = Table(rules={"pillars_per_turn": limit})
    t.set_policy(0, stop=-1e9)
    t.hand(0, "Pillar", "Pillar", "Pillar")
    t.play_phase()
    assert t.n_pillars(0) == played


@pytest.mark.parametrize("cap,lp", [(0, 105), (100, 100), (200, 105)])
def test_switch_lp_cap(cap, lp):  # R14
    t = Table(rules={"lp_cap": cap})
    t.set_lp(0, 95)
    t.apply_effect(0, "heal", 10)
    assert t.lp(0) == lp


def test_switch_turn_limit():  # R15
    cat = catalog_of([])
    deck = [[cat.by_name[n] for n in ["UA"] * 3 + ["Pillar"] * 57]]
    seat_deck = np.zeros((4, 2), dtype=np.int32)
    limited = play_batch(cat.compile(), deck, seat_deck, rules={"turn_limit": 7})
    assert list(limited["winner"]) == [-1] * 4 and set(limited["turns"]) == {7}
    assert set(limited["path"]) == {4}  # draw
    free = play_batch(cat.compile(), deck, seat_deck)
    assert set(free["path"]) == {3} and set(free["turns"]) == {100}  # deck-out decides


@pytest.mark.parametrize("scales,turns", [(True, 14), (False, 7)])
def test_switch_turn_limit_scales(scales, turns):  # R45: rounds, not turns, at 4 players
    cat = catalog_of([])
    deck = [[cat.by_name[n] for n in ["UA"] * 3 + ["Pillar"] * 57]]
    seat_deck = np.zeros((4, 4), dtype=np.int32)
    r = play_batch(cat.compile(), deck, seat_deck,
                   rules={"turn_limit": 7, "turn_limit_scales": scales})
    assert set(r["turns"]) == {turns} and set(r["winner"]) == {-1}


@pytest.mark.parametrize("timing,over,lp", [("at_once", False, 10), ("by_step", True, 0)])
def test_switch_on_destroy_timing(timing, over, lp):  # R47, Art. VII §5 steps iii-iv
    """Seat 1 (5 LP) loses its Defense at step iii; its 'on destroy: heal 10' lands at
    once (R36) before this step's 'lp 5', or waits for step iv (literal) and comes late."""
    t = Table([card("Martyr", "defense", "eagle", cost=1, dp=5, effects=["on destroy: heal 10"])],
              rules={"on_destroy_timing": timing})
    t.play_area(0, "Volley")
    t.play_area(1, "Martyr")
    t.set_lp(1, 5)
    (ko,) = t.hand(0, "Knockout")
    t.play_card(0, ko)
    t.resolve_phase()
    assert t.over is over and t.lp(1) == lp
    if over:
        assert (t.winner, t.path) == (0, "life")


@pytest.mark.parametrize("targets,ua_dp", [("at_damage", [16, 20, 20]), ("play_phase", [20, 20, 20])])
def test_switch_attack_targets(targets, ua_dp):  # R48, Amend. II §4
    """Two Attacks, one Defense: picked as damage lands, the second Attack finds a UA once
    the first broke the Defense; declared in the Play Phase, both aim at the Defense and
    the second's damage is lost."""
    t = Table(rules={"attack_targets": targets})
    t.set_policy(0, stop=PASSIVE)
    t.draw_pile(0, "Filler")
    t.play_area(0, "Volley")  # 5 damage
    t.play_area(0, "Lancer")  # 4 damage
    wall = t.play_area(1, "Wall", dp=5)
    t.take_turn(0)
    assert t.zone(1, wall) == "discard"
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == ua_dp


@pytest.mark.parametrize("resolve,lp", [(True, 95), (False, 100)])
def test_switch_destroyed_cards_resolve(resolve, lp):  # R50, R52
    """An Attack played this turn and activated loses its Attack-on-Attack at step ii: its
    'lp 3' (R50) and its paid 'activate 1: lp 2' (R52) still resolve at step iii, or both
    fizzle with the switch off."""
    t = Table([card("Gambit", "attack", "liberty_bell", cost=0, damage=2,
                    effects=["lp 3", "activate 1: lp 2"]),
               card("Titan", "attack", "liberty_bell", cost=1, damage=9)],
              rules={"destroyed_cards_resolve": resolve})
    titan = t.play_area(1, "Titan")
    (gambit,) = t.hand(0, "Gambit")
    t.set_ip(0, pillar=1)
    t.play_card(0, gambit, aoa=(1, titan))
    t.activate(0, gambit, e=1)
    t.resolve_phase()
    assert t.zone(0, gambit) == "discard" and t.lp(1) == lp


@pytest.mark.parametrize("lifetime,stays", [("persistent", True), ("one_shot", False)])
def test_switch_attack_lifetime(lifetime, stays):  # R16
    t = Table(rules={"attack_lifetime": lifetime})
    volley = t.play_area(0, "Volley")
    t.attack_damage_step()
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [15, 20, 20]
    assert (t.zone(0, volley) == "play") is stays


@pytest.mark.parametrize("on", [True, False])
def test_switch_aoa(on):  # R17
    declared = 0
    for seed in range(40):
        t = Table(rules={"aoa": on}, policy="random", seed=seed)
        t.play_area(1, "Raider")
        t.hand(0, "Volley")
        t.set_ip(0, pillar=2)
        t.play_phase()
        declared += len(t.events("aoa"))
    assert (declared > 0) is on


@pytest.mark.parametrize("target,lps", [("controller", (94, 100)), ("opponent", (100, 94))])
def test_switch_ua_drain_target(target, lps):  # R20
    t = Table(rules={"ua_drain_target": target}, uas=None)
    t.uas(0, "Drain UA")
    t.uas(1, "UA")
    t.drain_step()
    assert (t.lp(0), t.lp(1)) == lps


@pytest.mark.parametrize("when,lps", [("own_turn", (94, 100)), ("every_turn", (94, 94))])
def test_switch_ua_drain_when(when, lps):  # R21
    t = Table(rules={"ua_drain_when": when}, uas="Drain UA")
    t.drain_step(0)
    assert (t.lp(0), t.lp(1)) == lps


def test_switch_multiplayer():  # R26
    t = Table(players=3)
    t.draw_pile(2, "Filler")
    t.apply_effect(0, "force draw", 1)  # seat 1's empty pile
    assert (t.over, t.winner, t.path) == (True, 0, "deck_out")

    t = Table(players=3, rules={"multiplayer": "last_standing"})
    t.draw_pile(2, "Filler")
    t.apply_effect(0, "force draw", 1)
    assert not t.over and not t.alive(1)
    t.set_lp(2, 2)
    t.apply_effect(0, "lp", 2)
    assert (t.over, t.winner, t.path, t.rule) == (True, 0, "life", "last_standing")


@pytest.mark.parametrize("immediate", [True, False])
def test_switch_ip_effects_immediate(immediate):  # R32
    t = Table([card("Windfall", "rights", cost=0, effects=["ip 2"])],
              rules={"ip_effects_immediate": immediate})
    t.set_policy(0, stop=-1e9)
    windfall, costly = t.hand(0, "Windfall", "Costly")  # Costly: 3 IP
    t.set_ip(0, pillar=1)
    t.play_card(0, windfall)
    assert t.ip(0) == ((1, 2) if immediate else (1, 0))
    t.play_phase()
    assert (t.zone(0, costly) == "play") is immediate  # 1 + 2 IP pays for it
    t.resolve_phase()
    t.end_phase()
    assert t.ip(0) == (0, 0)  # IP given at step vi would be lost here


def test_r14_lp_cap_stops_gains_only():
    t = Table(rules={"lp_cap": 50})
    t.set_lp(0, 100)
    t.apply_effect(0, "heal", 10)  # above the cap already: a gain never lowers LP
    assert t.lp(0) == 100
    t.apply_effect(1, "lp", 3)  # losses are never clamped
    assert t.lp(0) == 97


@pytest.mark.parametrize("reset,fort_upright", [("every_card", True), ("each_turn_cards", False)])
def test_switch_sideways_reset(reset, fort_upright):  # R29; Art. VII §6, Amend. V §3
    """Two activated cards: Fort ('activate 1: repair 3') and Beacon, which also bears an
    'each turn' effect. At their controller's next turn Beacon is upright under either
    reading; Fort too by default, but stays sideways under the literal one (no 'each turn'
    effect; no card text turns it upright), so it cannot be activated again."""
    t = Table([card("Beacon", "defense", "eagle", cost=1, dp=10,
                    effects=["each turn: heal 1", "activate 1: draw 1"])],
              rules={"sideways_reset": reset})
    t.set_policy(0, stop=PASSIVE)
    t.set_policy(1, stop=PASSIVE)
    t.draw_pile(0, "Filler", "Filler")
    t.draw_pile(1, "Filler")
    fort = t.play_area(0, "Fort")
    beacon = t.play_area(0, "Beacon")
    t.activate(0, fort)
    t.activate(0, beacon, e=1)
    t.resolve_phase()
    t.end_phase()
    t.take_turn(1)
    assert t.sideways(0, fort) and t.sideways(0, beacon, e=1)
    t.set_active(0)
    t.take_turn(0)
    assert not t.sideways(0, beacon, e=1)
    assert t.sideways(0, fort) is not fort_upright
    t.set_ip(0, other=5)
    offered = {(r[1], r[2]) for r in t.legal_actions(0)}
    assert ((fort, 0) in offered) is fort_upright and (beacon, 1) in offered


# =========================================================================== issue 42: R53-R57
@pytest.mark.parametrize("mode,costs", [("per_player", (1, 2)), ("per_game", (2, 2))])
def test_switch_bill_escalation(mode, costs):  # R53; Art. IV §7.3 against R28
    """Seat 0 plays its Act (cost 1): its own next Act costs 2 either way; seat 1's copy
    of the name costs 2 only when the name's count is the table's (``per_game``), else 1."""
    t = Table(rules={"bill_escalation": mode})
    t.draw_pile(0, "Filler")
    (act,) = t.hand(0, "Act")
    (theirs,) = t.hand(1, "Act")
    (decree,) = t.hand(1, "Decree")
    t.play_card(0, act)
    t.resolve_phase()
    assert (t.cost(1, theirs), t.cost(0, act)) == costs
    assert t.cost(1, decree) == 1  # per name: another Bill is not touched (Art. IV §7.4)


def test_switch_branch_counts_uas(deck_catalog):  # R54; Art. V §1, §6 against R5
    """The Scroll Branch present only through a UA: legal when UAs count (R5), illegal
    when they stay outside the deck (Art. V §1); with a Scroll card among the 57 it is
    legal either way."""
    assert legal(LEGAL, deck_catalog)
    assert not legal(LEGAL, deck_catalog, branch_counts_uas=False)
    text = "".join(f"{n} {name}\n" for name, n in LEGAL.items())
    found = validate_deck(parse_deck(text, deck_catalog), deck_catalog,
                          profile_from_mapping({"branch_counts_uas": False}, "t", "t"))
    assert [v.ruling for v in found] == ["R54"] and "Scroll" in found[0].message
    mixed = swap(LEGAL, "Filler", "Petition")  # a Scroll Rights card
    assert legal(mixed, deck_catalog, branch_counts_uas=False)


@pytest.mark.parametrize("on", [False, True])
def test_switch_aoa_from_play(on):  # R55; Art. VII §5 phase three, Amend. I §1
    """Seat 0's Volley (cost 1) has been in play since an earlier turn; seat 1's Raider is
    in play. With the switch the Volley may declare Attack-on-Attack at cost + 1 = 2
    (listed, taken by a pilot that rates fights highly, fought at step ii, no step-iii
    damage that turn, and striking again the next turn); without it, it may not."""
    t = Table(rules={"aoa_from_play": on})
    raider = t.play_area(1, "Raider")
    volley = t.play_area(0, "Volley")
    t.set_ip(0, pillar=2)
    rows = [r for r in t.legal_actions(0) if r[0] == 5]
    assert rows == ([(5, volley, 1, raider, 2)] if on else [])
    t.set_policy(0, "aggro", aoa=1e6)
    t.play_phase(0)
    t.resolve_phase()
    if on:
        assert t.zone(1, raider) == "discard" and t.dp(0, volley) == 3 and t.ip(0) == (0, 0)
        assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [20, 20, 20]
        t.end_phase()
        t.clear_events()
        t.resolve_phase()  # its next Resolve Phase: it strikes with what is left
        assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [17, 20, 20]
    else:
        assert t.zone(1, raider) == "play" and t.events("aoa") == []
        assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [15, 20, 20]
    assert t.invariant_violations() == 0


def test_aoa_from_play_kept_list_is_the_rules_list():  # R55: still_legal = legal_actions
    """After each action of a Play Phase with Attacks in play on both sides, the list the
    Play Phase keeps (``still_legal``) is the list the rules make anew."""
    t = Table(rules={"aoa_from_play": True})
    for name in ("Raider", "Lancer"):
        t.play_area(1, name)
    t.play_area(0, "Volley")
    t.play_area(0, "Fort")
    t.hand(0, "Lancer", "Pillar", "Jab")
    t.set_ip(0, pillar=9)
    rows = t.legal_actions(0)
    assert sum(r[0] == 5 for r in rows) == 2
    while rows:
        k = next(i for i, r in enumerate(rows) if r[0] == 5) if any(r[0] == 5 for r in rows) \
            else 0
        kept = t.take_action(0, k)
        assert kept == t.legal_actions(0)
        rows = kept


@pytest.mark.parametrize("on,kept", [(True, ["Guarded Filler"]), (False, [])])
def test_switch_protect_stops_mill(on, kept):  # R56; Amend. III against R19, R38
    t = Table([card("Do mill 2", "rights", cost=0, effects=["mill 2"])],
              rules={"protect_stops_mill": on})
    t.draw_pile(1, "Filler", "Guarded Filler", "Jab")
    (s,) = t.hand(0, "Do mill 2")
    t.play_card(0, s)
    t.resolve_phase()
    assert t.draw_cards(1) == ["Filler"] + kept
    assert "Guarded Filler" in t.cards_in(1, "discard") or on


def test_switch_abilities_are_effects():  # R57; Art. VII §7, Amend. IV §3 against R30
    """A Pillar with IP and two written effects is two effects by R30, three when its IP
    counts (R57): a warning then, never an error; a Pillar with one effect is fine."""
    cat = catalog_of([card("Eagle UA", "ua", "eagle"), card("Scroll UA", "ua", "scroll"),
                      card("Busy Pillar", "pillar", ip=1, effects=["each turn: heal 1",
                                                                   "draw 1"]),
                      card("Calm Pillar", "pillar", ip=1, effects=["each turn: heal 1"])])
    counts = dict(LEGAL, Pillar=38, **{"Busy Pillar": 1, "Calm Pillar": 1})
    text = "".join(f"{n} {name}\n" for name, n in counts.items())
    deck = parse_deck(text, cat)
    assert validate_deck(deck, cat, profile_from_mapping({}, "t", "t")) == []
    found = validate_deck(deck, cat, profile_from_mapping({"abilities_are_effects": True},
                                                          "t", "t"))
    assert [(v.ruling, v.warning) for v in found] == [("R57", True)]
    assert "Busy Pillar" in found[0].message and is_legal(found)


@pytest.mark.parametrize("when,path", [("damage", "life"), ("effects", "petition")])
def test_switch_lp_effects_step(when, path):  # R58; Art. VII §5 steps iii, vi against R13
    """Seat 0 meets every Petition condition and plays Jab (lp 3) at seat 1, on 3 LP. At
    step iii (R13) the Jab wins by Life before step v looks at Petitions; at step vi
    (R58 ``effects``) step v has already given seat 0 the game by Petition."""
    from rnr_sim.engine.state import PETITIONS_NEEDED, SCROLL_PILLARS_NEEDED

    t = Table(rules={"lp_effects_step": when})
    t.petition(0, *["Petition"] * PETITIONS_NEEDED)
    t.pillar(0, *["Scroll Pillar"] * SCROLL_PILLARS_NEEDED)
    t.set_lp(1, 3)
    (jab,) = t.hand(0, "Jab")
    t.play_card(0, jab)
    t.resolve_phase()
    assert (t.over, t.winner, t.path) == (True, 0, path)
    assert t.lp(1) == (0 if when == "damage" else 3)
