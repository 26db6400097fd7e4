"""The effect grammar (docs/design.md): every verb, every trigger and every keyword, each on a
card played or placed in a position built with ``engine_harness``."""

from __future__ import annotations

from engine_harness import Table, card

from rnr_sim import enums

PASSIVE = 1e9


def resolve_card(t: Table, name: str, p: int = 0) -> int:
    """Play ``name`` from ``p``'s hand and run the Resolve Phase; its slot."""
    (s,) = t.hand(p, name)
    t.play_card(p, s)
    t.resolve_phase(p)
    return s


def verb_card(effect: str, name: str | None = None, **fields) -> dict:
    return card(name or f"Do {effect}", "rights", cost=0, effects=[effect], **fields)


# =========================================================================== verbs
def test_every_verb_has_a_test_here():
    tested = {n[len("test_verb_"):].replace("_", " ") for n in globals()
              if n.startswith("test_verb_")}
    assert tested == set(enums.VERBS[1:])


def test_verb_lp():
    t = Table([verb_card("lp 6")])
    resolve_card(t, "Do lp 6")
    assert (t.lp(0), t.lp(1)) == (100, 94)


def test_verb_strike():
    t = Table([verb_card("strike 6")])
    wall = t.play_area(1, "Wall")
    resolve_card(t, "Do strike 6")
    assert t.dp(1, wall) == 4 and [t.dp(1, s) for s in t.slots(1, "UA")] == [20, 20, 20]
    t.deal_damage(1, wall, 4)
    resolve_card(t, "Do strike 6")  # no Defense left: a UA
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [14, 20, 20]


def test_verb_strike_ua():
    t = Table([verb_card("strike ua 6")])
    wall = t.play_area(1, "Wall")
    resolve_card(t, "Do strike ua 6")
    assert t.dp(1, wall) == 10  # past the Defense (R18)
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [14, 20, 20]


def test_verb_heal():
    t = Table([verb_card("heal 6")])
    t.set_lp(0, 50)
    resolve_card(t, "Do heal 6")
    assert (t.lp(0), t.lp(1)) == (56, 100)


def test_verb_draw():
    t = Table([verb_card("draw 2")])
    t.draw_pile(0, "Filler", "Jab", "Salve")  # Salve on top
    resolve_card(t, "Do draw 2")
    assert t.hand_cards(0) == ["Salve", "Jab"] and t.draw_cards(0) == ["Filler"]


def test_verb_force_draw():
    t = Table([verb_card("force draw 2")])
    t.draw_pile(1, "Filler", "Jab", "Salve")
    resolve_card(t, "Do force draw 2")
    assert t.hand_cards(1) == ["Salve", "Jab"] and t.n_hand(0) == 0


def test_verb_mill():
    t = Table([verb_card("mill 2")])
    t.draw_pile(1, "Filler", "Jab", "Salve")
    resolve_card(t, "Do mill 2")
    assert t.draw_cards(1) == ["Filler"] and sorted(t.cards_in(1, "discard")) == ["Jab", "Salve"]


def test_verb_exile():
    t = Table([verb_card("exile 2")])
    t.draw_pile(1, "Filler", "Jab", "Salve")
    resolve_card(t, "Do exile 2")
    assert t.draw_cards(1) == ["Filler"] and sorted(t.cards_in(1, "exile")) == ["Jab", "Salve"]
    assert t.cards_in(1, "discard") == []


def test_verb_discard():
    t = Table([verb_card("discard 1")])
    t.hand(1, "Filler", "Jab", "Salve")
    resolve_card(t, "Do discard 1")
    assert t.n_hand(1) == 2 and len(t.cards_in(1, "discard")) == 1


def test_verb_ip():
    t = Table([verb_card("ip 2")])
    (s,) = t.hand(0, "Do ip 2")
    t.play_card(0, s)
    assert t.ip(0) == (0, 2)  # non-Pillar IP (Amend. VI), at once (R32)


def test_verb_ip_per_pillar():
    """N non-Pillar IP for each Pillar its controller has in play: at once when played
    (R32), and in the Independence Phase as an 'each turn' effect."""
    t = Table([verb_card("ip per pillar 2"),
               verb_card("each turn: ip per pillar 1", name="Tithe")])
    t.pillar(0, "Pillar", "Pillar", "Big Pillar")
    (s,) = t.hand(0, "Do ip per pillar 2")
    t.play_card(0, s)
    assert t.ip(0) == (0, 6)  # 2 x 3 Pillars, non-Pillar IP (Amend. VI)
    t.play_area(0, "Tithe")
    t.independence_phase(0)
    assert t.ip(0) == (5, 3)  # Pillars give 1 + 1 + 3; Tithe 1 x 3 Pillars
    bare = Table([verb_card("ip per pillar 2")])
    (s2,) = bare.hand(0, "Do ip per pillar 2")
    bare.play_card(0, s2)
    assert bare.ip(0) == (0, 0)  # no Pillar in play: nothing


