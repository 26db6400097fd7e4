"""The compiled card loops (``card_kernels``) give the numpy definitions' numbers, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from rnr_sim.analytics import cards

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


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("sizes", ["two", "uneven", "upto8", "eight", "nine"])
def test_mh_deck_matches_mh_parts_card_by_card(seed: int, sizes: str) -> None:
    deal_sizes = {"two": [2] * 300, "uneven": [1, 2, 3, 4, 2, 2, 5] * 40,
                  "upto8": [8, 1, 7, 8, 2] * 40, "eight": [8] * 60, "nine": [9] * 60}[sizes]
    r = _deck_rows(seed, deal_sizes)
    y, st = r["won"], r["st"]
    ns = np.bincount(st, minlength=7).astype(np.float64)
    ms = np.bincount(st, weights=y, minlength=7)
    got = cards._mh_deck(r["seen"], r["masks"], y, st, ns, ms, r["turns"], r["starts"])
    for (u, v, zu, zv, n1, seen_turns), m in zip(got, r["masks"], strict=True):
        x = ((r["seen"] & m) != 0).astype(np.float64)
        u0, v0, zu0, zv0 = cards._mh_parts(x, y, st, ns, ms, r["starts"])
        assert (u, v) == (u0, v0)
        assert np.array_equal(zu, zu0) and np.array_equal(zv, zv0)
        assert n1 == float(x.sum())
        assert seen_turns == float((x * r["turns"]).sum())


@pytest.mark.parametrize("seed", SEEDS)
def test_interval_rows_match_interval_row(seed: int) -> None:
    r = _deck_rows(seed, [2] * 400)
    y, st = r["won"], r["st"]
    ns = np.bincount(st, minlength=7).astype(np.float64)
    ms = np.bincount(st, weights=y, minlength=7)
    parts = cards._mh_deck(r["seen"], r["masks"], y, st, ns, ms, r["turns"], r["starts"])
    u = np.array([p[0] for p in parts])
    v = np.array([p[1] for p in parts])
    zu = np.stack([p[2] for p in parts])
    zv = np.stack([p[3] for p in parts])
    got = cards._interval_rows(u, v, zu, zv, r["tables"])
    want = [cards._interval_row(float(u[k]), float(v[k]), zu[k], zv[k], r["tables"])
            for k in range(len(u))]
    assert got == want
    assert any(row["iwd_adjusted_se"] is not None for row in got)


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
    tstarts = np.array([0, 70, 71, 150], dtype=np.int64)
    s_, m_ = cards._table_moments(x, tstarts)
    ends = np.r_[tstarts[1:], x.shape[2]]
    for t, (lo, hi) in enumerate(zip(tstarts, ends, strict=True)):
        blk = x[:, :, lo:hi].astype(np.float64)
        assert np.array_equal(s_[t], blk.sum(axis=2))
        assert np.array_equal(m_[t], np.einsum("kid,kjd->kij", blk, blk))
