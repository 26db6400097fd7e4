"""Head-to-head win rates (seat-balanced) and the metagame's Nash equilibrium.

Pair counts come from one of two equivalent routes. A table of the run is a fixed set of
decks, each deal played in every seat order (docs/design.md, "CLI"), so who met whom is a
property of the table: ``pair_counts_by_table`` aggregates seat rows per (table, deck,
seat order) -- a few hundred rows -- and pairs them through the table's composition.
``pair_counts_by_game`` pairs every seat with every opposing seat game by game, and is
used when a table's composition is not fixed (``fixed_tables`` says which applies).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from rnr_sim.analytics.nash import nash_bootstrap
from rnr_sim.analytics.stats import (
    exploitability,
    nash_equilibrium,
    rate,
    ratio_from_moments,
    wilson_hi,
    wilson_lo,
)

PAIR_COUNTS = ("games", "n", "wins", "draws", "n_first", "wins_first")


def table_games(games: pl.LazyFrame) -> pl.LazyFrame:
    """One row per table: ``games`` and ``n_players`` (its largest; ``n_players_min`` too)."""
    return games.group_by("table_id").agg(
        pl.len().cast(pl.Int64).alias("table_games"),
        pl.col("n_players").max().cast(pl.Int64).alias("n_players"),
        pl.col("n_players").min().cast(pl.Int64).alias("n_players_min"),
    )


def key_counts_by_table(seat_games: pl.LazyFrame, key: str = "deck") -> pl.LazyFrame:
    """Seat rows per (``table_id``, ``deal`` when the rows have it, ``row`` = the seat's
    ``key``, ``is_first``): ``n`` rows, ``wins``, ``draws``."""
    deal = ["deal"] if "deal" in seat_games.collect_schema().names() else []
    return seat_games.group_by("table_id", *deal, pl.col(key).alias("row"), "is_first").agg(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("won").sum().cast(pl.Int64).alias("wins"),
        pl.col("draw").sum().cast(pl.Int64).alias("draws"),
    )


def table_composition(counts: pl.LazyFrame, tables: pl.LazyFrame) -> pl.LazyFrame:
    """Per (table, row key): ``seats`` = rows / table games, the seats it holds in each game
    (a whole number when the table's composition is fixed), and ``table_games``."""
    return (
        counts.group_by("table_id", "row")
        .agg(pl.col("n").sum().alias("rows"))
        .join(tables, on="table_id", how="inner")
        .with_columns((pl.col("rows") / pl.col("table_games")).alias("seats"))
    )


def fixed_tables(composition: pl.DataFrame) -> bool:
    """True if every table seats the same keys in every game: each key's seat rows are a
    whole multiple of the table's games and the multiples add up to its players."""
    if composition.height == 0:
        return True
    whole = (composition["rows"] % composition["table_games"] == 0).all()
    if not whole:
        return False
    per = composition.group_by("table_id").agg(
        pl.col("seats").sum(), pl.col("n_players").first(), pl.col("n_players_min").first()
    )
    return bool(
        ((per["seats"] == per["n_players"]) & (per["n_players"] == per["n_players_min"])).all()
    )


def opponents(rows: pl.LazyFrame, composition: pl.LazyFrame, *extra: str) -> pl.LazyFrame:
    """``rows`` keyed by (``table_id``, ``row``), once per ``col`` the row key met at its
    table: every other key, and itself when it holds two or more seats; with the row's
    ``seats`` (and the ``extra`` composition columns)."""
    comp = composition.select("table_id", "row", "seats", *extra)
    cols = composition.select("table_id", pl.col("row").alias("col"))
    return (
        rows.join(comp, on=["table_id", "row"], how="inner")
        .join(cols, on="table_id", how="inner")
        .filter((pl.col("row") != pl.col("col")) | (pl.col("seats") >= 2))
    )


def pair_counts_by_table(counts: pl.LazyFrame, composition: pl.LazyFrame) -> pl.LazyFrame:
    """Pair counts per (``row``, ``col``) through fixed table compositions.

    In a table, a row key met every other key of the table, and met itself when it holds
    two or more seats. Its counts there are its seat rows in that table; ``games`` adds
    the table's games once per (table, row, col). Columns: ``row``, ``col``, PAIR_COUNTS.
    """
    per_table = (
        opponents(counts, composition, "table_games")
        .group_by("table_id", "row", "col")
        .agg(
            pl.col("table_games").first().alias("games"),
            pl.col("n").sum(),
            pl.col("wins").sum(),
            pl.col("draws").sum(),
            pl.col("n").filter(pl.col("is_first")).sum().alias("n_first"),
            pl.col("wins").filter(pl.col("is_first")).sum().alias("wins_first"),
        )
    )
    return per_table.group_by("row", "col").agg([pl.col(c).sum() for c in PAIR_COUNTS])


def intervals_from_moments(moments: pl.LazyFrame) -> pl.LazyFrame:
    """Each (``row``, ``col``) pair's win-rate interval, the deal as the unit, from its
    per-(``row``, ``col``, table) deal moments
    (``stats.deal_moments`` of y = wins, n = row-seat observations)."""
    return ratio_from_moments(moments, ["row", "col"], name="win_rate").select(
        pl.col("row").cast(pl.String), pl.col("col").cast(pl.String),
        "win_rate_lo", "win_rate_hi", "win_rate_deff")


def pair_moments_by_table(moments: pl.LazyFrame, composition: pl.LazyFrame) -> pl.LazyFrame:
    """Per-(``row``, ``col``, table) deal moments through fixed table compositions, from
    per-(table, ``row``) moments of the row key's per-deal wins and seat rows: in a table
    of fixed composition a key's deals are the same against every other key of the table,
    so its moments are too."""
    return opponents(moments, composition).drop("seats")


def matchup_pairs(seat_games: pl.LazyFrame, key: str = "deck") -> pl.LazyFrame:
    """Every (seat, opposing seat) pair of every game, as the row seat sees it.

    Columns: ``game_id`` (with ``table_id``, ``deal`` when the rows have them), ``seat``,
    ``opp_seat``, ``row`` (the seat's ``key``), ``col``
    (the opposing seat's ``key``), ``won`` (the row seat won), ``draw``, ``is_first`` (the
    row seat moved first). In games of 3-4 players an opposing key met at several seats
    counts once per row seat.
    """
    unit = [c for c in ("table_id", "deal") if c in seat_games.collect_schema().names()]
    left = seat_games.select(
        "game_id", *unit, "seat", pl.col(key).alias("row"), "won", "draw", "is_first",
        "n_players"
    )
    right = seat_games.select("game_id", pl.col("seat").alias("opp_seat"), pl.col(key).alias("col"))
    pairs = left.join(right, on="game_id", how="inner").filter(pl.col("seat") != pl.col("opp_seat"))
    two = pairs.filter(pl.col("n_players") <= 2)
    many = pairs.filter(pl.col("n_players") > 2).unique(["game_id", "seat", "col"])
    return pl.concat([two, many]).select(
        "game_id", *unit, "seat", "opp_seat", "row", "col", "won", "draw", "is_first"
    )


def pair_counts_by_game(seat_games: pl.LazyFrame, key: str = "deck") -> pl.LazyFrame:
    """Pair counts per (``row``, ``col``) from ``matchup_pairs``; ``games`` = distinct games."""
    return matchup_pairs(seat_games, key).group_by("row", "col").agg(
        pl.col("game_id").n_unique().cast(pl.Int64).alias("games"),
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("won").sum().cast(pl.Int64).alias("wins"),
        pl.col("draw").sum().cast(pl.Int64).alias("draws"),
        pl.col("is_first").sum().cast(pl.Int64).alias("n_first"),
        (pl.col("won") & pl.col("is_first")).sum().cast(pl.Int64).alias("wins_first"),
    )


def matchup_matrix(pair_counts: pl.LazyFrame, keys: list[str],
                   intervals: pl.LazyFrame | None = None, players: int = 2) -> pl.LazyFrame:
    """The win-rate matrix in long form: one row per (row key, column key) of ``keys``².

    Over the games where ``row`` met ``col``: ``games`` (distinct games), ``n`` (row-seat
    observations; = games for two players off the diagonal), ``wins``, ``draws``,
    ``wins_first``/``n_first`` (row seat moved first) and ``wins_second``/``n_second``.
    ``win_rate`` is seat-balanced: each of the ``players`` places in the turn order
    weighs the same, ``wins_first/n_first / P + wins_second/n_second · (P-1)/P`` (for two
    players the mean of the two; "second" is every seat after the first), the pooled rate
    if only one seat order was played. When every deal is played in every rotation (as
    the runner does) it equals the pooled ``wins / n``;
    ``win_rate_lo``/``win_rate_hi`` is the 95% interval of the pooled ``wins / n`` (the
    same centre when, as the runner guarantees, both seat orders are played equally) from
    ``intervals`` (``intervals_from_moments``: the deal as the unit, with ``win_rate_deff``);
    without them (a hand-built table of counts) the Wilson interval over independent games.
    ``mirror`` marks the diagonal, whose rate is null: both sides are the same key.
    Cells never played have ``games = 0`` and null rates.
    """
    grid = pl.LazyFrame({"row": keys}, schema={"row": pl.String}).join(
        pl.LazyFrame({"col": keys}, schema={"col": pl.String}), how="cross"
    )
    pc = pair_counts.with_columns(pl.col("row").cast(pl.String), pl.col("col").cast(pl.String))
    out = (
        grid.join(pc, on=["row", "col"], how="left")
        .with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in PAIR_COUNTS])
        .with_columns(
            (pl.col("n") - pl.col("n_first")).alias("n_second"),
            (pl.col("wins") - pl.col("wins_first")).alias("wins_second"),
            (pl.col("row") == pl.col("col")).alias("mirror"),
        )
        .with_columns(
            rate("wins_first", "n_first").alias("win_rate_first"),
            rate("wins_second", "n_second").alias("win_rate_second"),
        )
    )
    balanced = (
        pl.when(pl.col("win_rate_first").is_not_null() & pl.col("win_rate_second").is_not_null())
        .then(pl.col("win_rate_first") / players
              + pl.col("win_rate_second") * (players - 1.0) / players)
        .otherwise(rate("wins", "n"))
    )
    off = ~pl.col("mirror")
    if intervals is None:
        lo, hi, deff = wilson_lo("wins", "n"), wilson_hi("wins", "n"), pl.lit(None, pl.Float64)
    else:
        out = out.join(intervals, on=["row", "col"], how="left")
        lo, hi, deff = pl.col("win_rate_lo"), pl.col("win_rate_hi"), pl.col("win_rate_deff")
    return out.with_columns(
        pl.when(off).then(balanced).otherwise(None).alias("win_rate"),
        pl.when(off).then(lo).otherwise(None).alias("win_rate_lo"),
        pl.when(off).then(hi).otherwise(None).alias("win_rate_hi"),
        pl.when(off).then(deff).otherwise(None).alias("win_rate_deff"),
    ).select(pl.exclude("win_rate_lo", "win_rate_hi", "win_rate_deff"), "win_rate_lo",
             "win_rate_hi", "win_rate_deff")


