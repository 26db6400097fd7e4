"""Card patches (issue 6): change, add and remove cards; every problem one line naming the
patch file, the card and the field; the patched catalog re-validated as a whole."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnr_sim.cards import FOUNDATION_CATALOG, load_catalog, parse_catalog
from rnr_sim.errors import InputError
from rnr_sim.patches import apply_patch, catalog_toml, load_patch, parse_patch, toml_value


@pytest.fixture(scope="module")
def sample():
    return load_catalog(FOUNDATION_CATALOG)


def patched(text: str, catalog, where: str = "p.toml"):
    return apply_patch(parse_patch(text, where=where), catalog)


def error_of(text: str, catalog, where: str = "p.toml") -> str:
    with pytest.raises(InputError) as e:
        patched(text, catalog, where)
    message = str(e.value)
    assert "\n" not in message, message  # one line
    assert message.startswith(where), message
    return message


# ---------------------------------------------------------------------------- applying


def test_an_empty_patch_changes_nothing(sample):
    for text in ("", "# nothing to change\n", "[patch]\nname = \"no-op\"\n"):
        result = patched(text, sample)
        assert result.describe() == []
        assert np.array_equal(result.catalog.compile(), sample.compile())
        assert result.catalog.to_polars().equals(sample.to_polars())
        assert result.catalog.name == sample.name


def test_the_catalog_writer_round_trips_the_sample(sample):
    data = tomllib.loads(sample.path.read_text(encoding="utf-8"))
    again = parse_catalog(catalog_toml(data["set"], data["cards"]))
    assert again.cards == sample.cards


def test_a_patch_changes_named_fields_only(sample):
    result = patched('[cards."Minuteman Volley"]\ndamage = 8\ncost = 1\n', sample)
    before = sample.cards[sample.by_name["Minuteman Volley"]]
    after = result.catalog.cards[result.catalog.by_name["Minuteman Volley"]]
    assert (after.damage, after.cost) == (8, 1)
    assert after.effects == before.effects and after.text == before.text
    assert result.describe() == ["Minuteman Volley: damage 3 -> 8",
                                 "Minuteman Volley: cost 2 -> 1"]
    # every other card is untouched, and ids are unchanged
    a, b = sample.compile(), result.catalog.compile()
    i = sample.by_name["Minuteman Volley"]
    assert np.array_equal(np.delete(a, i, axis=0), np.delete(b, i, axis=0))


def test_effects_keywords_and_kicker_are_fields_too(sample):
    freedom = next(c for c in sample.cards if c.type == "freedom" and c.kicker is not None)
    result = patched(
        f'[cards."Minuteman Volley"]\neffects = ["lp 5", "draw 1"]\nkeywords = ["protect"]\n'
        f'[cards."{freedom.name}"]\nkicker = {{ cost = 1, effect = "draw 3" }}\n', sample)
    card = result.catalog.cards[result.catalog.by_name["Minuteman Volley"]]
    assert [e.describe() for e in card.effects] == ["lp 5", "draw 1"]
    assert card.keywords == ("protect",)
    kicked = result.catalog.cards[result.catalog.by_name[freedom.name]]
    assert kicked.kicker.amount == 3 and kicked.kicker.cost == 1


def test_names_match_ignoring_case(sample):
    result = patched('[cards."minuteman volley"]\ndamage = 4\n', sample)
    assert result.catalog.cards[result.catalog.by_name["Minuteman Volley"]].damage == 4


def test_add_and_remove(sample):
    result = patched(
        'remove = ["Pitchfork Uprising"]\n\n[[add]]\nname = "Lexington Green"\n'
        'type = "attack"\nbranch = "bison"\nrarity = "common"\ncost = 2\ndamage = 6\n'
        'effects = ["lp 2"]\n', sample)
    cat = result.catalog
    assert "Pitchfork Uprising" not in cat.by_name
    assert cat.cards[-1].name == "Lexington Green" and cat.cards[-1].damage == 6
    assert len(cat) == len(sample)
    assert result.added == ("Lexington Green",) and result.removed == ("Pitchfork Uprising",)
    assert result.describe() == [
        "Lexington Green: added (attack, bison, common, cost 2, damage 6; lp 2)",
        "Pitchfork Uprising: removed"]


def test_load_patch_reads_a_file(tmp_path, sample):
    path = tmp_path / "buff.toml"
    path.write_text('[patch]\nname = "buff"\n\n[cards."Minuteman Volley"]\ndamage = 8\n')
    patch = load_patch(path)
    assert patch.name == "buff" and patch.where == str(path)
    assert apply_patch(patch, sample).catalog.cards[sample.by_name["Minuteman Volley"]].damage == 8


# ---------------------------------------------------------------------------- problems


def test_a_missing_card_is_named_with_the_closest(sample):
    msg = error_of('[cards."Minutman Volley"]\ndamage = 8\n', sample)
    assert "no card 'Minutman Volley'" in msg and "Minuteman Volley" in msg


def test_an_unknown_field_is_named(sample):
    msg = error_of('[cards."Minuteman Volley"]\ndamge = 8\n', sample)
    assert "Minuteman Volley" in msg and "unknown field 'damge'" in msg
    assert "did you mean 'damage'" in msg


def test_a_broken_law_is_named_with_card_and_field(sample):
    msg = error_of('[cards."Minuteman Volley"]\ndamage = -1\n', sample)
    assert "catalog law" in msg and "Minuteman Volley" in msg and "'damage'" in msg
    msg = error_of('[cards."Minuteman Volley"]\neffects = ["lp 1", "lp 2", "draw 1"]\n', sample)
    assert "at most 2" in msg and "'effects'" in msg
    msg = error_of('[cards."Minuteman Volley"]\ndp = 3\n', sample)
    assert "'dp' does not belong" in msg
    msg = error_of('[cards."Minuteman Volley"]\nname = "Pitchfork Uprising"\n', sample)
    assert "duplicate" in msg


def test_broken_toml_is_one_line(sample):
    msg = error_of('[cards."Minuteman Volley"\ndamage = 8\n', sample)
    assert "broken TOML" in msg


def test_other_problems(sample):
    assert "no card 'Nobody'" in error_of('remove = ["Nobody"]\n', sample)
    assert "already has a card named 'Minuteman Volley'" in error_of(
        '[[add]]\nname = "minuteman volley"\ntype = "attack"\n', sample)
    assert "both changed and removed" in error_of(
        'remove = ["Minuteman Volley"]\n[cards."Minuteman Volley"]\ndamage = 8\n', sample)
    assert "unknown top-level key 'card'" in error_of('[card."Minuteman Volley"]\ndamage = 8\n',
                                                      sample)
    # `remove` written under a table belongs to that table: say so
    msg = error_of('[cards."Minuteman Volley"]\ndamage = 8\nremove = ["Pitchfork Uprising"]\n',
                   sample)
    assert "must come before the first [table]" in msg
    assert "missing field 'damage'" in error_of(
        '[[add]]\nname = "X"\ntype = "attack"\nbranch = "bison"\nrarity = "common"\n', sample)
    assert "no fields to change" in error_of('[cards."Minuteman Volley"]\n', sample)


def test_missing_patch_file(tmp_path):
    with pytest.raises(InputError, match="no such patch file"):
        load_patch(tmp_path / "nope.toml")


# ---------------------------------------------------------------------------- strings are data
# Issue 16, item 5: every string a patch or a catalog holds is written escaped, so the
# patched catalog reads back as exactly the cards the patch lists.

# Every control character (C0, DEL, C1), the line breaks str.splitlines knows, quotes,
# backslashes, TOML syntax and characters outside the BMP.
AWKWARD = ("".join(chr(c) for c in range(1, 0x20)) + "\x7f" + "".join(
    chr(c) for c in range(0x80, 0xA0)) + "\u2028\u2029\u200b\u200f\ufeff\u00ad"
    + '"\'\\ \\n \\u0041 """ \'\'\' [[cards]] # = { } 😀 \U0010fffd')


