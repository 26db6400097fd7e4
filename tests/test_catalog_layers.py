"""Layered catalogs (docs/design.md, "Layered catalogs"): several files in load order, a
file's `base`, `[errata."Name"]` tables, sets, and Article V over a deck drawing on several
sets. No engine: catalog, deck and CLI code only."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from conftest import TINY_CATALOG, deck_of
from typer.testing import CliRunner

from rnr_sim.cards import FOUNDATION_CATALOG, CatalogError, load_catalog
from rnr_sim.cli import app
from rnr_sim.decks import is_legal, validate_deck
from rnr_sim.errors import InputError
from rnr_sim.rules import default_profile

N_TINY = 27  # cards of tests/fixtures/tiny.toml

# A layer over the tiny set: two new cards and one erratum.
FRONTIER = '''[set]
name = "Frontier"
version = "2"

[[cards]]
name = "Powder Horn"
type = "attack"
branch = "eagle"
rarity = "common"
cost = 2
damage = 7

[[cards]]
name = "Long Rifle"
type = "attack"
branch = "bison"
rarity = "rare"
cost = 3
damage = 12

[errata."Minuteman Volley"]
damage = 8
text = "Errata: 10 was too much."
'''

FREEDOMS = '''set = "Founders"

[[cards]]
name = "Ben Franklin"
type = "freedom"
branch = "scroll"
rarity = "uncommon"
cost = 2
effects = ["draw 1"]

[[cards]]
name = "John Hancock"
type = "freedom"
branch = "bison"
rarity = "uncommon"
cost = 2
effects = ["lp 2"]

[[cards]]
name = "Abigail Adams"
type = "freedom"
branch = "eagle"
rarity = "uncommon"
cost = 2
effects = ["heal 3"]
'''


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line of ``text`` that starts with ``needle``."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(needle))


@pytest.fixture
def base(write):
    """The tiny test set, copied beside the layers so a relative `base` finds it."""
    return write("base.toml", TINY_CATALOG.read_text(encoding="utf-8"))


@pytest.fixture
def frontier(write, base):
    return write("frontier.toml", FRONTIER)


def problems_of(paths) -> list[str]:
    with pytest.raises(CatalogError) as e:
        load_catalog(paths)
    return e.value.problems


def one_line_error(paths) -> str:
    with pytest.raises(InputError) as e:
        load_catalog(paths)
    assert not isinstance(e.value, CatalogError)
    message = str(e.value)
    assert "\n" not in message
    return message


# ---------------------------------------------------------------------------- one file


def test_one_path_and_a_list_of_it_compile_to_the_same_bytes():
    alone, listed = load_catalog(FOUNDATION_CATALOG), load_catalog([FOUNDATION_CATALOG])
    assert alone.compile().tobytes() == listed.compile().tobytes()
    assert alone.sha256 == listed.sha256 == hashlib.sha256(FOUNDATION_CATALOG.read_bytes()).hexdigest()
    assert alone.path == FOUNDATION_CATALOG and alone.name == "Foundation Sample"
    assert alone.sources == ((FOUNDATION_CATALOG, alone.sha256),)
    assert alone.sets == ("Foundation Sample",)
    default = load_catalog()  # the default: the Original Set over its base, the Foundation
    assert load_catalog([]).sha256 == default.sha256  # an empty list is the default
    assert default.sets == ("Foundation Sample", "Original Set") and len(default.cards) == 355
    assert default.compile()[:len(alone.cards)].tobytes() == alone.compile().tobytes()


def test_each_card_knows_its_set_and_table(base):
    catalog = load_catalog(base)
    volley = catalog.cards[catalog.by_name["Minuteman Volley"]]
    assert volley.set == "Tiny Test Set"
    text = base.read_text()
    table_line = line_of(text, 'name = "Minuteman Volley"') - 1  # its [[cards]] header
    assert volley.source == f"{base}:{table_line}"
    assert volley.errata == ()


def test_set_short_form_names_the_set(write):
    path = write("short.toml", FREEDOMS)
    catalog = load_catalog(path)
    assert catalog.name == "Founders" and catalog.version == ""
    assert {c.set for c in catalog.cards} == {"Founders"}


# ---------------------------------------------------------------------------- order


def test_layers_keep_earlier_ids_and_append_new_cards(base, frontier):
    tiny = load_catalog(base)
    layered = load_catalog([base, frontier])
    assert len(layered) == N_TINY + 2
    assert [c.name for c in layered.cards[:N_TINY]] == [c.name for c in tiny.cards]
    assert [c.name for c in layered.cards[N_TINY:]] == ["Powder Horn", "Long Rifle"]
    assert layered.set_of(N_TINY) == "Frontier" and layered.set_of(0) == "Tiny Test Set"
    assert layered.sets == ("Tiny Test Set", "Frontier")
    assert layered.name == "Tiny Test Set + Frontier" and layered.version == "1+2"


def test_file_order_decides_card_ids(write, base):
    founders = write("founders.toml", FREEDOMS)
    frontier = write("frontier.toml", FRONTIER.split("[errata")[0])  # no errata: any order
    a = load_catalog([base, founders, frontier])
    b = load_catalog([base, frontier, founders])
    assert a.by_name["Ben Franklin"] == N_TINY and a.by_name["Powder Horn"] == N_TINY + 3
    assert b.by_name["Powder Horn"] == N_TINY and b.by_name["Ben Franklin"] == N_TINY + 2
    assert [s.path for s in a.sources] == [base, founders, frontier]


def test_base_key_loads_the_base_first_and_once(write, base):
    with_base = write("frontier.toml", 'base = "base.toml"\n' + FRONTIER)
    alone = load_catalog(with_base)
    listed = load_catalog([base, with_base])
    assert [c.name for c in alone.cards] == [c.name for c in listed.cards]
    assert alone.compile().tobytes() == listed.compile().tobytes()
    assert [s.path for s in alone.sources] == [base, with_base]
    assert alone.sources == listed.sources and alone.sha256 == listed.sha256
    # the same file listed again is not loaded twice
    assert len(load_catalog([base, with_base, base])) == N_TINY + 2


def test_base_path_is_relative_to_the_file(tmp_path, base):
    sub = tmp_path / "expansions"
    sub.mkdir()
    layer = sub / "frontier.toml"
    layer.write_text('base = "../base.toml"\n' + FRONTIER, encoding="utf-8")
    assert len(load_catalog(layer)) == N_TINY + 2


def test_sources_and_hash_for_manifests(base, frontier):
    catalog = load_catalog([base, frontier])
    hashes = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (base, frontier)]
    assert catalog.sources == ((base, hashes[0]), (frontier, hashes[1]))
    assert [tuple(s) for s in catalog.sources] == list(zip([base, frontier], hashes,
                                                           strict=True))
    assert catalog.sha256 == hashlib.sha256(
        "".join(h + "\n" for h in hashes).encode()).hexdigest()
    assert catalog.path is None  # several files: no single path to read again
    assert catalog.source_sets == (("Tiny Test Set", "1"), ("Frontier", "2"))


# ---------------------------------------------------------------------------- errata


def test_errata_replace_fields_in_place(base, frontier):
    tiny = load_catalog(base)
    layered = load_catalog([base, frontier])
    card_id = tiny.by_name["Minuteman Volley"]
    assert layered.by_name["Minuteman Volley"] == card_id  # same id
    old, new = tiny.cards[card_id], layered.cards[card_id]
    assert (old.damage, new.damage) == (10, 8)
    assert new.text == "Errata: 10 was too much."
    assert (new.cost, new.effects, new.branch) == (old.cost, old.effects, old.branch)
    assert new.set == "Tiny Test Set" and new.source == old.source
    assert new.errata == (f"{frontier}:{line_of(FRONTIER, '[errata.')}",)
    # the compiled table: only that row changed among the earlier cards
    before, after = tiny.compile(), layered.compile()
    changed = np.flatnonzero((before != after[:N_TINY]).any(axis=1))
    assert changed.tolist() == [card_id]


def test_errata_over_errata_apply_in_load_order(write, base, frontier):
    second = write("second.toml", 'set = "Second"\n[errata."minuteman volley"]\ndamage = 6\n')
    catalog = load_catalog([base, frontier, second])
    card = catalog.cards[catalog.by_name["Minuteman Volley"]]
    assert card.damage == 6 and card.text == "Errata: 10 was too much."
    assert [at.rsplit(":", 1)[0] for at in card.errata] == [str(frontier), str(second)]
    assert len(catalog) == N_TINY + 2  # an errata-only layer adds no card


def test_errata_changing_type_drops_the_old_orders_fields(write, base):
    layer = write("l.toml", 'set = "L"\n[errata."Minuteman Volley"]\ntype = "defense"\n'
                  'dp = 12\neffects = []\n')
    card = load_catalog([base, layer]).cards[12]
    assert (card.name, card.type, card.dp, card.damage, card.cost) == (
        "Minuteman Volley", "defense", 12, 0, 2)


def test_errata_making_a_card_invalid_is_refused_at_the_errata_line(write, base):
    text = 'set = "L"\n\n[errata."Earthwork Redoubt"]\ndp = 0\n'
    layer = write("l.toml", text)
    [p] = problems_of([base, layer])
    assert p.startswith(f"{layer}:3: card 'Earthwork Redoubt': field 'dp' must be at least 1")
    assert "[errata.\"Earthwork Redoubt\"]" in p and f"{base}:" in p


def test_errata_for_an_unknown_card_is_refused(write, base):
    layer = write("l.toml", 'set = "L"\n[errata."Minutman Volley"]\ndamage = 3\n')
    [p] = problems_of([base, layer])
    assert p.startswith(f"{layer}:2: errata for 'Minutman Volley': no earlier catalog file "
                        "defines this card (did you mean 'Minuteman Volley'?)")
    assert "[[cards]]" in p


def test_errata_in_the_only_file_is_refused(write):
    text = FREEDOMS + '\n[errata."Ben Franklin"]\ncost = 1\n'
    path = write("one.toml", text)
    [p] = problems_of(path)
    assert p.startswith(f"{path}:{line_of(text, '[errata.')}: errata for 'Ben Franklin': "
                        "'Ben Franklin' is defined in this file")


def test_errata_cannot_rename(write, base):
    layer = write("l.toml", 'set = "L"\n[errata."Stone Fort"]\nname = "Stone Keep"\n')
    [p] = problems_of([base, layer])
    assert "errata cannot rename a card" in p and p.startswith(f"{layer}:2:")


def test_empty_layer_is_refused(write, base):
    layer = write("l.toml", 'set = "L"\n')
    [p] = problems_of([base, layer])
    assert p == f"{layer}: no [[cards]] tables"


# ---------------------------------------------------------------------------- duplicates


@pytest.mark.parametrize("name", ["Stone Fort", "stone fort"])
def test_duplicate_name_without_errata_names_both_files_and_lines(write, base, name):
    text = (f'set = "L"\n\n[[cards]]\nname = "{name}"\ntype = "defense"\nbranch = "eagle"\n'
            'rarity = "common"\ncost = 1\ndp = 5\n')
    layer = write("l.toml", text)
    [p] = problems_of([base, layer])
    base_line = line_of(base.read_text(), 'name = "Stone Fort"') - 1
    assert p.startswith(f"{layer}:3: card '{name}': field 'name': already card 'Stone Fort' "
                        f"of {base}:{base_line} (set 'Tiny Test Set')")
    assert "[errata.\"Stone Fort\"]" in p  # the fix


# ---------------------------------------------------------------------------- base


def test_base_cycle_is_one_line_naming_the_files(write):
    card = '[[cards]]\nname = "{}"\ntype = "pillar"\nbranch = "bison"\nrarity = "common"\nip = 1\n'
    a = write("a.toml", 'base = "b.toml"\nset = "A"\n' + card.format("A"))
    b = write("b.toml", 'base = "a.toml"\nset = "B"\n' + card.format("B"))
    message = one_line_error(a)
    assert message.startswith(f"{b}:1: base 'a.toml' makes a cycle ({a} -> {b} -> ")
    assert "remove one of these base keys" in message


def test_base_naming_itself_is_a_cycle(write):
    path = write("self.toml", 'base = "self.toml"\nset = "S"\n')
    assert "makes a cycle" in one_line_error(path)


def test_missing_base_names_the_line_and_the_folder(write):
    path = write("l.toml", 'set = "L"\nbase = "nope.toml"\n')
    message = one_line_error(path)
    assert message.startswith(f"{path}:2: base 'nope.toml': ")
    assert "no such card catalog file" in message


# ---------------------------------------------------------------------------- Article V


def violations(counts, catalog) -> list[str]:
    return [v.rule for v in validate_deck(deck_of(counts, catalog), catalog, default_profile())
            if not v.warning]


def test_deck_with_cards_of_two_layers_is_legal(base, frontier, legal_counts):
    catalog = load_catalog([base, frontier])
    counts = legal_counts
    counts["Musket Skirmish"] = 0
    counts["Powder Horn"] = 4  # Frontier
    deck = deck_of(counts, catalog)
    assert catalog.by_name["Powder Horn"] in deck.card_ids.tolist()
    assert is_legal(validate_deck(deck, catalog, default_profile()))


def test_art5_s5_copy_limit_applies_to_a_later_sets_card(base, frontier, legal_counts):
    catalog = load_catalog([base, frontier])
    counts = legal_counts
    counts["Musket Skirmish"] = 0
    counts["Town Hall"] -= 1
    counts["Powder Horn"] = 5
    assert violations(counts, catalog) == ["Art. V §5"]


def test_art5_s4_rares_counted_over_every_set_and_errata(write, base, frontier, legal_counts):
    # The fixture deck holds 2 Rares (Paul Revere, Samuel Adams); 4 Long Rifle (Frontier)
    # make 6, the limit; an erratum making a base card Rare tips it over.
    counts = legal_counts
    counts["Musket Skirmish"] = 0
    counts["Long Rifle"] = 4
    assert violations(counts, load_catalog([base, frontier])) == []
    rare = write("rare.toml", 'set = "R"\n[errata."Tax Relief Bill"]\nrarity = "rare"\n')
    assert violations(counts, load_catalog([base, frontier, rare])) == ["Art. V §4"]


def test_art5_s3_freedom_limit_counts_freedoms_of_every_set(write, base, legal_counts):
    founders = write("founders.toml", FREEDOMS)
    catalog = load_catalog([base, founders])
    counts = legal_counts  # the fixture deck: 2 Freedom cards
    counts["Town Hall"] -= 2
    counts["Ben Franklin"] = counts["John Hancock"] = 1
    assert violations(counts, catalog) == []  # 4 Freedom cards
    counts["Town Hall"] -= 1
    counts["Abigail Adams"] = 1
    assert violations(counts, catalog) == ["Art. V §3"]  # 5


# ---------------------------------------------------------------------------- CLI

runner = CliRunner()


def test_cli_cards_shows_sets_and_filters_by_set(base, frontier):
    result = runner.invoke(app, ["cards", "--cards", str(base), "--cards", str(frontier),
                                 "--set", "frontier"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].endswith(": 2 of 29 cards")
    assert "Tiny Test Set v1" in lines[0] and "Frontier v2" in lines[0]
    assert lines[1].split()[:3] == ["id", "name", "set"] and lines[1].split()[-1] == "errata"
    rows = lines[3:]
    assert [r.split()[0] for r in rows] == ["27", "28"]
    assert all("Frontier" in r for r in rows)


def test_cli_cards_shows_errata(base, frontier):
    result = runner.invoke(app, ["cards", "--cards", str(base), "--cards", str(frontier),
                                 "--type", "attack"])
    assert result.exit_code == 0, result.output
    volley = next(r for r in result.stdout.splitlines() if "Minuteman Volley" in r)
    assert "Tiny Test Set" in volley and "damage 8" in volley
    assert volley.rstrip().endswith(f"frontier.toml:{line_of(FRONTIER, '[errata.')}")


def test_cli_cards_unknown_set_is_one_line_exit_2(base, frontier):
    result = runner.invoke(app, ["cards", "--cards", str(base), "--cards", str(frontier),
                                 "--set", "Colonial"])
    assert result.exit_code == 2
    assert result.stderr.strip() == ("--set: no set 'Colonial' in the catalog; loaded sets: "
                                     "Tiny Test Set, Frontier")


def test_cli_validate_takes_layers(write, base, frontier, legal_counts):
    counts = legal_counts
    counts["Musket Skirmish"] = 0
    counts["Powder Horn"] = 4
    deck = write("deck.txt", "".join(f"{n} {name}\n" for name, n in counts.items() if n))
    ok = runner.invoke(app, ["validate", "--cards", str(base), "--cards", str(frontier),
                             str(deck)])
    assert ok.exit_code == 0, ok.output
    only_base = runner.invoke(app, ["validate", "--cards", str(base), str(deck)])
    assert only_base.exit_code == 2  # Powder Horn is unknown without the Frontier layer
    assert "unknown card 'Powder Horn'" in only_base.stderr


def test_cli_duplicate_across_layers_exit_2(write, base):
    dup = write("dup.toml", 'set = "D"\n[[cards]]\nname = "Town Hall"\ntype = "pillar"\n'
                'branch = "scroll"\nrarity = "common"\nip = 1\n')
    result = runner.invoke(app, ["cards", "--cards", str(base), "--cards", str(dup)])
    assert result.exit_code == 2
    assert f"{dup}:2: card 'Town Hall': field 'name': already card 'Town Hall' of {base}:" \
        in result.stderr
    assert "Traceback" not in result.output
