"""The compiled card loops (``card_kernels``) and the card fold (``card_sums``) give the numpy
definitions' numbers, bit for bit."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from rnr_sim.analytics import cards
from rnr_sim.analytics.card_sums import CardFold
from rnr_sim.analytics.units import table_se

SEEDS = (1, 2, 3)


def _deck_rows(seed: int, deal_sizes: list[int]) -> dict[str, np.ndarray]:
    """One deck's seat rows, sorted by deal, with random masks, outcomes, strata, tables."""
    rng = np.random.default_rng(seed)
    n = int(sum(deal_sizes))
    starts = np.r_[0, np.cumsum(deal_sizes)[:-1]].astype(np.int64)
    tables = np.sort(rng.integers(0, 5, len(deal_sizes))) * 3  # sparse table ids
    bits = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64)
    return {
        "won": (rng.random(n) < 0.5).astype(np.float64),
        "opening": bits & rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64),
        "seen": bits,
        "played": bits & rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64),
        "masks": np.array([1, 2, 6, 1 << 40, (1 << 63) | 8, 0], dtype=np.uint64),
        "st": rng.integers(0, 7, n).astype(np.int64),
        "turns": rng.integers(5, 40, n).astype(np.float64),
        "starts": starts,
        "tables": tables,
    }


def _units(r: dict[str, np.ndarray], turns: np.ndarray) -> pl.DataFrame:
    """The rows as ``card_sums.CardFold`` reads them: one deck, two players, turn order 0,
    one deal per block of ``starts``."""
    n = len(r["won"])
    unit = np.repeat(np.arange(len(r["starts"])), np.diff(np.r_[r["starts"], n]))
    return pl.DataFrame({"deck": ["A"] * n, "won": r["won"] > 0, "seen": r["seen"],
                         "opening": r["opening"], "played": r["played"],
                         "turns": turns.astype(np.int32), "n_players": np.full(n, 2, np.int8),
                         "order": np.zeros(n, np.int32),
                         "table_id": r["tables"][unit].astype(np.int32), "unit": unit})


def _masks(r: dict[str, np.ndarray]) -> pl.DataFrame:
    return pl.DataFrame({"deck": ["A"] * len(r["masks"]),
                         "card": [f"c{k}" for k in range(len(r["masks"]))],
                         "copies": [1] * len(r["masks"]), "mask": r["masks"]},
                        schema={"deck": pl.String, "card": pl.String, "copies": pl.Int64,
                                "mask": pl.UInt64})


def _fold(r: dict[str, np.ndarray]):
    """A CardFold over the rows, strata one per turn value (``min_rows=1``), and the rows'
    stratum: the rank of their turns (what ``_mh_parts`` is handed)."""
    turns = r["st"] + 5  # one turn value per stratum
    fold = CardFold(_masks(r), min_rows=1)
    units = _units(r, turns)
    fold.add_counts(units)
    fold.finish_counts()
    return fold, units, np.unique(turns, return_inverse=True)[1]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("sizes", ["two", "uneven", "upto8", "eight", "nine"])
def test_the_folds_deal_sums_match_mh_parts_card_by_card(seed: int, sizes: str) -> None:
    """The second pass's per-deal dU, dV (the compiled loop where a deck's deals are up to
    8 rows, numpy beyond) and the first pass's U, V (from per-turn counts) are
    ``_mh_parts``' numbers, bit for bit."""
    deal_sizes = {"two": [2] * 300, "uneven": [1, 2, 3, 4, 2, 2, 5] * 40,
                  "upto8": [8, 1, 7, 8, 2] * 40, "eight": [8] * 60, "nine": [9] * 60}[sizes]
    r = _deck_rows(seed, deal_sizes)
    fold, units, st = _fold(r)
    deck = fold.decks["A"]
    _, _, (zu, zv) = deck.add_deals(units)
    y = r["won"]
    ns = np.bincount(st).astype(np.float64)
    ms = np.bincount(st, weights=y)
    for k, m in enumerate(r["masks"]):
        x = ((r["seen"] & m) != 0).astype(np.float64)
        u0, v0, zu0, zv0 = cards._mh_parts(x, y, st, ns, ms, r["starts"])
        assert (deck.adj["u"][k], deck.adj["v"][k]) == (u0, v0)
        assert np.array_equal(zu[k], zu0) and np.array_equal(zv[k], zv0)
        assert deck.adj["seen_rows"][k] == float(x.sum())


@pytest.mark.parametrize("seed", SEEDS)
def test_the_folds_standard_error_is_table_se_of_the_linearisation(seed: int) -> None:
    """``adjusted_iwd``'s se from the per-table sums kept in deal order equals
    ``units.table_se`` over every deal's ``z = (dU - est dV) / V`` at once."""
    r = _deck_rows(seed, [2] * 400)
    fold, units, st = _fold(r)
    fold.add_deals(units)
    _, by_deck = fold.adjusted()
    y = r["won"]
    ns, ms = np.bincount(st).astype(np.float64), np.bincount(st, weights=y)
    unit_tables = units["table_id"].to_numpy()[r["starts"]]
    checked = 0
    for k, m in enumerate(r["masks"]):
        x = ((r["seen"] & m) != 0).astype(np.float64)
        u, v, zu, zv = cards._mh_parts(x, y, st, ns, ms, r["starts"])
        row = by_deck.row(k, named=True)
        if v > 0:
            est = u / v
            assert row["iwd_adjusted"] == est
            assert row["iwd_adjusted_se"] == table_se((zu - est * zv) / v, unit_tables)
            checked += 1
    assert checked


@pytest.mark.parametrize("seed", SEEDS)
def test_deal_vectors_and_table_moments_match_their_definitions(seed: int) -> None:
    r = _deck_rows(seed, [1, 2, 3, 2] * 50)
    x = cards._deal_vectors(r["won"], r["opening"], r["seen"], r["played"], r["masks"],
                            r["starts"])
    w = r["won"]
    for k, m in enumerate(r["masks"]):
        per_row = [np.ones_like(w), w]
        for col in ("opening", "seen", "played"):
            hit = ((r[col] & m) != 0).astype(np.float64)
            per_row += [hit, hit * w]
        want = np.stack([np.add.reduceat(c, r["starts"]) for c in per_row])
        assert np.array_equal(x[k], want)
    fold, _, _ = _fold(r)
    deck = fold.decks["A"]
    ids, order = deck.tables.sorted()
    deal_tables = r["tables"]
    for t, i in zip(ids.tolist(), order.tolist(), strict=True):
        blk = x[:, :, deal_tables == t].astype(np.float64)
        assert deck.d[i] == blk.shape[2]
        assert np.array_equal(deck.S[i], blk.sum(axis=2))
        assert np.array_equal(deck.M[i], np.einsum("kid,kjd->kij", blk, blk))