def catalog_file(tmp_path, cards: str):
    path = tmp_path / "base.toml"
    path.write_text('[set]\nname = "Base"\nversion = "1"\n' + cards, encoding="utf-8")
    return load_catalog(path)


def pillar_table(name: str, text: str = "") -> str:
    from rnr_sim.patches import toml_string

    return (f"\n[[cards]]\nname = {toml_string(name)}\ntype = \"pillar\"\nbranch = \"bison\"\n"
            f"rarity = \"common\"\nip = 1\ntext = {toml_string(text)}\n")


def test_patch_card_text_with_del_round_trips(tmp_path):
    base = catalog_file(tmp_path, pillar_table("Granary", "a\x7fb")
                        + pillar_table("Mill", AWKWARD))
    result = patched('[cards."Granary"]\nip = 2\n', base)
    texts = [c.text for c in result.catalog.cards]
    assert texts == ["a\x7fb", AWKWARD]
    assert result.describe() == ["Granary: ip 1 -> 2"]


def test_patch_card_name_with_del_round_trips(tmp_path):
    """DEL is a control character, which no card name may hold (a deck list cannot show
    it, item 7): the patch that gives a card such a name is refused in one line naming the
    rule, not with "the patched catalog cannot be read". The printable characters a name
    may hold, however odd, survive the patch."""
    base = catalog_file(tmp_path, pillar_table("Granary"))
    msg = error_of('[cards."Granary"]\nname = "Gran\\u007Fary"\n', base)
    assert "control character U+007F" in msg and "'name'" in msg
    odd = 'Soft\u00adhyphen \u200fRTL "quoted" back\\slash Paine\'s No#1 [[cards]] 😀'
    result = patched(f'[cards."Granary"]\nname = {toml_value(odd)}\n', base)
    assert result.catalog.cards[0].name == odd
    assert parse_catalog(result.text).cards[0].name == odd


