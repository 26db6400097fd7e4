"""The Nash metagame with uncertainty: a bootstrap over deals.

The point estimate (``matchups.metagame_nash``) solves the metagame on the measured
win-rate matrix. The matrix is measured on a finite number of deals, and the equilibrium
is a sharp function of it: a deck can move in and out of the support on noise. Here each
matchup's deals are resampled with replacement (the deal is the unit: both seat orders of
a deal go together), the matrix rebuilt and the game solved again, ``replicates`` times
from a fixed seed, so the result is the same on every run of the report.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from rnr_sim.analytics.stats import nash_equilibrium

#: Replicates and seed of the bootstrap (fixed: the report is deterministic).
REPLICATES = 200
SEED = 20251130
#: A deck is "in the support" of a replicate's mix when its share exceeds this.
SUPPORT_SHARE = 0.01
_V = ("wf", "nf", "ws", "ns")  # wins and games with the row deck first, then second


def matchup_deals(seat_games: pl.LazyFrame, games: pl.LazyFrame | None = None) -> pl.DataFrame:
    """Per deal of every two-player game between two different decks: ``table_id``,
    ``deal``, ``row`` (a deck), ``col`` (its opponent), ``wf``/``nf`` (the row deck's wins
    and games when it moved first) and ``ws``/``ns`` (when it moved second)."""
    sg = seat_games
    if "deal" not in sg.collect_schema().names():
        if games is None:
            raise ValueError("seat rows without a deal column need the games table")
        sg = sg.join(games.select("game_id", "deal"), on="game_id", how="left")
    left = sg.filter(pl.col("n_players") == 2).select(
        "game_id", "table_id", "deal", "seat", pl.col("deck").alias("row"), "won", "is_first")
    right = sg.filter(pl.col("n_players") == 2).select(
        "game_id", pl.col("seat").alias("opp"), pl.col("deck").alias("col"))
    first, won = pl.col("is_first"), pl.col("won")
    return (
        left.join(right, on="game_id", how="inner")
        .filter((pl.col("seat") != pl.col("opp")) & (pl.col("row") != pl.col("col")))
        .group_by("table_id", "deal", "row", "col")
        .agg(
            (won & first).sum().cast(pl.Float64).alias("wf"),
            first.sum().cast(pl.Float64).alias("nf"),
            (won & ~first).sum().cast(pl.Float64).alias("ws"),
            (~first).sum().cast(pl.Float64).alias("ns"),
        )
        .sort("table_id", "deal", "row", "col")
        .collect()
    )


def _balanced(s: np.ndarray) -> np.ndarray:
    """Seat-balanced win rate from summed (wf, nf, ws, ns) [..., 4]; pooled if a seat
    order is missing, nan if both are."""
    wf, nf, ws, ns = (s[..., i] for i in range(4))
    with np.errstate(invalid="ignore", divide="ignore"):
        both = (wf / nf + ws / ns) / 2.0
        pooled = (wf + ws) / (nf + ns)
    return np.where((nf > 0) & (ns > 0), both, pooled)


def deal_patterns(deals: pl.DataFrame) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """Per matchup (decks a < b, in the order ``deals`` first meets them): the distinct
    outcomes of its deals, ``float64[patterns, 8]`` (a's ``wf, nf, ws, ns``, then b's;
    sorted), and how many deals had each (``int64[patterns]``). ``deals``:
    ``matchup_deals``. A deal's outcome is a few small counts, so a matchup has a few
    patterns however many deals it played: ``nash_bootstrap`` needs nothing more."""
    out = {}
    pair = deals.with_columns(
        pl.min_horizontal("row", "col").alias("a"), pl.max_horizontal("row", "col").alias("b"))
    for (a, b), part in pair.partition_by("a", "b", as_dict=True, maintain_order=True).items():
        side_a = part.filter(pl.col("row") == a).select("table_id", "deal", *_V)
        side_b = part.filter(pl.col("row") == b).select("table_id", "deal", *_V)
        both = side_a.join(side_b, on=["table_id", "deal"], how="full", coalesce=True,
                           suffix="_b").fill_null(0.0)
        v = both.select(*_V, *[f"{c}_b" for c in _V]).to_numpy()
        if len(v):
            patterns, freq = np.unique(v, axis=0, return_counts=True)
            out[(a, b)] = (patterns, freq.astype(np.int64))
    return out


def nash_bootstrap(
    deals: pl.DataFrame | dict[tuple[str, str], tuple[np.ndarray, np.ndarray]],
    keys: list[str],
    replicates: int = REPLICATES,
    seed: int = SEED,
    support: float = SUPPORT_SHARE,
) -> pl.DataFrame:
    """Each deck's Nash share under resampling of deals.

    For every matchup (unordered pair of decks), its D deals are drawn D times with
    replacement (the same draw for both decks' sides, so a deal's games stay together);
    the seat-balanced win rates and the payoff ``(wr_ij - wr_ji) / 2`` are rebuilt and
    the metagame solved exactly (``stats.nash_equilibrium``) over the decks that met
    another deck. ``deals``: ``matchup_deals``, or its ``deal_patterns``. Per deck:
    ``share_lo``/``share_hi``, the 2.5% and 97.5% quantiles of its share over the
    replicates (a percentile interval), ``support_freq``, the share of replicates in
    which its share exceeds ``support`` (1%), and ``replicates``.
    """
    patterns = deals if isinstance(deals, dict) else deal_patterns(deals)
    k = len(keys)
    idx = {d: i for i, d in enumerate(keys)}
    rng = np.random.default_rng(seed)
    wr = np.full((replicates, k, k), np.nan)
    for (a, b), (pattern, freq) in patterns.items():
        if a not in idx or b not in idx:
            continue
        n = int(freq.sum())
        # Drawing n deals with replacement = drawing how many times each distinct deal
        # outcome comes up: a multinomial over the few patterns (exact, and fast).
        sums = rng.multinomial(n, freq / n, size=replicates).astype(np.float64) @ pattern
        wr[:, idx[a], idx[b]] = _balanced(sums[:, :4])
        wr[:, idx[b], idx[a]] = _balanced(sums[:, 4:])
    shares = np.full((replicates, k), np.nan)
    for r in range(replicates):
        m = wr[r]
        played = np.isfinite(m) & np.isfinite(m.T)
        active = np.flatnonzero(played.sum(axis=1) > 0)
        if len(active) == 0:
            continue
        pay = np.where(played, (np.nan_to_num(m) - np.nan_to_num(m.T)) / 2.0, 0.0)
        np.fill_diagonal(pay, 0.0)
        shares[r, active] = nash_equilibrium(pay[np.ix_(active, active)])
    rows = []
    for i, deck in enumerate(keys):
        s = shares[:, i]
        s = s[np.isfinite(s)]
        if len(s) == 0:
            rows.append((deck, None, None, None, 0))
            continue
        rows.append((deck, float(np.quantile(s, 0.025)), float(np.quantile(s, 0.975)),
                     float(np.mean(s > support)), len(s)))
    return pl.DataFrame(rows, schema={"deck": pl.String, "share_lo": pl.Float64,
                                      "share_hi": pl.Float64, "support_freq": pl.Float64,
                                      "replicates": pl.Int64}, orient="row")
