"""Small, dependency-free statistics: intervals, tests, multiple testing, the Nash LP.

Everything here is plain numpy/math (no scipy) and is checked in the tests against
hand-computed or textbook values. Polars-expression twins of the Wilson interval live
beside the numpy ones so the metric pipelines stay lazy.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

Z95 = 1.959963984540054  # the two-sided 95% normal quantile


# ---------------------------------------------------------------- Wilson interval
def wilson(wins: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``wins / n``; ``(nan, nan)`` when n == 0.

    ``centre = (p + z²/2n) / (1 + z²/n)``, ``half = z / (1 + z²/n) · sqrt(p(1-p)/n + z²/4n²)``.
    """
    if n <= 0:
        return (math.nan, math.nan)
    p = wins / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    # The interval always holds p; rounding can put the bound a hair past it (wilson(0, 7)
    # gave 2.8e-17), so clamp to [0, p] and [p, 1].
    return (min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)))


def _wilson_parts(wins: pl.Expr, n: pl.Expr, z: float) -> tuple[pl.Expr, pl.Expr]:
    nf = n.cast(pl.Float64)
    p = wins.cast(pl.Float64) / nf
    z2 = z * z
    denom = 1.0 + z2 / nf
    centre = (p + z2 / (2.0 * nf)) / denom
    half = z / denom * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt()
    return centre, half


def wilson_lo(wins: str | pl.Expr, n: str | pl.Expr, z: float = Z95) -> pl.Expr:
    """Polars expression: the Wilson lower bound of ``wins / n``; null where n == 0."""
    w = pl.col(wins) if isinstance(wins, str) else wins
    m = pl.col(n) if isinstance(n, str) else n
    centre, half = _wilson_parts(w, m, z)
    p = w.cast(pl.Float64) / m.cast(pl.Float64)
    lo = pl.min_horizontal((centre - half).clip(0.0, 1.0), p)  # never past p (rounding)
    return pl.when(m > 0).then(lo).otherwise(None)


def wilson_hi(wins: str | pl.Expr, n: str | pl.Expr, z: float = Z95) -> pl.Expr:
    """Polars expression: the Wilson upper bound of ``wins / n``; null where n == 0."""
    w = pl.col(wins) if isinstance(wins, str) else wins
    m = pl.col(n) if isinstance(n, str) else n
    centre, half = _wilson_parts(w, m, z)
    p = w.cast(pl.Float64) / m.cast(pl.Float64)
    hi = pl.max_horizontal((centre + half).clip(0.0, 1.0), p)  # never short of p (rounding)
    return pl.when(m > 0).then(hi).otherwise(None)


def rate(wins: str | pl.Expr, n: str | pl.Expr) -> pl.Expr:
    """Polars expression: ``wins / n`` as Float64, null (never NaN) where n == 0."""
    w = pl.col(wins) if isinstance(wins, str) else wins
    m = pl.col(n) if isinstance(n, str) else n
    return pl.when(m > 0).then(w.cast(pl.Float64) / m.cast(pl.Float64)).otherwise(None)


def with_rate(frame: pl.LazyFrame, name: str, wins: str, n: str) -> pl.LazyFrame:
    """Add ``name``, ``name_lo``, ``name_hi``: the rate ``wins / n`` and its Wilson interval."""
    return frame.with_columns(
        rate(wins, n).alias(name),
        wilson_lo(wins, n).alias(f"{name}_lo"),
        wilson_hi(wins, n).alias(f"{name}_hi"),
    )


# ---------------------------------------------------------------- normal and chi-square tails
def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def two_sided_p(z: float) -> float:
    """Two-sided p-value of a standard normal statistic: P(|Z| >= |z|)."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def regularized_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a), the regularized upper incomplete gamma function.

    Series for P(a, x) when x < a + 1, Lentz's continued fraction for Q otherwise
    (Numerical Recipes §6.2); relative accuracy ~1e-14.
    """
    if a <= 0:
        raise ValueError("a must be positive")
    if x <= 0:
        return 1.0
    log_prefix = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:
        term = 1.0 / a
        total = term
        ap = a
        for _ in range(10_000):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < tiny:
            d = tiny
        c = b + an / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return min(1.0, math.exp(log_prefix) * h)


def chi2_sf(x: float, df: int) -> float:
    """P(X > x) for a chi-square X with ``df`` degrees of freedom: Q(df/2, x/2)."""
    if x <= 0:
        return 1.0
    return regularized_gamma_q(df / 2.0, x / 2.0)


def chi2_uniform(counts: np.ndarray) -> tuple[float, float]:
    """Pearson's chi-square of ``counts`` against equal expected counts, and its p-value.

    ``chi2 = Σ (O_k - E)² / E`` with ``E = Σ O / K``, ``df = K - 1``. ``(nan, nan)`` if no counts.
    """
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    if total <= 0 or len(counts) < 2:
        return (math.nan, math.nan)
    expected = total / len(counts)
    stat = float(((counts - expected) ** 2 / expected).sum())
    return (stat, chi2_sf(stat, len(counts) - 1))


