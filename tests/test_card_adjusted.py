"""The adjusted IWD (cards.adjusted_iwd): within deck, at equal game length, per-deal variance."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from analytics_fixtures import tiny_run

from rnr_sim.analytics import compute_metrics, load_run
from rnr_sim.analytics.cards import (
    ADJUSTED_COLUMNS,
    adjusted_iwd,
    card_metrics,
    plain_card_baseline,
    plain_cards,
    turn_bands,
)

MASKS = pl.DataFrame({"deck": ["A"], "card": ["X"], "copies": [1], "mask": [1]},
                     schema={"deck": pl.String, "card": pl.String, "copies": pl.Int64,
                             "mask": pl.UInt64})


def units_frame(deck, won, seen, turns, order, unit, table=None) -> pl.DataFrame:
    n = len(won)
    return pl.DataFrame({
        "deck": deck if isinstance(deck, list) else [deck] * n,
        "won": np.asarray(won, dtype=bool),
        "seen": np.asarray(seen, dtype=np.uint64),
        "turns": np.asarray(turns, dtype=np.int32),
        "n_players": np.full(n, 2, dtype=np.int8),
        "order": np.asarray(order, dtype=np.int32),
        "table_id": np.zeros(n, dtype=np.int32) if table is None else np.asarray(table),
        "unit": np.asarray(unit, dtype=np.int64),
    }).sort("unit")


def confounded_units(deals: int, effect: float, seed: int) -> pl.DataFrame:
    """Deck A's rows: card X at a random depth of A's shuffle, the same in both seat orders
    of a deal (shared shuffles); long games are A's losses, and X is seen more in long
    games, so raw IWD is negative although X does nothing (``effect = 0``)."""
    rng = np.random.default_rng(seed)
    depth = rng.integers(0, 30, deals)  # shared by both seat orders of the deal
    pace = rng.integers(-3, 4, deals)  # a deal's shuffle makes both its games fast or slow
    cols: dict[str, list] = {k: [] for k in ("won", "seen", "turns", "order", "unit")}
    for order in (0, 1):
        turns = np.clip(18 + pace + rng.integers(-6, 7, deals), 6, 40)
        own = (turns + (1 - order)) // 2
        seen = depth < 7 + own
        p = np.clip(0.5 - 0.05 * (turns - 18) + effect * seen, 0.02, 0.98)
        cols["won"].append(rng.random(deals) < p)
        cols["seen"].append(seen.astype(np.uint64))
        cols["turns"].append(turns)
        cols["order"].append(np.full(deals, order))
        cols["unit"].append(np.arange(deals))
    return units_frame("A", *[np.concatenate(cols[k]) for k in
                              ("won", "seen", "turns", "order", "unit")])


# ---------------------------------------------------------------- turn bands
def test_turn_bands_keep_dense_turns_and_merge_sparse_tails():
    turns = np.array([5] * 3 + [6] * 4 + [10] * 50 + [11] * 40 + [30] * 2 + [31] * 1)
    band = turn_bands(turns, min_rows=20)
    by_turn = dict(zip(turns.tolist(), band.tolist(), strict=True))
    assert by_turn[10] != by_turn[11]  # dense: a band each
    assert by_turn[5] == by_turn[6] == by_turn[10]  # short tail merged up to 20 rows
    assert by_turn[30] == by_turn[31] == by_turn[11]  # long remainder joins the last band
    assert np.all(np.bincount(band) >= 20)


# ---------------------------------------------------------------- the estimate, by hand
def test_adjusted_iwd_is_the_mantel_haenszel_risk_difference_by_hand():
    # Two strata (turns 10 and 20, same order). Stratum 10: seen 3 rows (2 won), not seen
    # 1 row (0 won). Stratum 20: seen 1 row (1 won), not seen 3 rows (1 won).
    won = [1, 1, 0, 0, 1, 1, 0, 0]
    seen = [1, 1, 1, 0, 1, 0, 0, 0]
    turns = [10, 10, 10, 10, 20, 20, 20, 20]
    u = units_frame("A", won, seen, turns, [0] * 8, list(range(8)))
    by_card, by_deck = adjusted_iwd(u, MASKS, min_rows=1)
    w1, w2 = 3 * 1 / 4, 1 * 3 / 4
    want = (w1 * (2 / 3 - 0) + w2 * (1 - 1 / 3)) / (w1 + w2)
    assert by_deck["iwd_adjusted"][0] == pytest.approx(want)
    assert by_card["iwd_adjusted"][0] == pytest.approx(want)
    assert by_card["adjusted_deals"][0] == 8
    r = by_card.row(0, named=True)
    assert r["iwd_adjusted_lo"] < want < r["iwd_adjusted_hi"]


def test_strata_where_the_card_is_always_seen_carry_no_weight():
    # stratum 10: always seen (a big win-rate gap to the other stratum must not leak in)
    won = [1, 1, 1, 1, 1, 0, 1, 0]
    seen = [1, 1, 1, 1, 1, 1, 0, 0]
    turns = [10, 10, 10, 10, 20, 20, 20, 20]
    u = units_frame("A", won, seen, turns, [0] * 8, list(range(8)))
    _, by_deck = adjusted_iwd(u, MASKS, min_rows=1)
    assert by_deck["iwd_adjusted"][0] == pytest.approx(0.5 - 0.5)


def test_pooled_card_combines_decks_without_their_strength():
    # Deck A wins 80% and deck B 20%, and the card does nothing in either; A sees the card
    # rarely, B often. Pooled raw IWD is strongly negative; the adjusted IWD is 0.
    rng = np.random.default_rng(3)
    n = 4000
    frames = []
    for deck, wr, p_seen, table in (("A", 0.8, 0.2, 0), ("B", 0.2, 0.8, 1)):
        frames.append(units_frame(deck, rng.random(n) < wr, (rng.random(n) < p_seen),
                                  np.full(n, 15), np.zeros(n), np.arange(n) + table * n,
                                  np.full(n, table)))
    u = pl.concat(frames).sort("unit")
    masks = pl.concat([MASKS, MASKS.with_columns(pl.lit("B").alias("deck"))])
    by_card, _ = adjusted_iwd(u, masks, min_rows=1)
    r = by_card.row(0, named=True)
    seen = u["seen"].to_numpy() > 0
    won = u["won"].to_numpy()
    raw = won[seen].mean() - won[~seen].mean()
    assert raw < -0.3
    assert abs(r["iwd_adjusted"]) < 4 * r["iwd_adjusted_se"]


# ---------------------------------------------------------------- confounding by game length
def test_game_length_confounding_is_removed():
    u = confounded_units(6000, effect=0.0, seed=11)
    by_card, by_deck = adjusted_iwd(u, MASKS)
    r = by_deck.row(0, named=True)
    seen = u["seen"].to_numpy() > 0
    won = u["won"].to_numpy()
    raw = won[seen].mean() - won[~seen].mean()
    assert raw < -0.04  # the raw IWD blames the card for long games
    assert r["turn_gap"] > 1.0
    assert abs(r["iwd_adjusted"]) < 4 * r["iwd_adjusted_se"]


def test_a_real_effect_is_recovered():
    effect = 0.10
    _, by_deck = adjusted_iwd(confounded_units(6000, effect=effect, seed=12), MASKS)
    r = by_deck.row(0, named=True)
    assert abs(r["iwd_adjusted"] - effect) < 4 * r["iwd_adjusted_se"]
    assert r["iwd_adjusted_lo"] > 0


def test_per_deal_interval_holds_its_coverage():
    """Over 200 independent synthetic runs with no effect: the 95% interval holds 0 in
    93-97% give or take the simulation's own error (3 sd of a 200-run proportion: ±4.6
    points), and the standard error matches the spread of the estimates."""
    est, se = [], []
    for seed in range(200):
        _, by_deck = adjusted_iwd(confounded_units(300, effect=0.0, seed=1000 + seed), MASKS)
        est.append(by_deck["iwd_adjusted"][0])
        se.append(by_deck["iwd_adjusted_se"][0])
    est, se = np.array(est), np.array(se)
    cover = np.mean(np.abs(est) <= 1.96 * se)
    assert 0.95 - 0.046 <= cover <= 0.95 + 0.046
    # sd of 200 estimates is known to about ±5% (1 / sqrt(2 · 200)); 3 sd: ±15%
    assert 0.85 < est.std(ddof=1) / math.sqrt(np.mean(se**2)) < 1.15


# ---------------------------------------------------------------- flags and contract
def _counts(iwd_big: bool) -> pl.DataFrame:
    rows = []
    for card, (gw, g, nw, n) in {"raw_only": (700, 1000, 400, 1000),
                                 "adjusted_only": (500, 1000, 500, 1000)}.items():
        rows.append({"deck": "D", "card": card, "copies": 1, "held": g + n,
                     "held_wins": gw + nw, "oh": g, "oh_wins": gw, "gih": g, "gih_wins": gw,
                     "played": g, "played_wins": gw, "gd": 0, "gd_wins": 0, "gns": n,
                     "gns_wins": nw})
    return pl.DataFrame(rows)


def test_flags_come_from_the_adjusted_metric_only():
    adjusted = pl.DataFrame({
        "card": ["raw_only", "adjusted_only"],
        "iwd_adjusted": [0.001, -0.05], "iwd_adjusted_lo": [-0.01, -0.06],
        "iwd_adjusted_hi": [0.012, -0.04], "iwd_adjusted_se": [0.0055, 0.005],
        "iwd_adjusted_p": [0.86, 1e-20], "adjusted_deals": [1000, 1000],
        "turn_gap": [3.0, 0.0],
    })
    out = card_metrics(_counts(True), ("card",), adjusted=adjusted)
    flags = dict(out.select("card", "flag").iter_rows())
    assert flags == {"raw_only": "", "adjusted_only": "under"}
    raw = dict(out.select("card", "iwd_p").iter_rows())
    assert raw["raw_only"] < 1e-10  # the raw figure stays, as a secondary column


@pytest.fixture(scope="module")
def tiny_metrics(tmp_path_factory):
    return compute_metrics(load_run(tiny_run(tmp_path_factory.mktemp("runs") / "tiny")))


def test_cards_tables_carry_the_adjusted_columns(tiny_metrics):
    for frame in (tiny_metrics.cards, tiny_metrics.cards_by_deck):
        for c in ("iwd_adjusted", "iwd_adjusted_lo", "iwd_adjusted_hi", *ADJUSTED_COLUMNS):
            assert c in frame.columns, c
        assert {"iwd", "iwd_lo", "iwd_hi", "gih_wr", "gns_wr"} <= set(frame.columns)


def test_plain_cards_are_effectless_common_non_scroll_pillars():
    catalog = pl.DataFrame({
        "name": ["Plain", "Scroll Plain", "Uncommon", "With Effect", "Keyworded", "Attack"],
        "type": ["pillar", "pillar", "pillar", "pillar", "pillar", "attack"],
        "branch": ["bison", "scroll", "eagle", "eagle", "eagle", "bison"],
        "rarity": ["common", "common", "uncommon", "common", "common", "common"],
        "effects": ["", "", "", "lp 2", "", ""],
        "keywords": ["", "", "", "", "protect", ""],
    })
    assert plain_cards(catalog) == ["Plain"]
    listed = catalog.with_columns(pl.col("effects").str.split(" ").list.eval(
        pl.element().filter(pl.element() != "")))
    assert plain_cards(listed) == ["Plain"]


def test_plain_card_baseline_summarises_the_plain_pairs():
    by_deck = pl.DataFrame({
        "deck": ["A", "B", "A"], "card": ["Plain", "Plain", "Other"],
        "iwd_adjusted": [0.01, -0.02, 0.5], "iwd_adjusted_lo": [-0.01, -0.03, 0.4],
        "iwd_adjusted_hi": [0.03, -0.01, 0.6], "iwd": [0.05, -0.01, 0.3],
    })
    catalog = pl.DataFrame({"name": ["Plain", "Other"], "type": ["pillar", "attack"],
                            "branch": ["bison", "bison"], "rarity": ["common", "common"],
                            "effects": ["", ""], "keywords": ["", ""]})
    r = plain_card_baseline(by_deck, catalog).row(0, named=True)
    assert r["pairs"] == 2 and r["cards"] == 1
    assert r["adj_mean"] == pytest.approx(-0.005)
    assert r["adj_cover"] == pytest.approx(0.5)
    assert (r["raw_min"], r["raw_max"]) == pytest.approx((-0.01, 0.05))


# ---------------------------------------------------------------- raw rates, per deal
def test_raw_card_intervals_are_per_deal_as_a_naive_twin_computes(tmp_path):
    """GIH WR's standard error and the raw IWD's test from per-deal sums, recomputed with
    a plain loop over the deals of the seat rows."""
    from analytics_fixtures import RandomSpec, random_run

    from rnr_sim.analytics.cards import card_deal_intervals, card_masks, seat_units
    from rnr_sim.analytics.stats import two_sided_p

    run = load_run(random_run(tmp_path / "r", RandomSpec(deals=60, seed=4)))
    units = seat_units(run.games, run.seats)
    masks = card_masks(run.decks)
    _, by_deck = card_deal_intervals(units, masks)
    deck, card = "Alpha", "Watchful Eagle"  # seen in 465 of 600 games: no floor needed
    m = int(masks.filter((pl.col("deck") == deck) & (pl.col("card") == card))["mask"][0])
    rows = units.filter(pl.col("deck") == deck)
    per: dict[tuple[int, int], list[float]] = {}
    for won, seen, table, unit in rows.select("won", "seen", "table_id", "unit").iter_rows():
        g = 1.0 if int(seen) & m else 0.0
        acc = per.setdefault((table, unit), [0.0, 0.0, 0.0, 0.0])  # gih, gih_w, held, held_w
        acc[0] += g
        acc[1] += g * won
        acc[2] += 1.0
        acc[3] += float(won)
    keys = sorted(per)
    a = np.array([per[k] for k in keys])
    tables = np.array([k[0] for k in keys])
    g, gw, h, hw = a.T
    r1 = gw.sum() / g.sum()
    r0 = (hw - gw).sum() / (h - g).sum()

    def strat_var(z: np.ndarray) -> float:
        v = 0.0
        for t in np.unique(tables):
            zt = z[tables == t]
            v += len(zt) / (len(zt) - 1) * ((zt - zt.mean()) ** 2).sum()
        return v

    se_gih = math.sqrt(strat_var(gw - r1 * g) / g.sum() ** 2)
    z = (gw - r1 * g) / g.sum() - ((hw - gw) - r0 * (h - g)) / (h - g).sum()
    se_iwd = math.sqrt(strat_var(z))
    r = by_deck.filter((pl.col("deck") == deck) & (pl.col("card") == card)).row(0, named=True)
    assert r["gih_wr_se"] == pytest.approx(se_gih, rel=1e-9)
    assert r["iwd_se"] == pytest.approx(se_iwd, rel=1e-9)
    assert r["iwd_p"] == pytest.approx(two_sided_p((r1 - r0) / se_iwd), rel=1e-9)
