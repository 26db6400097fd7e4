"""The catalog and rules validator refuses what cannot work (issue 16, item 7): card names
no deck list can name, effects the engine can never fire, and rules profiles under which
no deck is legal; each refusal is one line naming the card (file:line) and the rule. And
it reads Orders, Branches, rarities and keywords in any case, as it reads effects."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnr_sim.cards import CatalogError, parse_catalog
from rnr_sim.cards.catalog import deck_name_problem
from rnr_sim.decks import parse_deck
from rnr_sim.errors import InputError
from rnr_sim.patches import toml_string
from rnr_sim.rules import load_profile, most_pillars, profile_problem

SET = '[set]\nname = "T"\nversion = "1"\n'


def table(name: str = "X", type_: str = "attack", *, branch: str = "bison",
          rarity: str = "common", **fields) -> str:
    """One [[cards]] table, every value written by the project's TOML writer."""
    lines = [f"name = {toml_string(name)}", f"type = {toml_string(type_)}",
             f"branch = {toml_string(branch)}", f"rarity = {toml_string(rarity)}"]
    for key, value in fields.items():
        if isinstance(value, str):
            value = toml_string(value)
        elif isinstance(value, list):
            value = "[" + ", ".join(toml_string(v) for v in value) + "]"
        lines.append(f"{key} = {value}")
    return "\n[[cards]]\n" + "\n".join(lines) + "\n"


def one_problem(text: str) -> str:
    with pytest.raises(CatalogError) as e:
        parse_catalog(text, where="cards.toml")
    problems = e.value.problems
    assert len(problems) == 1, problems
    assert str(e.value).splitlines()[1:] == problems  # each problem is one line
    return problems[0]


# ---------------------------------------------------------------------------- names


@pytest.mark.parametrize("name,fragment", [
    ("#1 Volley", "starts with '#'"),
    ("Federalist No. #10", "holds ' #'"),
    ("Line\u2028Break", "line break (U+2028)"),
    ("Para\u2029Break", "line break (U+2029)"),
    ("Next\u0085Line", "line break (U+0085)"),
    ("Form\fFeed", "line break (U+000C)"),
    ("Vertical\vTab", "line break (U+000B)"),
    ("New\nLine", "line break (U+000A)"),
    ("Carriage\rReturn", "line break (U+000D)"),
    ("Group\x1dSeparator", "line break (U+001D)"),
    ("Tab\tInside", "control character U+0009"),
    ("Del\x7fete", "control character U+007F"),
    ("Bell\x07", "control character U+0007"),
    ("C1\x9bcontrol", "control character U+009B"),
    (" Leading", "spaces at its ends"),
    ("Trailing\u00a0", "spaces at its ends"),
    ("Trailing\x1f", "spaces at its ends"),
])
def test_a_name_no_deck_list_can_name_is_refused(name, fragment):
    p = one_problem(SET + "\n" * 3 + table(name, damage=1))
    assert p.startswith("cards.toml:8: card "), p  # the line of its [[cards]] header
    assert "field 'name'" in p and fragment in p


@pytest.mark.parametrize("name", [
    "C#", "No#1", "1776", "4x Volley", "x", "Name: Policy", "Paine's \"Common Sense\"",
    "Soft\u00adhyphen", "Zero\u200bwidth", "Non\u00a0breaking", "Liberté", "😀 Emoji",
])
def test_an_odd_name_a_deck_list_can_name_is_accepted(name):
    catalog = parse_catalog(SET + table(name, damage=1))
    assert catalog.cards[0].name == name
    assert parse_deck(f"1 {name}\n", catalog).slots == (name,)


def _named_by_a_deck_line(name: str) -> bool:
    """Whether the line ``1 <name>`` of a deck list names the card ``name`` exactly."""
    from rnr_sim.cards import Catalog
    from rnr_sim.cards.schema import Card

    catalog = Catalog("T", "1", (Card(name=name, type="pillar", branch="bison",
                                      rarity="common", ip=1),))
    try:
        return parse_deck(f"1 {name}\n", catalog).slots == (name,)
    except InputError:
        return False