def test_verb_repair():
    t = Table([verb_card("repair 3")])
    wall = t.play_area(0, "Wall", dp=5)  # 5 of 10 missing
    t.set_dp(0, t.slots(0, "UA")[0], 19)  # 1 of 20 missing
    resolve_card(t, "Do repair 3")
    assert t.dp(0, wall) == 8  # the most damaged
    resolve_card(t, "Do repair 3")
    assert t.dp(0, wall) == 10  # never above its printed DP
    assert t.dp(0, t.slots(0, "UA")[0]) == 19


def test_verb_destroy_petition():
    t = Table([verb_card("destroy petition 1")])
    t.petition(1, "Petition", "Petition")
    resolve_card(t, "Do destroy petition 1")
    assert t.n_petitions(1) == 1 and t.cards_in(1, "discard") == ["Petition"]


def test_verb_recover():
    t = Table([verb_card("recover 1")])
    t.set_policy(0, pillar_target=0)
    t.discard_pile(0, "Filler", "Costly")
    resolve_card(t, "Do recover 1")
    assert t.hand_cards(0) == ["Costly"]


def test_verb_tutor_pillar():
    t = Table([verb_card("tutor pillar")])
    t.draw_pile(0, "Filler", "Pillar", "Jab", "Salve")
    resolve_card(t, "Do tutor pillar")
    assert t.hand_cards(0) == ["Pillar"]
    assert sorted(t.draw_cards(0)) == ["Filler", "Jab", "Salve"]


# =========================================================================== triggers
def test_trigger_on_resolve_fires_once():
    t = Table()
    t.set_policy(0, stop=PASSIVE)
    t.draw_pile(0, "Filler", "Filler")
    (jab,) = t.hand(0, "Jab")
    t.play_card(0, jab)
    t.resolve_phase()
    t.end_phase()
    t.take_turn(0)
    assert t.lp(1) == 97


def test_trigger_each_turn_fires_in_each_of_its_controllers_resolve_phases():
    t = Table([card("Pressure", "rights", cost=0, effects=["each turn: lp 2"])])
    t.set_policy(0, stop=PASSIVE)
    t.set_policy(1, stop=PASSIVE)
    t.draw_pile(0, *["Filler"] * 3)
    t.draw_pile(1, *["Filler"] * 3)
    (pressure,) = t.hand(0, "Pressure")
    t.play_card(0, pressure)
    t.resolve_phase()
    assert t.zone(0, pressure) == "play" and t.lp(1) == 98  # stays (R27), fires at once
    t.end_phase()
    t.play_turns(3)  # seats 0, 1, 0
    assert t.lp(1) == 98 - 2 * 2 and t.lp(0) == 100


def test_trigger_each_turn_ip_comes_in_the_independence_phase():
    t = Table()
    t.play_area(0, "Treaty")
    t.independence_phase()
    assert t.ip(0) == (0, 1)
    t.resolve_phase()
    assert t.ip(0) == (0, 1)  # not again at step vi


def test_trigger_activate_pays_in_the_play_phase_and_resolves_later_r13():
    t = Table()
    fort = t.play_area(0, "Fort", dp=4)  # activate 1: repair 3
    t.set_ip(0, pillar=1)
    t.activate(0, fort, pay=False)
    assert t.ip(0) == (0, 0) and t.dp(0, fort) == 4
    t.resolve_phase()
    assert t.dp(0, fort) == 7


def test_trigger_on_destroy_controlled_by_the_owner_aimed_at_the_active_player_r36():
    t = Table([card("Trap", "defense", dp=5, effects=["on destroy: lp 4"]),
               card("Grave", "defense", dp=5, effects=["on destroy: heal 4"])])
    t.play_area(1, "Trap")
    t.play_area(0, "Volley")
    t.attack_damage_step()
    assert (t.lp(0), t.lp(1)) == (96, 100)  # seat 1's effect, at the active seat 0
    grave = t.play_area(1, "Grave")
    t.set_lp(1, 50)
    t.destroy(1, grave)
    t.fire_on_destroy()
    assert t.lp(1) == 54  # its owner heals


def test_trigger_on_destroy_of_the_active_players_card_is_aimed_at_an_opponent():
    t = Table([card("Martyr", "attack", damage=2, effects=["on destroy: lp 4"])])
    volley = t.play_area(1, "Volley")
    (martyr,) = t.hand(0, "Martyr")
    t.play_card(0, martyr, aoa=(1, volley))
    t.resolve_aoa()
    assert t.zone(0, martyr) == "discard"
    assert (t.lp(0), t.lp(1)) == (100, 96)


def test_trigger_on_destroy_fires_before_the_next_attack_r36():
    t = Table([card("Grave", "defense", dp=5, effects=["on destroy: heal 4"])])
    t.play_area(1, "Grave")
    t.play_area(0, "Volley")
    t.play_area(0, "Volley")
    t.attack_damage_step()
    kinds = [e[0] for e in t.events("damage", "destroy", "lp")]
    assert kinds == ["damage", "destroy", "lp", "damage"]


