"""Per-deck metrics: games, wins, win rate, win share by path, game length.

Every interval is computed with the deal as the unit (``stats.ratio_by_deal``): the rows
need ``table_id`` and ``deal`` (``with_units`` adds ``deal`` and ``mirror``).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rnr_sim.analytics.stats import (
    DEAL,
    DEAL_STRATUM,
    deal_moments,
    rate,
    ratio_by_deal,
    ratio_from_moments,
    wilson_hi,
    wilson_lo,
)
from rnr_sim.runs.schema import WIN_PATHS  # noqa: F401 (Art. III: the four paths; re-exported)


def deck_names(decks: pl.LazyFrame) -> pl.LazyFrame:
    """The decks of the run (from decks.parquet), one row each: ``deck`` (str), sorted."""
    return decks.select("deck").unique().sort("deck")


def with_units(seat_games: pl.LazyFrame, games: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """``seat_games`` plus ``deal`` (joined from ``games`` when missing) and ``mirror``:
    every seat of the game plays the same deck (a deck against itself)."""
    out = seat_games
    if "deal" not in out.collect_schema().names():
        if games is None:
            raise ValueError("seat rows without a deal column need the games table")
        out = out.join(games.select("game_id", "deal"), on="game_id", how="left")
    if "mirror" not in out.collect_schema().names():
        out = out.with_columns((pl.col("deck").n_unique().over("game_id") == 1).alias("mirror"))
    return out


def deck_summary(seat_games: pl.LazyFrame, decks: pl.LazyFrame) -> pl.LazyFrame:
    """One row per deck of the run, including decks that played no game.

    Over the deck's seat rows against the field (mirror games, where every seat plays
    this deck, are left out: they end 50-50 by construction, less draws):
    ``games`` seat rows, ``wins`` (won), ``draws`` (winner_seat == -1),
    ``win_rate = wins / games`` with its 95% interval ``win_rate_lo``/``win_rate_hi``,
    ``win_rate_deff`` (design effect) and ``win_rate_deals`` (deals played),
    ``wins_<path>`` and ``share_<path> = wins_<path> / wins`` with its interval
    ``share_<path>_lo``/``_hi`` for the four win paths, ``turns_median``, ``turns_q1``,
    ``turns_q3`` (linear-interpolated quartiles of the games' ``turns``), and
    ``mirror_games``/``mirror_wins``: its seat rows and wins in mirror games.
    Intervals: ``stats.ratio_by_deal``, the deal as the unit. Rates are null (not NaN)
    where their count is 0. Needs ``deal`` in the rows (``with_units``).
    """
    rows = with_units(seat_games)
    field = rows.filter(~pl.col("mirror"))
    per_path = [
        (pl.col("won") & (pl.col("path") == p)).sum().alias(f"wins_{p}") for p in WIN_PATHS
    ]
    agg = field.group_by("deck").agg(
        pl.len().alias("games"),
        pl.col("won").sum().alias("wins"),
        pl.col("draw").sum().alias("draws"),
        *per_path,
        pl.col("turns").median().alias("turns_median"),
        pl.col("turns").quantile(0.25, interpolation="linear").alias("turns_q1"),
        pl.col("turns").quantile(0.75, interpolation="linear").alias("turns_q3"),
    )
    mirrors = rows.filter(pl.col("mirror")).group_by("deck").agg(
        pl.len().alias("mirror_games"), pl.col("won").sum().alias("mirror_wins")
    )
    wr = ratio_by_deal(field, "won", pl.lit(1), by=["deck"], name="win_rate")
    return deck_table(deck_names(decks), agg, mirrors, wr, path_shares_by_deal(field, ["deck"]))


def deck_table(names: pl.LazyFrame, agg: pl.LazyFrame, mirrors: pl.LazyFrame,
               win_rate: pl.LazyFrame, shares: pl.LazyFrame) -> pl.LazyFrame:
    """``deck_summary``'s table from its parts: the decks' ``names``, per deck ``agg``
    (field counts and turn quartiles), ``mirrors`` (mirror_games, mirror_wins), the win
    rate's interval (``ratio_by_deal``) and the path shares' (``path_shares_by_deal``)."""
    counts = ["games", "wins", "draws", *[f"wins_{p}" for p in WIN_PATHS],
              "mirror_games", "mirror_wins"]
    out = (
        names
        .join(agg, on="deck", how="full", coalesce=True)
        .join(mirrors, on="deck", how="left")
        .with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in counts])
        .join(win_rate, on="deck", how="left")
        .with_columns(pl.col("win_rate_deals").fill_null(0))
        .join(shares, on="deck", how="left")
    )
    return out.sort(["win_rate", "deck"], descending=[True, False], nulls_last=True)


def path_shares_by_deal(rows: pl.LazyFrame, by: Sequence[str] = ()) -> pl.LazyFrame:
    """Per ``by`` group of seat (or game) rows with ``won``, ``path``, ``table_id`` and
    ``deal``: ``share_<path> = Σ won & path / Σ won`` with its 95% interval
    ``share_<path>_lo``/``_hi``, the deal as the unit (``stats.ratio_by_deal``).
    For game rows, pass ``won = winner_seat >= 0``. Null where the group has no win."""
    keys = list(by)
    # one pass over the rows: per-deal wins and wins by path, then one ratio per path
    per_deal = rows.group_by(*keys, DEAL_STRATUM, DEAL).agg(
        pl.col("won").cast(pl.Float64).sum().alias("n"),
        *[(pl.col("won") & (pl.col("path") == p)).cast(pl.Float64).sum().alias(f"y_{p}")
          for p in WIN_PATHS],
    ).collect().lazy()
    moments = {p: deal_moments(per_deal.select(*keys, DEAL_STRATUM, DEAL,
                                               pl.col(f"y_{p}").alias("y"), "n"), keys)
               for p in WIN_PATHS}
    return path_shares_from_moments(moments, keys)


def path_shares_from_moments(moments: dict[str, pl.LazyFrame], keys: Sequence[str] = ()
                             ) -> pl.LazyFrame:
    """``path_shares_by_deal`` from each path's per-(``keys``, table) deal moments
    (``stats.deal_moments`` of y = wins by the path, n = wins)."""
    keys = list(keys)
    out = None
    for p in WIN_PATHS:
        share = ratio_from_moments(moments[p], keys, name=f"share_{p}").select(
            *keys, f"share_{p}", f"share_{p}_lo", f"share_{p}_hi")
        if out is None:
            out = share
        elif keys:
            out = out.join(share, on=keys, how="full", coalesce=True)
        else:
            out = pl.concat([out, share], how="horizontal")
    assert out is not None
    return out


def with_path_intervals(table: pl.DataFrame, shares: pl.DataFrame, on: str | None = None
                        ) -> pl.DataFrame:
    """``table`` with its ``share_<path>_lo``/``_hi`` columns replaced by those of
    ``shares`` (``path_shares_by_deal``), matched on ``on`` (``group`` = ``by``'s value)
    or, with ``on=None``, row for row (one-row tables). Columns keep their order."""
    cols = [f"share_{p}_{e}" for p in WIN_PATHS for e in ("lo", "hi")]
    order = table.columns
    if on is None:
        new = shares.select(cols)
        if new.height != table.height:
            raise ValueError("row-for-row interval replacement needs equal heights")
        return table.drop(cols).hstack(new).select(order)
    key = shares.columns[0]
    new = shares.select(pl.col(key).cast(table.schema[on]).alias(on), *cols)
    return table.drop(cols).join(new, on=on, how="left").select(order)


def path_share_columns() -> list[pl.Expr]:
    """``share_<path> = wins_<path> / wins`` for each victory path, with its 95% Wilson
    interval ``share_<path>_lo`` / ``share_<path>_hi`` (null where wins = 0).

    Counts only: games taken as independent. The report replaces these intervals by
    the per-deal ones (``path_shares_by_deal``, ``with_path_intervals``); the coverage
    check keeps these as its "naive" reference."""
    shares = []
    for p in WIN_PATHS:
        shares += [
            rate(f"wins_{p}", "wins").alias(f"share_{p}"),
            wilson_lo(f"wins_{p}", "wins").alias(f"share_{p}_lo"),
            wilson_hi(f"wins_{p}", "wins").alias(f"share_{p}_hi"),
        ]
    return shares
