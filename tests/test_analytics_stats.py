"""The statistics behind the metrics, against values worked out independently."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from rnr_sim.analytics.stats import (
    Z95,
    benjamini_hochberg,
    chi2_sf,
    chi2_uniform,
    diff_interval,
    diff_p_value,
    exploitability,
    nash_equilibrium,
    regularized_gamma_q,
    two_sided_p,
    wilson,
    wilson_hi,
    wilson_lo,
)


def wilson_by_quadratic(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson bounds as the roots of n(p̂ - p)² = z² p (1 - p)."""
    ph = wins / n
    a, b, c = n + z * z, -(2 * n * ph + z * z), n * ph * ph
    d = math.sqrt(b * b - 4 * a * c)
    return ((-b - d) / (2 * a), (-b + d) / (2 * a))


def test_wilson_7_of_12_by_hand():
    lo, hi = wilson(7, 12)
    # worked by hand: centre 0.56313, half-width 0.24362
    assert lo == pytest.approx(0.319511, abs=1e-6)
    assert hi == pytest.approx(0.806740, abs=1e-6)
    assert (lo, hi) == pytest.approx(wilson_by_quadratic(7, 12), abs=1e-12)


@pytest.mark.parametrize("wins,n", [(0, 1), (1, 1), (0, 10), (10, 10), (3, 7), (500, 1000)])
def test_wilson_matches_quadratic_and_polars(wins, n):
    lo, hi = wilson(wins, n)
    assert (lo, hi) == pytest.approx(wilson_by_quadratic(wins, n), abs=1e-12)
    df = pl.DataFrame({"w": [wins], "n": [n]}).select(
        wilson_lo("w", "n").alias("lo"), wilson_hi("w", "n").alias("hi"))
    assert df.row(0) == pytest.approx((lo, hi), abs=1e-12)


def test_wilson_empty_is_nan_and_null():
    assert all(math.isnan(x) for x in wilson(0, 0))
    df = pl.DataFrame({"w": [0], "n": [0]}).select(
        wilson_lo("w", "n").alias("lo"), wilson_hi("w", "n").alias("hi"))
    assert df.row(0) == (None, None)


def test_chi2_sf_closed_forms():
    for x in (0.1, 1.0, 4.7777778, 10.0, 50.0):
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
        assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-10)
        exact3 = math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2)
        assert chi2_sf(x, 3) == pytest.approx(exact3, rel=1e-10)


@pytest.mark.parametrize("x,df,p", [(3.841459, 1, 0.05), (7.814728, 3, 0.05),
                                    (11.344867, 3, 0.01), (18.307038, 10, 0.05)])
def test_chi2_sf_critical_values(x, df, p):
    assert chi2_sf(x, df) == pytest.approx(p, rel=1e-5)


def test_regularized_gamma_both_branches_and_edges():
    # Q(1, x) = exp(-x): x < a + 1 (series) and x > a + 1 (continued fraction)
    assert regularized_gamma_q(1.0, 0.5) == pytest.approx(math.exp(-0.5), rel=1e-13)
    assert regularized_gamma_q(1.0, 5.0) == pytest.approx(math.exp(-5.0), rel=1e-13)
    assert regularized_gamma_q(2.5, 0.0) == 1.0
    assert chi2_sf(0.0, 3) == 1.0
    assert 0.0 <= chi2_sf(5000.0, 3) < 1e-300


def test_chi2_uniform_by_hand():
    stat, p = chi2_uniform(np.array([5, 1, 2, 1]))
    # E = 9/4: (2.75² + 1.25² + 0.25² + 1.25²) / 2.25 = 10.75 / 2.25
    assert stat == pytest.approx(10.75 / 2.25)
    assert p == pytest.approx(chi2_sf(10.75 / 2.25, 3))
    assert all(math.isnan(v) for v in chi2_uniform(np.zeros(4)))


