"""Game length in turns, and against the rulebook's "Game Length: 15 to 35 minutes"."""

from __future__ import annotations

import polars as pl

from rnr_sim.analytics.stats import with_rate

# Assumption, not a rule: one turn (any seat's) takes about a minute at the table. The
# rulebook's front page gives "15 to 35 minutes"; turns count every seat's turns.
MINUTES_PER_TURN = 1.0
RULEBOOK_MINUTES = (15.0, 35.0)


def _length_aggs() -> list[pl.Expr]:
    t = pl.col("turns")
    minutes = t.cast(pl.Float64) * MINUTES_PER_TURN
    lo, hi = RULEBOOK_MINUTES
    return [
        pl.len().alias("games"),
        t.mean().alias("turns_mean"),
        t.min().cast(pl.Float64).alias("turns_min"),
        t.quantile(0.10, interpolation="linear").alias("turns_p10"),
        t.quantile(0.25, interpolation="linear").alias("turns_q1"),
        t.median().alias("turns_median"),
        t.quantile(0.75, interpolation="linear").alias("turns_q3"),
        t.quantile(0.90, interpolation="linear").alias("turns_p90"),
        t.max().cast(pl.Float64).alias("turns_max"),
        (minutes < lo).sum().alias("shorter"),
        ((minutes >= lo) & (minutes <= hi)).sum().alias("in_window"),
        (minutes > hi).sum().alias("longer"),
    ]


def length_summary(games: pl.LazyFrame) -> pl.LazyFrame:
    """One row, ``path = all``, then one per path present: the distribution of ``turns``.

    ``games``; ``turns_mean``/``_min``/``_p10``/``_q1``/``_median``/``_q3``/``_p90``/``_max``
    (linear-interpolated quantiles); with ``minutes = turns × MINUTES_PER_TURN``:
    ``shorter`` (< 15 min), ``in_window`` (15 to 35 min inclusive), ``longer`` (> 35 min)
    and ``in_window_rate = in_window / games`` with its 95% Wilson interval.
    """
    total = games.select(pl.lit("all").alias("path"), *_length_aggs())
    per_path = games.group_by("path").agg(*_length_aggs()).sort("path")
    out = pl.concat([total, per_path], how="vertical_relaxed").with_columns(
        [pl.col(c).cast(pl.Int64) for c in ("games", "shorter", "in_window", "longer")]
    )
    out = out.filter((pl.col("path") == "all") | (pl.col("games") > 0))
    return with_rate(out, "in_window_rate", "in_window", "games")


def length_histogram(games: pl.LazyFrame) -> pl.LazyFrame:
    """Games per (``turns``, ``path``): the histogram behind the game-length plot."""
    return games.group_by("turns", "path").agg(pl.len().cast(pl.Int64).alias("games")).sort(
        "turns", "path"
    )
