"""Interval coverage, measured: how often a run's 95% intervals hold the value.

``rnr-sim check coverage`` plays K independent seeds of the same decks and, for every
interval family of the report, counts how often seed k's interval holds the value the
*other* seeds estimate (leave-one-out reference):

- **Reference.** ``ref_k = mean_{j != k} v_j``, the mean of the other K-1 seeds' point
  estimates. It has noise of its own: ``var(v_k - ref_k) = σ²(1 + 1/(K-1))``, where σ² is
  one seed's variance. So each interval's half-widths (either side of ``v_k``) are
  stretched by ``sqrt(1 + 1/(K-1))`` before the check: a calibrated 95% interval then
  holds ``ref_k`` 95% of the time (the correction is exact for a symmetric interval and
  close for Wilson's, and it is small: 1.3% wider at K = 40).
- **Subjects.** A subject whose estimate is the same in every seed (a path a deck never
  wins by: always 0) is left out: its interval holds the value trivially.
- **Uncertainty.** The share of intervals that hold their reference gets a 95% interval
  with the *seed* as the unit (``stats.ratio_by_deal`` over seeds): the intervals of one
  seed are not independent (the matchups of one deck share its games; when a deck's
  win rate comes out high, its opponents' come out low), so they hold or miss together.
- **Design effect.** ``deff (est)``: the mean over a family's intervals of
  ``(width / naive width)²``, the variance the interval assumes over that of independent
  games; ``deff (seeds)``: the mean over subjects of ``var_k(v_k) / mean_k(naive se²)``,
  the variance actually seen between seeds over that of independent games. A calibrated
  method has the two equal.

Two methods are measured on the same runs: ``deal`` (the report's intervals, the deal as
the unit: ``stats.ratio_by_deal``) and ``naive`` (Wilson intervals over seat rows as if
every game were independent: the intervals the report had before).
"""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.stats import Z95, diff_interval, ratio_by_deal, wilson

#: Card rates: (metric, wins column, games column) for the naive Wilson interval.
CARD_RATES = (
    ("gih_wr", "gih_wins", "gih"),
    ("oh_wr", "oh_wins", "oh"),
    ("gd_wr", "gd_wins", "gd"),
    ("gns_wr", "gns_wins", "gns"),
    ("played_wr", "played_wins", "played"),
    ("play_rate", "played", "held"),
)
#: Card differences: (metric, naive interval from counts or None when there is none).
CARD_DIFFS = ("iwd", "iwd_adjusted")
INTERVAL_SCHEMA = {
    "family": pl.String, "subject": pl.String, "method": pl.String, "value": pl.Float64,
    "lo": pl.Float64, "hi": pl.Float64,
}


def _rows(family: str, subject: str, value, lo, hi, naive: tuple[float, float] | None
          ) -> list[tuple]:
    if value is None or lo is None or hi is None:
        return []
    out = [(family, subject, "deal", float(value), float(lo), float(hi))]
    if naive is not None and not any(math.isnan(x) for x in naive):
        out.append((family, subject, "naive", float(value), naive[0], naive[1]))
    return out


