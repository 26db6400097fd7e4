"""rnr-sim discover: legality of every child, answers fixed by arithmetic on a toy pool,
determinism across thread counts, resume, and the discovery dir's contract."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rnr_sim.cards import load_catalog
from rnr_sim.cli import main
from rnr_sim.decks import is_legal, load_deck, validate_deck
from rnr_sim.discover import DiscoverOptions, discover
from rnr_sim.discover.genome import Laws
from rnr_sim.rules import load_profile

HERE = Path(__file__).parent
TOY = HERE / "fixtures" / "discover" / "toy.toml"
TOY_FIELD = HERE / "fixtures" / "discover" / "field.txt"
ORIGINAL = HERE.parent / "rnr_sim" / "data" / "original.toml"


def _copies(out: Path) -> pl.DataFrame:
    return pl.read_parquet(out / "deck_cards.parquet").pivot(
        on="card", index="elite_id", values="copies").fill_null(0)


def test_every_child_of_the_emitters_operators_is_legal():
    """2,000 children of random parents (crossed and mutated, then repaired) on the
    355-card Original Set: each one legal by the validator `rnr-sim validate` uses."""
    catalog, profile = load_catalog(ORIGINAL), load_profile(None)
    laws = Laws.of(catalog, profile)
    rng = np.random.default_rng(5)
    decks = [laws.random_deck(rng) for _ in range(50)]
    for k in range(2000):
        a, b = decks[rng.integers(len(decks))], decks[rng.integers(len(decks))]
        child = laws.child(a, b if k % 3 == 0 else None, rng)
        problems = validate_deck(laws.deck(child), catalog, profile)
        assert is_legal(problems), [str(p) for p in problems]
        if k % 10 == 0:
            decks[rng.integers(len(decks))] = child


def test_repair_makes_any_multiset_legal():
    """Far from legal (no UAs, 200 cards, 30 Freedom cards...) in, legal out."""
    catalog, profile = load_catalog(ORIGINAL), load_profile(None)
    laws = Laws.of(catalog, profile)
    rng = np.random.default_rng(9)
    for _ in range(200):
        counts = rng.integers(0, 3, size=laws.n_cards) * (rng.random(laws.n_cards) < 0.4)
        laws.check(laws.repair(counts, rng))


@pytest.fixture(scope="module")
def toy_discovery(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("toy") / "d"
    discover(DiscoverOptions(field=[TOY_FIELD], cards=[TOY], budget=1_000_000, seed=1,
                             cells="branch", out=out), progress=False)
    return out


def test_a_strictly_dominant_attack_is_in_every_elite_at_four_copies(toy_discovery):
    """'Dominant Volley' is 'Volley A' with twice the damage, of the same Branch: in any
    cell of the Branch archive, a deck that plays fewer than 4 of it is beaten by the same
    deck with a Volley swapped for it, so no such deck can be an elite."""
    copies = _copies(toy_discovery)
    assert copies.height >= 8
    assert copies["Dominant Volley"].to_list() == [4] * copies.height


def test_a_card_that_can_never_help_is_in_no_elite(toy_discovery):
    """'Paper Act' is a Bison UA of 1 DP; three Bison UAs of 20 DP can always take its
    place in the same cell."""
    copies = _copies(toy_discovery)
    assert "Paper Act" not in copies.columns or copies["Paper Act"].sum() == 0


def test_the_discovery_dir_keeps_its_contract(toy_discovery):
    archive = pl.read_parquet(toy_discovery / "archive.parquet")
    for column in ("elite_id", "cell", "measures", "pilot", "share_search", "share_heldout",
                   "share_heldout_lo", "share_heldout_hi", "games", "main_path"):
        assert column in archive.columns
    assert (archive["share_heldout_lo"] <= archive["share_heldout"]).all()
    assert (archive["share_heldout"] <= archive["share_heldout_hi"]).all()
    # elite ids rank the elites by held-out share
    assert archive["share_heldout"].to_list() == sorted(archive["share_heldout"], reverse=True)
    catalog, profile = load_catalog(TOY), load_profile(None)
    copies = pl.read_parquet(toy_discovery / "deck_cards.parquet")
    for row in archive.iter_rows(named=True):
        deck = load_deck(toy_discovery / row["deck_file"], catalog)
        assert is_legal(validate_deck(deck, catalog, profile))
        assert deck.policy == row["pilot"]
        listed = copies.filter(pl.col("elite_id") == row["elite_id"])
        assert dict(zip(listed["card"], listed["copies"], strict=True)) == deck.counts
    # a deck file is accepted by the commands as it is
    assert main(["validate", str(toy_discovery / "elites" / "01.txt"), "--cards", str(TOY)]) == 0
    # Its Cards: header names the catalog, so no --cards is needed.
    assert main(["validate", str(toy_discovery / "elites" / "01.txt")]) == 0


def _small(out: Path, **kw) -> None:
    discover(DiscoverOptions(field=[TOY_FIELD], cards=[TOY], budget=60_000, seed=3,
                             out=out, **kw), progress=False)


def test_the_same_seed_gives_the_same_archive_on_one_and_two_threads(tmp_path):
    _small(tmp_path / "one", threads=1)
    _small(tmp_path / "two", threads=2)
    for name in ("archive.parquet", "deck_cards.parquet", "field.parquet", "matchups.parquet"):
        assert pl.read_parquet(tmp_path / "one" / name).equals(
            pl.read_parquet(tmp_path / "two" / name)), name


def test_a_stopped_discovery_resumes_to_the_same_archive(tmp_path, monkeypatch):
    from rnr_sim.runs import evaluation

    _small(tmp_path / "whole")
    calls = {"n": 0}
    real = evaluation.Evaluator.play

    def stop_after_four(self, *a, **kw):
        calls["n"] += 1
        if calls["n"] == 5:
            self.stop.requested = True  # as a first Ctrl-C would
        return real(self, *a, **kw)

    monkeypatch.setattr(evaluation.Evaluator, "play", stop_after_four)
    stopped = discover(DiscoverOptions(field=[TOY_FIELD], cards=[TOY], budget=60_000, seed=3,
                                       out=tmp_path / "cut"), progress=False)
    assert stopped.stopped and not (tmp_path / "cut" / "manifest.json").exists()
    monkeypatch.setattr(evaluation.Evaluator, "play", real)
    _small(tmp_path / "cut", resume=True)
    for name in ("archive.parquet", "deck_cards.parquet", "matchups.parquet"):
        assert pl.read_parquet(tmp_path / "whole" / name).equals(
            pl.read_parquet(tmp_path / "cut" / name)), name


@pytest.mark.parametrize("args,message", [
    (["--budget", "10"], "--budget must be a whole number 50000.."),
    (["--cells", "colour"], "--cells colour: unknown; choose one of path-speed, branch"),
])
def test_discover_bad_input_is_one_line(args, message, capsys, tmp_path):
    code = main(["discover", "--field", str(TOY_FIELD), "--cards", str(TOY),
                 "--out", str(tmp_path / "d"), *args])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not (tmp_path / "d").exists()


def test_report_draws_a_discovery_dir(toy_discovery, tmp_path):
    assert main(["report", str(toy_discovery), "--out", str(tmp_path / "r")]) == 0
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "The best deck of each cell" in page and "data:image/png;base64" in page
    assert "Paper Act*" in page  # in no elite, and in no field deck either
    assert "Dominant Volley" in page
    # standing alone (no run report above it): the Card power page it links is its own power/
    assert 'id="power-link" data-probe="power/plots/power.png" hidden>' in page
    # issue 41: the staples leave out the UAs, which every deck must hold
    assert "UAs left out (every deck must hold three)" in page
    staples = page[page.index("<h2>Cards: staples"):page.index("<h3>In no elite")]
    assert "<td>ua</td>" not in staples


def test_check_coverage_re_measures_elites_as_discover_does(toy_discovery):
    """On the discovery's own held-out seed and deals, the coverage check's estimator gives
    the archive's held-out shares and intervals exactly: it measures the intervals the
    discovery reports, not others."""
    import json

    from rnr_sim.checks.discovery_coverage import heldout_intervals

    m = json.loads((toy_discovery / "manifest.json").read_text())
    frame, _ = heldout_intervals(toy_discovery, [m["seed"] + 1_000_003],
                                 m["heldout"]["deals_per_field_deck"])
    archive = pl.read_parquet(toy_discovery / "archive.parquet")
    names = [load_deck(toy_discovery / f, load_catalog(TOY)).name for f in archive["deck_file"]]
    share = frame.filter(pl.col("family") == "discover held-out share")
    got = dict(zip(share["subject"], zip(share["value"], share["lo"], share["hi"],
                                          strict=True), strict=True))
    for name, row in zip(names, archive.iter_rows(named=True), strict=True):
        assert got[name] == pytest.approx((row["share_heldout"], row["share_heldout_lo"],
                                           row["share_heldout_hi"]), abs=1e-12)


def test_a_second_writer_of_a_discovery_dir_is_refused(tmp_path):
    """One writer at a time: a discovery dir held by another process's lock (here, this
    one's) is refused in one line naming the holder."""
    import os

    from rnr_sim.errors import InputError
    from rnr_sim.runs.dirlock import DirLock

    out = tmp_path / "d"
    out.mkdir()
    with DirLock(out, "discovery dir"), pytest.raises(InputError) as e:
        _small(out)
    assert str(os.getpid()) in str(e.value) and "\n" not in str(e.value)


def test_power_takes_a_discoverys_field_and_elites_as_hosts(toy_discovery, tmp_path):
    """``power --discovery``: the hosts are the discovery's field and the elites of its
    metagame matrix, on its catalog; Dominant Volley, in every elite already, is measured
    where it is legal (the field deck) and beats Paper Act, which can never help."""
    import json

    from rnr_sim.power import PowerOptions, power

    result = power(PowerOptions(discovery=toy_discovery, only_cards=["Dominant Volley",
                                                                     "Paper Act"],
                                budget=100_000, seed=2, out=tmp_path / "p"), progress=False)
    m = json.loads((tmp_path / "p" / "manifest.json").read_text())
    elites = pl.read_parquet(toy_discovery / "matchups.parquet")["deck"].unique()
    assert len(m["hosts"]) == 1 + sum(e.startswith("elite ") for e in elites)
    assert m["hosts"][0] == "Toy Field"
    table = result.tables["power"]
    assert table["card"][0] == "Dominant Volley"
    by = {r["card"]: r for r in table.iter_rows(named=True)}
    assert by["Dominant Volley"]["gain_lo"] > by["Paper Act"]["gain_hi"]
