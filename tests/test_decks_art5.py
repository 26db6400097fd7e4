"""Article V, the Laws of Deck Construction, under rulings R1-R6 and the profile switches:
each law with one legal and one illegal deck."""

from __future__ import annotations

from conftest import deck_of

from rnr_sim.decks import Violation, is_legal, validate_deck
from rnr_sim.rules import default_profile, profile_from_mapping


def check(counts, catalog, **switches) -> list[Violation]:
    profile = profile_from_mapping(switches, "test", "test") if switches else default_profile()
    return validate_deck(deck_of(counts, catalog), catalog, profile)


def errors(counts, catalog, **switches) -> list[str]:
    """The rules of the violations that make the deck illegal (warnings left out)."""
    return [v.rule for v in check(counts, catalog, **switches) if not v.warning]


def move(counts, take: str, give: str, n: int = 1) -> dict[str, int]:
    """``counts`` with ``n`` copies of ``take`` replaced by ``give`` (deck size unchanged)."""
    out = dict(counts)
    out[take] -= n
    out[give] = out.get(give, 0) + n
    return out


def test_fixture_deck_is_legal(tiny, legal_counts):
    assert check(legal_counts, tiny) == []


# ---------------------------------------------------------------- Art. V §1 deck size (R1)


def test_art5_s1_deck_size_sixty_with_the_uas(tiny, legal_counts):
    assert errors(legal_counts, tiny) == []
    short = dict(legal_counts, **{"Town Hall": 5})
    assert errors(short, tiny) == ["Art. V §1"]
    long = dict(legal_counts, **{"Town Hall": 7})
    [v] = check(long, tiny)
    assert v.rule == "Art. V §1" and v.ruling == "R1"
    assert v.message == "61 cards; a deck has exactly 60, its 3 UAs included"


def test_art5_s1_deck_size_sixty_plus_uas_when_switched(tiny, legal_counts):
    assert errors(legal_counts, tiny, deck_includes_uas=False) == ["Art. V §1"]
    sixty_three = dict(legal_counts, **{"Town Hall": 9})
    assert errors(sixty_three, tiny, deck_includes_uas=False) == []


# ---------------------------------------------------------------- Art. V §2 / Art. IV §3: UAs


def test_art4_s3_exactly_three_uas(tiny, legal_counts):
    two = move(legal_counts, "Stamp Act", "Town Hall")
    assert errors(two, tiny) == ["Art. V §2"]
    four = move(legal_counts, "Town Hall", "Intolerable Acts")
    assert errors(four, tiny) == ["Art. V §2"]
    other_three = move(legal_counts, "Stamp Act", "Intolerable Acts")
    assert errors(other_three, tiny) == []


def test_art4_s3_uas_bear_different_names(tiny, legal_counts):
    twin = move(legal_counts, "Quartering Act", "Stamp Act")
    [v] = check(twin, tiny)
    assert v.rule == "Art. IV §3"
    assert "2 copies of the UA 'Stamp Act'" in v.message


# ---------------------------------------------------------------- Art. V §2 Pillars (R2)


def test_art5_s2_min_pillars(tiny, legal_counts):
    # 21 Pillars in the fixture; 7 fewer (the Rights warning may come with it).
    few = move(legal_counts, "Town Hall", "Freedom of Speech", 6)
    few = move(few, "Grain Mill", "Redress of Grievances", 1)
    assert errors(few, tiny) == ["Art. V §2"]
    fifteen = move(legal_counts, "Grain Mill", "Redress of Grievances", 6)
    assert errors(fifteen, tiny) == []


def test_art5_s2_min_pillars_switch(tiny, legal_counts):
    few = move(legal_counts, "Town Hall", "Freedom of Speech", 6)
    few = move(few, "Grain Mill", "Redress of Grievances", 1)
    assert errors(few, tiny, min_pillars=14) == []
    assert errors(legal_counts, tiny, min_pillars=22) == ["Art. V §2"]


def test_art5_s2_no_copy_limit_on_pillars_and_rights_r4(tiny, legal_counts):
    many = move(legal_counts, "Grain Mill", "Town Hall", 6)
    many = move(many, "Right to Assemble", "Freedom of Speech", 3)
    assert many["Town Hall"] == 12 and many["Freedom of Speech"] == 7
    assert errors(many, tiny) == []