def intervals_of(m) -> pl.DataFrame:
    """Every interval of a run's metrics (``analytics.Metrics``) in long form.

    Columns ``family``, ``subject``, ``method`` (``deal``: as the report shows it;
    ``naive``: Wilson over independent games, from the same counts), ``value``, ``lo``,
    ``hi``. Families: deck win rate, matchup (each pair once), first-seat win rate by
    scope, path share (all games; by deck), branch win rate, and each card metric the
    card tables carry (pooled over decks; by deck), ``iwd_adjusted`` when present.
    """
    rows: list[tuple] = []
    for r in m.decks.filter(pl.col("games") > 0).iter_rows(named=True):
        rows += _rows("deck win rate", r["deck"], r["win_rate"], r["win_rate_lo"],
                      r["win_rate_hi"], wilson(r["wins"], r["games"]))
    mx = m.matchups.filter(~pl.col("mirror") & (pl.col("n") > 0) & (pl.col("row") < pl.col("col")))
    for r in mx.iter_rows(named=True):
        rows += _rows("matchup", f"{r['row']} vs {r['col']}", r["win_rate"], r["win_rate_lo"],
                      r["win_rate_hi"], wilson(r["wins"], r["n"]))
    for r in m.seats.filter(pl.col("games") > 0).iter_rows(named=True):
        rows += _rows("first-seat win rate", f"{r['scope']}/{r['p2']}/{r['n_players']}p",
                      r["first_win_rate"], r["first_win_rate_lo"], r["first_win_rate_hi"],
                      wilson(r["first_wins"], r["games"]))
    for family, table in (("path share (all games)", m.paths_overall),
                          ("path share by deck", m.paths_by_deck)):
        for r in table.filter(pl.col("wins") > 0).iter_rows(named=True):
            for p in WIN_PATHS:
                rows += _rows(family, f"{r['group']}: {p}", r[f"share_{p}"],
                              r[f"share_{p}_lo"], r[f"share_{p}_hi"],
                              wilson(r[f"wins_{p}"], r["wins"]))
    for r in m.branch_summary.filter(pl.col("games") > 0).iter_rows(named=True):
        rows += _rows("branch win rate", r["branch"], r["win_rate"], r["win_rate_lo"],
                      r["win_rate_hi"], wilson(r["wins"], r["games"]))
    for scope, table, key in (("card", m.cards, ("card",)),
                              ("card by deck", m.cards_by_deck, ("deck", "card"))):
        cols = set(table.columns)
        for metric, w, n in CARD_RATES:
            if not {metric, f"{metric}_lo", f"{metric}_hi", w, n} <= cols:
                continue
            for r in table.filter(pl.col(n) > 0).iter_rows(named=True):
                rows += _rows(f"{scope} {metric}", " / ".join(str(r[k]) for k in key),
                              r[metric], r[f"{metric}_lo"], r[f"{metric}_hi"],
                              wilson(r[w], r[n]))
        for metric in CARD_DIFFS:
            if not {metric, f"{metric}_lo", f"{metric}_hi"} <= cols:
                continue
            for r in table.filter(pl.col(metric).is_not_null()).iter_rows(named=True):
                naive = (diff_interval(r["gih_wins"], r["gih"], r["gns_wins"], r["gns"])
                         if metric == "iwd" else None)
                rows += _rows(f"{scope} {metric}", " / ".join(str(r[k]) for k in key),
                              r[metric], r[f"{metric}_lo"], r[f"{metric}_hi"], naive)
    return pl.DataFrame(rows, schema=INTERVAL_SCHEMA, orient="row")


def coverage_table(intervals: pl.DataFrame, z: float = Z95) -> pl.DataFrame:
    """Coverage per (family, method) from the intervals of K seeds (column ``seed``).

    Columns: ``family``, ``method``, ``intervals`` (counted), ``covered`` (hold the
    leave-one-out reference after the ``sqrt(1 + 1/(K-1))`` stretch), ``coverage`` with
    its 95% interval ``coverage_lo``/``_hi`` (the seed as the unit), ``deff_est`` and ``deff_seeds``
    (module docstring), ``subjects`` (informative subjects) and ``seeds``.
    """
    keyed = intervals.with_columns(
        pl.len().over("family", "subject", "method").alias("k"),
        pl.col("value").sum().over("family", "subject", "method").alias("_sum"),
        (pl.col("value").max() - pl.col("value").min()).over("family", "subject", "method")
        .alias("_range"),
    ).filter((pl.col("k") >= 2) & (pl.col("_range") > 0))
    k = pl.col("k").cast(pl.Float64)
    stretch = (1.0 + 1.0 / (k - 1.0)).sqrt()
    ref = (pl.col("_sum") - pl.col("value")) / (k - 1.0)
    checked = keyed.with_columns(
        (pl.col("value") - stretch * (pl.col("value") - pl.col("lo"))).alias("_lo"),
        (pl.col("value") + stretch * (pl.col("hi") - pl.col("value"))).alias("_hi"),
        ref.alias("ref"),
    ).with_columns(((pl.col("_lo") <= pl.col("ref")) & (pl.col("ref") <= pl.col("_hi")))
                   .alias("covered"))
    naive = checked.filter(pl.col("method") == "naive").select(
        "seed", "family", "subject", ((pl.col("hi") - pl.col("lo")) / (2 * z)).alias("_se0"))
    checked = checked.join(naive, on=["seed", "family", "subject"], how="left")
    width_ratio = ((pl.col("hi") - pl.col("lo")) / (2 * z * pl.col("_se0"))) ** 2
    spread = checked.group_by("family", "subject", "method").agg(
        (pl.col("value").var() / (pl.col("_se0") ** 2).mean()).alias("_seed_deff"))
    out = checked.group_by("family", "method").agg(
        pl.len().alias("intervals"),
        pl.col("covered").sum().alias("covered"),
        width_ratio.filter(pl.col("_se0") > 0).mean().alias("deff_est"),
        pl.col("subject").n_unique().alias("subjects"),
        pl.col("seed").n_unique().alias("seeds"),
    ).join(
        spread.filter(pl.col("_seed_deff").is_finite()).group_by("family", "method")
        .agg(pl.col("_seed_deff").mean().alias("deff_seeds")),
        on=["family", "method"], how="left",
    )
    # the seed is the unit of the coverage's own interval: one seed's intervals share
    # its games, so they hold or miss together
    cov = ratio_by_deal(checked.with_columns(pl.lit(0).alias("_one")), "covered", pl.lit(1),
                        by=["family", "method"], name="coverage", stratum="_one", deal="seed")
    out = out.join(cov.select("family", "method", "coverage", "coverage_lo", "coverage_hi")
                   .collect(), on=["family", "method"], how="left")
    return out.select(
        "family", "method", "intervals", "covered", "coverage", "coverage_lo", "coverage_hi",
        "deff_est", "deff_seeds", "subjects", "seeds",
    ).sort("family", "method")


