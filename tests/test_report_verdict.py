"""What the run report says a reader should take away (issue 41, item 4): the verdict names
the strongest decks and why they win; a card is flagged by one stated rule, the same band
the Cards section reads as "no effect"; the UAs, never drawn, are left out of the card
table with a line saying why."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from analytics_fixtures import RandomSpec, random_run

from rnr_sim.analytics.cards import flag_beyond_band, plain_card_baseline
from rnr_sim.analytics.stats import Z95, benjamini_hochberg
from rnr_sim.report import build_report

BAND = re.compile(r"So ±(\d+\.\d\d) points \(the average")


@pytest.fixture(scope="module")
def strong(tmp_path_factory) -> Path:
    """Alpha the strongest deck by far, Beta clearly above a fair share too."""
    root = tmp_path_factory.mktemp("verdict")
    run = random_run(root / "run", RandomSpec(deals=200, seed=11,
                                              strength=(0.12, 0.06, -0.06, -0.12)))
    return build_report(run, root / "out").parent


def _strongest_lines(summary: str) -> list[str]:
    block = summary.split("**The strongest decks, and why they win.**", 1)[1]
    return [ln[2:] for ln in block.split("\n\n", 2)[1].splitlines() if ln.startswith("- ")]


def test_the_verdict_names_the_strongest_decks_and_the_matchups_that_make_them(strong):
    decks = pl.read_csv(strong / "decks.csv")
    matrix = pl.read_csv(strong / "matchups.csv")
    lines = _strongest_lines((strong / "summary.md").read_text(encoding="utf-8"))
    above = decks.filter(pl.col("win_rate_lo") > 0.5).sort("win_rate", descending=True)
    assert [ln.split(" wins ")[0] for ln in lines] == above["deck"].to_list()[:3]
    alpha = lines[0]
    assert alpha.startswith("Alpha wins ") and "of its wins by " in alpha
    # each matchup it "beats" is a cell of the matrix whose interval is clear above 50%
    beaten = re.findall(r"(\w+) (\d+\.\d)% \[", alpha.split("it beats ", 1)[1])
    assert beaten
    for col, rate in beaten:
        cell = matrix.filter((pl.col("row") == "Alpha") & (pl.col("col") == col)).row(
            0, named=True)
        assert cell["win_rate_lo"] > 0.5 and f"{100 * cell['win_rate']:.1f}" == rate
    assert "loses no matchup measurably" in alpha or "loses to " in alpha
    html = (strong / "index.html").read_text(encoding="utf-8")
    verdict = html.split('<section id="verdict">', 1)[1].split("</section>", 1)[0]
    assert "The strongest decks, and why they win." in verdict and "<li>Alpha wins " in verdict


def test_no_deck_above_a_fair_share_is_said_so(tmp_path):
    """Decks of equal strength (no star card, no seat edge): none is named strongest."""
    run = random_run(tmp_path / "run", RandomSpec(deals=200, seed=3, strength=(0.0,) * 4,
                                                  first_edge=0.0, star_edge=0.0))
    out = build_report(run, tmp_path / "out").parent
    assert pl.read_csv(out / "decks.csv").filter(pl.col("win_rate_lo") > 0.5).height == 0
    lines = _strongest_lines((out / "summary.md").read_text(encoding="utf-8"))
    assert lines == ["No deck wins measurably more than a fair 50% of its games against "
                     "this field."]


def test_one_flag_rule_the_band_the_section_calls_no_effect(strong):
    """Every card is flagged exactly when its adjusted IWD survives Benjamini-Hochberg at
    5% and its whole interval lies beyond the band the Cards lead states (and the flag
    column's header repeats); the verdict names no card inside the band."""
    summary = (strong / "summary.md").read_text(encoding="utf-8")
    band = float(BAND.search(summary).group(1)) / 100
    assert f"Flag (BH 5%, beyond ±{100 * band:.2f} pp)" in summary
    assert f"lies beyond ±{100 * band:.2f} points" in summary
    cards = pl.read_csv(strong / "cards.csv").filter(pl.col("iwd_adjusted").is_not_null())
    bh = benjamini_hochberg(cards["iwd_adjusted_p"].to_numpy().astype(np.float64), 0.05)
    beyond = ((cards["iwd_adjusted_lo"] > band) | (cards["iwd_adjusted_hi"] < -band)
              ).to_numpy()
    # the band is stated to 2 decimals: no card's interval end may sit in the rounding gap
    ends = np.abs(np.r_[cards["iwd_adjusted_lo"].to_numpy(), cards["iwd_adjusted_hi"]])
    assert not np.any(np.abs(ends - band) < 5e-5)
    assert (cards["flag"].fill_null("") != "").to_list() == list(bh & beyond)
    assert any(bh & ~beyond), "the band should matter in this run"
    flagged = set(cards.filter(pl.col("flag").fill_null("") != "")["card"])
    named = re.findall(r"\*\*(?:Over|Under)-performing card: (.+?)\.\*\*", summary)
    assert set(named) <= flagged


def test_the_band_is_the_plain_cards_bias_beyond_their_noise():
    """``band = |mean| + 1.96 tau``, tau the plain pairs' spread beyond their own noise:
    no noise, tau is their standard deviation; noise that explains the spread, tau = 0."""
    catalog = pl.DataFrame({"name": ["P1", "P2", "X"], "type": ["pillar", "pillar", "attack"],
                            "branch": ["bison", "eagle", "bison"], "rarity": ["common"] * 3,
                            "effects": [[], [], []], "keywords": [[], [], []]},
                           schema_overrides={"effects": pl.List(pl.String),
                                             "keywords": pl.List(pl.String)})
    vals = [0.01, 0.03, -0.02, 0.02]

    def pairs(se: float) -> pl.DataFrame:
        return pl.DataFrame({
            "deck": ["A", "B", "A", "B", "A"], "card": ["P1", "P1", "P2", "P2", "X"],
            "iwd_adjusted": [*vals, 0.5], "iwd_adjusted_lo": [v - Z95 * se for v in vals]
            + [0.4], "iwd_adjusted_hi": [v + Z95 * se for v in vals] + [0.6],
            "iwd_adjusted_se": [se] * 5, "iwd": [0.0] * 5})

    exact = plain_card_baseline(pairs(0.0), catalog).row(0, named=True)
    sd = float(np.std(vals, ddof=1))
    assert exact["pairs"] == 4 and exact["adj_tau"] == pytest.approx(sd)
    assert exact["band"] == pytest.approx(abs(np.mean(vals)) + Z95 * sd)
    noisy = plain_card_baseline(pairs(0.05), catalog).row(0, named=True)
    assert noisy["adj_tau"] == 0.0 and noisy["band"] == pytest.approx(abs(np.mean(vals)))
    table = pl.DataFrame({"card": ["in", "out", "edge"], "flag": ["over", "over", "under"],
                          "iwd_adjusted": [0.03, 0.05, -0.04],
                          "iwd_adjusted_lo": [0.01, 0.031, -0.06],
                          "iwd_adjusted_hi": [0.05, 0.07, -0.029]})
    assert flag_beyond_band(table, 0.03)["flag"].to_list() == ["", "over", ""]


def test_the_uas_are_left_out_of_the_card_table_with_a_line_saying_why(tmp_path):
    run = random_run(tmp_path / "run", RandomSpec(deals=30, seed=5))
    cards = pl.read_parquet(run / "cards.parquet")
    cards.with_columns(pl.when(pl.col("name").is_in(["Bell Tower", "Liberty Tree"]))
                       .then(pl.lit("ua")).otherwise(pl.col("type")).alias("type")
                       ).write_parquet(run / "cards.parquet")
    out = build_report(run, tmp_path / "out").parent
    html = (out / "index.html").read_text(encoding="utf-8")
    section = html.split('<section id="cards">', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r'<tr data-s="([^"]*)"', section)
    assert rows and not any(r.startswith(("bell tower", "liberty tree")) for r in rows)
    assert ("Not in the table: the 2 Unconstitutional Acts (Bell Tower, Liberty Tree). "
            "Each starts in play in every game and is never drawn") in section
    assert set(pl.read_csv(out / "cards.csv")["card"]) >= {"Bell Tower", "Liberty Tree"}
    summary = (out / "summary.md").read_text(encoding="utf-8")
    table = summary.split("## Cards", 1)[1].split("## ", 1)[0]
    assert "| Bell Tower |" not in table and "(n=0)" not in table