# ---------------------------------------------------------------- Art. V §2 Rights (R6)


def test_art5_s2_rights_about_ten_is_a_warning_only(tiny, legal_counts):
    few_rights = move(legal_counts, "Freedom of Speech", "Town Hall", 4)
    few_rights = move(few_rights, "Right to Assemble", "Town Hall", 3)
    [v] = check(few_rights, tiny)
    assert v.warning and v.rule == "Art. V §2" and v.ruling == "R6"
    assert is_legal([v])
    near_ten = move(legal_counts, "Freedom of Speech", "Town Hall", 2)  # 8 Rights
    assert check(near_ten, tiny) == []


# ---------------------------------------------------------------- Art. V §3 Freedom, Bills (R3)


FREEDOMS = ["Paul Revere", "Samuel Adams", "Thomas Paine", "Molly Pitcher", "Crispus Attucks"]
BILLS = ["Stamp Repeal", "Tax Relief Bill", "Militia Act", "Postal Act", "Land Grant Bill"]


def with_cards(counts, names, take="Town Hall"):
    out = dict(counts)
    for name in names:
        if out.get(name, 0) == 0:
            out = move(out, take, name)
    return out


def test_art5_s3_at_most_four_freedom_cards(tiny, legal_counts):
    assert errors(with_cards(legal_counts, FREEDOMS[:4]), tiny) == []
    five = with_cards(legal_counts, FREEDOMS)
    [v] = check(five, tiny)
    assert (v.rule, v.ruling) == ("Art. V §3", "R3")
    assert v.message == "5 Freedom cards; a deck has at most 4 (Art. IV §6)"


def test_art5_s3_freedom_cards_are_single_copies(tiny, legal_counts):
    twice = move(legal_counts, "Town Hall", "Paul Revere")
    [v] = check(twice, tiny)
    assert v.rule == "Art. V §3" and "2 copies of 'Paul Revere'" in v.message


def test_art5_s3_max_freedom_switch_one_freedom_card(tiny, legal_counts):
    assert errors(legal_counts, tiny, max_freedom=1) == ["Art. V §3"]
    one = move(legal_counts, "Samuel Adams", "Town Hall")
    assert errors(one, tiny, max_freedom=1) == []


def test_art5_s3_at_most_four_bills(tiny, legal_counts):
    assert legal_counts["Postal Act"] == 1  # four Bills already
    assert errors(legal_counts, tiny) == []
    five = with_cards(legal_counts, BILLS)
    [v] = check(five, tiny)
    assert v.rule == "Art. V §3" and v.message == "5 Bills; a deck has at most 4 (Art. IV §7)"
    assert errors(five, tiny, max_bills=5) == []


def test_art5_s3_bills_are_single_copies(tiny, legal_counts):
    three_bills = move(legal_counts, "Postal Act", "Town Hall")
    assert errors(three_bills, tiny) == []
    twice = move(three_bills, "Town Hall", "Militia Act")
    [v] = check(twice, tiny)
    assert v.rule == "Art. V §3" and "2 copies of 'Militia Act'" in v.message


# ---------------------------------------------------------------- Art. V §4 Rares


def test_art5_s4_at_most_six_rares(tiny, legal_counts):
    # Two Rare Freedom cards in the fixture, plus Rare Pillars.
    six = move(legal_counts, "Town Hall", "Continental Treasury", 4)
    assert errors(six, tiny) == []
    seven = move(legal_counts, "Town Hall", "Continental Treasury", 5)
    [v] = check(seven, tiny)
    assert (v.rule, v.ruling) == ("Art. V §4", "R31")
    assert v.message == "7 Rare cards (UAs not counted); a deck has at most 6"
    assert errors(seven, tiny, max_rares=7) == []


def test_art5_s4_rare_uas_not_counted(tiny, legal_counts):
    six = move(legal_counts, "Town Hall", "Continental Treasury", 4)
    rare_uas = move(six, "Stamp Act", "Intolerable Acts")  # Writs of Assistance is Rare too
    assert errors(rare_uas, tiny) == []


# ---------------------------------------------------------------- Art. V §5 copies (R4)


