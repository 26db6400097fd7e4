"""rnr-sim power: swaps that are legal and change only their slots, answers that arithmetic
fixes (a strictly better copy above its plain sibling, a card that can never help last, a
planted over-strong card named first, the deck doctor cutting a planted useless card),
determinism across thread counts, resume, and bad input in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rnr_sim import files
from rnr_sim.cards import load_catalog
from rnr_sim.cli import main
from rnr_sim.decks import is_legal, load_deck, parse_deck, validate_deck
from rnr_sim.discover.genome import Laws
from rnr_sim.power import PowerOptions, power, swaps
from rnr_sim.rules import load_profile

HERE = Path(__file__).parent
ROOT = HERE.parent
LAYER = HERE / "fixtures" / "power" / "layer.toml"
ERRATA = HERE / "fixtures" / "power" / "errata.toml"
FOUNDATION = ROOT / "rnr_sim" / "data" / "foundation.toml"
FIELD = [ROOT / "decks" / f for f in ("bison_stampede.txt", "scroll_assembly.txt",
                                      "liberty_bell_vanguard.txt")]
#: The common Attacks of the Foundation set (Test Case in Court is the errata's target).
COMMON_ATTACKS = ["Pitchfork Uprising", "Minuteman Volley", "Bunker Hill Charge",
                  "Privateer Raid", "Swamp Fox Ambush", "Volunteer Skirmishers",
                  "Shot Heard Round the World", "Charge at Boyaca Bridge",
                  "Barricades of 1848", "Pamphlet War", "Test Case in Court"]


def _power(out: Path, **kw) -> pl.DataFrame:
    result = power(PowerOptions(out=out, field=FIELD, **kw), progress=False)
    assert not result.stopped
    return result.tables.get("power")


# ---------------------------------------------------------------------------- the swaps


def test_laws_legal_agrees_with_the_validator():
    """The fast legality check the swaps use says what ``validate_deck`` says, on legal
    decks and on each of them broken in every way one swap could break it."""
    catalog = load_catalog(ROOT / "rnr_sim" / "data" / "original.toml")
    laws = Laws.of(catalog, load_profile(None))
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(60):
        counts = laws.random_deck(rng)
        for _ in range(4):
            c = counts.copy()
            held = np.flatnonzero(c > 0)
            c[rng.choice(held)] -= 1
            c[rng.integers(laws.n_cards)] += 1
            expected = is_legal(validate_deck(laws.deck(c), catalog, laws.profile))
            assert laws.legal(c) == expected
            checked += 1
    assert checked == 240


def test_every_swap_is_legal_and_changes_only_its_slots():
    catalog = load_catalog(LAYER)
    laws = Laws.of(catalog, load_profile(None))
    made = 0
    for path in FIELD:
        deck = load_deck(path, catalog)
        host = swaps.Host(deck.name, np.asarray(deck.card_ids, dtype=np.int32), 0)
        for card in range(len(catalog.cards)):
            for k in swaps.levels(laws, card):
                slots = swaps.swap_in(laws, host, card, k, {})
                if slots is None:
                    continue
                made += 1
                changed = slots != host.slots
                assert (slots[changed] == card).all()
                assert int((slots == card).sum()) == k
                assert (laws.type_of[host.slots[changed]] == laws.type_of[card]).all()
                names = tuple(catalog.cards[i].name for i in slots)
                d = parse_deck("\n".join(f"1 {n}" for n in names), catalog)
                assert is_legal(validate_deck(d, catalog, laws.profile))
        for card in set(host.slots.tolist()):
            cut = swaps.cut(laws, host, card)
            if cut is not None:
                assert card not in cut and laws.legal(np.bincount(cut, minlength=laws.n_cards))
                assert (cut[host.slots != card] == host.slots[host.slots != card]).all()
    assert made > 300


def test_a_swap_takes_the_least_valuable_cards_of_the_order_first():
    catalog = load_catalog(LAYER)
    laws = Laws.of(catalog, load_profile(None))
    deck = load_deck(FIELD[0], catalog)  # Bison Stampede: 4 Pitchfork Uprising, 4 Minuteman...
    host = swaps.Host(deck.name, np.asarray(deck.card_ids, dtype=np.int32), 0)
    pitchfork, keen = catalog.lookup("Pitchfork Uprising"), catalog.lookup("Keen Shot")
    worth = {int(c): 1.0 for c in host.slots}
    worth[pitchfork] = -1.0  # the least valuable
    slots = swaps.swap_in(laws, host, keen, 4, worth)
    assert pitchfork not in slots and int((slots == keen).sum()) == 4


# ---------------------------------------------------------------------------- answers


@pytest.fixture(scope="module")
def layer_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("power") / "layer"
    _power(out, cards=[LAYER], only_set="Power Test",
           only_cards=["Shot Heard Round the World"], budget=200_000, seed=11)
    return out


@pytest.fixture(scope="module")
def layer_power(layer_dir) -> pl.DataFrame:
    return pl.read_parquet(layer_dir / "power.parquet")


def test_a_strictly_better_copy_ranks_above_its_plain_sibling_with_intervals_apart(
        layer_power):
    by = {r["card"]: r for r in layer_power.iter_rows(named=True)}
    keen, plain = by["Keen Shot"], by["Plain Shot"]
    assert layer_power["card"][0] == "Keen Shot"
    assert keen["gain_lo"] > plain["gain_hi"]


def test_a_card_that_can_never_help_ranks_at_the_bottom(layer_power):
    last = layer_power.row(-1, named=True)
    assert last["card"] == "Empty Salute" and last["gain_hi"] < 0 and last["copies"] == 1


def test_an_over_strong_card_planted_by_errata_tops_the_table(tmp_path):
    """Test Case in Court errata'd from 3 to 5 damage, measured with the other common
    Attacks: first, its interval above the plain card's in the unchanged catalog; without
    the errata the same card is nowhere near the top."""
    planted = _power(tmp_path / "planted", cards=[ERRATA], only_set="Errata Test",
                     only_cards=COMMON_ATTACKS, budget=350_000, seed=7)
    plain = _power(tmp_path / "plain", cards=[FOUNDATION], only_cards=COMMON_ATTACKS,
                   budget=350_000, seed=7)
    assert planted["card"][0] == "Test Case in Court"
    assert plain["card"].to_list().index("Test Case in Court") >= 3
    was = plain.filter(pl.col("card") == "Test Case in Court").row(0, named=True)
    assert planted["gain_lo"][0] > was["gain_hi"]


def test_the_deck_doctor_cuts_a_planted_useless_card_first(tmp_path):
    text = FIELD[0].read_text(encoding="utf-8").replace("4 Pitchfork Uprising",
                                                         "4 Empty Salute")
    text = text.replace("Policy: ../policies/", f"Policy: {ROOT / 'policies'}/")
    mine = tmp_path / "mine.txt"
    mine.write_text(text, encoding="utf-8")
    result = power(PowerOptions(deck=mine, field=FIELD, cards=[LAYER], only_set="Power Test",
                                only_cards=["Pitchfork Uprising", "Bunker Hill Charge"],
                                budget=400_000, seed=3, out=tmp_path / "doc"),
                   progress=False)
    cuts, adds = result.tables["cuts"], result.tables["adds"]
    assert cuts["card"][0] == "Empty Salute" and cuts["worth_hi"][0] < 0.01
    best = adds.row(0, named=True)
    assert best["out"] == "Empty Salute" and best["gain_lo"] > 0
    assert (tmp_path / "doc" / "cuts.parquet").exists()
    assert (tmp_path / "doc" / "adds.parquet").exists()


def test_balance_reads_a_power_dirs_flags_as_its_flagged_cards(layer_dir, tmp_path):
    from rnr_sim.balance import _power_flags
    from rnr_sim.balance.targets import load_targets
    from rnr_sim.errors import InputError
    from rnr_sim.runs import planning

    targets = tmp_path / "t.toml"
    targets.write_text('[targets]\ndeck_share_max = 0.6\n[scope]\ncards = "flagged"\n')
    tf = load_targets(targets)
    flagged = pl.read_parquet(layer_dir / "power.parquet").filter(pl.col("flag") != "")
    assert flagged.height >= 1
    plan = planning.plan_run(planning.RunOptions(decks=FIELD, games=1, cards=[LAYER]))
    ids, how = _power_flags(layer_dir, tf, plan)
    assert sorted(plan.catalog.cards[i].name for i in ids) == sorted(flagged["card"])
    assert how["how"] == "flagged by a power dir"
    other = planning.plan_run(planning.RunOptions(decks=FIELD, games=1, cards=[FOUNDATION]))
    with pytest.raises(InputError) as e:
        _power_flags(layer_dir, tf, other)
    assert "measured another catalog" in str(e.value) and "\n" not in str(e.value)


# ---------------------------------------------------------------------------- the run


def _small(out: Path, **kw) -> pl.DataFrame:
    return _power(out, cards=[LAYER], only_set="Power Test", budget=60_000, seed=5, **kw)


def test_the_same_seed_gives_the_same_table_on_one_and_two_threads(tmp_path):
    one = _small(tmp_path / "one", threads=1)
    two = _small(tmp_path / "two", threads=2)
    assert one.equals(two)


def test_a_stopped_power_run_resumes_to_the_same_table(tmp_path, monkeypatch):
    from rnr_sim.runs import evaluation

    whole = _small(tmp_path / "whole")
    calls = {"n": 0}
    real = evaluation.Evaluator.play

    def stop_after_three(self, *a, **kw):
        calls["n"] += 1
        if calls["n"] == 4:
            self.stop.requested = True  # as a first Ctrl-C would
        return real(self, *a, **kw)

    monkeypatch.setattr(evaluation.Evaluator, "play", stop_after_three)
    stopped = power(PowerOptions(out=tmp_path / "cut", field=FIELD, cards=[LAYER],
                                 only_set="Power Test", budget=60_000, seed=5),
                    progress=False)
    assert stopped.stopped and not (tmp_path / "cut" / "manifest.json").exists()
    monkeypatch.setattr(evaluation.Evaluator, "play", real)
    assert _small(tmp_path / "cut", resume=True).equals(whole)
    assert not (tmp_path / "cut" / ".power").exists()


def test_the_power_dir_is_checked_by_content(tmp_path):
    import json

    from rnr_sim.errors import InputError
    from rnr_sim.runs.searchdirs import verify_power_dir

    _small(tmp_path / "p")
    manifest = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert verify_power_dir(tmp_path / "p", manifest)
    manifest["seed"] = 6
    with pytest.raises(InputError) as e:
        verify_power_dir(tmp_path / "p", manifest)
    assert "manifest.json" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("args,message", [
    (["--budget", "20000"], "raise --budget or measure fewer cards"),
    (["--card", "Minuteman Voley"], "did you mean 'Minuteman Volley'?"),
    (["--set", "Nope"], "--set Nope: no such set in the catalog"),
    (["--margin", "3"], "--margin 3.0: a share of games between 0 and 1"),
    (["--deck", str(FIELD[0]), "--discovery", "x"], "drop one of them"),
])
def test_power_bad_input_is_one_line(args, message, capsys, tmp_path):
    code = main(["power", "--cards", str(FOUNDATION), "--field", *map(str, FIELD),
                 "--out", str(tmp_path / "p"), *args])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not (tmp_path / "p").exists()


def test_a_full_disk_says_how_to_resume(tmp_path, monkeypatch, capsys):
    """A full disk while a search writes its checkpoints: one line with the --resume that
    carries on (issue 44, item 12: discover's said nothing of it; the three share it)."""
    from rnr_sim.runs import evaluation

    def full(self, key, outcome):
        raise files.DiskFull(self.path(key), "No space left on device")

    monkeypatch.setattr(evaluation.BatchStore, "put", full)
    code = main(["power", "--cards", str(LAYER), "--set", "Power Test", "--field",
                 *map(str, FIELD), "--budget", "60000", "--out", str(tmp_path / "p")])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and "No space left on device" in err
    assert f"rnr-sim power --resume --out {tmp_path / 'p'}" in err
