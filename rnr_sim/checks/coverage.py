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

**Compare deltas** (``compare=True``): each seed is played as ``rnr-sim compare`` plays it
(``compare.run_compare``: a baseline and a variant -- a card patch, default
``DEFAULT_PATCH``, and/or a rules variant -- on the same deals), and every change of
``compare.compare_runs`` (variant - baseline, its paired 95% interval: normal on the
per-deal differences, or the score interval where fewer than ``FEW_DEALS`` deals differ)
is checked against the mean change of the other seeds, with the same stretch. The
report's families are measured on the baseline run of the same seed (it is the run
``rnr-sim run`` plays). Besides one family per kind of change, the families ``compare,
score intervals`` and ``compare, normal intervals`` regroup every change by the interval
its seed used; their reference is still the mean over all the other seeds (column
``group``: the family the reference is taken in).
"""

from __future__ import annotations

import math
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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
#: The built-in change of the compare families: a common Attack of four of the nine
#: sample decks hits twice as hard (it moves every sample deck's win rate by 2-8 pp).
DEFAULT_PATCH = """[patch]
name = "check coverage"
note = "Minuteman Volley deals 6 damage instead of 3"

[cards."Minuteman Volley"]
damage = 6
"""
#: The families that count every compare change once more, by the interval its run used
#: (``compare.paired``: a score interval where fewer than FEW_DEALS deals differ).
COMPARE_SCORE = "compare, score intervals (few deals differ)"
COMPARE_NORMAL = "compare, normal intervals"
#: The change in the spread (standard deviation) of the decks' win rates, compare's
#: balance line (``compare.patched.spread``: a delta-method interval).
SPREAD = "compare deck spread (sd)"
COMPARE_NEWCOMBE = "compare, Newcombe intervals (few events)"


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


def compare_intervals_of(paired) -> pl.DataFrame:
    """Every change of a paired comparison (``compare.Paired``) with its interval, in the
    long form of ``intervals_of`` (method ``deal``: compare's paired intervals are per deal)
    plus ``group`` (the family the leave-one-out reference is taken in).

    Families: ``compare deck win rate``, ``compare matchup``, ``compare first-seat win
    rate``, ``compare path share (all games)`` (shares of the wins and the draw rate),
    ``compare path vs deck pool`` (``expected_*`` and ``gap_*``), ``compare path share by
    deck``, ``compare patched card`` (the patched cards' metrics), and ``compare moved
    card <metric>`` for every other card; then every change once more in
    ``COMPARE_SCORE`` or ``COMPARE_NORMAL`` by the interval this run used, with ``group``
    its own family (so its reference is the mean over all the other seeds).
    """
    rows: list[tuple] = []
    for r in paired.changes.filter(pl.col("lo").is_not_null() & pl.col("hi").is_not_null()
                                   & pl.col("change").is_not_null()).iter_rows(named=True):
        kind, subject, metric = r["kind"], r["subject"], r["metric"]
        if kind == "deck":
            family, key = "compare deck win rate", subject
        elif kind == "matchup":
            family, key = "compare matchup", subject
        elif kind == "seat":
            family, key = "compare first-seat win rate", subject
        elif kind == "path" and metric.startswith(("expected_", "gap_")):
            family, key = "compare path vs deck pool", metric
        elif kind == "path":
            family = ("compare path share (all games)" if subject == "all games"
                      else "compare path share by deck")
            key = f"{subject}: {metric}"
        elif kind == "card" and r["role"] == "patched":
            family, key = "compare patched card", f"{subject}: {metric}"
        elif kind == "card":
            family, key = f"compare moved card {metric}", subject
        else:
            continue
        by_interval = {"score": COMPARE_SCORE, "newcombe": COMPARE_NEWCOMBE}.get(
            r["interval"], COMPARE_NORMAL)
        for fam, group in ((family, family), (by_interval, f"{family} | by interval")):
            rows.append((fam, key, "deal", float(r["change"]), float(r["lo"]),
                         float(r["hi"]), group))
    from rnr_sim.compare.patched import spread

    s = spread(paired)  # compare's balance line: the change in the decks' spread
    if s is not None:
        change, half = s["sd_variant"] - s["sd_baseline"], Z95 * s["sd_change_se"]
        rows.append((SPREAD, "every deck", "deal", change, change - half, change + half,
                     SPREAD))
    return pl.DataFrame(rows, schema={**INTERVAL_SCHEMA, "group": pl.String}, orient="row")


def coverage_table(intervals: pl.DataFrame, z: float = Z95) -> pl.DataFrame:
    """Coverage per (family, method) from the intervals of K seeds (column ``seed``).

    The leave-one-out reference of an interval is taken over the seeds' intervals of the
    same ``group``, subject and method (``group``: the family when the column is absent
    or null; ``compare_intervals_of`` regroups changes by interval kind this way).

    Columns: ``family``, ``method``, ``intervals`` (counted), ``covered`` (hold the
    leave-one-out reference after the ``sqrt(1 + 1/(K-1))`` stretch), ``coverage`` with
    its 95% interval ``coverage_lo``/``_hi`` (the seed as the unit), ``deff_est`` and ``deff_seeds``
    (module docstring), ``subjects`` (informative subjects) and ``seeds``.
    """
    if "group" in intervals.columns:
        intervals = intervals.with_columns(pl.col("group").fill_null(pl.col("family")))
    else:
        intervals = intervals.with_columns(pl.col("family").alias("group"))
    keyed = intervals.with_columns(
        pl.len().over("group", "subject", "method").alias("k"),
        pl.col("value").sum().over("group", "subject", "method").alias("_sum"),
        (pl.col("value").max() - pl.col("value").min()).over("group", "subject", "method")
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
    total_games: int  # games played, both runs of a comparison counted
    intervals: pl.DataFrame  # intervals_of (and compare_intervals_of) per seed, with ``seed``
    table: pl.DataFrame  # coverage_table
    change: list[str] = field(default_factory=list)  # the compared change, one line each
    seconds: float = 0.0


def _compare_seed(decks, seed: int, games: int, players: int, threads, out: Path,
                  patch: Path | None, rules_b: str | Path | None):
    """One seed played as ``rnr-sim compare`` plays it; returns (report intervals of the
    baseline run, compare intervals, games played, change lines)."""
    from rnr_sim.analytics import compute_metrics, load_run
    from rnr_sim.compare import CompareOptions, compare_runs, run_compare
    from rnr_sim.errors import InputError

    result = run_compare(CompareOptions(decks=list(decks), patch=patch, rules_b=rules_b,
                                        games=games, players=players, seed=seed,
                                        threads=threads, out=out, command="check coverage"),
                         progress=False, log=lambda msg: None)
    if result.excluded:
        e = result.excluded[0]
        raise InputError(f"{e.path}: deck '{e.deck}' cannot play in the variant ({e.reason}); "
                         "check coverage compares every deck: leave it out or change the "
                         "patch")
    m = compute_metrics(load_run(result.baseline_dir))
    report = intervals_of(m)
    names = m.deck_order
    del m
    paired = compare_runs(result.baseline_dir, result.variant_dir)
    change = result.patch_lines + [f"rules {k}: {a} -> {b}"
                                   for k, (a, b) in sorted(result.rules_changes.items())]
    return report, compare_intervals_of(paired), result.games * 2, change, names


def measure_coverage(
    decks: Sequence[str | Path],
    seeds: Sequence[int],
    games: int,
    players: int = 2,
    threads: int | None = None,
    mirrors: bool = False,
    progress: Callable[[str], None] | None = None,
    compare: bool = False,
    patch: str | Path | None = None,
    rules_b: str | Path | None = None,
) -> CoverageRun:
    """Play one run per seed with the real runner into a temporary folder, compute every
    metric of the report (``analytics.compute_metrics``), collect ``intervals_of`` it,
    and measure ``coverage_table`` over the seeds.

    With ``compare``, each seed is a comparison instead (``run_compare``: the baseline and
    the variant of ``patch`` -- default ``DEFAULT_PATCH`` -- and/or ``rules_b``, on the
    same deals): the report's families come from its baseline run, the compare families
    from ``compare_runs`` (``compare_intervals_of``). ``mirrors`` is not available then
    (``rnr-sim compare`` plays no mirrors)."""
    from rnr_sim.analytics import compute_metrics, load_run
    from rnr_sim.runs import planning, runner

    if compare and mirrors:
        raise ValueError("compare plays no mirror tables")
    t_start = time.perf_counter()
    frames, total, change, names = [], 0, [], []
    with tempfile.TemporaryDirectory(prefix="rnr-sim-coverage-") as tmp:
        if compare and patch is None and rules_b is None:
            patch = Path(tmp) / "check-coverage-patch.toml"
            patch.write_text(DEFAULT_PATCH, encoding="utf-8")
        for i, seed in enumerate(seeds):
            out = Path(tmp) / f"seed-{seed}"
            tag = pl.lit(seed, pl.Int64).alias("seed")
            if compare:
                report, deltas, played, change, names = _compare_seed(
                    decks, seed, games, players, threads, out, patch, rules_b)
                frames += [report.with_columns(tag), deltas.with_columns(tag)]
                total += played
            else:
                options = planning.RunOptions(decks=list(decks), games=games, players=players,
                                            seed=seed, threads=threads, out=out,
                                            mirrors=mirrors, command="check coverage")
                result = runner.start_run(options, progress=False, log=lambda msg: None)
                total += int(result.manifest["games_done"])
                m = compute_metrics(load_run(out))
                frames.append(intervals_of(m).with_columns(tag))
                names = m.deck_order
                del m
            shutil.rmtree(out, ignore_errors=True)  # one seed's run on disk at a time
            if progress is not None:
                progress(f"seed {i + 1}/{len(seeds)} ({seed}) played")
    intervals = pl.concat(frames, how="diagonal") if frames else pl.DataFrame(
        schema={**INTERVAL_SCHEMA, "seed": pl.Int64})
    return CoverageRun(list(seeds), games, players, sorted(names), total, intervals,
                       coverage_table(intervals), change,
                       round(time.perf_counter() - t_start, 1))


def format_coverage(cov: CoverageRun, low: float = 0.93, high: float = 0.97) -> str:
    """The coverage table: one line per family, the naive (before) and per-deal (after)
    coverage side by side, ``!`` where the coverage is outside [low, high]."""
    t = cov.table
    fams = sorted(t["family"].unique(maintain_order=True).to_list(),
                  key=lambda f: (f.startswith("compare"), f))  # compare's deltas last
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
    if cov.change:
        lines[0] += (f" compare families: the change variant - baseline on the same deals "
                     f"({'; '.join(cov.change)}), compare's paired intervals (no before).")
    for row in [head, *body]:
        lines.append("  ".join([row[0].ljust(widths[0])]
                               + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]))
    lines.insert(2, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
