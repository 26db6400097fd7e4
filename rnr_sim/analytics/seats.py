"""Seat advantage: how often the first seat wins, overall, in mirrors, and with the P2 right.

Amend. VIII gives the second seat a free pre-game Pillar "to offset the inherent
advantage of taking the first turn"; these metrics say whether it does.
"""

from __future__ import annotations

import polars as pl

from rnr_sim.analytics.stats import rate, ratio_by_deal

SCOPES = (  # (scope, p2): which games each row of seat_advantage covers
    ("all", "any"), ("all", "used"), ("all", "declined"),
    ("mirror", "any"), ("mirror", "used"), ("mirror", "declined"),
)


def game_flags(games: pl.LazyFrame, seats: pl.LazyFrame) -> pl.LazyFrame:
    """``games`` plus, per game, ``mirror`` (every seat plays the same deck) and
    ``p2_used`` (some seat exercised the P2 Pillar right: any ``p2_right``). General form:
    one group-by over the seats by game."""
    flags = seats.group_by("game_id").agg(
        (pl.col("deck").n_unique() == 1).alias("mirror"),
        pl.col("p2_right").any().alias("p2_used"),
    )
    return games.join(flags, on="game_id", how="left").with_columns(
        pl.col("mirror").fill_null(False), pl.col("p2_used").fill_null(False)
    )


def _scope_filter(scope: str, p2: str) -> pl.Expr:
    keep = pl.lit(True) if scope == "all" else pl.col("mirror")
    if p2 == "used":
        keep = keep & pl.col("p2_used")
    elif p2 == "declined":
        keep = keep & ~pl.col("p2_used")
    return keep


def seat_intervals(flagged_games: pl.LazyFrame) -> pl.LazyFrame:
    """Per (``scope``, ``p2``, ``n_players``): the first seat's win rate with its 95%
    interval, the deal as the unit (``stats.ratio_by_deal`` over the scope's games,
    ``first_win_rate``, ``_lo``, ``_hi``, ``_se``, ``_deff``, ``_deals``). Within a deal
    every seat order is played, so the decks' strength cancels out of the comparison: the
    design effect is below 1 and the interval narrower than one over independent games."""
    win_first = pl.col("winner_seat") == pl.col("first_seat")
    return seat_interval_frame({
        (scope, p2): ratio_by_deal(flagged_games.filter(_scope_filter(scope, p2)), win_first,
                                   pl.lit(1), by=["n_players"], name="first_win_rate")
        for scope, p2 in SCOPES})


def seat_interval_frame(by_scope: dict[tuple[str, str], pl.LazyFrame]) -> pl.LazyFrame:
    """``seat_intervals``' frame from each scope's ``ratio_by_deal`` by ``n_players``."""
    frames = [part.with_columns(pl.lit(scope).alias("scope"), pl.lit(p2).alias("p2"),
                                pl.col("n_players").cast(pl.Int8))
              for (scope, p2), part in by_scope.items()]
    return pl.concat(frames, how="vertical_relaxed")


def seat_advantage(flagged_games: pl.LazyFrame) -> pl.LazyFrame:
    """First-seat win rate by scope, with 95% intervals (the deal as the unit).

    Input: games with ``mirror`` and ``p2_used`` (``game_flags``), ``table_id`` and
    ``deal``. Rows: ``scope`` in (``all``, ``mirror``) × ``p2`` in (``any``, ``used``,
    ``declined``), per ``n_players``. Over that scope's games: ``games``, ``first_wins``
    (winner_seat == first_seat), ``other_wins`` (another seat won), ``draws``,
    ``first_win_rate = first_wins / games`` with ``first_win_rate_lo``/``_hi`` and the
    design effect ``first_win_rate_deff`` (``seat_intervals``), and ``fair = 1 /
    n_players``, the rate if the seat order did not matter. ``p2 = used``: games in which
    the second seat played its free Pillar (Amend. VIII).
    """
    cells = flagged_games.group_by("n_players", "mirror", "p2_used").agg(
        pl.len().alias("games"),
        (pl.col("winner_seat") == pl.col("first_seat")).sum().alias("first_wins"),
        ((pl.col("winner_seat") >= 0) & (pl.col("winner_seat") != pl.col("first_seat")))
        .sum()
        .alias("other_wins"),
        (pl.col("winner_seat") == -1).sum().alias("draws"),
    )
    players = flagged_games.select(pl.col("n_players").unique())
    return seat_table(cells, players, seat_intervals(flagged_games))


def seat_table(cells: pl.LazyFrame, players: pl.LazyFrame, intervals: pl.LazyFrame
               ) -> pl.LazyFrame:
    """``seat_advantage``'s table from its parts: per (``n_players``, ``mirror``,
    ``p2_used``) the ``cells``' games, first_wins, other_wins and draws; the run's
    ``players`` (each ``n_players`` played); the scopes' ``seat_intervals``."""
    counts = ["games", "first_wins", "other_wins", "draws"]
    scopes = pl.LazyFrame(
        {"scope": [s for s, _ in SCOPES], "p2": [p for _, p in SCOPES],
         "order": list(range(len(SCOPES)))}
    )
    members = scopes.join(cells, how="cross").filter(
        ((pl.col("scope") == "all") | pl.col("mirror"))
        & (
            (pl.col("p2") == "any")
            | ((pl.col("p2") == "used") & pl.col("p2_used"))
            | ((pl.col("p2") == "declined") & ~pl.col("p2_used"))
        )
    )
    summed = members.group_by("scope", "p2", "n_players").agg([pl.col(c).sum() for c in counts])
    out = (
        scopes.join(players, how="cross")
        .join(summed, on=["scope", "p2", "n_players"], how="left")
        .with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in counts])
        .with_columns((1.0 / pl.col("n_players").cast(pl.Float64)).alias("fair"))
    )
    intervals = intervals.select(
        "scope", "p2", pl.col("n_players").cast(out.collect_schema()["n_players"]),
        "first_win_rate_lo", "first_win_rate_hi", "first_win_rate_deff")
    return (
        out.with_columns(rate("first_wins", "games").alias("first_win_rate"))
        .join(intervals, on=["scope", "p2", "n_players"], how="left")
        .sort("n_players", "order")
        .select("scope", "p2", "n_players", *counts, "first_win_rate", "first_win_rate_lo",
                "first_win_rate_hi", "first_win_rate_deff", "fair")
    )