@settings(max_examples=400, deadline=None, database=None)
@given(st.text(min_size=1, max_size=12))
def test_the_catalog_accepts_exactly_the_names_a_deck_list_can_name(name):
    """Any name the catalog accepts, a deck line names; any name a deck line names is
    accepted unless it holds a control character (refused: nobody can see or type it)."""
    accepted = deck_name_problem(name) is None
    has_control = any(0 <= ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in name)
    if accepted:
        assert _named_by_a_deck_line(name)
    elif not has_control and name.strip():
        assert not _named_by_a_deck_line(name)


# ---------------------------------------------------------------------------- capitals


def test_orders_branches_rarities_and_keywords_read_in_any_case():
    catalog = parse_catalog(SET + table("Granary", "Pillar", branch="Liberty_Bell",
                                        rarity="RARE", ip=1, keywords=["Protect"])
                            + table("Act", " BILL ", cost=1, keywords=["PROTECT"])
                            + table("Plea", "Rights", keywords=["Petition"]))
    granary, act, plea = catalog.cards
    assert (granary.type, granary.branch, granary.rarity) == ("pillar", "liberty_bell", "rare")
    assert granary.keywords == ("protect",) and act.keywords == ("protect",)
    assert act.type == "bill" and plea.is_petition


def test_a_keyword_written_twice_in_two_cases_is_named():
    p = one_problem(SET + table("X", damage=1, keywords=["protect", "Protect"]))
    assert "'protect' is listed twice" in p


# ---------------------------------------------------------------------------- effects


@pytest.mark.parametrize("effect", ["draw 1", "Heal 2", "ip 3"])
def test_a_ua_effect_that_fires_on_play_is_refused(effect):
    p = one_problem(SET + table("Stamp Act", "ua", dp=5, drain=1, effects=[effect]))
    assert p.startswith("cards.toml:5: card 'Stamp Act': field 'effects'")
    assert "a UA is never played" in p and "Art. IV §3.2" in p


@pytest.mark.parametrize("effect", ["each turn: draw 1", "activate 1: heal 2",
                                    "on destroy: lp 3", "each turn: ip 1"])
def test_a_ua_effect_the_engine_fires_is_accepted(effect):
    # The UA Area is part of the board: each turn and activate effects fire there
    # (fire_effects, play_phase); a destroyed UA fires on destroy (destroy).
    card = parse_catalog(SET + table("Stamp Act", "ua", dp=5, drain=1, effects=[effect])).cards[0]
    assert card.effects[0].source == effect


@pytest.mark.parametrize("card_type,fields,fragment", [
    ("rights", {"cost": 1}, "this one has no 'petition' keyword"),
    ("rights", {"cost": 1, "effects2": "each turn: draw 1"}, "no 'petition' keyword"),
    ("freedom", {"cost": 1}, "a Freedom card is discarded after resolving"),
    ("bill", {"cost": 1}, "a Bill returns to hand"),
    ("pillar", {"ip": 1}, "no rule or effect destroys a Pillar"),
])
def test_on_destroy_on_a_card_that_is_never_destroyed_is_refused(card_type, fields, fragment):
    effects = ["on destroy: lp 3"]
    if "effects2" in fields:
        effects.append(fields.pop("effects2"))
    p = one_problem(SET + table("Y", card_type, effects=effects, **fields))
    assert p.startswith("cards.toml:5: card 'Y': field 'effects': \"on destroy: lp 3\" never "
                        f"fires: a {card_type} card is never destroyed")
    assert fragment in p


