"""The card catalog contract (docs/design.md, "Cards"): loading, and every error naming file,
card and field, all problems of a file reported together."""

from __future__ import annotations

import pytest
from conftest import TINY_CATALOG

from rnr_sim.cards import CatalogError, load_catalog, parse_catalog
from rnr_sim.errors import InputError

SET = '[set]\nname = "T"\nversion = "1"\n'
ATTACK = '''
[[cards]]
name = "Minuteman Volley"
type = "attack"
branch = "bison"
rarity = "common"
cost = 2
damage = 10
'''


def card(name: str = "X", type_: str = "attack", **fields) -> str:
    """One [[cards]] table; ``fields`` are TOML values written as given (strings quoted)."""
    lines = [f'name = "{name}"', f'type = "{type_}"', 'branch = "bison"', 'rarity = "common"']
    for key, value in fields.items():
        lines.append(f"{key} = {value!r}".replace("'", '"') if isinstance(value, str | list)
                     else f"{key} = {value}")
    return "\n[[cards]]\n" + "\n".join(lines) + "\n"


def problems(text: str) -> list[str]:
    """The problems a catalog text raises (it must raise)."""
    with pytest.raises(CatalogError) as e:
        parse_catalog(text, where="cards.toml")
    err = e.value
    lines = str(err).splitlines()
    n = len(err.problems)
    assert lines[0] == f"cards.toml: {n} problem{'s' if n != 1 else ''}"
    assert lines[1:] == err.problems
    return err.problems


def one_problem(text: str) -> str:
    found = problems(text)
    assert len(found) == 1, found
    return found[0]


# ---------------------------------------------------------------------------- loading


def test_catalog_loads_fixture_in_file_order(tiny):
    assert tiny.name == "Tiny Test Set"
    assert tiny.version == "1"
    assert tiny.path == TINY_CATALOG
    assert len(tiny.cards) == 27
    assert tiny.cards[0].name == "Town Hall"
    assert tiny.by_name["Town Hall"] == 0
    assert all(tiny.by_name[c.name] == i for i, c in enumerate(tiny.cards))
    import hashlib
    assert tiny.sha256 == hashlib.sha256(TINY_CATALOG.read_bytes()).hexdigest()


def test_catalog_card_fields(tiny):
    revere = tiny.cards[tiny.by_name["Paul Revere"]]
    assert (revere.type, revere.branch, revere.rarity, revere.cost) == (
        "freedom", "eagle", "rare", 3)
    assert (revere.ip, revere.damage, revere.dp, revere.drain) == (0, 0, 0, 0)
    assert [e.verb for e in revere.effects] == ["draw"]
    assert revere.kicker is not None
    assert (revere.kicker.verb, revere.kicker.amount, revere.kicker.cost) == ("force draw", 2, 2)
    assert revere.kicker.describe() == "kicker +2 IP: force draw 2"
    ua = tiny.cards[tiny.by_name["Stamp Act"]]
    assert (ua.dp, ua.drain, ua.cost) == (20, 2, 0)
    assert tiny.cards[tiny.by_name["Right to Assemble"]].keywords == ("petition", "protect")
    assert tiny.cards[tiny.by_name["Town Hall"]].text == "A Scroll Pillar."


def test_catalog_closest_names(tiny):
    assert tiny.closest("Minutman Volley") == ["Minuteman Volley"]
    assert tiny.closest("minuteman volley", n=1) == ["Minuteman Volley"]
    assert tiny.closest("zzzzzz") == []


def test_catalog_to_polars(tiny):
    df = tiny.to_polars()
    assert df.columns == ["id", "name", "type", "branch", "rarity", "cost", "ip", "damage",
                          "dp", "drain", "keywords", "effects", "text"]
    assert df.height == len(tiny.cards)
    row = df.row(tiny.by_name["Paul Revere"], named=True)
    assert row["effects"] == "draw 2; kicker +2 IP: force draw 2"
    assert row["cost"] == 3
    assert df.row(tiny.by_name["Right to Assemble"], named=True)["keywords"] == (
        "petition, protect")


def test_catalog_default_is_package_data():
    from rnr_sim.cards import DEFAULT_CATALOG

    assert DEFAULT_CATALOG.name == "original.toml"  # the whole Original Set (issue 41)
    assert DEFAULT_CATALOG.parent.name == "data"


# ---------------------------------------------------------------------------- files


@pytest.mark.parametrize(
    "content,fragment",
    [
        (b"", "empty file"),
        (b"  \n# only a comment\n", None),  # no [set], no cards: problems, not a crash
        (b"[set\nname = 1", "broken TOML"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a text file"),
        (b"\xff\xfe\xfd name", "not a text file"),
    ],
    ids=["empty", "comment-only", "malformed", "binary", "not-utf8"],
)
def test_catalog_unreadable_files_are_one_line(write, content, fragment):
    path = write("cards.toml", content)
    with pytest.raises(InputError) as e:
        load_catalog(path)
    message = str(e.value)
    assert str(path) in message
    if fragment is None:
        assert "missing [set]" in message and "no [[cards]]" in message
    else:
        assert fragment in message
        assert "\n" not in message


def test_catalog_whitespace_only_is_empty(write):
    with pytest.raises(InputError, match="empty file"):
        load_catalog(write("cards.toml", "\n\n   \n"))


def test_catalog_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such card catalog file") as e:
        load_catalog(tmp_path / "nope.toml")
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="is a directory") as e:
        load_catalog(tmp_path)
    assert "\n" not in str(e.value)


