"""Liberty Points over turns, from the sample of traced games (lp_curves.parquet)."""

from __future__ import annotations

import polars as pl


def lp_bands(lp_curves: pl.LazyFrame) -> pl.LazyFrame:
    """Per (``matchup``, ``deck``, ``turn``): the LP distribution over the traced games.

    ``matchup`` names a game's decks, sorted and joined by " vs " (a mirror reads
    "A vs A"). Columns: ``games`` (traced games still running at that turn),
    ``lp_median``, ``lp_p10``, ``lp_p90`` (linear-interpolated quantiles).
    """
    label = (
        lp_curves.select("game_id", "seat", "deck")
        .unique(["game_id", "seat"])
        .group_by("game_id")
        .agg(pl.col("deck").sort().str.join(" vs ").alias("matchup"))
    )
    lp = pl.col("lp")
    return (
        lp_curves.join(label, on="game_id", how="inner")
        .group_by("matchup", "deck", "turn")
        .agg(
            pl.len().cast(pl.Int64).alias("games"),
            lp.median().alias("lp_median"),
            lp.quantile(0.10, interpolation="linear").alias("lp_p10"),
            lp.quantile(0.90, interpolation="linear").alias("lp_p90"),
        )
        .sort("matchup", "deck", "turn")
    )
