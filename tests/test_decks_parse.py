"""Deck lists (docs/design.md, "Deck lists"): the text format, names resolved in the catalog."""

from __future__ import annotations

import hashlib

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
    ("Deck: mine\n4 Town Hall\n", ":1: bad header 'Deck:'; valid headers: Name:, Policy:"),
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