def test_art5_s5_copy_limit_attack(tiny, legal_counts):
    assert legal_counts["Minuteman Volley"] == 4
    five = move(legal_counts, "Town Hall", "Minuteman Volley")
    [v] = check(five, tiny)
    assert (v.rule, v.ruling) == ("Art. V §5", "R4")
    assert v.message == "5 copies of the Attack 'Minuteman Volley'; at most 4"


def test_art5_s5_copy_limit_defense(tiny, legal_counts):
    assert legal_counts["Stone Fort"] == 4
    five = move(legal_counts, "Town Hall", "Stone Fort")
    assert errors(five, tiny) == ["Art. V §5"]


def test_art5_s5_copy_limit_switch(tiny, legal_counts):
    assert errors(legal_counts, tiny, max_copies_attack_defense=3) == ["Art. V §5"] * 5
    five = move(legal_counts, "Town Hall", "Stone Fort")
    assert errors(five, tiny, max_copies_attack_defense=5) == []


def test_art5_s5_each_name_counted_apart(tiny, legal_counts):
    # 12 Attacks in three names of 4: legal.
    assert sum(legal_counts[n] for n in
               ("Minuteman Volley", "Cannon Barrage", "Musket Skirmish")) == 12
    assert errors(legal_counts, tiny) == []


# ---------------------------------------------------------------- Art. V §6 Branches (R5)


def no_eagle(counts):
    out = dict(counts)
    for eagle, other in [
        ("Quartering Act", "Intolerable Acts"),
        ("Printing Press", "Grain Mill"),
        ("Redress of Grievances", "Freedom of Speech"),
        ("Earthwork Redoubt", "Town Hall"),
        ("Paul Revere", "Crispus Attucks"),
        ("Postal Act", "Land Grant Bill"),
    ]:
        out = move(out, eagle, other, out[eagle])
    return out


def test_art5_s6_every_branch(tiny, legal_counts):
    deck = no_eagle(legal_counts)
    deck = move(deck, "Land Grant Bill", "Town Hall")  # Land Grant Bill is Eagle too
    [v] = check(deck, tiny)
    assert (v.rule, v.ruling) == ("Art. V §6", "R5")
    assert v.message.startswith("no card of the Eagle Branch")


def test_art5_s6_a_ua_counts_for_its_branch_r5(tiny, legal_counts):
    deck = no_eagle(legal_counts)
    deck = move(deck, "Land Grant Bill", "Town Hall")
    deck = move(deck, "Intolerable Acts", "Quartering Act")  # the only Eagle card: a UA
    assert errors(deck, tiny) == []


def test_art5_s6_missing_branches_named_together(tiny):
    counts = {"Grain Mill": 57, "Stamp Act": 1, "Quartering Act": 1, "Intolerable Acts": 1}
    [v] = [v for v in check(counts, tiny) if v.rule == "Art. V §6"]
    assert "Scroll Branch" in v.message
    counts = {"Grain Mill": 57, "Stamp Act": 3}
    [v] = [v for v in check(counts, tiny) if v.rule == "Art. V §6"]
    assert "Eagle, Liberty Bell and Scroll Branches" in v.message


# ---------------------------------------------------------------- every violation at once


def test_art5_six_violations_reported_together(tiny):
    counts = {
        "Stamp Act": 2, "Quartering Act": 1,          # Art. IV §3: two of one UA
        "Grain Mill": 10,                             # Art. V §2: 10 Pillars
        "Minuteman Volley": 6,                        # Art. V §5: 6 copies
        "Musket Skirmish": 4, "Cannon Barrage": 4,
        "Thomas Paine": 1, "Molly Pitcher": 1,        # Art. V §6: no Scroll card
        "Paul Revere": 2,                             # Art. V §3: 2 copies of a Freedom card
        "Earthwork Redoubt": 4, "Stone Fort": 4,
        "Redress of Grievances": 11,
    }                                                  # Art. V §1: 50 cards
    found = check(counts, tiny)
    assert sorted(v.rule for v in found if not v.warning) == sorted(
        ["Art. V §1", "Art. IV §3", "Art. V §2", "Art. V §3", "Art. V §5", "Art. V §6"])
    assert not is_legal(found)
    for v in found:
        assert v.rule.startswith("Art. ") and "§" in v.rule
        assert str(v).startswith(("illegal (Art.", "warning (Art."))
