"""A Wilson interval always holds its own proportion: rounding once put the lower bound of
0 wins a hair above 0 (``wilson(0, 7)`` gave 2.8e-17), and a report's error bars crashed."""

from __future__ import annotations

import polars as pl

from rnr_sim.analytics.stats import wilson, wilson_hi, wilson_lo


def test_wilson_bounds_are_exact_at_no_wins_and_all_wins():
    for n in range(1, 400):
        assert wilson(0, n)[0] == 0.0
        assert wilson(n, n)[1] == 1.0
        for k in (0, 1, n // 2, n - 1, n):
            lo, hi = wilson(k, n)
            assert lo <= k / n <= hi


def test_wilson_expressions_hold_the_proportion():
    n = list(range(1, 400))
    frame = pl.DataFrame({"n": n * 2, "w": [0] * len(n) + n})
    out = frame.select(lo=wilson_lo("w", "n"), hi=wilson_hi("w", "n"), p=pl.col("w") / pl.col("n"))
    assert (out["lo"] <= out["p"]).all() and (out["hi"] >= out["p"]).all()
    assert out.filter(pl.col("p") == 0)["lo"].max() == 0.0
    assert out.filter(pl.col("p") == 1)["hi"].min() == 1.0


def test_a_small_four_player_report_draws_every_error_bar(tmp_path):
    """The report of a legal 100-deal 4-player run (once: 'yerr' must not contain negative
    values) is written, plots and all."""
    from pathlib import Path

    from rnr_sim.report.build import build_report
    from rnr_sim.runs import planning, runner

    decks = sorted((Path(__file__).resolve().parent.parent / "decks").glob("*.txt"))[:5]
    runner.start_run(planning.RunOptions(decks=decks, games=100, players=4, out=tmp_path / "r"),
                     progress=False, log=lambda m: None)
    index = build_report(tmp_path / "r", tmp_path / "rep")
    assert Path(index).exists() and any((tmp_path / "rep" / "plots").iterdir())