def payoff_matrix(matrix: pl.DataFrame, keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The metagame's antisymmetric payoff and which cells were played.

    ``payoff[i, j] = (wr[i, j] - wr[j, i]) / 2``: deck i's seat-balanced win rate against j
    minus one half, with draws shared so that ``payoff = -payoff.T`` (it equals
    ``wr[i, j] - 0.5`` when no game is drawn). Unplayed cells and the diagonal are 0.
    Returns (float64[k, k] payoff, bool[k, k] played).
    """
    idx = {k: i for i, k in enumerate(keys)}
    k = len(keys)
    wr = np.full((k, k), np.nan)
    for row, col, w in matrix.select("row", "col", "win_rate").iter_rows():
        if row in idx and col in idx and w is not None:
            wr[idx[row], idx[col]] = w
    played = np.isfinite(wr) & np.isfinite(wr.T)
    payoff = np.where(played, (np.nan_to_num(wr) - np.nan_to_num(wr.T)) / 2.0, 0.0)
    np.fill_diagonal(payoff, 0.0)
    return payoff, played


def metagame_nash(
    matrix: pl.DataFrame,
    keys: list[str],
    deals: pl.DataFrame | dict | None = None,
    players: int = 2,
    solve: bool = True,
) -> pl.DataFrame:
    """The Nash equilibrium of the metagame and each deck's standing against it.

    The game: both players pick a deck from ``keys``; the payoff is ``payoff_matrix``
    (win rate - 0.5, symmetric and zero-sum). Decks that met no other deck are left out
    of the game (``share`` null). Solved exactly by linear programming (``nash_equilibrium``).
    Columns: ``deck``, ``share`` (the deck's weight in the equilibrium mix),
    ``expected_win_rate = 0.5 + Σ_j share_j · payoff[deck, j]`` (its win rate against the
    mix; 0.5 for every deck in the support, at most 0.5 for the rest), ``in_support``,
    ``opponents`` (decks it met), and the mix's ``exploitability`` (≈ 0: what the best
    deck gains against the mix). With ``deals`` (``nash.matchup_deals`` or its
    ``nash.deal_patterns``), the bootstrap
    over deals (``nash.nash_bootstrap``) adds ``share_lo``/``share_hi`` (95% percentile
    interval), ``support_freq`` (share of resamples with the deck in the mix) and
    ``replicates``; else those are null.

    Only for two players: with 3-4 players a deck's result depends on the whole table,
    so the pairwise matrix is not a two-player zero-sum game and no Nash mix is computed
    (every share null, ``in_support`` false). Nor with ``solve`` false: a ``run --vs``
    matrix holds one deck's row and column, every other matchup unplayed, and its
    "equilibrium" would only say which deck beat that one.
    """
    payoff, played = payoff_matrix(matrix, keys)
    met = played.sum(axis=1)
    active = [i for i in range(len(keys)) if met[i] > 0] if players <= 2 and solve else []
    share = np.full(len(keys), np.nan)
    expected = np.full(len(keys), np.nan)
    gap = np.nan
    if active:
        sub = payoff[np.ix_(active, active)]
        x = nash_equilibrium(sub)
        share[active] = x
        expected[active] = 0.5 + sub @ x
        gap = exploitability(sub, x)
    out = pl.DataFrame(
        {
            "deck": keys,
            "share": [None if np.isnan(s) else float(s) for s in share],
            "expected_win_rate": [None if np.isnan(e) else float(e) for e in expected],
            "in_support": [bool(s > 1e-9) if not np.isnan(s) else False for s in share],
            "opponents": [int(m) for m in met],
            "exploitability": [None if np.isnan(gap) else float(gap)] * len(keys),
        },
        schema={
            "deck": pl.String,
            "share": pl.Float64,
            "expected_win_rate": pl.Float64,
            "in_support": pl.Boolean,
            "opponents": pl.Int64,
            "exploitability": pl.Float64,
        },
    )
    boot_schema = {"share_lo": pl.Float64, "share_hi": pl.Float64,
                   "support_freq": pl.Float64, "replicates": pl.Int64}
    if deals is not None and active:
        boot = nash_bootstrap(deals, [keys[i] for i in active])
        out = out.join(boot, on="deck", how="left")
    else:
        out = out.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in boot_schema.items()])
    return out.sort(["share", "expected_win_rate", "deck"], descending=[True, True, False],
                    nulls_last=True)


def matchup_edges(matrix: pl.DataFrame, fair: float) -> pl.DataFrame:
    """The matchups each deck clearly wins or loses: one row per played off-diagonal cell
    of ``matchup_matrix`` whose 95% interval is clear of ``fair`` (1 / players), with
    ``edge`` = "beats" (the interval above it) or "loses to" (below it); columns ``row``,
    ``col``, ``win_rate``, ``win_rate_lo``, ``win_rate_hi``, ``games``, ``edge``. Sorted
    per row deck by how far the rate is from fair, farthest first. What makes a strong
    deck strong (the report's verdict): the decks it beats, and the ones that beat it."""
    lo, hi = pl.col("win_rate_lo"), pl.col("win_rate_hi")
    return (
        matrix.filter(~pl.col("mirror") & (pl.col("games") > 0) & lo.is_not_null()
                      & hi.is_not_null() & ((lo > fair) | (hi < fair)))
        .with_columns(pl.when(lo > fair).then(pl.lit("beats")).otherwise(pl.lit("loses to"))
                      .alias("edge"),
                      (pl.col("win_rate") - fair).abs().alias("_far"))
        .sort(["row", "_far", "col"], descending=[False, True, False])
        .select("row", "col", "win_rate", "win_rate_lo", "win_rate_hi", "games", "edge")
    )
