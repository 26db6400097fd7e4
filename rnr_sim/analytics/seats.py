"""Seat advantage: how often the first seat wins, overall, in mirrors, and with the P2 right.

Amend. VIII gives the second seat a free pre-game Pillar "to offset the inherent
advantage of taking the first turn"; these metrics say whether it does.
"""

from __future__ import annotations

import polars as pl

from rnr_sim.analytics.stats import with_rate

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


def game_flags_by_table(
    games: pl.LazyFrame, seats: pl.LazyFrame, mirror_tables: list[int]
) -> pl.LazyFrame:
    """As ``game_flags``, for runs whose tables have a fixed composition: a game is a mirror
    when its table seats one deck only (``mirror_tables``)."""
    used = seats.filter(pl.col("p2_right")).select("game_id").collect()["game_id"]
    return games.with_columns(
        pl.col("table_id").is_in(mirror_tables).alias("mirror"),
        pl.col("game_id").is_in(used.implode()).alias("p2_used"),
    )


def seat_advantage(flagged_games: pl.LazyFrame) -> pl.LazyFrame:
    """First-seat win rate by scope, with 95% Wilson intervals.

    Input: games with ``mirror`` and ``p2_used`` (``game_flags``). Rows: ``scope`` in
    (``all``, ``mirror``) × ``p2`` in (``any``, ``used``, ``declined``), per ``n_players``.
    Over that scope's games: ``games``, ``first_wins`` (winner_seat == first_seat),
    ``other_wins`` (another seat won), ``draws``, ``first_win_rate = first_wins / games``
    with ``first_win_rate_lo``/``_hi``, and ``fair = 1 / n_players``, the rate if the seat
    order did not matter. ``p2 = used``: games in which the second seat played its free
    Pillar (Amend. VIII).
    """
    cells = flagged_games.group_by("n_players", "mirror", "p2_used").agg(
        pl.len().alias("games"),
        (pl.col("winner_seat") == pl.col("first_seat")).sum().alias("first_wins"),
        ((pl.col("winner_seat") >= 0) & (pl.col("winner_seat") != pl.col("first_seat")))
        .sum()
        .alias("other_wins"),
        (pl.col("winner_seat") == -1).sum().alias("draws"),
    )
    counts = ["games", "first_wins", "other_wins", "draws"]
    scopes = pl.LazyFrame(
        {"scope": [s for s, _ in SCOPES], "p2": [p for _, p in SCOPES],
         "order": list(range(len(SCOPES)))}
    )
    players = flagged_games.select(pl.col("n_players").unique())
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
    return (
        with_rate(out, "first_win_rate", "first_wins", "games")
        .sort("n_players", "order")
        .select("scope", "p2", "n_players", *counts, "first_win_rate", "first_win_rate_lo",
                "first_win_rate_hi", "fair")
    )
