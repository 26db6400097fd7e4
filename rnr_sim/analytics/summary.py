"""The end-of-run table of ``rnr-sim run``: each deck against the field, from a run dir."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rnr_sim.runs.manifests import complete_parts
from rnr_sim.runs.schema import WIN_PATHS


def summarize(run_dir: str | Path) -> pl.DataFrame:
    """Per deck, from the run's parquet, against the field (mirror games, a deck against
    itself, are left out and counted in ``mirror_games``): games (seat rows), wins,
    win_rate with its 95% interval (ci_low, ci_high) and design effect ``deff``, draw
    rate, and the share of its wins by each victory path. Best win rate first.

    The interval has the deal as the unit (``analytics.stats.ratio_by_deal``): the games
    of one deal share their shuffles, so the interval comes from the spread of per-deal
    wins between the deals of each table, as a Wilson interval on games / deff.

    Counted part by part (a chunk's games and seats parts hold the same games): per-deal
    sums are folded into per-table moments as soon as a deal is complete (only a part's
    last deal can go on in the next part), so memory is one part's whatever the size of
    the run.
    """
    from rnr_sim.analytics.stats import deal_moments, ratio_from_moments

    run_dir = Path(run_dir)
    paths = [(pl.col("won") & (pl.col("path") == path)).sum().cast(pl.Int64).alias(path)
             for path in WIN_PATHS]
    sums_schema = {"deck": pl.String, "table_id": pl.Int32, "deal": pl.Int64,
                   "y": pl.Float64, "n": pl.Float64}
    totals, moments, mirrors = [], [], []
    pending = pl.DataFrame(schema=sums_schema)
    for name in complete_parts(run_dir):
        games = pl.scan_parquet(run_dir / "games" / name).select(
            "game_id", "table_id", "deal", "path")
        rows = pl.scan_parquet(run_dir / "seats" / name).select("game_id", "deck", "won").join(
            games, on="game_id").with_columns(
            (pl.col("deck").n_unique().over("game_id") == 1).alias("mirror")).collect()
        mirrors.append(rows.filter(pl.col("mirror")).group_by("deck").agg(
            pl.len().cast(pl.Int64).alias("mirror_games")))
        field = rows.filter(~pl.col("mirror"))
        totals.append(field.group_by("deck").agg(
            pl.len().cast(pl.Int64).alias("games"),
            pl.col("won").sum().cast(pl.Int64).alias("wins"),
            (pl.col("path") == "draw").sum().cast(pl.Int64).alias("draws"), *paths))
        per_deal = pl.concat([pending, field.group_by("deck", "table_id", "deal").agg(
            pl.col("won").sum().cast(pl.Float64).alias("y"),
            pl.len().cast(pl.Float64).alias("n"))], how="vertical_relaxed")
        per_deal = per_deal.group_by("deck", "table_id", "deal").agg(pl.col("y", "n").sum())
        last = games.select(pl.col("table_id", "deal").sort_by("game_id").last()).collect()
        if last.height and last["table_id"][0] is not None:
            t, d = last["table_id"][0], last["deal"][0]
            at_end = (pl.col("table_id") == t) & (pl.col("deal") == d)
            pending = per_deal.filter(at_end)
            per_deal = per_deal.filter(~at_end)
        moments.append(deal_moments(per_deal.lazy(), ["deck"]).collect())
    moments.append(deal_moments(pending.lazy(), ["deck"]).collect())
    schema = {"deck": pl.String, "games": pl.Int64, "wins": pl.Int64, "draws": pl.Int64,
              **dict.fromkeys(WIN_PATHS, pl.Int64)}
    per = pl.concat(totals) if totals else pl.DataFrame(schema=schema)
    per = per.group_by("deck").sum()
    mirror = (pl.concat(mirrors) if mirrors else
              pl.DataFrame(schema={"deck": pl.String, "mirror_games": pl.Int64}))
    mirror = mirror.group_by("deck").sum()
    raw = pl.concat(moments).group_by("deck", "table_id").sum()
    ci = ratio_from_moments(raw.lazy(), ["deck"], name="win_rate").collect()
    n = pl.col("games").cast(pl.Float64)
    wins = pl.col("wins").cast(pl.Float64)
    per = per.join(mirror, on="deck", how="full", coalesce=True).with_columns(
        [pl.col(c).fill_null(0) for c in ("games", "wins", "draws", "mirror_games",
                                          *WIN_PATHS)])
    per = per.join(ci.select("deck", "win_rate_lo", "win_rate_hi", "win_rate_deff"),
                   on="deck", how="left").select(
        "deck", "games", "wins",
        pl.when(n > 0).then(wins / n).otherwise(None).alias("win_rate"),
        pl.col("win_rate_lo").alias("ci_low"),
        pl.col("win_rate_hi").alias("ci_high"),
        pl.col("win_rate_deff").alias("deff"),
        pl.when(n > 0).then(pl.col("draws") / n).otherwise(None).alias("draw_rate"),
        *[pl.when(wins > 0).then(pl.col(path) / wins).otherwise(0.0).alias(path)
          for path in WIN_PATHS],
        "mirror_games",
    )
    return per.sort(["win_rate", "deck"], descending=[True, False], nulls_last=True)


def format_summary(summary: pl.DataFrame) -> str:
    """The end-of-run table: one line per deck."""
    head = ["deck", "games", "win", "95% CI", *WIN_PATHS, "draws"]
    body = []
    for r in summary.iter_rows(named=True):
        if r["win_rate"] is None:  # played mirrors only
            body.append([r["deck"], "0", "-", "-", *["-" for _ in WIN_PATHS], "-"])
            continue
        body.append([
            r["deck"],
            f"{r['games']:,}",
            f"{100 * r['win_rate']:.1f}%",
            f"{100 * r['ci_low']:.1f}-{100 * r['ci_high']:.1f}%",
            *[f"{100 * r[p]:.0f}%" for p in WIN_PATHS],
            f"{100 * r['draw_rate']:.1f}%",
        ])
    widths = [max(len(str(row[i])) for row in [head, *body]) for i in range(len(head))]
    lines = []
    for row in [head, *body]:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:],
                                                                        strict=True)]
        lines.append("  ".join(cells))
    lines.insert(1, "  ".join("-" * w for w in widths))
    if body:
        lines.append("(win shares by path: the share of the deck's wins; 95% CI: the deal "
                     "is the unit)")
    if "mirror_games" in summary.columns and summary["mirror_games"].sum():
        lines.append("(against the field: games of a deck against itself are left out)")
    return "\n".join(lines)