def test_catalog_ten_megabytes_loads(write):
    """A 10 MB catalog (40k cards) loads, checks and compiles (how fast is a benchmark's to
    measure, not a test's: a machine at load 7-8 took 36 s)."""
    cards = "".join(
        f'[[cards]]\nname = "Generated Volley {i:05d}"\ntype = "attack"\nbranch = "bison"\n'
        f'rarity = "common"\ncost = 2\ndamage = {i % 20 + 1}\neffects = ["lp 2", '
        f'"each turn: strike ua 1"]\nkeywords = []\ntext = "{"A long printed text. " * 8}"\n\n'
        for i in range(40_000)
    )
    path = write("big.toml", SET + cards)
    assert path.stat().st_size >= 10_000_000
    catalog = load_catalog(path)
    table = catalog.compile()
    assert len(catalog) == 40_000
    assert table.shape[0] == 40_000


def test_catalog_problems_are_capped_but_counted(write):
    text = SET + "".join(card(f"C{i}", "atack") for i in range(300))
    with pytest.raises(CatalogError) as e:
        load_catalog(write("cards.toml", text))
    lines = str(e.value).splitlines()
    assert lines[0].endswith(": 300 problems")
    assert lines[-1].endswith("... and 100 more")


# ---------------------------------------------------------------------------- the [set]


def test_catalog_missing_set_name():
    assert "[set]: missing name" in one_problem('[set]\nversion = "1"\n' + ATTACK)
    assert "missing [set] table" in one_problem(ATTACK)


def test_catalog_unknown_key_in_set():
    p = one_problem('[set]\nname = "T"\nedition = "2"\n' + ATTACK)
    assert "[set]: unknown key 'edition'" in p and "valid keys: name, version" in p


def test_catalog_unknown_top_level_key():
    p = one_problem('author = "me"\n' + SET + ATTACK)
    assert p == ("cards.toml: unknown top-level key 'author'; a catalog holds a [set] table "
                 "and [[cards]] tables")


def test_catalog_no_cards():
    assert "no [[cards]] tables" in one_problem(SET)


# ---------------------------------------------------------------------------- card fields


def test_catalog_problem_names_file_line_card_and_field():
    p = one_problem(SET + ATTACK + card("Broken", "atack", damage=3))
    assert p.startswith("cards.toml:13: card 'Broken': field 'type': unknown type 'atack'")
    assert "did you mean 'attack'?" in p
    assert "valid: pillar, rights, ua, attack, defense, freedom, bill" in p


def test_catalog_unknown_key_in_card():
    p = one_problem(SET + card("X", "attack", damage=3, dmg=4))
    assert "card 'X': unknown field 'dmg' (did you mean 'damage'?)" in p


@pytest.mark.parametrize("field,value,fragment", [
    ("branch", "liberty bell", "field 'branch': unknown branch 'liberty bell'"),
    ("rarity", "mythic", "field 'rarity': unknown rarity 'mythic'"),
])
def test_catalog_unknown_branch_and_rarity(field, value, fragment):
    text = SET + card("X", "attack", damage=3).replace(
        f'{field} = "{"bison" if field == "branch" else "common"}"', f'{field} = "{value}"')
    assert fragment in one_problem(text)


def test_catalog_unknown_keyword():
    p = one_problem(SET + card("X", "attack", damage=3, keywords=["shiny"]))
    assert "field 'keywords': unknown keyword 'shiny'" in p
    assert "valid: petition, protect, one_shot" in p


def test_catalog_unknown_verb_and_trigger():
    found = problems(SET + card("X", "attack", damage=3, effects=["zap 3", "often: lp 1"]))
    assert any("card 'X': field 'effects': \"zap 3\": unknown verb 'zap'; valid verbs:" in p
               for p in found)
    assert any("unknown trigger 'often:'" in p for p in found)


@pytest.mark.parametrize("card_type,stat", [
    ("pillar", "damage"), ("rights", "dp"), ("ua", "cost"), ("attack", "dp"),
    ("defense", "damage"), ("freedom", "ip"), ("bill", "drain"),
])
def test_catalog_art4_stat_must_belong_to_the_order(card_type, stat):
    required = {"pillar": {"ip": 1}, "ua": {"dp": 5, "drain": 1}, "attack": {"damage": 2},
                "defense": {"dp": 5}}.get(card_type, {})
    p = one_problem(SET + card("X", card_type, **required, **{stat: 1}))
    assert f"card 'X': field '{stat}' does not belong to a {card_type} card" in p


