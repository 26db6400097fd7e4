"""``rnr-sim check coverage``: the leave-one-out coverage count, compare's deltas grouped
into families, and the command end to end on a few small seeds (the measured figures at
scale are in docs/statistics.md)."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import polars as pl
import pytest
from fake_engine import REAL_ENGINE, REPO
from typer.testing import CliRunner

from rnr_sim.analytics.stats import wilson
from rnr_sim.checks.coverage import (
    COMPARE_NORMAL,
    COMPARE_SCORE,
    SPREAD,
    compare_intervals_of,
    coverage_table,
)
from rnr_sim.compare.paired import CHANGE_SCHEMA

#: Three sample decks; Four Branches Convention holds Minuteman Volley (the built-in patch).
SAMPLE = [REPO / "decks" / f"{n}.txt" for n in (
    "four_branches_convention", "abolitionist_front", "eagle_blockade")]
needs_engine = pytest.mark.skipif(not REAL_ENGINE, reason="needs the real engine's play")


def intervals(values, half, family="f", subject="s", method="deal"):
    return pl.DataFrame({
        "family": family, "subject": subject, "method": method,
        "value": values, "lo": [v - half for v in values], "hi": [v + half for v in values],
        "seed": list(range(len(values))),
    })


@pytest.mark.parametrize("half, covered", [(0.10, 1), (0.13, 3)])
def test_coverage_against_the_other_seeds_stretches_for_their_noise(half, covered):
    # values .4 .5 .6: the other seeds' means are .55 .5 .45, .15 from the outer two.
    # Stretched by sqrt(1 + 1/2) = 1.22, a half-width of .13 reaches .159 (holds all
    # three); .10 reaches .122 (holds only the middle one). Unstretched, .13 would miss.
    t = coverage_table(intervals([0.4, 0.5, 0.6], half)).row(0, named=True)
    assert (t["intervals"], t["covered"]) == (3, covered)
    assert t["coverage"] == pytest.approx(covered / 3)
    # the seed is the unit: one interval per seed, 1 0 0 covered has per-seed spread
    # 3/2 * (4/9 + 1/9 + 1/9) / 3² against (1/3)(2/3)/3: deff 3/2, Wilson on 2 intervals;
    # all covered has no spread: Wilson on 3
    n_eff = 2 if covered == 1 else 3
    assert (t["coverage_lo"], t["coverage_hi"]) == pytest.approx(
        wilson(covered / 3 * n_eff, n_eff))


def test_the_coverage_interval_counts_seeds_not_intervals():
    # two subjects that hold or miss together in each seed: their coverage interval is
    # that of 3 seeds, not of 6 independent intervals
    both = pl.concat([intervals([0.4, 0.5, 0.6], 0.10, subject=s) for s in ("a", "b")])
    t = coverage_table(both).row(0, named=True)
    assert (t["intervals"], t["covered"]) == (6, 2)
    assert (t["coverage_lo"], t["coverage_hi"]) == pytest.approx(wilson(1 / 3 * 2, 2))


def test_a_subject_constant_over_seeds_is_not_counted():
    both = pl.concat([intervals([0.4, 0.5, 0.6], 0.13),
                      intervals([0.0, 0.0, 0.0], 0.01, subject="never")])
    t = coverage_table(both).row(0, named=True)
    assert (t["intervals"], t["subjects"]) == (3, 1)


def test_design_effects_compare_widths_and_the_spread_between_seeds():
    deal = intervals([0.4, 0.5, 0.6], 0.2)
    naive = intervals([0.4, 0.5, 0.6], 0.1, method="naive")
    t = coverage_table(pl.concat([deal, naive])).sort("method")
    d = t.filter(pl.col("method") == "deal").row(0, named=True)
    assert d["deff_est"] == pytest.approx(4.0)  # twice the width: four times the variance
    # seeds' variance .01 over the naive se² (.1 / 1.96)²
    assert d["deff_seeds"] == pytest.approx(0.01 / (0.1 / 1.959963984540054) ** 2)


def change(kind, subject, metric, value, half=0.01, interval="normal", role=""):
    row = dict.fromkeys(CHANGE_SCHEMA)
    row.update(kind=kind, subject=subject, metric=metric, change=value, lo=value - half,
               hi=value + half, interval=interval, role=role)
    return row


def test_compare_changes_fall_into_their_families_and_once_more_by_interval():
    rows = [change("deck", "A", "win_rate", 0.05),
            change("matchup", "A vs B", "win_rate", 0.06),
            change("seat", "all games", "first_win_rate", 0.0, interval="score"),
            change("path", "all games", "share_attack", 0.03),
            change("path", "all games", "gap_life", 0.01),
            change("path", "A", "share_life", -0.02),
            change("card", "Minuteman Volley", "iwd", 0.04, role="patched"),
            change("card", "Gag Rule", "iwd", -0.01, interval="score", role="moved"),
            {**change("card", "Gag Rule", "gih_wr", 0.0), "lo": None, "hi": None}]
    paired = SimpleNamespace(changes=pl.DataFrame(rows, schema=CHANGE_SCHEMA, orient="row"))
    out = compare_intervals_of(paired)
    own = out.filter(pl.col("family") == pl.col("group"))
    assert dict(zip(own["family"], own["subject"], strict=True)) == {
        "compare deck win rate": "A",
        "compare matchup": "A vs B",
        "compare first-seat win rate": "all games",
        "compare path share (all games)": "all games: share_attack",
        "compare path vs deck pool": "gap_life",
        "compare path share by deck": "A: share_life",
        "compare patched card": "Minuteman Volley: iwd",
        "compare moved card iwd": "Gag Rule",
    }  # the change with no interval is not counted
    again = out.filter(pl.col("family") != pl.col("group"))
    assert again.height == own.height
    assert set(again.filter(pl.col("family") == COMPARE_SCORE)["group"]) == {
        "compare first-seat win rate | by interval", "compare moved card iwd | by interval"}
    assert (again.filter(pl.col("family") == COMPARE_NORMAL).height == own.height - 2)


def test_a_family_by_interval_kind_takes_its_reference_over_every_seed():
    # one change over three seeds, .4 (a score interval) .5 .6 (normal): the reference is
    # the mean of the other two seeds whatever their interval (.55 .5 .45), so with
    # half-width .10 only the middle one holds (as in the first test). Taken inside each
    # kind alone, the score one would have no other seed and .5/.6 would reference each
    # other (.1 away: both held).
    x = intervals([0.4, 0.5, 0.6], 0.10, family=COMPARE_NORMAL).with_columns(
        pl.lit("compare deck win rate | by interval").alias("group"))
    x = x.with_columns(pl.when(pl.col("seed") == 0).then(pl.lit(COMPARE_SCORE))
                       .otherwise(pl.col("family")).alias("family"))
    t = {r["family"]: r for r in coverage_table(x).iter_rows(named=True)}
    assert (t[COMPARE_SCORE]["intervals"], t[COMPARE_SCORE]["covered"]) == (1, 0)
    assert (t[COMPARE_NORMAL]["intervals"], t[COMPARE_NORMAL]["covered"]) == (2, 1)


@pytest.fixture
def cli():
    from rnr_sim.cli import app

    def invoke(*args):
        return CliRunner().invoke(app, [str(a) for a in args], prog_name="rnr-sim")

    return invoke


def test_check_coverage_plays_the_seeds_and_prints_every_family(cli, engine, decks):
    res = cli("check", "coverage", *decks, "--seeds", "3", "--games", "4", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["seeds"] == [20251129, 20251130, 20251131] and out["games"] == 4
    # 6 tables of 4 decks, 2 seat orders; each seed a baseline and a variant (--compare)
    assert out["total_games"] == 2 * 3 * 6 * 4 * 2
    fams = {(f["family"], f["method"]) for f in out["families"]}
    for family in ("deck win rate", "matchup", "first-seat win rate", "card gih_wr"):
        assert (family, "deal") in fams and (family, "naive") in fams
    for f in out["families"]:
        assert 0 <= f["covered"] <= f["intervals"]
        assert f["coverage_lo"] <= f["coverage"] <= f["coverage_hi"]
        assert not math.isnan(f["coverage"])


def test_check_coverage_text_table(cli, engine, decks):
    res = cli("check", "coverage", *decks[:3], "--seeds", "3", "--games", "3",
              "--no-compare")
    assert res.exit_code == 0, res.output
    assert "naive (before)" in res.stdout and "per deal (after)" in res.stdout
    assert "deck win rate" in res.stdout and "compare" not in res.stdout


@needs_engine
def test_check_coverage_measures_compare_deltas_of_the_built_in_patch(cli, engine):
    # 60 deals a table: enough games that all four of the patched card's metrics are
    # defined in every seed (at 30 deals, one of them was undefined in one seed)
    res = cli("check", "coverage", *SAMPLE, "--seeds", "4", "--games", "60", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["change"] == ["Minuteman Volley: damage 3 -> 6"]
    assert out["total_games"] == 2 * 4 * 3 * 60 * 2  # both runs, 3 tables, 2 seat orders
    fams = {f["family"]: f for f in out["families"]}
    # the patch moves every deck's win rate (each meets the holder): 3 decks x 4 seeds,
    # and the patched card's four metrics in every seed
    assert fams["compare deck win rate"]["intervals"] == 3 * 4
    assert fams["compare patched card"]["subjects"] == 4
    assert fams["compare patched card"]["intervals"] == 4 * 4
    for family in ("compare matchup", "compare moved card iwd",
                   "compare path share (all games)", COMPARE_SCORE):
        assert fams[family]["intervals"] > 0 and fams[family]["method"] == "deal"
    # every change is counted once in its family and once by its interval kind
    own = sum(f["intervals"] for name, f in fams.items()
              if name.startswith("compare ") and not name.startswith("compare,")
              and name != SPREAD)
    assert fams[SPREAD]["intervals"] == 4  # the balance line's one interval a seed
    by_kind = sum(fams[k]["intervals"] for k in (COMPARE_SCORE, COMPARE_NORMAL) if k in fams)
    assert own == by_kind
    # the report's families are measured on the baseline runs, as without --compare
    assert fams["deck win rate"]["intervals"] == 3 * 4


@needs_engine
def test_a_patch_that_changes_no_game_leaves_no_compare_delta_to_count(cli, engine, tmp_path):
    patch = tmp_path / "words.toml"
    patch.write_text('[cards."Minuteman Volley"]\ntext = "New words, same card."\n',
                     encoding="utf-8")
    res = cli("check", "coverage", *SAMPLE, "--seeds", "3", "--games", "10", "--json",
              "--patch", patch)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["change"] and "text" in out["change"][0]
    assert not [f for f in out["families"] if f["family"].startswith("compare")]
    assert "deck win rate" in {f["family"] for f in out["families"]}


@pytest.mark.parametrize("args, words", [(("--seeds", "2"), "--seeds"),
                                         (("--games", "0"), "--games"),
                                         (("--compare", "--mirrors"), "--mirrors"),
                                         (("--no-compare", "--patch", "x.toml"), "--patch")])
def test_check_coverage_bad_sizes_are_one_line(cli, args, words):
    res = cli("check", "coverage", *args)
    assert res.exit_code == 2
    assert words in res.output and len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize("text, words", [
    ('[cards."Minutman Volley"]\ndamage = 8\n', "no card 'Minutman Volley'"),
    ('[cards."Minuteman Volley"]\nrarity = "rare"\n', "Four Branches Convention"),
])
def test_check_coverage_bad_patch_is_one_line(cli, engine, tmp_path, text, words):
    patch = tmp_path / "bad.toml"
    patch.write_text(text, encoding="utf-8")
    res = cli("check", "coverage", *SAMPLE, "--seeds", "3", "--games", "5", "--patch", patch)
    assert res.exit_code == 2, res.output
    assert words in res.output and len(res.output.strip().splitlines()) == 1
