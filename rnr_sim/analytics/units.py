"""Per-deal variance for estimators computed in numpy (the adjusted IWD, path expectations).

The deal ``(table_id, deal)`` is the independent unit of a run; each table plays a fixed
number of deals, so tables are strata of the design. ``table_se`` is the numpy twin of
the variance in ``stats.ratio_by_deal``, for estimators already linearised per deal
(``table_se_from_sums`` from its per-table sums). ``grow`` pads the arrays of sums a run
read part by part keeps.
"""

from __future__ import annotations

import math

import numpy as np


def table_se(z: np.ndarray, table: np.ndarray) -> float:
    """Standard error of an estimator whose per-deal linearisation (on the scale of the
    estimate, summing to ~0) is ``z``, deals grouped by ``table`` (one entry per deal).

    ``var = Σ_h D_h/(D_h - 1) Σ_{d in h} (z_d - mean_h z)²`` over tables h with D_h deals;
    a table with one deal is not centred. nan with fewer than two deals. ``table`` holds
    any labels; non-negative integers (table ids) are used as they are.
    """
    z = np.asarray(z, dtype=np.float64)
    if len(z) < 2:
        return math.nan
    t = np.asarray(table)
    if t.dtype.kind not in "iu" or (len(t) and t.min() < 0):
        _, t = np.unique(t, return_inverse=True)
    d = np.bincount(t).astype(np.float64)
    return table_se_from_sums(d, np.bincount(t, weights=z), np.bincount(t, weights=z * z))


def table_se_from_sums(d: np.ndarray, s: np.ndarray, ss: np.ndarray) -> float:
    """``table_se`` from its per-table deals ``d`` and sums ``s`` of ``z`` and ``ss`` of
    ``z²`` (tables in ascending order; a table with no deal adds nothing), as a run read
    part by part keeps them."""
    many = d >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.where(many, d / np.where(many, d - 1.0, 1.0) * (ss - s * s / d), ss)
    var = per[d > 0].sum()
    return math.sqrt(max(float(var), 0.0))


def grow(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` padded with zeros to at least ``shape`` on every axis: the sums of a run read
    part by part grow as new tables, decks or turn counts come."""
    want = tuple(max(x, y) for x, y in zip(a.shape, shape, strict=True))
    if want == a.shape:
        return a
    out = np.zeros(want, dtype=a.dtype)
    out[tuple(slice(0, n) for n in a.shape)] = a
    return out