@dataclass
class CoverageRun:
    """What ``measure_coverage`` played and measured."""

    seeds: list[int]
    games: int  # deals per table
    players: int
    decks: list[str]
    total_games: int
    intervals: pl.DataFrame  # intervals_of per seed, with ``seed``
    table: pl.DataFrame  # coverage_table


def measure_coverage(
    decks: Sequence[str | Path],
    seeds: Sequence[int],
    games: int,
    players: int = 2,
    threads: int | None = None,
    mirrors: bool = False,
    progress: Callable[[str], None] | None = None,
) -> CoverageRun:
    """Play one run per seed with the real runner into a temporary folder, compute every
    metric of the report (``analytics.compute_metrics``), collect ``intervals_of`` it,
    and measure ``coverage_table`` over the seeds."""
    from rnr_sim import runner
    from rnr_sim.analytics import compute_metrics, load_run

    frames, total = [], 0
    with tempfile.TemporaryDirectory(prefix="rnr-sim-coverage-") as tmp:
        for i, seed in enumerate(seeds):
            out = Path(tmp) / f"seed-{seed}"
            options = runner.RunOptions(decks=list(decks), games=games, players=players,
                                        seed=seed, threads=threads, out=out, mirrors=mirrors,
                                        command="check coverage")
            result = runner.start_run(options, progress=False, log=lambda msg: None)
            total += int(result.manifest["games_done"])
            m = compute_metrics(load_run(out))
            frames.append(intervals_of(m).with_columns(pl.lit(seed, pl.Int64).alias("seed")))
            names = m.deck_order
            del m
            shutil.rmtree(out, ignore_errors=True)  # one seed's run on disk at a time
            if progress is not None:
                progress(f"seed {i + 1}/{len(seeds)} ({seed}) played")
    intervals = pl.concat(frames) if frames else pl.DataFrame(
        schema={**INTERVAL_SCHEMA, "seed": pl.Int64})
    return CoverageRun(list(seeds), games, players, sorted(names) if frames else [], total,
                       intervals, coverage_table(intervals))


def format_coverage(cov: CoverageRun, low: float = 0.93, high: float = 0.97) -> str:
    """The coverage table: one line per family, the naive (before) and per-deal (after)
    coverage side by side, ``!`` where the coverage is outside [low, high]."""
    t = cov.table
    fams = t["family"].unique(maintain_order=True).to_list()
    by = {(r["family"], r["method"]): r for r in t.iter_rows(named=True)}

    def cell(r) -> str:
        if r is None:
            return "-"
        mark = "" if low <= r["coverage"] <= high else " !"
        return (f"{100 * r['coverage']:.1f}% [{100 * r['coverage_lo']:.1f}, "
                f"{100 * r['coverage_hi']:.1f}]{mark}")

    def num(x) -> str:
        return "-" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.2f}"

    head = ["family", "intervals", "naive (before)", "per deal (after)", "deff est",
            "deff seeds"]
    body = []
    for f in fams:
        d, n = by.get((f, "deal")), by.get((f, "naive"))
        ref = d or n
        body.append([f, f"{ref['intervals']:,}", cell(n), cell(d),
                     num(d["deff_est"]) if d else "-", num(ref["deff_seeds"])])
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = [f"Coverage of the 95% intervals over {len(cov.seeds)} seeds x {cov.games} "
             f"deals per table ({cov.players} players, {len(cov.decks)} decks, "
             f"{cov.total_games:,} games): the share of intervals that hold the mean of the "
             f"other seeds' estimates (half-widths x sqrt(1 + 1/(K-1)) for the reference's "
             f"own noise), with its 95% interval. Target {100 * low:.0f}-{100 * high:.0f}%; "
             f"! = outside."]
    for row in [head, *body]:
        lines.append("  ".join([row[0].ljust(widths[0])]
                               + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]))
    lines.insert(2, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