def test_patch_name_newline_cannot_inject_a_card(tmp_path, sample):
    inject = 'x"\n[[cards]]\nname = "Hidden"\ntype = "attack"\nbranch = "bison"\n' \
             'rarity = "common"\ncost = 0\ndamage = 1000000\n# '
    text = f'[patch]\nname = {toml_value(inject)}\nnote = {toml_value(inject)}\n' \
           '[cards."Minuteman Volley"]\ndamage = 4\n'
    for where in ("p.toml", inject):  # the patch's path may hold a line break too
        result = patched(text, sample, where=where)
        assert "Hidden" not in result.catalog.by_name
        assert len(result.catalog) == len(sample)
        assert result.describe() == ["Minuteman Volley: damage 3 -> 4"]
        assert tomllib.loads(result.text)["cards"][-1]["name"] == sample.cards[-1].name


def test_patch_lists_every_added_and_changed_card(sample):
    result = patched(
        'remove = ["Pitchfork Uprising"]\n'
        '[cards."Minuteman Volley"]\ndamage = 4\n'
        '[cards."Frontier Homestead"]\nname = "Pitchfork Uprising"\nip = 2\n'
        '[[add]]\nname = "Lexington Green"\ntype = "attack"\nbranch = "bison"\n'
        'rarity = "common"\ncost = 2\ndamage = 6\n'
        '[[add]]\nname = "Concord Bridge"\ntype = "pillar"\nbranch = "eagle"\n'
        'rarity = "rare"\nip = 3\nkeywords = ["protect"]\neffects = ["draw 1"]\n', sample)
    assert result.describe() == [
        "Minuteman Volley: damage 3 -> 4",
        'Frontier Homestead: name "Frontier Homestead" -> "Pitchfork Uprising"',
        "Frontier Homestead: ip 1 -> 2",
        "Lexington Green: added (attack, bison, common, cost 2, damage 6)",
        "Concord Bridge: added (pillar, eagle, rare, cost 0, ip 3; protect; draw 1)",
        "Pitchfork Uprising: removed",
    ]
    # Every card of the result is a base card unchanged, a card the summary lists as
    # changed (by its old name), or a card it lists as added.
    changed = {card for card, *_ in result.changed}
    base_left = [c for c in sample.cards if c.name != "Pitchfork Uprising"]
    out = list(result.catalog.cards)
    assert len(out) == len(base_left) + len(result.added)
    for before, after in zip(base_left, out, strict=False):
        assert after == before or before.name in changed
    assert [c.name for c in out[len(base_left):]] == list(result.added)