def test_benjamini_hochberg_step_up():
    # every p_(k) <= k/4 · 0.05 for the largest k: all rejected, though p_(1) > 0.0125
    assert benjamini_hochberg(np.array([0.04, 0.04, 0.04, 0.04])).all()
    assert benjamini_hochberg(np.array([0.01, 0.02, 0.03, 0.5])).tolist() == [
        True, True, True, False]
    # raw p < 0.05 but nothing survives the correction
    assert not benjamini_hochberg(np.array([0.02, 0.2, 0.3, 0.4])).any()
    # NaNs are not tested and do not count toward m
    out = benjamini_hochberg(np.array([np.nan, 0.02, np.nan, 0.5]))
    assert out.tolist() == [False, True, False, False]
    assert benjamini_hochberg(np.array([])).tolist() == []


def test_difference_of_proportions():
    # pooled z-test: 1/1 vs 0/1 -> pooled 0.5, se sqrt(0.5), z = sqrt(2)
    assert diff_p_value(1, 1, 0, 1) == pytest.approx(two_sided_p(math.sqrt(2)))
    assert diff_p_value(5, 5, 7, 7) == 1.0
    assert math.isnan(diff_p_value(1, 0, 1, 2))
    assert all(math.isnan(v) for v in diff_interval(1, 2, 0, 0))
    # large samples: the Agresti-Caffo interval is the Wald interval
    lo, hi = diff_interval(60_000, 100_000, 50_000, 100_000)
    se = math.sqrt(0.6 * 0.4 / 1e5 + 0.5 * 0.5 / 1e5)
    assert (lo, hi) == pytest.approx((0.1 - Z95 * se, 0.1 + Z95 * se), abs=1e-5)
    # small samples: never a zero-width interval at 0 or 1
    lo, hi = diff_interval(2, 2, 0, 6)
    assert 0.0 < lo < 0.5 and hi == 1.0


RPS = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)


def test_nash_rock_paper_scissors():
    x = nash_equilibrium(RPS)
    assert x == pytest.approx([1 / 3] * 3, abs=1e-12)
    assert exploitability(RPS, x) == pytest.approx(0.0, abs=1e-12)


def test_nash_weighted_rps_is_proportional_to_opposite_payoffs():
    a, b, c = 0.1, 0.3, 0.2  # A = [[0, a, -b], [-a, 0, c], [b, -c, 0]] -> x ∝ (c, b, a)
    game = np.array([[0, a, -b], [-a, 0, c], [b, -c, 0]])
    assert nash_equilibrium(game) == pytest.approx(np.array([c, b, a]) / (a + b + c), abs=1e-12)


def test_nash_dominated_deck_gets_no_share():
    # RPS plus a fourth deck that loses to every other deck
    game = np.zeros((4, 4))
    game[:3, :3] = RPS * 0.1
    game[3, :3] = -0.05
    game[:3, 3] = 0.05
    x = nash_equilibrium(game)
    assert x[3] == 0.0
    assert x[:3] == pytest.approx([1 / 3] * 3, abs=1e-12)


def test_nash_dominant_deck_takes_everything():
    game = np.array([[0, 0.1875], [-0.1875, 0]])
    assert nash_equilibrium(game).tolist() == [1.0, 0.0]


def test_nash_random_symmetric_games_are_unexploitable():
    rng = np.random.default_rng(5)
    for k in (2, 3, 5, 8, 12, 20):
        for _ in range(5):
            m = rng.normal(0, 0.1, (k, k))
            game = (m - m.T) / 2
            x = nash_equilibrium(game)
            assert x.min() >= 0 and x.sum() == pytest.approx(1.0, abs=1e-12)
            assert exploitability(game, x) <= 1e-9


def test_nash_general_matrix_row_player():
    # matching pennies shifted: value 0.5, row mix (1/2, 1/2)
    game = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert nash_equilibrium(game) == pytest.approx([0.5, 0.5], abs=1e-12)
    # row 0 dominates row 1
    assert nash_equilibrium(np.array([[2.0, 3.0], [1.0, 0.0]])).tolist() == [1.0, 0.0]
