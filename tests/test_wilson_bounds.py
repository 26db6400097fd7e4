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
