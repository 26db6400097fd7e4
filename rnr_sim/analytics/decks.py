"""Per-deck metrics: games, wins, win rate, win share by path, game length."""

from __future__ import annotations

import polars as pl

from rnr_sim.analytics.stats import rate, wilson_hi, wilson_lo, with_rate

WIN_PATHS = ("life", "attack", "petition", "deck_out")  # Art. III, the four paths to victory


def deck_names(decks: pl.LazyFrame) -> pl.LazyFrame:
    """The decks of the run (from decks.parquet), one row each: ``deck`` (str), sorted."""
    return decks.select("deck").unique().sort("deck")


def deck_summary(seat_games: pl.LazyFrame, decks: pl.LazyFrame) -> pl.LazyFrame:
    """One row per deck of the run, including decks that played no game.

    Over the deck's seat rows (a mirror game counts once per seat):
    ``games`` seat rows, ``wins`` (won), ``draws`` (winner_seat == -1),
    ``win_rate = wins / games`` with its 95% Wilson interval ``win_rate_lo``/``win_rate_hi``,
    ``wins_<path>`` and ``share_<path> = wins_<path> / wins`` (with its Wilson interval
    ``share_<path>_lo``/``_hi``) for the four win paths,
    ``turns_median``, ``turns_q1``, ``turns_q3`` (linear-interpolated quartiles of the
    games' ``turns``). Rates are null (not NaN) where their count is 0.
    """
    per_path = [
        (pl.col("won") & (pl.col("path") == p)).sum().alias(f"wins_{p}") for p in WIN_PATHS
    ]
    agg = seat_games.group_by("deck").agg(
        pl.len().alias("games"),
        pl.col("won").sum().alias("wins"),
        pl.col("draw").sum().alias("draws"),
        *per_path,
        pl.col("turns").median().alias("turns_median"),
        pl.col("turns").quantile(0.25, interpolation="linear").alias("turns_q1"),
        pl.col("turns").quantile(0.75, interpolation="linear").alias("turns_q3"),
    )
    counts = ["games", "wins", "draws", *[f"wins_{p}" for p in WIN_PATHS]]
    out = (
        deck_names(decks)
        .join(agg, on="deck", how="full", coalesce=True)
        .with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in counts])
    )
    out = with_rate(out, "win_rate", "wins", "games")
    return out.with_columns(path_share_columns()).sort(["win_rate", "deck"], descending=[True, False], nulls_last=True)


def path_share_columns() -> list[pl.Expr]:
    """``share_<path> = wins_<path> / wins`` for each victory path, with its 95% Wilson
    interval ``share_<path>_lo`` / ``share_<path>_hi`` (null where wins = 0)."""
    shares = []
    for p in WIN_PATHS:
        shares += [
            rate(f"wins_{p}", "wins").alias(f"share_{p}"),
            wilson_lo(f"wins_{p}", "wins").alias(f"share_{p}_lo"),
            wilson_hi(f"wins_{p}", "wins").alias(f"share_{p}_hi"),
        ]
    return shares
