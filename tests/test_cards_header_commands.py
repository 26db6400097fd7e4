"""Every command reads a deck's ``Cards:`` header when not given ``--cards`` (issue 41):
``rnr-sim power`` too, for its field and for the deck the doctor measures."""

from __future__ import annotations

from pathlib import Path

from rnr_sim.cards import load_catalog
from rnr_sim.cli import main
from rnr_sim.decks import shipped_catalogs
from rnr_sim.power import PowerOptions, _inputs

ROOT = Path(__file__).resolve().parent.parent
FRONTIER_DECK = ROOT / "decks" / "expansion" / "corps_of_discovery.txt"
FIELD = [ROOT / "decks" / f for f in ("bison_stampede.txt", "scroll_assembly.txt")]


def test_power_loads_the_catalog_the_decks_name():
    frontier = shipped_catalogs()["expansion_frontier"]
    doctor = _inputs(PowerOptions(deck=FRONTIER_DECK, field=FIELD))
    assert [Path(c).resolve() for c in doctor.cards] == [frontier.resolve()]
    pool = _inputs(PowerOptions(field=[FRONTIER_DECK, *FIELD]))
    assert [Path(c).resolve() for c in pool.cards] == [frontier.resolve()]
    plain = _inputs(PowerOptions(field=FIELD))  # no header: the Original Set
    assert [Path(c).name for c in plain.cards] == ["original.toml"]
    given = _inputs(PowerOptions(deck=FRONTIER_DECK, field=FIELD, cards=[plain.cards[0]]))
    assert given.cards == [plain.cards[0]]  # --cards wins over the headers


def test_the_deck_doctor_on_a_frontier_deck_needs_no_cards_option(tmp_path, capsys):
    """Its cards are read from the Frontier layer its header names: the budget, not an
    unknown card, is what the command answers (nothing played: too small a budget)."""
    n = len(load_catalog(shipped_catalogs()["expansion_frontier"]).cards)
    assert main(["power", "--deck", str(FRONTIER_DECK), "--field", *map(str, FIELD),
                 "--budget", "20000", "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert f"{n} cards in 1 host" in err and "not in the catalog" not in err
