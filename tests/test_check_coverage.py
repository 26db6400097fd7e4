"""``rnr-sim check coverage``: the leave-one-out coverage count, and the command end to end
on a few small seeds (the measured figures at scale are in docs/statistics.md)."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from typer.testing import CliRunner

from rnr_sim.analytics.coverage import coverage_table
from rnr_sim.analytics.stats import wilson


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
    assert out["total_games"] == 3 * 6 * 4 * 2  # 6 tables of 4 decks, 2 seat orders
    fams = {(f["family"], f["method"]) for f in out["families"]}
    for family in ("deck win rate", "matchup", "first-seat win rate", "card gih_wr"):
        assert (family, "deal") in fams and (family, "naive") in fams
    for f in out["families"]:
        assert 0 <= f["covered"] <= f["intervals"]
        assert f["coverage_lo"] <= f["coverage"] <= f["coverage_hi"]
        assert not math.isnan(f["coverage"])


def test_check_coverage_text_table(cli, engine, decks):
    res = cli("check", "coverage", *decks[:3], "--seeds", "3", "--games", "3")
    assert res.exit_code == 0, res.output
    assert "naive (before)" in res.stdout and "per deal (after)" in res.stdout
    assert "deck win rate" in res.stdout


@pytest.mark.parametrize("args, words", [(("--seeds", "2"), "--seeds"),
                                         (("--games", "0"), "--games")])
def test_check_coverage_bad_sizes_are_one_line(cli, args, words):
    res = cli("check", "coverage", *args)
    assert res.exit_code == 2
    assert words in res.output and len(res.output.strip().splitlines()) == 1
