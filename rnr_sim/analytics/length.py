"""Game length in turns, and against the rulebook's "Game Length: 15 to 35 minutes"."""

from __future__ import annotations

import math

import numpy as np
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


def hist_quantile(values: np.ndarray, counts: np.ndarray, q: float) -> float | None:
    """The ``q`` quantile (polars' linear interpolation) of a sample given as sorted
    distinct ``values`` and their ``counts``: a run read in parts keeps the histogram of
    game lengths, not the games. None for an empty sample."""
    n = int(counts.sum())
    if n == 0:
        return None
    at = (n - 1) * q
    lo, hi = math.floor(at), math.ceil(at)
    cum = np.cumsum(counts)
    v_lo = values[int(np.searchsorted(cum, lo, side="right"))]
    v_hi = values[int(np.searchsorted(cum, hi, side="right"))]
    return float(v_lo + (v_hi - v_lo) * (at - lo))


def _length_row(path: str, turns: np.ndarray, games: np.ndarray) -> dict:
    """``_length_aggs`` of one group from its histogram (turns ascending, games > 0)."""
    n = int(games.sum())
    minutes = turns.astype(np.float64) * MINUTES_PER_TURN
    lo, hi = RULEBOOK_MINUTES
    q = {name: hist_quantile(turns, games, x) for name, x in
         (("turns_p10", 0.10), ("turns_q1", 0.25), ("turns_median", 0.5), ("turns_q3", 0.75),
          ("turns_p90", 0.90))}
    return {"path": path, "games": n, "turns_mean": float((turns * games).sum()) / n,
            "turns_min": float(turns[0]), "turns_p10": q["turns_p10"],
            "turns_q1": q["turns_q1"], "turns_median": q["turns_median"],
            "turns_q3": q["turns_q3"], "turns_p90": q["turns_p90"],
            "turns_max": float(turns[-1]),
            "shorter": int(games[minutes < lo].sum()),
            "in_window": int(games[(minutes >= lo) & (minutes <= hi)].sum()),
            "longer": int(games[minutes > hi].sum())}


def length_from_histogram(histogram: pl.DataFrame) -> pl.LazyFrame:
    """``length_summary`` from a histogram of games per (turns, path), as the fold keeps."""
    h = histogram.filter(pl.col("games") > 0)
    rows = []
    total = h.group_by("turns").agg(pl.col("games").sum()).sort("turns")
    if total.height:
        rows.append(_length_row("all", total["turns"].to_numpy(), total["games"].to_numpy()))
    else:
        rows.append({"path": "all", "games": 0, "shorter": 0, "in_window": 0, "longer": 0})
    for (path,), part in sorted(h.partition_by("path", as_dict=True).items()):
        part = part.sort("turns")
        rows.append(_length_row(path, part["turns"].to_numpy(), part["games"].to_numpy()))
    schema = {"path": pl.String, "games": pl.Int64, "turns_mean": pl.Float64,
              "turns_min": pl.Float64, "turns_p10": pl.Float64, "turns_q1": pl.Float64,
              "turns_median": pl.Float64, "turns_q3": pl.Float64, "turns_p90": pl.Float64,
              "turns_max": pl.Float64, "shorter": pl.Int64, "in_window": pl.Int64,
              "longer": pl.Int64}
    out = pl.LazyFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema)
    return with_rate(out, "in_window_rate", "in_window", "games")