def test_a_renamed_card_is_not_removed_with_the_card_whose_name_it_takes(sample):
    result = patched('remove = ["Pitchfork Uprising"]\n'
                     '[cards."Frontier Homestead"]\nname = "Pitchfork Uprising"\n', sample)
    renamed = result.catalog.cards[sample.by_name["Frontier Homestead"]]
    assert renamed.name == "Pitchfork Uprising" and renamed.type == "pillar"
    assert len(result.catalog) == len(sample) - 1


def test_a_written_catalog_that_holds_an_unlisted_card_is_refused(monkeypatch, sample):
    """The read-back check: if the writer ever let a string become TOML, the patched
    catalog would hold a card the summary does not list; it is refused instead."""
    import rnr_sim.patches as patches

    monkeypatch.setattr(patches, "_header", lambda base, patch: f"# Patch: {patch.name}\n")
    inject = 'x\n[[cards]]\nname = "Hidden"\ntype = "pillar"\nbranch = "bison"\n' \
             'rarity = "common"\nip = 99\n'
    msg = error_of(f'[patch]\nname = {toml_value(inject)}\n', sample)
    assert "does not read back as the cards the patch lists" in msg


def test_patch_errors_stay_one_line_for_names_with_line_breaks(sample):
    msg = error_of('[cards."Minuteman\\nVolley"]\ndamage = 8\n', sample)
    assert "no card 'Minuteman\\nVolley'" in msg
    msg = error_of('[cards."Minuteman Volley"]\n"dam\\u2028age" = 8\n', sample)
    assert "unknown field 'dam\\u2028age'" in msg
    msg = error_of('[cards."Minuteman Volley"]\neffects = ["zap\\n1\\u0085"]\n', sample)
    assert "'zap\\n1\\x85': unknown verb 'zap'" in msg


@pytest.mark.parametrize("value", ["", "plain", AWKWARD, "\x00", "\U0001f600\x7f\u2028"])
def test_toml_string_reads_back_exactly(value):
    from rnr_sim.patches import toml_key, toml_string

    written = toml_string(value)
    assert written.isprintable() and "\n" not in written
    assert tomllib.loads(f"k = {written}\n# {written}\n") == {"k": value}
    assert tomllib.loads(f"{toml_key(value)} = 1\n") == {value: 1}


def test_toml_writer_refuses_what_toml_cannot_hold():
    from rnr_sim.patches import toml_string

    with pytest.raises(TypeError):
        toml_value(object())
    with pytest.raises(ValueError, match="surrogate"):
        toml_string("\ud800")


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(), st.dictionaries(st.text(), st.text() | st.integers() | st.lists(st.text()),
                                  max_size=4))
def test_any_string_written_by_the_toml_writer_reads_back_identically(value, table):
    from rnr_sim.patches import toml_key

    text = f"{toml_key(value)} = {toml_value(value)}\n# {toml_value(value)}\n" \
           f"t = {toml_value(table)}\n"
    if value == "t":
        return
    assert tomllib.loads(text) == {value: value, "t": table}
    assert catalog_toml(table, [table, {"name": value}]).count("\n[[cards]]\n") == 2
    assert tomllib.loads(catalog_toml(table, [table, {"name": value}])) == {
        "set": table, "cards": [table, {"name": value}]}
