"""Victory paths: how wins split between life, attack, petition and deck-out (Art. III).

Art. III: "No path is superior to another." If that held in play, each path would take a
quarter of the wins; ``path_shares`` measures the distance from that.
"""

from __future__ import annotations

import polars as pl

from rnr_sim.analytics.decks import WIN_PATHS, path_share_columns
from rnr_sim.analytics.stats import chi2_sf, rate

PATH_COUNT_COLUMNS = ("games", "wins", "draws", *[f"wins_{p}" for p in WIN_PATHS])


def overall_path_counts(games: pl.LazyFrame) -> pl.LazyFrame:
    """One row, group ``all``: ``games``, ``wins`` (decided games), ``draws``, ``wins_<path>``.

    Counted over games (each decided game has one winner, so one win).
    """
    return games.select(
        pl.lit("all").alias("group"),
        pl.len().cast(pl.Int64).alias("games"),
        (pl.col("winner_seat") >= 0).sum().cast(pl.Int64).alias("wins"),
        (pl.col("winner_seat") == -1).sum().cast(pl.Int64).alias("draws"),
        *[
            ((pl.col("winner_seat") >= 0) & (pl.col("path") == p)).sum().cast(pl.Int64).alias(
                f"wins_{p}"
            )
            for p in WIN_PATHS
        ],
    )


def path_counts(seat_games: pl.LazyFrame, by: str) -> pl.LazyFrame:
    """One row per value of ``by`` (deck, policy, branch...), as column ``group``.

    Over that group's seat rows: ``games``, ``wins`` (won), ``draws`` (drawn games),
    ``wins_<path>`` (won by that path).
    """
    return (
        seat_games.group_by(pl.col(by).alias("group"))
        .agg(
            pl.len().alias("games"),
            pl.col("won").sum().alias("wins"),
            pl.col("draw").sum().alias("draws"),
            *[(pl.col("won") & (pl.col("path") == p)).sum().alias(f"wins_{p}") for p in WIN_PATHS],
        )
        .with_columns([pl.col(c).cast(pl.Int64) for c in PATH_COUNT_COLUMNS])
        .sort("group")
    )


def path_shares(counts: pl.LazyFrame) -> pl.LazyFrame:
    """Add each path's share of the wins, draws' share of games, and the distance from uniform.

    ``share_<path> = wins_<path> / wins`` with its 95% Wilson interval
    (``share_<path>_lo``/``_hi``); ``draw_rate = draws / games``;
    ``max_gap = max_path |share_<path> - 1/4|`` (the largest departure, in share of wins,
    from "no path is superior"); ``chi2`` = Pearson's chi-square of the four win counts
    against equal expected counts (df = 3) and ``chi2_p`` its p-value. Nulls where wins = 0.
    """
    out = counts.with_columns(*path_share_columns(), rate("draws", "games").alias("draw_rate"))
    gap = pl.max_horizontal([(pl.col(f"share_{p}") - 0.25).abs() for p in WIN_PATHS])
    out = out.with_columns(pl.when(pl.col("wins") > 0).then(gap).otherwise(None).alias("max_gap"))

    expected = pl.col("wins").cast(pl.Float64) / len(WIN_PATHS)
    chi2 = pl.sum_horizontal(
        [(pl.col(f"wins_{p}") - expected) ** 2 / expected for p in WIN_PATHS]
    )
    out = out.with_columns(pl.when(pl.col("wins") > 0).then(chi2).otherwise(None).alias("chi2"))
    df = len(WIN_PATHS) - 1
    return out.with_columns(
        pl.col("chi2")
        .map_elements(lambda x: chi2_sf(x, df), return_dtype=pl.Float64)
        .alias("chi2_p")
    )