def test_trigger_on_destroy_fires_when_a_petition_is_destroyed():
    t = Table([card("Martyr Petition", "rights", "scroll", cost=0, keywords=["petition"],
                    effects=["on destroy: heal 5"])])
    t.petition(1, "Martyr Petition")
    t.apply_effect(0, "destroy petition", 1)
    t.fire_on_destroy()
    assert t.n_petitions(1) == 0
    assert t.lp(1) == 105


def test_trigger_on_destroy_chains_until_done():
    t = Table([card("Mine", "defense", dp=5, effects=["on destroy: strike 3"]),
               card("Counter Mine", "defense", dp=3, effects=["on destroy: strike 4"])])
    t.play_area(1, "Mine")
    counter = t.play_area(0, "Counter Mine")
    t.play_area(0, "Volley")
    t.attack_damage_step()
    # Volley destroys the Mine; its strike 3 destroys seat 0's Counter Mine; that one's
    # strike 4 lands on a seat 1 UA; then nothing is left to fire.
    assert t.zone(0, counter) == "discard"
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [16, 20, 20]


def test_trigger_kicker_fires_only_when_paid():
    t = Table()
    t.draw_pile(0, *["Filler"] * 5)
    plain, kicked = t.hand(0, "Hero", "Hero")  # lp 5; kicker +2: draw 2
    t.play_card(0, plain)
    t.resolve_phase()
    assert t.n_draw(0) == 5
    t.play_card(0, kicked, kicked=True)
    t.resolve_phase()
    assert t.n_draw(0) == 3


def test_trigger_unpaid_each_turn_kicker_gives_nothing():
    t = Table([card("Patron", "freedom", cost=0, rarity="rare", effects=["each turn: lp 1"],
                    kicker={"cost": 1, "effect": "each turn: ip 1"})])
    (patron,) = t.hand(0, "Patron")
    t.play_card(0, patron)  # not kicked; it stays in play for its own each-turn effect
    t.resolve_phase()
    t.end_phase()
    assert t.zone(0, patron) == "play"
    t.independence_phase()
    assert t.ip(0) == (0, 0)


def test_trigger_paid_each_turn_kicker_fires():
    t = Table([card("Patron", "freedom", cost=0, rarity="rare", effects=["lp 1"],
                    kicker={"cost": 1, "effect": "each turn: lp 2"})])
    (patron,) = t.hand(0, "Patron")
    t.play_card(0, patron, kicked=True)
    t.resolve_phase()
    assert t.lp(1) == 100 - 1 - 2


# =========================================================================== keywords
def test_keyword_petition_puts_rights_in_the_petition_area():
    t = Table()
    s = resolve_card(t, "Petition")
    assert (t.zone(0, s), t.n_petitions(0)) == ("petition", 1)


def test_keyword_protect_keeps_milled_cards_in_place_r19_r38():
    t = Table([verb_card("mill 3")])
    t.draw_pile(1, "Filler", "Guarded Filler", "Jab", "Guarded Filler", "Salve")
    resolve_card(t, "Do mill 3")
    # The top three are Jab, a Protect card and Salve: two go, the Protect card stays on
    # top, and the mill does not dig deeper for a third.
    assert t.draw_cards(1) == ["Filler", "Guarded Filler", "Guarded Filler"]
    assert sorted(t.cards_in(1, "discard")) == ["Jab", "Salve"]


def test_keyword_protect_stops_random_discards():
    t = Table([verb_card("discard 2")])
    t.hand(1, "Guarded Filler", "Guarded Filler", "Filler")
    resolve_card(t, "Do discard 2")
    assert t.hand_cards(1) == ["Guarded Filler", "Guarded Filler"]


def test_keyword_one_shot_attack_is_discarded_after_its_damage_step_r16():
    t = Table([card("Bolt", "attack", cost=0, damage=5, keywords=["one_shot"])])
    (bolt,) = t.hand(0, "Bolt")
    volley = t.play_area(0, "Volley")
    t.play_card(0, bolt)
    t.resolve_phase()
    assert t.zone(0, bolt) == "discard" and t.zone(0, volley) == "play"
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [10, 20, 20]


def test_r44_recover_never_returns_a_ua():
    t = Table([verb_card("recover 1")])
    t.set_policy(0, pillar_target=0)
    t.discard_pile(0, "UA", "Filler")
    resolve_card(t, "Do recover 1")
    assert t.hand_cards(0) == ["Filler"]


def test_verb_heal_per_pillar():
    """N LP for each Pillar its controller has in play when it resolves, at step iv with
    healing (R13), through the same LP change as ``heal``."""
    t = Table([verb_card("heal per pillar 2")])
    t.pillar(0, "Pillar", "Pillar", "Big Pillar")
    t.set_lp(0, 80)
    resolve_card(t, "Do heal per pillar 2")
    assert t.lp(0) == 86  # 2 x 3 Pillars
    bare = Table([verb_card("heal per pillar 2")])
    bare.set_lp(0, 80)
    resolve_card(bare, "Do heal per pillar 2")
    assert bare.lp(0) == 80  # no Pillar in play: nothing