def test_on_destroy_on_a_freedom_kicker_is_refused():
    p = one_problem(SET + table("F", "freedom", cost=1)
                    + 'kicker = { cost = 1, effect = "on destroy: draw 1" }\n')
    assert "field 'kicker': \"on destroy: draw 1\" never fires" in p


@pytest.mark.parametrize("card_type,fields", [
    ("defense", {"dp": 2}), ("ua", {"dp": 2, "drain": 1}), ("attack", {"damage": 2}),
    ("rights", {"keywords": ["petition"]}),
])
def test_on_destroy_on_a_card_that_can_be_destroyed_is_accepted(card_type, fields):
    card = parse_catalog(SET + table("Z", card_type, effects=["on destroy: lp 3"],
                                     **fields)).cards[0]
    assert card.effects[0].trigger == "on_destroy"


def test_an_activate_effect_on_a_pillar_is_refused_r34():
    """Amend. V §4: Pillars are "not subject to effect activation" (R34)."""
    with pytest.raises(CatalogError, match=r"Granary.*not subject to effect activation"):
        parse_catalog(SET + table("Granary", "pillar", ip=1, effects=["activate 1: draw 1"]))


def test_the_sample_catalog_still_loads():
    from rnr_sim.cards import FOUNDATION_CATALOG, load_catalog

    assert len(load_catalog(FOUNDATION_CATALOG)) == 153
    assert len(load_catalog(None)) == 355  # the default: the whole Original Set


# ---------------------------------------------------------------------------- rules profile


@pytest.mark.parametrize("min_pillars", [58, 59, 60])
def test_min_pillars_that_leave_no_legal_deck_are_refused(write, min_pillars):
    path = write("v.toml", f"# strict\nmax_rares = 2\nmin_pillars = {min_pillars}\n")
    with pytest.raises(InputError) as e:
        load_profile(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}:3: min_pillars = {min_pillars} leaves no legal deck")
    assert "at most 57 Pillars" in msg and "Art. V §1-2" in msg and "\n" not in msg


def test_min_pillars_up_to_the_room_beside_the_uas_are_accepted(write):
    assert load_profile(write("a.toml", "min_pillars = 57\n"))["min_pillars"] == 57
    assert load_profile(write("b.toml", "[rules]\ndeck_includes_uas = false\n"
                                        "min_pillars = 60\n"))["min_pillars"] == 60
    assert most_pillars(True) == 57 and most_pillars(False) == 60


def test_min_pillars_58_with_the_uas_outside_the_deck_then_inside_it(write):
    assert profile_problem({"deck_includes_uas": False, "min_pillars": 58}) is None
    with pytest.raises(InputError, match=r"v\.toml:2: min_pillars = 58 leaves no legal deck"):
        load_profile(write("v.toml", "[rules]\nmin_pillars = 58\ndeck_includes_uas = true\n"))


def test_a_57_pillar_deck_is_legal_under_min_pillars_57(tiny):
    """The bound is tight: a deck at the bound is legal, so the check refuses no profile
    that has a legal deck."""
    from conftest import deck_of

    from rnr_sim.decks import is_legal, validate_deck
    from rnr_sim.rules import profile_from_mapping

    profile = profile_from_mapping({"min_pillars": 57}, "tight", "<test>")
    uas = [c.name for c in tiny.cards if c.type == "ua"][:3]
    pillars = [c for c in tiny.cards if c.type == "pillar"]
    counts = {name: 1 for name in uas}
    branches = {tiny.cards[tiny.by_name[n]].branch for n in uas}
    extra = [c for c in pillars if c.branch not in branches and c.rarity != "rare"]
    for c in extra:
        counts[c.name] = 1
        branches.add(c.branch)
    main = next(c for c in pillars if c.rarity != "rare")
    counts[main.name] = counts.get(main.name, 0) + 57 - len(extra)
    deck = deck_of(counts, tiny)
    assert len(deck) == 60
    assert is_legal(validate_deck(deck, tiny, profile)), validate_deck(deck, tiny, profile)
