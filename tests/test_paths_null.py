"""Paths against the deck-pool expectation (paths.path_expectation, main-path win rates)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from analytics_fixtures import RandomSpec, random_run

from rnr_sim.analytics import compute_metrics, load_run
from rnr_sim.analytics import findings as fnd
from rnr_sim.analytics.paths import main_path_win_rates, main_paths, path_expectation

PATHS = ("life", "attack", "petition", "deck_out")


def deal_counts(rows: list[tuple]) -> pl.DataFrame:
    """Rows (unit, deck, games, wins, {path: wins}) -> the deal_path_counts layout."""
    out = []
    for unit, deck, games, wins, by_path in rows:
        out.append({"table_id": 0, "deal": unit, "unit": unit, "deck": deck, "games": games,
                    "wins": wins, **{f"wins_{p}": by_path.get(p, 0) for p in PATHS}})
    return pl.DataFrame(out)


def two_deck_run(deals: int, p_a: float, seed: int) -> pl.DataFrame:
    """Deck A (all wins by attack) against deck B (all wins by life), two games a deal;
    A wins each game with probability ``p_a``."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(deals):
        a = int((rng.random(2) < p_a).sum())
        rows.append((k, "A", 2, a, {"attack": a}))
        rows.append((k, "B", 2, 2 - a, {"life": 2 - a}))
    return deal_counts(rows)


def test_expectation_by_hand():
    # A wins 3 of 4 (attack), B 1 of 4 (life): observed attack share 3/4; with both at
    # their fair half, each path would take half the wins.
    df = deal_counts([(0, "A", 2, 2, {"attack": 2}), (0, "B", 2, 0, {}),
                      (1, "A", 2, 1, {"attack": 1}), (1, "B", 2, 1, {"life": 1})])
    out = {r["path"]: r for r in path_expectation(df).iter_rows(named=True)}
    assert out["attack"]["share"] == pytest.approx(0.75)
    assert out["attack"]["expected"] == pytest.approx(0.5)
    assert out["attack"]["gap"] == pytest.approx(0.25)
    assert out["life"]["gap"] == pytest.approx(-0.25)
    assert out["petition"]["expected"] == 0.0 and out["attack"]["flat"] == 0.25
    assert out["attack"]["decks"] == 1


def test_expectation_weights_decks_by_their_games_and_mix():
    # A plays 4 games a deal and splits its wins 50/50 attack/life; B plays 2, all life
    df = deal_counts([(0, "A", 4, 2, {"attack": 1, "life": 1}), (0, "B", 2, 1, {"life": 1}),
                      (1, "A", 4, 2, {"attack": 1, "life": 1}), (1, "B", 2, 1, {"life": 1})])
    out = {r["path"]: r for r in path_expectation(df).iter_rows(named=True)}
    assert out["attack"]["expected"] == pytest.approx((4 * 0.5 + 2 * 0.0) / 6)
    assert out["life"]["expected"] == pytest.approx((4 * 0.5 + 2 * 1.0) / 6)


def test_fair_decks_give_no_gap_though_far_from_a_flat_quarter():
    out = {r["path"]: r for r in path_expectation(two_deck_run(4000, 0.5, 1)).iter_rows(
        named=True)}
    a = out["attack"]
    assert abs(a["share"] - 0.25) > 0.2  # the flat 25% would call attack dominant
    assert abs(a["gap"]) < 4 * a["gap_se"]  # the right null does not
    assert a["gap_lo"] < 0 < a["gap_hi"]


def test_a_stronger_path_shows_as_a_gap():
    out = {r["path"]: r for r in path_expectation(two_deck_run(4000, 0.56, 2)).iter_rows(
        named=True)}
    assert out["attack"]["gap"] == pytest.approx(0.06, abs=4 * out["attack"]["gap_se"])
    assert out["attack"]["gap_lo"] > 0 and out["attack"]["gap_p"] < 1e-6


def test_gap_standard_error_matches_a_jackknife_over_deals():
    df = two_deck_run(600, 0.55, 3)
    gap = {r["path"]: r for r in path_expectation(df).iter_rows(named=True)}["attack"]
    units = df["unit"].unique().sort().to_list()
    loo = []
    for u in units[::3]:  # leave out every third deal, in turn (grouped jackknife)
        drop = set(units[units.index(u):units.index(u) + 3])
        sub = df.filter(~pl.col("unit").is_in(drop))
        loo.append({r["path"]: r for r in path_expectation(sub).iter_rows(named=True)}[
            "attack"]["gap"])
    g = len(loo)
    se_jack = math.sqrt((g - 1) / g * np.sum((np.array(loo) - np.mean(loo)) ** 2))
    assert gap["gap_se"] == pytest.approx(se_jack, rel=0.15)


def test_main_paths_pick_the_path_of_most_wins():
    decks = pl.DataFrame({"deck": ["A", "B", "C"], "wins_life": [5, 0, 0],
                          "wins_attack": [1, 3, 0], "wins_petition": [0, 3, 0],
                          "wins_deck_out": [0, 0, 0]})
    mp = dict(main_paths(decks).iter_rows())
    assert mp == {"A": "life", "B": "attack", "C": None}  # tie: Art. III's order


def test_main_path_win_rates_leave_out_games_inside_the_group(tmp_path):
    run = load_run(random_run(tmp_path / "r", RandomSpec(deals=40, seed=5)))
    m = compute_metrics(run)
    mains = pl.DataFrame({"deck": ["Alpha", "Beta", "Gamma", "Delta"],
                          "main_path": ["life", "life", "attack", "attack"]})
    from rnr_sim.analytics import seat_games

    out = {r["main_path"]: r for r in main_path_win_rates(
        seat_games(run.games, run.seats), run.games, mains).iter_rows(named=True)}
    # only the 4 cross tables (Alpha/Beta x Gamma/Delta) count: 40 deals x 2 orders each
    assert out["life"]["games"] == 4 * 40 * 2
    assert out["life"]["wins"] + out["attack"]["wins"] <= 4 * 40 * 2
    assert out["life"]["win_rate_lo"] < out["life"]["win_rate"] < out["life"]["win_rate_hi"]
    assert out["life"]["fair"] == 0.5
    assert out["petition"]["games"] == 0 and out["petition"]["win_rate"] is None
    assert m.paths_expected is not None and m.paths_by_main_path is not None


def test_verdict_path_candidates_use_the_expectation():
    exp = path_expectation(two_deck_run(2000, 0.5, 4))
    cands = {c.subject: c for c in fnd.path_candidates(exp)}
    a = cands["attack"]
    assert a.fair == pytest.approx(exp.filter(pl.col("path") == "attack")["expected"][0])
    assert a.fair != 0.25
    assert a.n == exp["wins"].sum() and a.detail["wins"] < a.n  # n: all wins