@pytest.mark.parametrize("card_type,present,missing", [
    ("pillar", {}, "ip"),
    ("attack", {"cost": 1}, "damage"),
    ("defense", {"cost": 1}, "dp"),
    ("ua", {"drain": 1}, "dp"),
    ("ua", {"dp": 10}, "drain"),
])
def test_catalog_art4_missing_required_stat(card_type, present, missing):
    p = one_problem(SET + card("X", card_type, **present))
    assert f"card 'X': missing field '{missing}' (a {card_type} card needs it)" in p


@pytest.mark.parametrize("field", ["name", "type", "branch", "rarity"])
def test_catalog_missing_required_field(field):
    lines = [ln for ln in card("X", "attack", damage=2).splitlines()
             if not ln.startswith(f"{field} =")]
    p = one_problem(SET + "\n".join(lines))
    assert f"missing field '{field}'" in p


@pytest.mark.parametrize("value,fragment", [
    ("2.5", "must be a whole number, not 2.5"),
    ('"3"', "must be a whole number, not '3'"),
    ("true", "must be a whole number, not True"),
    ("-1", "must not be negative, not -1"),
])
def test_catalog_stat_must_be_a_whole_number(value, fragment):
    p = one_problem(SET + card("X", "attack", cost=1) + f"damage = {value}\n")
    assert f"card 'X': field 'damage' {fragment}" in p


def test_catalog_art2_s3_zero_dp_ua():
    assert "must be at least 1" in one_problem(SET + card("X", "ua", dp=0, drain=1))


def test_catalog_duplicate_names():
    found = problems(SET + card("Twin", "attack", damage=1) + card("Twin", "attack", damage=2)
                     + card("twin", "attack", damage=3))
    assert len(found) == 2
    assert "card 'Twin': field 'name': duplicate: the name is already card #1" in found[0]
    assert "card 'twin': field 'name': duplicate: the name of 'Twin' is already card #1" in (
        found[1])


def test_catalog_art7_s7_more_than_two_effects():
    p = one_problem(SET + card("X", "attack", damage=1, effects=["lp 1", "draw 1", "heal 1"]))
    assert "card 'X': field 'effects': 3 effects; a card has at most 2" in p
    assert "Art. VII §7" in p and "Amend. V §1" in p


def test_catalog_amend5_s1_kicker_counts_as_an_effect():
    text = SET + card("Hero", "freedom", cost=2, effects=["lp 1", "draw 1"]) + (
        'kicker = { cost = 2, effect = "heal 3" }\n')
    p = one_problem(text)
    assert "3 effects, the kicker counted; a card has at most 2" in p


def test_catalog_art4_s6_kicker_only_on_freedom():
    text = SET + card("X", "rights", cost=1) + 'kicker = { cost = 1, effect = "draw 1" }\n'
    p = one_problem(text)
    assert "card 'X': field 'kicker': a kicker is for Freedom cards only" in p


def test_catalog_unknown_key_in_kicker():
    text = SET + card("Hero", "freedom", cost=2) + (
        'kicker = { cost = 1, effect = "draw 1", when = "now" }\n')
    assert "field 'kicker': unknown key 'when'" in one_problem(text)


def test_catalog_kicker_needs_cost_and_a_good_effect():
    base = SET + card("Hero", "freedom", cost=2)
    assert "missing 'cost'" in one_problem(base + 'kicker = { effect = "draw 1" }\n')
    assert "unknown verb 'zap'" in one_problem(base + 'kicker = { cost = 1, effect = "zap 1" }\n')
    assert "cannot be an 'activate K:'" in one_problem(
        base + 'kicker = { cost = 1, effect = "activate 1: draw 1" }\n')


def test_catalog_r16_one_shot_only_on_attacks():
    p = one_problem(SET + card("X", "defense", dp=5, keywords=["one_shot"]))
    assert "field 'keywords': 'one_shot' on a defense card" in p


def test_catalog_art2_s4_petition_only_on_rights():
    p = one_problem(SET + card("X", "pillar", ip=1, keywords=["petition"]))
    assert "field 'keywords': 'petition' on a pillar card (Art. II §4" in p


def test_catalog_every_problem_reported_together():
    text = (
        '[set]\nversion = "1"\n'
        + card("A", "atack")
        + card("B", "pillar", ip=1, damage=3, keywords=["petition"])
        + card("C", "attack", damage=1, effects=["zap 1"])
    )
    found = problems(text)
    assert len(found) == 5
    assert found[0] == "cards.toml: [set]: missing name (a non-empty string)"
    assert [p.split(": ")[1] for p in found[1:]] == [
        "card 'A'", "card 'B'", "card 'B'", "card 'C'"]


def test_catalog_name_must_be_writable_in_a_deck_list():
    p = one_problem(SET + card("Federalist No. #10", "bill", cost=1))
    assert "holds ' #', which starts a comment in deck lists" in p


def test_catalog_inline_cards_array_names_card_without_line():
    p = one_problem('cards = [{ name = "X", type = "atack", branch = "bison", '
                    'rarity = "common" }]\n' + SET)
    assert p.startswith("cards.toml: card 'X': field 'type'")
