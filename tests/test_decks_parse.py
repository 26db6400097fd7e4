"""Deck lists (docs/design.md, "Deck lists"): the text format, names resolved in the catalog."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from conftest import LEGAL_DECK

from rnr_sim.decks import load_deck, parse_deck
from rnr_sim.errors import InputError


def test_deck_loads_headers_slots_and_ids(tiny):
    deck = load_deck(LEGAL_DECK, tiny)
    assert deck.name == "Tiny Legal"
    assert deck.policy == "balanced"
    assert deck.path == LEGAL_DECK
    assert deck.sha256 == hashlib.sha256(LEGAL_DECK.read_bytes()).hexdigest()
    assert len(deck.slots) == 60
    # Slot k is the k-th card in line order; UAs are ordinary slots.
    assert deck.slots[:4] == ("Stamp Act", "Quartering Act", "Writs of Assistance", "Town Hall")
    assert deck.card_ids.dtype == np.int32
    assert deck.card_ids.shape == (60,)
    assert [tiny.cards[i].name for i in deck.card_ids] == list(deck.slots)
    assert deck.counts["Musket Skirmish"] == 4  # written "4x Musket Skirmish"
    assert sum(deck.counts.values()) == 60


def test_deck_name_defaults_to_file_stem(write, tiny):
    deck = load_deck(write("aggro_bison.txt", "4 Minuteman Volley\n"), tiny)
    assert deck.name == "aggro_bison"
    assert deck.policy is None


def test_deck_comments_blanks_repeats_and_case(tiny):
    text = ("# a comment\n\n  name:  Mixed  \n2 Town Hall   # inline comment\n"
            "3x town hall\n1 STAMP ACT\n")
    deck = parse_deck(text, tiny)
    assert deck.name == "Mixed"
    assert deck.counts == {"Town Hall": 5, "Stamp Act": 1}
    assert deck.slots == ("Town Hall",) * 5 + ("Stamp Act",)


def test_deck_unknown_names_all_reported_with_line_and_closest(write, tiny):
    path = write("x.txt", "Name: X\n4 Minutman Volley\n4 Town Hall\n2 Stone Fortt\n1 Qqqq\n")
    with pytest.raises(InputError) as e:
        load_deck(path, tiny)
    lines = str(e.value).splitlines()
    assert lines == [
        f"{path}: 3 problems",
        f"{path}:2: unknown card 'Minutman Volley'; did you mean 'Minuteman Volley'?",
        f"{path}:4: unknown card 'Stone Fortt'; did you mean 'Stone Fort'?",
        f"{path}:5: unknown card 'Qqqq'",
    ]


def test_deck_one_unknown_name_is_one_line(write, tiny):
    path = write("x.txt", "\n" * 11 + "4 Minutman Volley\n")
    with pytest.raises(InputError) as e:
        load_deck(path, tiny)
    assert str(e.value) == (
        f"{path}:12: unknown card 'Minutman Volley'; did you mean 'Minuteman Volley'?")


@pytest.mark.parametrize("text,fragment", [
    ("0 Town Hall\n", ":1: bad count 0 for 'Town Hall'"),
    ("1000 Town Hall\n", ":1: bad count 1000"),
    ("4Town Hall\n", ":1: expected 'COUNT Card Name'"),
    ("Town Hall\n", ":1: expected 'COUNT Card Name'"),
    ("Deck: mine\n4 Town Hall\n", ":1: bad header 'Deck:'; valid headers: Name:, Policy:, Cards:"),
    ("Name: a\nName: b\n4 Town Hall\n", ":2: second 'Name:' header"),
    ("Policy:\n4 Town Hall\n", ":1: empty 'Policy:' header"),
    ("# nothing\n\nName: Empty\n", ":3: no cards in this deck list"),
    ("", ":1: no cards in this deck list"),
])
def test_deck_format_errors_name_file_and_line(write, tiny, text, fragment):
    path = write("d.txt", text)
    with pytest.raises(InputError) as e:
        load_deck(path, tiny)
    assert str(e.value) == f"{path}{fragment}" or str(e.value).startswith(f"{path}{fragment}")
    assert "\n" not in str(e.value)


def test_deck_unreadable_files(tmp_path, write, tiny):
    with pytest.raises(InputError, match="no such deck list"):
        load_deck(tmp_path / "nope.txt", tiny)
    with pytest.raises(InputError, match="is a directory"):
        load_deck(tmp_path, tiny)
    with pytest.raises(InputError, match="not a text file"):
        load_deck(write("deck.bin", b"\x00\x01\x02PK"), tiny)


# ---------------------------------------------------------------------------- Cards: header


def test_a_cards_header_names_the_catalog_every_command_loads(tmp_path, capsys):
    """Issue 41: a deck names what it needs (``Cards: tiny.toml`` beside it, or a shipped
    set by name), and a command given no --cards loads it; the shipped expansion decks say
    ``Cards: expansion_frontier`` and validate as they are."""
    from conftest import FIXTURES

    from rnr_sim.cli import main

    (tmp_path / "tiny.toml").write_bytes((FIXTURES / "tiny.toml").read_bytes())
    deck = tmp_path / "mine.txt"
    deck.write_text("Cards: tiny.toml\n" + LEGAL_DECK.read_text())
    expansion = sorted((FIXTURES.parent.parent / "decks" / "expansion").glob("*.txt"))
    assert main(["validate", str(deck)]) == 0
    assert capsys.readouterr().out == f"OK Tiny Legal ({deck})\n"
    assert main(["validate", *map(str, expansion)]) == 0
    assert "4 legal, 0 illegal" in capsys.readouterr().out


def test_a_bad_cards_header_is_one_line_naming_file_and_line(write, tiny):
    from rnr_sim.decks import catalog_paths

    path = write("d.txt", "Name: x\nCards: nowhere.toml\n4 Town Hall\n")
    with pytest.raises(InputError) as e:
        catalog_paths(None, [path])
    assert str(e.value).startswith(f"{path}:2: Cards: 'nowhere.toml' is neither a shipped "
                                   "catalog (expansion_frontier, foundation, original)")
    assert catalog_paths(["given.toml"], [path]) == [Path("given.toml")]  # --cards wins


def test_cards_header_loads_the_catalog_again(tmp_path):
    """The header discover writes (``cards_header``) names a shipped set by name, leaves out a
    base the later file brings in, and gives another file by its path from the deck."""
    from conftest import FIXTURES

    from rnr_sim.cards import load_catalog
    from rnr_sim.decks import DATA_DIR, cards_header

    assert cards_header(load_catalog()) == "Cards: original"
    assert cards_header(load_catalog(DATA_DIR / "expansion_frontier.toml")) == \
        "Cards: expansion_frontier"
    layered = load_catalog([DATA_DIR / "original.toml", FIXTURES / "power" / "layer.toml"])
    header = cards_header(layered, tmp_path)
    assert header.startswith("Cards: original, ") and header.endswith("layer.toml")
    deck = tmp_path / "d.txt"
    deck.write_text(header + "\n")
    from rnr_sim.decks import catalog_paths

    assert load_catalog(catalog_paths(None, [deck])).sha256 == layered.sha256