# ---------------------------------------------------------------- difference of two proportions
def diff_interval(w1: float, n1: float, w2: float, n2: float, z: float = Z95) -> tuple[float, float]:
    """Normal-approximation 95% interval of ``p1 - p2 = w1/n1 - w2/n2``; nan if an n is 0.

    The Agresti-Caffo form of the Wald interval: add one win and one loss to each group
    (``p_i' = (w_i + 1) / (n_i + 2)``), then ``(p1' - p2') ± z · sqrt(Σ p_i'(1-p_i')/(n_i+2))``.
    It equals the plain Wald interval as the counts grow, but does not collapse to zero
    width when a rate is 0 or 1 on a few games. Clipped to [-1, 1].
    """
    if n1 <= 0 or n2 <= 0:
        return (math.nan, math.nan)
    m1, m2 = n1 + 2.0, n2 + 2.0
    p1, p2 = (w1 + 1.0) / m1, (w2 + 1.0) / m2
    se = math.sqrt(p1 * (1 - p1) / m1 + p2 * (1 - p2) / m2)
    d = p1 - p2
    return (max(-1.0, d - z * se), min(1.0, d + z * se))


def diff_p_value(w1: float, n1: float, w2: float, n2: float) -> float:
    """Two-sided p of the pooled two-proportion z-test of ``p1 == p2``; nan when an n is 0.

    ``z = (p1 - p2) / sqrt(p(1-p)(1/n1 + 1/n2))`` with the pooled ``p = (w1+w2)/(n1+n2)``;
    p = 1 when every game was won (or every game lost), which leaves no difference to test.
    """
    if n1 <= 0 or n2 <= 0:
        return math.nan
    p = (w1 + w2) / (n1 + n2)
    var = p * (1 - p) * (1 / n1 + 1 / n2)
    if var <= 0:
        return 1.0
    return two_sided_p((w1 / n1 - w2 / n2) / math.sqrt(var))


def benjamini_hochberg(p_values: np.ndarray, q: float = 0.05) -> np.ndarray:
    """Which hypotheses the Benjamini-Hochberg step-up procedure rejects at FDR ``q``.

    Sort the m finite p-values; find the largest rank k with ``p_(k) <= k/m · q``; reject
    the k smallest. NaN p-values are not tested (never rejected, not counted in m).
    Returns a bool array aligned with ``p_values``.
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.zeros(p.shape, dtype=bool)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    below = p[order] <= (np.arange(1, m + 1) / m) * q
    if below.any():
        k = int(np.flatnonzero(below).max()) + 1
        out[order[:k]] = True
    return out


# ---------------------------------------------------------------- the Nash LP
def _simplex_max(c: np.ndarray, a: np.ndarray, b: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """Maximise ``c·y`` subject to ``a y <= b``, ``y >= 0``, with ``b >= 0``.

    Dense tableau simplex from the slack basis, Bland's rule (lowest index enters, lowest
    basic index leaves among ties), which cannot cycle. Returns the optimal y.
    """
    m, n = a.shape
    t = np.zeros((m + 1, n + m + 1))
    t[:m, :n] = a
    t[:m, n : n + m] = np.eye(m)
    t[:m, -1] = b
    t[m, :n] = -c
    basis = np.arange(n, n + m)
    for _ in range(50_000):
        entering = np.flatnonzero(t[m, :-1] < -tol)
        if len(entering) == 0:
            break
        e = entering[0]
        col = t[:m, e]
        pos = col > tol
        if not pos.any():
            raise ValueError("linear program is unbounded")
        ratios = np.full(m, np.inf)
        ratios[pos] = t[:m, -1][pos] / col[pos]
        best = ratios.min()
        ties = np.flatnonzero(ratios <= best + tol * max(1.0, abs(best)))
        r = ties[np.argmin(basis[ties])]
        t[r] /= t[r, e]
        for i in range(m + 1):
            if i != r and t[i, e] != 0.0:
                t[i] -= t[i, e] * t[r]
        basis[r] = e
    else:  # pragma: no cover - Bland's rule terminates
        raise RuntimeError("simplex did not converge")
    y = np.zeros(n + m)
    y[basis] = t[:m, -1]
    return y[:n]


def nash_equilibrium(payoff: np.ndarray) -> np.ndarray:
    """An optimal mixed strategy of the zero-sum game with row-player payoff matrix ``payoff``.

    ``payoff[i, j]`` is what row strategy i earns against column strategy j (for the
    metagame: deck i's win rate against deck j, minus one half). Shifted to be positive
    (``B = payoff + s``, s > max|payoff|), the column player's problem
    ``max Σy  s.t.  B y <= 1, y >= 0`` is solved exactly by the simplex method; y/Σy is
    an optimal column strategy. For a symmetric game (payoff antisymmetric) the row and
    column players' optimal strategies coincide, so this is the metagame's equilibrium mix.
    For a general matrix the row strategy is solved from the transposed, negated game.
    Returns float64[n] summing to 1, with exact zeros off the support.
    """
    a = np.asarray(payoff, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] == 0:
        raise ValueError("payoff must be a non-empty matrix")
    # the row player of `a` is the column player of `-a.T`
    col_game = -a.T
    shift = float(np.abs(col_game).max()) + 1.0
    b_mat = col_game + shift
    y = _simplex_max(np.ones(b_mat.shape[1]), b_mat, np.ones(b_mat.shape[0]))
    y[y < 1e-13] = 0.0
    x = y / y.sum()
    return x


def exploitability(payoff: np.ndarray, x: np.ndarray) -> float:
    """How much a best response gains over the game's value against mix ``x``.

    For a symmetric zero-sum game (value 0): ``max_i (payoff @ x)_i``; 0 at equilibrium.
    """
    return float(np.max(np.asarray(payoff) @ np.asarray(x)))
