"""``iwd_max`` as a target balance aims at: a card's adjusted IWD on the search's paired
games (``balance.iwd``) is the report's, and a card planted over the bound is the one the
search changes, its fix verified on fresh deals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rnr_sim.balance import BalanceOptions, balance
from rnr_sim.balance.iwd import card_iwd
from rnr_sim.balance.metrics import Games

ROOT = Path(__file__).resolve().parent.parent
DECKS = [ROOT / "decks" / f"{d}.txt" for d in
         ("bison_stampede", "post_road_raiders", "eagle_blockade")]
FOUNDATION = ROOT / "rnr_sim" / "data" / "foundation.toml"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    from rnr_sim.runs import planning, runner

    out = tmp_path_factory.mktemp("iwd") / "run"
    runner.start_run(planning.RunOptions(decks=DECKS, games=200, seed=3, out=out,
                                         cards=[FOUNDATION]), progress=False,
                     log=lambda m: None)
    return out


def test_the_search_figure_is_the_reports_adjusted_iwd(run_dir):
    """On a run's own games, every card's figure and standard error equal the report's
    per-card row: the same strata, the same estimate, the deal the unit."""
    from rnr_sim.analytics.cards import adjusted_iwd, card_masks, seat_units
    from rnr_sim.analytics.run import load_run

    run = load_run(run_dir)
    games, seats = run.games.collect(), run.seats.collect()
    names = sorted(seats["deck"].unique().to_list())
    first = seats.join(games.select("game_id", "table_id"), on="game_id").sort("game_id", "seat")
    by_table = first.group_by("table_id", maintain_order=True).agg(pl.col("deck").head(2))
    tables = np.array([[names.index(d) for d in row] for row in by_table["deck"].to_list()])
    g = Games.of_run(games, tables, seats)
    masks = card_masks(run.decks)
    per_card, _ = adjusted_iwd(seat_units(run.games, run.seats), masks)
    checked = 0
    for card in per_card.filter(pl.col("iwd_adjusted").is_not_null())["card"].to_list():
        m = np.zeros(len(names), dtype=np.uint64)
        for r in masks.filter(pl.col("card") == card).iter_rows(named=True):
            m[names.index(r["deck"])] = np.uint64(r["mask"])
        f = card_iwd(g, m)
        want = per_card.filter(pl.col("card") == card).row(0, named=True)
        assert f.value == pytest.approx(want["iwd_adjusted"], abs=1e-12), card
        assert f.se == pytest.approx(want["iwd_adjusted_se"], rel=1e-9), card
        checked += 1
    assert checked >= 20


#: Minuteman Volley (an Attack four copies of which Bison Stampede and Post Road Raiders
#: each play) at 20 LP damage instead of 3: its adjusted IWD on the four-deck field is
#: about +0.27 [+0.25, +0.29] (876 deals a pair, seed 5), every other card's at most about
#: +0.21; a bound of 0.24 is missed by about 3 points, by that card alone.
PLANTED = """[set]
name = "Planted"
version = "1"

[errata."Minuteman Volley"]
effects = ["lp 20"]
"""
TARGETS = """[targets]
iwd_max = 0.24

[scope]
cards = ["Minuteman Volley", "Pitchfork Uprising", "Tar and Feathers",
         "Sons of Liberty Rally", "Stamp Act", "Patrick Henry"]
max_changes = 2
"""
FIELD = DECKS + [ROOT / "decks" / "scroll_assembly.txt"]


def test_a_card_planted_over_iwd_max_is_the_change_and_its_fix_verifies(tmp_path):
    planted, targets = tmp_path / "planted.toml", tmp_path / "targets.toml"
    planted.write_text(PLANTED, encoding="utf-8")
    targets.write_text(TARGETS, encoding="utf-8")
    said: list[str] = []
    result = balance(BalanceOptions(targets=targets, field=FIELD, cards=[FOUNDATION, planted],
                                    budget=340_000, seed=5, out=tmp_path / "b",
                                    rediscover=False), progress=False, log=said.append)
    # The search watched the planted card, over the bound on the baseline's games ...
    base = result.figures.filter((pl.col("rank") == 0) & (pl.col("target") == "iwd_max"))
    volley = base.filter(pl.col("subject") == "Minuteman Volley").row(0, named=True)
    assert volley["before_lo"] > 0.24 and not volley["met_before"]
    assert any(m.startswith("iwd_max +24.0 pp: Minuteman Volley +2") for m in said)
    # ... and its first suggestion lowers that card's damage, verified on fresh deals: no
    # card's adjusted IWD above the bound after it.
    assert result.status == "suggestions", result.messages
    best = result.suggestions.row(0, named=True)
    assert best["cards"][0] == "Minuteman Volley"
    assert best["changes"][0].startswith("Minuteman Volley: lp 20 -> ")
    assert best["verified"] and best["targets_met"] == ["iwd_max"]
    after = result.figures.filter((pl.col("rank") == 1) & (pl.col("target") == "iwd_max"))
    assert after["before"].item() > 0.24 >= after["after"].item()
    # the verification's distance counts the cards' excess over the bound (before: at least
    # the planted card's; after: none)
    assert best["distance_before"] >= after["before"].item() - 0.24 > 0
    assert best["distance_verified"] == 0.0
