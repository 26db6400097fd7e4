"""The Nash metagame with a bootstrap over deals, and the words that follow its intervals."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from analytics_fixtures import multiplayer_run

from rnr_sim.analytics import compute_metrics, load_run
from rnr_sim.analytics import matchups as mu
from rnr_sim.analytics.nash import nash_bootstrap
from rnr_sim.report.text import decks_lead, matchups_lead, nash_words, verdict_banners


def synthetic_deals(p: dict[tuple[str, str], float], deals: int, seed: int) -> pl.DataFrame:
    """Per deal of each pair (a, b): two games, a first then b first; a wins each with
    probability p[(a, b)]. Both sides' rows, as nash.matchup_deals writes them."""
    rng = np.random.default_rng(seed)
    rows = []
    for t, ((a, b), pa) in enumerate(sorted(p.items())):
        wins = rng.random((deals, 2)) < pa  # a's wins: game 1 (a first), game 2 (a second)
        for k in range(deals):
            w1, w2 = float(wins[k, 0]), float(wins[k, 1])
            rows.append((t, k, a, b, w1, 1.0, w2, 1.0))
            rows.append((t, k, b, a, 1.0 - w2, 1.0, 1.0 - w1, 1.0))
    return pl.DataFrame(rows, schema=["table_id", "deal", "row", "col", "wf", "nf", "ws", "ns"],
                        orient="row")


def matrix_of(deals: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The long-form matrix metagame_nash reads (seat-balanced win_rate)."""
    s = deals.group_by("row", "col").agg(pl.col("wf", "nf", "ws", "ns").sum())
    s = s.with_columns(((pl.col("wf") / pl.col("nf") + pl.col("ws") / pl.col("ns")) / 2)
                       .alias("win_rate"))
    grid = [{"row": a, "col": b} for a in keys for b in keys]
    return pl.DataFrame(grid).join(s.select("row", "col", "win_rate"), on=["row", "col"],
                                   how="left")


def test_bootstrap_is_deterministic():
    d = synthetic_deals({("A", "B"): 0.55, ("A", "C"): 0.45, ("B", "C"): 0.5}, 300, 1)
    one = nash_bootstrap(d, ["A", "B", "C"], replicates=50)
    two = nash_bootstrap(d, ["A", "B", "C"], replicates=50)
    assert one.equals(two)


def test_a_clearly_dominant_deck_is_always_the_whole_mix():
    d = synthetic_deals({("A", "B"): 0.8, ("A", "C"): 0.8, ("B", "C"): 0.5}, 400, 2)
    out = {r["deck"]: r for r in nash_bootstrap(d, ["A", "B", "C"], replicates=100).iter_rows(
        named=True)}
    assert out["A"]["support_freq"] == 1.0 and out["A"]["share_lo"] == pytest.approx(1.0)
    assert out["B"]["support_freq"] == 0.0 and out["B"]["share_hi"] == 0.0
    assert out["A"]["replicates"] == 100


def test_rock_paper_scissors_interval_holds_the_true_mix():
    # R beats S, S beats P, P beats R by the same margin: the true mix is 1/3 each
    p = {("P", "R"): 0.6, ("R", "S"): 0.6, ("P", "S"): 0.4}
    d = synthetic_deals(p, 2000, 3)
    keys = ["P", "R", "S"]
    out = nash_bootstrap(d, keys, replicates=200)
    for r in out.iter_rows(named=True):
        assert r["share_lo"] <= 1 / 3 <= r["share_hi"]
        assert r["support_freq"] == pytest.approx(1.0)
    nash = mu.metagame_nash(matrix_of(d, keys), keys, d)
    assert {"share_lo", "share_hi", "support_freq", "replicates"} <= set(nash.columns)
    for r in nash.iter_rows(named=True):
        assert r["share_lo"] <= r["share"] <= r["share_hi"]


def test_an_uncertain_deck_moves_in_and_out_of_the_support():
    # D is almost exactly as good as the mix: on noise it is in some resamples, not others
    p = {("P", "R"): 0.6, ("R", "S"): 0.6, ("P", "S"): 0.4,
         ("D", "P"): 0.5, ("D", "R"): 0.5, ("D", "S"): 0.5}
    d = synthetic_deals(p, 500, 4)
    out = {r["deck"]: r for r in nash_bootstrap(d, ["D", "P", "R", "S"]).iter_rows(named=True)}
    assert 0.0 < out["D"]["support_freq"] < 1.0
    assert out["D"]["share_lo"] == 0.0 < out["D"]["share_hi"]


def test_words_follow_the_interval():
    assert "every resample" in nash_words(0.0, 0.0, 0.0, 0.0)
    some = nash_words(0.0, 0.0, 0.13, 0.37)
    assert "never" not in some and "every resample" not in some and "37%" in some
    assert "under 1%" in nash_words(0.0, 0.0, 0.0, 0.004)
    assert nash_words(None, None, None, None) == ""


def test_no_nash_at_three_players(tmp_path):
    m = compute_metrics(load_run(multiplayer_run(tmp_path / "mp")))
    assert m.nash["share"].null_count() == m.nash.height
    assert not m.nash["in_support"].any()
    lead = matchups_lead(m)
    assert "33%" in lead and "50%" not in lead and "two-player" in lead
    banners = verdict_banners(m)
    assert any("3 players: a fair share is 33%" in b for b in banners)
    assert "33%" in decks_lead(m) and "50%" not in decks_lead(m)


def test_metagame_nash_without_deals_has_null_intervals():
    keys = ["A", "B"]
    m = pl.DataFrame([{"row": a, "col": b, "win_rate": None if a == b else
                       (0.6 if a == "A" else 0.4)} for a, b in itertools.product(keys, keys)])
    out = mu.metagame_nash(m, keys)
    assert out["share_lo"].null_count() == 2 and out.filter(pl.col("deck") == "A")[
        "share"][0] == pytest.approx(1.0)
