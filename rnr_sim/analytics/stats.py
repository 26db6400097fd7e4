"""Small, dependency-free statistics: intervals, tests, multiple testing, the Nash LP.

Everything here is plain numpy/math (no scipy) and is checked in the tests against
hand-computed or textbook values. Polars-expression twins of the Wilson interval live
beside the numpy ones so the metric pipelines stay lazy.

The deal is the unit (``ratio_by_deal``, ``lincomb_by_deal``): a run plays every deal of a
table in every seat order from the same shuffles, so the games of one deal are not
independent; the deals are. Every interval of the report is computed from per-deal sums.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

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


# ---------------------------------------------------------------- the deal as the unit
#: The columns that name one deal of one table: the independent unit of a run.
DEAL_STRATUM = "table_id"
DEAL = "deal"

METHOD_NOTE = (
    "How the intervals are computed. The independent unit of a run is the deal: each table "
    "plays every deal once in every seat order, from the same shuffles, so the games of one "
    "deal share their luck and are not independent, while different deals are. Every rate "
    "in this report (a deck's win rate, a matchup, the first seat's win rate, a path's share "
    "of the wins, a branch's win rate, a card's win rates) is a ratio of sums over deals, "
    "and its 95% interval is computed from the per-deal sums: the variance of the ratio is "
    "linearised (the delta method) and estimated from how the deals of each table differ "
    "from one another, and the interval is a Wilson score interval on the effective number "
    "of games (games divided by the design effect, the measured variance over the variance "
    "the same count of independent games would have). A design effect above 1 means the "
    "games of a deal agree more than chance (a deck's win rate, a card's); below 1 means "
    "they cancel (the first seat's win rate: both seat orders of a deal are played, so the "
    "decks' strength drops out of the seat comparison). A deck's win rate is against the "
    "field: games of a deck against itself (mirrors) are counted only in the seat analysis, "
    "and a branch's win rate leaves out games between two decks of the same branch, which "
    "end at exactly one win each by construction. `rnr-sim check coverage` measures how "
    "often these intervals hold the value across independent seeds: on the sample decks "
    "(100 seeds) every family of intervals held it 94.5-95.7% of the time; counting the games "
    "as independent, as little as 86% (and 98.7% for the first seat, whose intervals "
    "were too wide)."
)


def _col(x: str | pl.Expr) -> pl.Expr:
    return pl.col(x) if isinstance(x, str) else x


def wilson_pn(p: pl.Expr, n: pl.Expr, z: float = Z95) -> tuple[pl.Expr, pl.Expr]:
    """Polars expressions: the Wilson score interval (lo, hi) of a rate ``p`` observed on
    ``n`` (a float: an effective sample size need not be whole), clamped to [0, p] and
    [p, 1]; null where n <= 0 or p is null."""
    nf = n.cast(pl.Float64)
    z2 = z * z
    denom = 1.0 + z2 / nf
    centre = (p + z2 / (2.0 * nf)) / denom
    half = z / denom * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).clip(0.0, None).sqrt()
    ok = (nf > 0) & p.is_not_null()
    lo = pl.min_horizontal((centre - half).clip(0.0, 1.0), p)
    hi = pl.max_horizontal((centre + half).clip(0.0, 1.0), p)
    return pl.when(ok).then(lo).otherwise(None), pl.when(ok).then(hi).otherwise(None)


def deal_sums(
    frame: pl.LazyFrame | pl.DataFrame,
    num: str | pl.Expr,
    den: str | pl.Expr,
    by: Sequence[str] = (),
    stratum: str = DEAL_STRATUM,
    deal: str = DEAL,
) -> pl.LazyFrame:
    """Per (``by``, table, deal): ``y = Σ num`` and ``n = Σ den`` over the frame's rows.

    Every deal in which the group has a row is kept, also when its ``n`` is 0 (a deck's
    deal without a win still counts, as a deal with no share of wins to give).
    """
    keys = list(by)
    rows = frame.lazy().with_columns(  # columns first, so that a literal counts every row
        _col(num).cast(pl.Float64).alias("_num"), _col(den).cast(pl.Float64).alias("_den")
    )
    return rows.group_by(*keys, stratum, deal).agg(
        pl.col("_num").sum().alias("y"), pl.col("_den").sum().alias("n")
    )


def deal_moments(sums: pl.LazyFrame, by: Sequence[str] = (), stratum: str = DEAL_STRATUM
                 ) -> pl.LazyFrame:
    """Per (``by``, table): the raw moments of its deals' (y, n): ``d`` deals, ``sy``,
    ``sn``, ``syy``, ``snn``, ``syn``. They add up over disjoint sets of deals, so a run
    read part by part can sum them (``summary.summarize``)."""
    y, n = pl.col("y"), pl.col("n")
    return sums.group_by(*by, stratum).agg(
        pl.len().cast(pl.Float64).alias("d"), y.sum().alias("sy"), n.sum().alias("sn"),
        (y * y).sum().alias("syy"), (n * n).sum().alias("snn"), (y * n).sum().alias("syn"),
    )


def ratio_from_moments(moments: pl.LazyFrame, by: Sequence[str] = (), name: str = "value",
                       z: float = Z95) -> pl.LazyFrame:
    """The ratio estimate and its interval from per-table deal moments (``deal_moments``).

    See ``ratio_by_deal`` for the definition; this is its second half.
    """
    keys = list(by)
    d = pl.col("d")
    c = pl.when(d >= 2).then(d / (d - 1.0)).otherwise(1.0)
    centred = d >= 2  # a table with one deal has no spread of its own: left uncentred

    def a(uv: str, u: str, v: str) -> pl.Expr:
        return c * (pl.col(uv) - pl.when(centred).then(pl.col(u) * pl.col(v) / d).otherwise(0.0))

    parts = moments.with_columns(
        a("syy", "sy", "sy").alias("ayy"), a("syn", "sy", "sn").alias("ayn"),
        a("snn", "sn", "sn").alias("ann"),
    )
    agg = [
        pl.col("sy").sum().alias("_y"), pl.col("sn").sum().alias("_n"),
        pl.col("d").sum().cast(pl.Int64).alias(f"{name}_deals"),
        pl.col("ayy").sum().alias("_ayy"), pl.col("ayn").sum().alias("_ayn"),
        pl.col("ann").sum().alias("_ann"),
    ]
    tot = parts.group_by(keys).agg(agg) if keys else parts.select(agg)
    big_n = pl.col("_n")
    r = pl.when(big_n > 0).then(pl.col("_y") / big_n).otherwise(None)
    tot = tot.with_columns(r.alias(name))
    r = pl.col(name)
    var = ((pl.col("_ayy") - 2.0 * r * pl.col("_ayn") + r * r * pl.col("_ann")) / (big_n * big_n))
    # the floor: one deal one unit away from the rest of its table gives 1/N²
    var = pl.max_horizontal(var, 1.0 / (big_n * big_n))
    srs = r * (1.0 - r) / big_n
    deff = pl.when(srs > 0).then(var / srs).otherwise(1.0)
    tot = tot.with_columns(
        pl.when(big_n > 0).then(var.sqrt()).otherwise(None).alias(f"{name}_se"),
        pl.when(big_n > 0).then(deff).otherwise(None).alias(f"{name}_deff"),
    )
    lo, hi = wilson_pn(r, big_n / pl.col(f"{name}_deff"), z)
    return tot.with_columns(lo.alias(f"{name}_lo"), hi.alias(f"{name}_hi")).select(
        *keys, name, f"{name}_lo", f"{name}_hi", f"{name}_se", f"{name}_deff", f"{name}_deals"
    )


def ratio_by_deal(
    frame: pl.LazyFrame | pl.DataFrame,
    num: str | pl.Expr,
    den: str | pl.Expr,
    by: Sequence[str] = (),
    name: str = "value",
    z: float = Z95,
    stratum: str = DEAL_STRATUM,
    deal: str = DEAL,
) -> pl.LazyFrame:
    """A ratio of sums with its 95% interval, the deal as the unit.

    Input: any rows (seat rows, game rows, pair rows) carrying ``by``, the deal's table
    ``stratum`` (table_id) and ``deal``, and the numerator/denominator ``num``/``den``
    (columns or expressions). One output row per ``by`` group:

    - ``name = R = Σ_d y_d / Σ_d n_d``, where ``y_d``, ``n_d`` sum ``num``, ``den`` over
      the group's rows of deal d (every deal the group took part in, also those with
      ``n_d = 0``).
    - ``name_se``: the linearised (delta-method) standard error. With
      ``z_d = y_d - R n_d``, ``N = Σ n_d`` and tables h as strata (each table plays a
      fixed number of deals, so the spread between tables is design, not noise):
      ``var(R) = Σ_h D_h/(D_h - 1) Σ_{d in h} (z_d - mean_h z)² / N²`` (a table with one
      deal is not centred), never below ``1/N²`` (one deal one unit away from the rest).
    - ``name_deff``: the design effect ``var(R) / (R(1-R)/N)``, the variance against that
      of N independent games; 1 where ``R`` is 0 or 1 (no spread to measure).
    - ``name_lo``/``name_hi``: the Wilson score interval of ``R`` on the effective sample
      size ``N / deff``, so that it stays inside [0, 1] and is not empty where ``R`` is 0
      or 1 (there it is the plain Wilson interval on N games).
    - ``name_deals``: how many (table, deal) units the group has.

    Nulls where ``N = 0``. Returns a LazyFrame.
    """
    sums = deal_sums(frame, num, den, by, stratum, deal)
    return ratio_from_moments(deal_moments(sums, by, stratum), by, name, z)


def lincomb_by_deal(
    frame: pl.LazyFrame | pl.DataFrame,
    terms: Sequence[tuple[str | pl.Expr, str | pl.Expr, float]],
    by: Sequence[str] = (),
    name: str = "value",
    z: float = Z95,
    stratum: str = DEAL_STRATUM,
    deal: str = DEAL,
) -> pl.DataFrame:
    """A linear combination of ratios of sums, ``L = Σ_i w_i R_i``, the deal as the unit.

    ``terms`` are ``(num_i, den_i, w_i)``; ``R_i = Σ_d y_id / Σ_d n_id`` as in
    ``ratio_by_deal`` (IWD is ``[(gih_wins, gih, 1), (gns_wins, gns, -1)]``; a
    seat-balanced rate ``[(wins_first, n_first, .5), (wins_second, n_second, .5)]``).
    Linearised per deal, ``u_d = Σ_i w_i (y_id - R_i n_id) / N_i``, and
    ``var(L) = Σ_h D_h/(D_h-1) Σ_{d in h} (u_d - mean_h u)²``, tables h as strata.
    ``name_deff = var(L) / Σ_i w_i² R_i(1-R_i)/N_i`` (against independent binomial games;
    1 where that is 0). Interval and test: ``name_lo/_hi = L ± z·se`` with
    ``se = sqrt(deff · Σ_i w_i² p_i(1-p_i)/(N_i+2))``, ``p_i = (Y_i+1)/(N_i+2)`` (the
    Agresti-Caffo variance scaled by the design effect: equal to the linearised se as the
    counts grow, never 0 when a rate is 0 or 1), and ``name_p``, the two-sided normal
    p-value of ``L / se``. Null where some ``N_i = 0``. Returns a DataFrame.
    """
    keys = list(by)
    f = frame.lazy()
    if not keys:
        f = f.with_columns(pl.lit(0).alias("_all"))
        keys = ["_all"]
    cols = []
    for i, (num, den, _w) in enumerate(terms):
        cols += [_col(num).cast(pl.Float64).alias(f"_y{i}"),
                 _col(den).cast(pl.Float64).alias(f"_n{i}")]
    per = f.with_columns(cols).group_by(*keys, stratum, deal).agg(
        [pl.col(f"_{k}{i}").sum() for i in range(len(terms)) for k in ("y", "n")]
    ).collect()
    tot = per.group_by(keys).agg(
        [pl.col(f"_{k}{i}").sum().alias(f"_{k.upper()}{i}") for i in range(len(terms))
         for k in ("y", "n")] + [pl.len().cast(pl.Int64).alias(f"{name}_deals")]
    ).with_columns(
        [(pl.col(f"_Y{i}") / pl.col(f"_N{i}")).alias(f"_R{i}") for i in range(len(terms))]
    )
    ok = pl.all_horizontal([pl.col(f"_N{i}") > 0 for i in range(len(terms))])
    u = pl.sum_horizontal([
        w * (pl.col(f"_y{i}") - pl.col(f"_R{i}") * pl.col(f"_n{i}")) / pl.col(f"_N{i}")
        for i, (_a, _b, w) in enumerate(terms)
    ])
    per = per.join(tot, on=keys, how="left").with_columns(u.alias("_u"))
    strata = per.group_by(*keys, stratum).agg(
        pl.len().cast(pl.Float64).alias("d"), pl.col("_u").sum().alias("su"),
        (pl.col("_u") ** 2).sum().alias("suu"),
    )
    d = pl.col("d")
    ss = pl.when(d >= 2).then(d / (d - 1.0) * (pl.col("suu") - pl.col("su") ** 2 / d))
    var = strata.with_columns(ss.otherwise(pl.col("suu")).alias("_ss")).group_by(keys).agg(
        pl.col("_ss").sum().clip(0.0, None).alias("_var"))
    out = tot.join(var, on=keys, how="left")
    est = pl.sum_horizontal([w * pl.col(f"_R{i}") for i, (_a, _b, w) in enumerate(terms)])
    srs = pl.sum_horizontal([
        w * w * pl.col(f"_R{i}") * (1 - pl.col(f"_R{i}")) / pl.col(f"_N{i}")
        for i, (_a, _b, w) in enumerate(terms)
    ])
    ac = pl.sum_horizontal([
        w * w * ((pl.col(f"_Y{i}") + 1) / (pl.col(f"_N{i}") + 2))
        * (1 - (pl.col(f"_Y{i}") + 1) / (pl.col(f"_N{i}") + 2)) / (pl.col(f"_N{i}") + 2)
        for i, (_a, _b, w) in enumerate(terms)
    ])
    out = out.with_columns(
        pl.when(ok).then(est).otherwise(None).alias(name),
        pl.when(ok & (srs > 0)).then(pl.col("_var") / srs).when(ok).then(1.0)
        .otherwise(None).alias(f"{name}_deff"),
    ).with_columns((pl.col(f"{name}_deff") * ac).sqrt().alias(f"{name}_se"))
    se = pl.col(f"{name}_se")
    out = out.with_columns(
        (pl.col(name) - z * se).alias(f"{name}_lo"), (pl.col(name) + z * se).alias(f"{name}_hi"),
        pl.struct(name, f"{name}_se").map_elements(
            lambda s: None if s[name] is None or not s[f"{name}_se"]
            else two_sided_p(s[name] / s[f"{name}_se"]), return_dtype=pl.Float64,
        ).alias(f"{name}_p"),
    )
    cols = [name, f"{name}_lo", f"{name}_hi", f"{name}_se", f"{name}_p", f"{name}_deff",
            f"{name}_deals"]
    if by:
        return out.select(*keys, *cols).sort(keys)
    return out.select(cols)


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


def paired_gain(diff: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(gain, se) of paired per-deal differences ``diff`` (float[..., field, deals]: a
    subject's share of each deal minus its reference's on the same deal, both seat orders
    averaged), the field entries as strata weighted by ``weights``: the gain is the
    weighted mean over the field of each entry's mean over deals, its standard error
    sqrt(sum_f w_f^2 var_f / deals). The deal is the unit (its games share shuffles); the
    pairing removes what the two share, which is most of a small change's variance."""
    d = np.asarray(diff, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    w = w / w.sum()
    deals = d.shape[-1]
    gain = d.mean(axis=-1) @ w
    var = d.var(axis=-1, ddof=1) / deals if deals > 1 else np.full(d.shape[:-1], np.inf)
    return gain, np.sqrt(np.maximum(var @ (w * w), 1e-12))


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
