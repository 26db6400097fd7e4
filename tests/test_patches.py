"""Card patches (issue 6): change, add and remove cards; every problem one line naming the
patch file, the card and the field; the patched catalog re-validated as a whole."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest

from rnr_sim.cards import load_catalog, parse_catalog
from rnr_sim.errors import InputError
from rnr_sim.patches import apply_patch, catalog_toml, load_patch, parse_patch


@pytest.fixture(scope="module")
def sample():
    return load_catalog(None)


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
    assert "Lexington Green: added" in result.describe()


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
