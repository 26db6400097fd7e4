"""The deal as the unit of every interval (stats.ratio_by_deal, lincomb_by_deal) and the
run summary that uses it: checked against a plain numpy reference, against simulated
clustered data with a known design effect, and by coverage over simulated replicates."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from rnr_sim.analytics import compute_metrics, load_run
from rnr_sim.analytics.stats import Z95, lincomb_by_deal, ratio_by_deal, wilson
from rnr_sim.analytics.summary import format_summary, summarize
from rnr_sim.runs import planning, runner


def numpy_ratio(table: np.ndarray, y: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    """R and its stratified linearised variance, written out over per-deal sums."""
    r = y.sum() / n.sum()
    v = 0.0
    for t in np.unique(table):
        z = (y - r * n)[table == t]
        d = len(z)
        v += d / (d - 1) * ((z - z.mean()) ** 2).sum() if d > 1 else (z ** 2).sum()
    return r, v / n.sum() ** 2


def clustered(rng, tables: list[tuple[float, float]], deals: int, games: int, reps: int = 1
              ) -> pl.DataFrame:
    """Game rows: per (rep, table, deal) a win probability p ~ Beta(a, b) of that table,
    shared by the deal's ``games`` games. Within a deal the correlation of two games is
    1 / (a + b + 1), so the design effect of the win rate is 1 + (games - 1) / (a + b + 1)."""
    frames = []
    for t, (a, b) in enumerate(tables):
        p = rng.beta(a, b, size=(reps, deals))
        won = rng.random((reps, deals, games)) < p[:, :, None]
        rep, deal, _ = np.indices(won.shape)
        frames.append(pl.DataFrame({"rep": rep.ravel(), "table_id": t, "deal": deal.ravel(),
                                    "won": won.ravel()}))
    return pl.concat(frames)


def test_ratio_by_deal_equals_the_written_out_formula():
    rng = np.random.default_rng(11)
    rows = clustered(rng, [(2, 2), (3, 1), (1, 4)], deals=60, games=3)
    rows = rows.filter(pl.int_range(pl.len()) % 7 != 0)  # uneven deal sizes
    got = ratio_by_deal(rows, "won", pl.lit(1), name="wr").collect().row(0, named=True)
    per = rows.group_by("table_id", "deal").agg(pl.col("won").sum().alias("y"), pl.len().alias("n"))
    r, v = numpy_ratio(per["table_id"].to_numpy(), per["y"].to_numpy().astype(float),
                       per["n"].to_numpy().astype(float))
    n = rows.height
    assert got["wr"] == pytest.approx(r)
    assert got["wr_se"] == pytest.approx(math.sqrt(v))
    assert got["wr_deff"] == pytest.approx(v / (r * (1 - r) / n))
    n_eff = n / got["wr_deff"]
    assert (got["wr_lo"], got["wr_hi"]) == pytest.approx(wilson(r * n_eff, n_eff))
    assert got["wr_deals"] == per.height


def test_ratio_by_deal_groups_are_separate():
    rng = np.random.default_rng(5)
    rows = pl.concat([clustered(rng, [(2, 2)], 50, 2).with_columns(pl.lit(g).alias("g"))
                      for g in ("a", "b")])
    both = ratio_by_deal(rows, "won", pl.lit(1), by=["g"]).collect().sort("g")
    for g in ("a", "b"):
        alone = ratio_by_deal(rows.filter(pl.col("g") == g), "won", pl.lit(1)).collect()
        assert both.filter(pl.col("g") == g).drop("g").equals(alone)


@pytest.mark.parametrize("games, a", [(2, 0.5), (4, 2.0)])
def test_design_effect_of_known_clustered_data(games, a):
    # Beta(a, a) deals of `games` games: deff = 1 + (games - 1) / (2a + 1).
    deals = 20_000
    rows = clustered(np.random.default_rng(3), [(a, a)], deals, games)
    got = ratio_by_deal(rows, "won", pl.lit(1)).collect()["value_deff"].item()
    true = 1 + (games - 1) / (2 * a + 1)
    # the variance estimate of D deals has relative sd about sqrt(2 / D) (times the
    # kurtosis of a deal's sum, < 2 here): 5 of those is far from any chance miss
    assert got == pytest.approx(true, rel=5 * 2 * math.sqrt(2 / deals))


def test_differences_between_tables_are_not_counted_as_noise():
    # two tables with very different rates, no clustering inside a deal (one game each):
    # the design effect is below 1, because the split between tables is fixed by design
    rows = clustered(np.random.default_rng(8), [(1e6, 1e6 / 9), (1e6 / 9, 1e6)], 5000, 1)
    got = ratio_by_deal(rows, "won", pl.lit(1)).collect().row(0, named=True)
    true = 0.09 / 0.25  # within-table p(1-p) = .09, against the pooled .5 * .5
    assert got["value_deff"] == pytest.approx(true, rel=5 * math.sqrt(2 / 10_000))


def test_coverage_per_deal_is_nominal_where_wilson_on_games_is_not():
    # 1000 replicate runs, two tables (Beta(.5, .5) and Beta(1.5, .5): deal correlation
    # 1/2 and 1/3), two games per deal: the true win rate is (.5 + .75) / 2
    reps, deals = 1000, 200
    rows = clustered(np.random.default_rng(2024), [(0.5, 0.5), (1.5, 0.5)], deals, 2, reps)
    truth = (0.5 + 0.75) / 2
    got = ratio_by_deal(rows, "won", pl.lit(1), by=["rep"]).collect()
    naive = rows.group_by("rep").agg(pl.col("won").sum().alias("w"), pl.len().alias("n"))
    deal_cov = ((got["value_lo"] <= truth) & (truth <= got["value_hi"])).mean()
    cover = [lo <= truth <= hi for lo, hi in (wilson(w, n) for w, n in naive.select("w", "n").iter_rows())]
    naive_cov = float(np.mean(cover))
    se = math.sqrt(0.95 * 0.05 / reps)
    assert abs(deal_cov - 0.95) < 3 * se
    # Wilson on games: deff = 4/3, so it holds P(|Z| < 1.96 / sqrt(4/3)) ~ 91%
    assert naive_cov < deal_cov - 3 * se


def test_paired_seat_orders_narrow_the_first_seat_interval():
    # each deal is played twice, deck A first then deck B first; A's strength q varies a
    # lot between deals and the first seat adds .05: the seat's win rate is .55, and its
    # per-deal spread is far below that of independent games (the strength cancels)
    rng = np.random.default_rng(99)
    reps, deals, delta = 400, 200, 0.05
    q = 0.1 + 0.8 * rng.beta(0.5, 0.5, size=(reps, deals))
    a_first = rng.random((reps, deals)) < q + delta  # game 1: A first, first seat = A
    b_first = rng.random((reps, deals)) >= q - delta  # game 2: B first wins if A loses
    first_won = np.stack([a_first, b_first], axis=2)
    rep, deal, _ = np.indices(first_won.shape)
    rows = pl.DataFrame({"rep": rep.ravel(), "table_id": 0, "deal": deal.ravel(),
                         "won": first_won.ravel()})
    got = ratio_by_deal(rows, "won", pl.lit(1), by=["rep"]).collect()
    truth = 0.5 + delta
    cover = ((got["value_lo"] <= truth) & (truth <= got["value_hi"])).mean()
    se = math.sqrt(0.95 * 0.05 / reps)
    assert abs(cover - 0.95) < 3 * se
    # E[(q+d)(1-q-d) + (q-d)(1-q+d)] / 2 over q, against .55 * .45: the true deff
    qq = 0.1 + 0.8 * np.random.default_rng(1).beta(0.5, 0.5, 1_000_000)
    true = np.mean((qq + delta) * (1 - qq - delta) + (qq - delta) * (1 - qq + delta)) / 2
    true /= truth * (1 - truth)
    assert true < 0.75
    assert got["value_deff"].mean() == pytest.approx(true, rel=0.03)


def test_rates_of_zero_and_one_keep_a_wilson_interval():
    rows = pl.DataFrame({"table_id": [0] * 6, "deal": [0, 0, 1, 1, 2, 2],
                         "g": ["none"] * 6, "won": [False] * 6})
    rows = pl.concat([rows, rows.with_columns(pl.lit("all").alias("g"), pl.lit(True).alias("won"))])
    got = ratio_by_deal(rows, "won", pl.lit(1), by=["g"], name="wr").collect().sort("g")
    for r in got.iter_rows(named=True):
        assert r["wr_deff"] == 1.0
        assert (r["wr_lo"], r["wr_hi"]) == pytest.approx(wilson(6 * r["wr"], 6))
    none = got.filter(pl.col("g") == "none").row(0, named=True)
    assert none["wr_lo"] == 0.0 and 0.3 < none["wr_hi"] < 0.4


def test_a_group_without_games_has_null_rates():
    rows = pl.DataFrame({"table_id": [0, 0], "deal": [0, 1], "won": [True, False],
                         "den": [0, 0]})
    r = ratio_by_deal(rows, "won", "den", name="wr").collect().row(0, named=True)
    assert r["wr"] is None and r["wr_lo"] is None and r["wr_deff"] is None


def test_lincomb_is_the_ratio_for_one_term_and_the_written_out_difference_for_two():
    rng = np.random.default_rng(4)
    rows = clustered(rng, [(2, 2), (2, 5)], 300, 2).with_columns(
        (pl.int_range(pl.len()) % 3 == 0).alias("seen"))
    one = lincomb_by_deal(rows, [("won", pl.lit(1), 1.0)], name="x").row(0, named=True)
    ratio = ratio_by_deal(rows, "won", pl.lit(1), name="x").collect().row(0, named=True)
    assert one["x"] == pytest.approx(ratio["x"])
    assert one["x_deff"] == pytest.approx(ratio["x_deff"])
    # IWD-like: the win rate when seen minus when not seen
    terms = [(pl.col("won") & pl.col("seen"), "seen", 1.0),
             (pl.col("won") & ~pl.col("seen"), ~pl.col("seen"), -1.0)]
    got = lincomb_by_deal(rows, terms, name="iwd").row(0, named=True)
    per = rows.group_by("table_id", "deal").agg(
        (pl.col("won") & pl.col("seen")).sum().alias("y1"), pl.col("seen").sum().alias("n1"),
        (pl.col("won") & ~pl.col("seen")).sum().alias("y2"), (~pl.col("seen")).sum().alias("n2"))
    y1, n1, y2, n2 = (per[c].to_numpy().astype(float) for c in ("y1", "n1", "y2", "n2"))
    r1, r2 = y1.sum() / n1.sum(), y2.sum() / n2.sum()
    u = (y1 - r1 * n1) / n1.sum() - (y2 - r2 * n2) / n2.sum()
    var = sum(len(x) / (len(x) - 1) * ((x - x.mean()) ** 2).sum()
              for x in (u[per["table_id"].to_numpy() == t] for t in (0, 1)))
    assert got["iwd"] == pytest.approx(r1 - r2)
    srs = r1 * (1 - r1) / n1.sum() + r2 * (1 - r2) / n2.sum()
    assert got["iwd_deff"] == pytest.approx(var / srs)
    assert got["iwd_hi"] - got["iwd"] == pytest.approx(Z95 * got["iwd_se"])
    assert got["iwd_se"] == pytest.approx(math.sqrt(var), rel=0.01)  # Agresti-Caffo ~ plain


# ---------------------------------------------------------------------------- the run summary
@pytest.mark.parametrize("players, chunk", [(2, 7), (3, 5)])
def test_summary_intervals_equal_the_reports_when_chunks_split_deals(
        tmp_path, engine, decks, players, chunk):
    # chunks of 7 (or 5) games cut deals of 2 (or 3) games in two: the summary's part-by-part
    # fold must give the per-deal interval the report computes over the whole run
    out = tmp_path / "r"
    runner.start_run(planning.RunOptions(decks=decks, games=6, players=players, out=out,
                                       chunk_size=chunk, mirrors=True),
                     progress=False, log=lambda m: None)
    summary = summarize(out)
    decks_df = compute_metrics(load_run(out)).decks
    joined = summary.join(decks_df, on="deck", suffix="_report")
    assert joined.height == len(decks)
    for r in joined.iter_rows(named=True):
        assert (r["games"], r["wins"]) == (r["games_report"], r["wins_report"])
        assert r["mirror_games"] == r["mirror_games_report"] > 0
        assert r["ci_low"] == pytest.approx(r["win_rate_lo"])
        assert r["ci_high"] == pytest.approx(r["win_rate_hi"])
        assert r["deff"] == pytest.approx(r["win_rate_deff"])
    assert "left out" in format_summary(summary)


def test_path_shares_by_deal_are_the_ratio_of_each_path_over_wins(tmp_path):
    from analytics_fixtures import RandomSpec, random_run

    from rnr_sim.analytics.decks import WIN_PATHS, path_shares_by_deal, with_units
    from rnr_sim.analytics.run import seat_games

    run = load_run(random_run(tmp_path / "r", RandomSpec(deals=40, mirrors=True, seed=5)))
    sg = with_units(seat_games(run.games, run.seats), run.games).collect().lazy()
    got = path_shares_by_deal(sg, ["deck"]).collect().sort("deck")
    for p in WIN_PATHS:
        one = ratio_by_deal(sg, pl.col("won") & (pl.col("path") == p), "won", ["deck"],
                            name=f"share_{p}").collect().sort("deck")
        for col in (f"share_{p}", f"share_{p}_lo", f"share_{p}_hi"):
            assert got[col].to_list() == pytest.approx(one[col].to_list(), nan_ok=True)


def test_report_tables_carry_the_per_deal_intervals(tmp_path):
    from analytics_fixtures import RandomSpec, random_run

    m = compute_metrics(load_run(random_run(tmp_path / "r", RandomSpec(deals=40, seed=9))))
    for table, col in ((m.decks, "win_rate"), (m.matchups, "win_rate"),
                       (m.seats, "first_win_rate"), (m.branch_summary, "win_rate")):
        rows = table.filter(pl.col(f"{col}_deff").is_not_null())
        assert rows.height > 0
        assert (rows[f"{col}_lo"] <= rows[col]).all() and (rows[col] <= rows[f"{col}_hi"]).all()
    seat = m.seats.filter((pl.col("scope") == "all") & (pl.col("p2") == "any")).row(0, named=True)
    n_eff = seat["games"] / seat["first_win_rate_deff"]
    assert (seat["first_win_rate_lo"], seat["first_win_rate_hi"]) == pytest.approx(
        wilson(seat["first_win_rate"] * n_eff, n_eff))


def test_three_player_matchups_weigh_each_turn_place_equally(tmp_path):
    # every deal is played in all three rotations, so the seat-balanced rate (first place
    # 1/3, later places 2/3) is the pooled rate, the centre of the per-deal interval
    from analytics_fixtures import multiplayer_run

    m = compute_metrics(load_run(multiplayer_run(tmp_path / "mp")))
    played = m.matchups.filter(~pl.col("mirror") & (pl.col("n") > 0))
    assert played.height > 0
    for r in played.iter_rows(named=True):
        assert r["n_first"] * 3 == r["n"]
        assert r["win_rate"] == pytest.approx(r["wins"] / r["n"])
        assert r["win_rate_lo"] <= r["win_rate"] <= r["win_rate_hi"]
