"""Paired analysis of two runs on the same deals (common random numbers).

Two runs of ``rnr-sim compare`` play the same tables, deals, seat orders and seeds; game g
of the baseline and game g of the variant (same ``game_id``) start from the same
shuffles, so they differ only by the change. Every metric is therefore estimated on
*pairs*:

- **Unit.** The independent unit is the *deal* k: every table's game(s) of deal k, in
  every seat order. Deals are independent draws (each game's streams come from
  (seed, table, deal, seat order)), and every deal covers every table, so per-deal sums
  are i.i.d. and the run's design (which tables, which seat orders) is the same in each.
- **Metric.** Every metric is a ratio of sums, ``R = Σ_k a_k / Σ_k b_k`` (a deck's wins
  over its games; a path's wins over all wins; a card's wins when seen over the games it
  was seen...), or a difference of two (IWD).
- **Per-unit difference.** Each run's ratio is linearised per deal (the delta method):
  ``z_k = (a_k - R b_k) / mean(b)``, so that ``R`` has variance ``var(z) / n``. The
  change is ``D = R_variant - R_baseline`` and its per-deal difference is
  ``d_k = z_k(variant) - z_k(baseline)``; where the denominator is fixed by the design
  (a deck's games), ``d_k`` is just the difference of the deal's win rates.
- **Interval.** ``se(D) = sd(d) / sqrt(n)`` from the sample variance of ``d``, and the
  95% interval is ``D ± 1.96 se``; the p-value is the two-sided normal one of ``D / se``.
  That normal interval needs many deals that differ: where fewer than ``FEW_DEALS``
  deals differ between the runs (a change that rarely touches the metric), it is replaced
  by a score interval on the discordant deals (``score_interval``: Tango's score interval
  for a paired difference, the inversion of McNemar's test), which keeps its coverage down
  to no differing deal at all. Changes are flagged significant by Benjamini-Hochberg at 5%
  over every change tested.
- **Paths against the deck pool.** A path's share of all wins is also set against the
  deck-pool expectation (the share it would take if every deck won its fair share with
  its own mix of paths, ``analytics.paths.path_expectation``): ``expected_<path>`` and
  ``gap_<path>`` (share - expected) are weighted sums of per-deck ratios
  (``Combination``), linearised and paired over deals in the same way.
- **Patched and moved.** A card the patch edits is *patched*; every other card's figures
  can move too (its deck meets the patched card, its games get longer...): those rows are
  *moved*, listed apart and never read as a change to that card.
- **Variance reduction.** Had the two runs used independent seeds, the difference would
  have variance ``(var(z_variant) + var(z_baseline)) / n``; the ratio of that to the
  paired variance is the variance-reduction factor, and an unpaired comparison would
  need that many times the games for the same interval width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations, permutations
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim.analytics.cards import card_masks
from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.stats import Z95, benjamini_hochberg, two_sided_p, wilson
from rnr_sim.errors import InputError

#: Kinds of change, in the order the terminal and the report rank them.
KINDS = ("deck", "path", "seat", "matchup", "card")
#: Card metrics compared, with their labels.
CARD_METRICS = ("gih_wr", "played_wr", "play_rate", "iwd")
METRIC_LABELS = {
    "win_rate": "win rate",
    "first_win_rate": "first-seat win rate",
    "draw_rate": "draw rate",
    "gih_wr": "GIH WR",
    "played_wr": "played WR",
    "play_rate": "play rate",
    "iwd": "IWD",
    **{f"share_{p}": f"{p.replace('_', '-')} share of wins" for p in WIN_PATHS},
    **{f"expected_{p}": f"{p.replace('_', '-')} share expected from the deck pool"
       for p in WIN_PATHS},
    **{f"gap_{p}": f"{p.replace('_', '-')} share minus expected" for p in WIN_PATHS},
}
SEAT_SUBJECTS = ("all games", "P2 right used", "P2 right declined")

CHANGE_SCHEMA: dict[str, pl.DataType] = {
    "kind": pl.String,
    "subject": pl.String,
    "metric": pl.String,
    "baseline": pl.Float64,
    "variant": pl.Float64,
    "change": pl.Float64,
    "lo": pl.Float64,
    "hi": pl.Float64,
    "se": pl.Float64,
    "se_unpaired": pl.Float64,
    "lo_unpaired": pl.Float64,
    "hi_unpaired": pl.Float64,
    "vrf": pl.Float64,
    "p": pl.Float64,
    "significant": pl.Boolean,
    "n_baseline": pl.Int64,
    "n_variant": pl.Int64,
    "deals_differ": pl.Int64,
    "interval": pl.String,
    "role": pl.String,
}
#: Below this many deals that differ between the runs, intervals are score intervals.
FEW_DEALS = 40
#: A ratio whose numerator (or its complement) counts fewer events than this in either run
#: gets Newcombe's paired interval instead of the normal one (``newcombe_paired``).
FEW_EVENTS = 10


@dataclass
class Paired:
    """The paired comparison of two runs: every change and the design it was measured on."""

    baseline_dir: Path
    variant_dir: Path
    deals: int  # per table: the independent units
    games: int  # per run
    players: int
    decks: list[str]
    changes: pl.DataFrame  # CHANGE_SCHEMA, ranked (kind, then |change|)
    tests: int  # changes with a p-value (the Benjamini-Hochberg family)
    q: float = 0.05
    z: float = Z95
    extra: dict[str, Any] = field(default_factory=dict)
    #: card -> the fields the patch changed ("added", "removed" for whole cards)
    patched: dict[str, list[str]] = field(default_factory=dict)
    #: rules switch -> (baseline, variant)
    rules_changed: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def what_moved(self) -> str:
        """The change in a few words, for "moved by ...": the patched cards' fields and
        the rules switches."""
        parts = [f"{card} ({', '.join(f)})" for card, f in sorted(self.patched.items())]
        parts += [f"rules switch {k}" for k in sorted(self.rules_changed)]
        return "; ".join(parts) if parts else "the change"

    def of(self, kind: str, metric: str | None = None) -> pl.DataFrame:
        out = self.changes.filter(pl.col("kind") == kind)
        return out if metric is None else out.filter(pl.col("metric") == metric)

    @property
    def significant(self) -> pl.DataFrame:
        return self.changes.filter(pl.col("significant"))

    def variance_reduction(self) -> dict[str, Any]:
        """The variance-reduction factor over the decks' win rates: median, range, and the
        games per run an unpaired comparison would need for the same interval width."""
        v = self.of("deck", "win_rate")["vrf"].drop_nulls().drop_nans().to_numpy()
        if len(v) == 0:
            return {"median": None, "min": None, "max": None, "unpaired_games": None,
                    "note": "the runs do not differ on any deck's games: no variance to reduce"}
        med = float(np.median(v))
        return {"median": med, "min": float(v.min()), "max": float(v.max()),
                "unpaired_games": int(math.ceil(med * self.games)), "note": ""}


# ---------------------------------------------------------------------------- loading


@dataclass
class _Run:
    games: pl.DataFrame
    seat_deck: np.ndarray  # int [G, P], indices into decks
    won: np.ndarray  # bool [G, P]
    p2: np.ndarray  # bool [G, P]
    opening: np.ndarray  # uint64 [G, P]
    seen: np.ndarray
    played: np.ndarray
    decks_table: pl.DataFrame


def _load(run_dir: Path, decks: list[str] | None) -> tuple[_Run, list[str], dict[str, Any]]:
    from rnr_sim.analytics.run import check_parts
    from rnr_sim.runner import read_manifest, scan_table

    manifest = read_manifest(run_dir)
    check_parts(run_dir, manifest)  # a missing, extra or broken part: one line, exit 2
    games = scan_table(run_dir, "games").collect().sort("game_id")
    seats = scan_table(run_dir, "seats").select(
        "game_id", "seat", "deck", "won", "p2_right", "opening_mask", "drawn_mask",
        "played_mask").collect().sort("game_id", "seat")
    try:
        decks_table = pl.read_parquet(run_dir / "decks.parquet")
    except OSError as e:
        raise InputError(f"{run_dir}: cannot read decks.parquet ({e})") from None
    g = games.height
    p = int(manifest["players"])
    if seats.height != g * p:
        raise InputError(f"{run_dir}: {seats.height} seat rows for {g} games of {p} players")
    if decks is None:
        decks = [d["name"] for d in manifest["decks"]]
    index = {d: i for i, d in enumerate(decks)}
    names = seats["deck"].to_list()
    try:
        deck_idx = np.array([index[n] for n in names], dtype=np.int64).reshape(g, p)
    except KeyError as e:
        raise InputError(f"{run_dir}: deck {e} is not in the other run") from None

    def col(name: str, dtype) -> np.ndarray:
        return seats[name].to_numpy().astype(dtype, copy=False).reshape(g, p)

    opening = col("opening_mask", np.uint64)
    run = _Run(games=games, seat_deck=deck_idx, won=col("won", bool), p2=col("p2_right", bool),
               opening=opening, seen=opening | col("drawn_mask", np.uint64),
               played=col("played_mask", np.uint64), decks_table=decks_table)
    return run, decks, manifest


def _check_same_deals(b: _Run, v: _Run, where: str) -> None:
    for c in ("game_id", "table_id", "deal", "first_seat"):
        if b.games.height != v.games.height or not b.games[c].equals(v.games[c]):
            raise InputError(f"{where}: the two runs did not play the same games ('{c}' "
                             "differs): a paired comparison needs the same tables, deals, "
                             "seat orders and seed")
    if not np.array_equal(b.seat_deck, v.seat_deck):
        raise InputError(f"{where}: the two runs seat different decks in the same games")
    keys = ["deck", "slot", "card"]
    if not b.decks_table.sort(keys).equals(v.decks_table.sort(keys)):
        raise InputError(f"{where}: the two runs' deck lists differ")


# ---------------------------------------------------------------------------- estimators


def unit_sums(unit: np.ndarray, weights: np.ndarray, n_units: int) -> np.ndarray:
    """Per-unit sums of ``weights`` (1-D), as float64[n_units]."""
    return np.bincount(unit, weights=np.asarray(weights, dtype=np.float64), minlength=n_units)


def unit_sums_2d(unit: np.ndarray, flags: np.ndarray, n_units: int) -> np.ndarray:
    """Per-unit column sums of a boolean matrix ``flags`` [rows, k]: float64[n_units, k]."""
    rows, cols = np.nonzero(flags)
    k = flags.shape[1]
    counts = np.bincount(unit[rows] * k + cols, minlength=n_units * k)
    return counts.reshape(n_units, k).astype(np.float64)


def linearize(a: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray | None]:
    """``R = Σa / Σb`` and its per-unit linearisation ``z = (a - R b) / mean(b)``
    (``var(R) ≈ var(z) / n``); ``(nan, None)`` when ``Σb = 0``."""
    total_b = float(b.sum())
    if total_b <= 0:
        return math.nan, None
    r = float(a.sum()) / total_b
    return r, (a - r * b) / (total_b / len(b))


@dataclass
class Estimate:
    """One metric in both runs: per-unit (numerator, denominator) sums, or the difference
    of two such ratios (``minus``)."""

    kind: str
    subject: str
    metric: str
    a_b: np.ndarray
    b_b: np.ndarray
    a_v: np.ndarray
    b_v: np.ndarray
    minus: Estimate | None = None

    def parts(self, a: np.ndarray, b: np.ndarray, other: tuple[np.ndarray, np.ndarray] | None):
        r, z = linearize(a, b)
        if other is not None:
            r2, z2 = linearize(*other)
            if z is None or z2 is None:
                return math.nan, None
            return r - r2, z - z2
        return r, z

    def deals_differ(self) -> int:
        """Deals whose sums differ between the two runs (the discordant deals)."""
        diff = (self.a_b != self.a_v) | (self.b_b != self.b_v)
        if self.minus is not None:
            m = self.minus
            diff |= (m.a_b != m.a_v) | (m.b_b != m.b_v)
        return int(diff.sum())

    def few_events(self) -> bool:
        """A plain ratio (not a difference) whose numerator, or what it leaves of the
        denominator, counts fewer than ``FEW_EVENTS`` in either run: a path a deck almost
        never wins by. Its normal interval is far too narrow there (of zero width when the
        numerator is 0 in both runs)."""
        if self.minus is not None or type(self) is not Estimate:
            return False
        counts = (self.a_b.sum(), self.a_v.sum(), self.b_b.sum() - self.a_b.sum(),
                  self.b_v.sum() - self.a_v.sum())
        return min(counts) < FEW_EVENTS

    def value(self, variant: bool) -> tuple[float, np.ndarray | None]:
        """The metric in one run and its per-deal linearisation (``nan, None`` if it has
        no value there)."""
        m = self.minus
        if variant:
            return self.parts(self.a_v, self.b_v, None if m is None else (m.a_v, m.b_v))
        return self.parts(self.a_b, self.b_b, None if m is None else (m.a_b, m.b_b))

    def discordant(self) -> np.ndarray:
        """The change split over the deals, zero on every deal that did not change
        (``discordant_parts``)."""
        u = discordant_parts(self.a_b, self.b_b, self.a_v, self.b_v)
        m = self.minus
        if m is not None:
            u = u - discordant_parts(m.a_b, m.b_b, m.a_v, m.b_v)
        return u

    def row(self, z_crit: float) -> dict[str, Any]:
        rb, zb = self.value(False)
        rv, zv = self.value(True)
        n = len(self.a_b)
        row: dict[str, Any] = dict.fromkeys(CHANGE_SCHEMA)
        row.update(kind=self.kind, subject=self.subject, metric=self.metric,
                   baseline=None if math.isnan(rb) else rb,
                   variant=None if math.isnan(rv) else rv, significant=False,
                   n_baseline=int(self.b_b.sum()), n_variant=int(self.b_v.sum()), role="")
        if zb is None or zv is None or n < 2:
            return row
        change = rv - rb
        d = zv - zb
        var_p = float(np.var(d, ddof=1)) / n
        var_u = (float(np.var(zv, ddof=1)) + float(np.var(zb, ddof=1))) / n
        se, se_u = math.sqrt(max(var_p, 0.0)), math.sqrt(max(var_u, 0.0))
        differ = self.deals_differ()
        if differ < FEW_DEALS:
            one_game = 1.0 / float(self.b_b.mean())
            lo, hi, p = score_interval(self.discordant(), one_game, z_crit)
            method = "score"
        elif self.few_events():
            lo, hi = newcombe_paired(rb, rv, zb, zv, self.b_b.sum(), self.b_v.sum(), z_crit)
            p = two_sided_p(change / se) if se > 0 else (1.0 if abs(change) < 1e-12 else 0.0)
            method = "newcombe"
        else:
            lo, hi = change - z_crit * se, change + z_crit * se
            if se > 0:
                p = two_sided_p(change / se)
            else:
                p = 1.0 if abs(change) < 1e-12 else 0.0
            method = "normal"
        row.update(change=change, lo=lo, hi=hi, se=se,
                   se_unpaired=se_u, lo_unpaired=change - z_crit * se_u,
                   hi_unpaired=change + z_crit * se_u,
                   vrf=var_u / var_p if var_p > 0 else None, p=p, deals_differ=differ,
                   interval=method)
        return row


@dataclass
class Combination(Estimate):
    """A weighted sum of ratios, ``Σ_t c_t · Σa_t / Σb_t``, in both runs: the deck-pool
    expectation of a path's share (``Σ_d w_d · mix_dp``) and the gap between a path's
    share and it. ``terms`` holds ``(c_t, a_b, b_b, a_v, b_v)``; a term whose denominator
    is zero in a run (a deck that never won) counts 0 there, as in
    ``analytics.paths.path_expectation``. The linearisation is ``Σ_t c_t z_t`` and the
    discordant parts ``Σ_t c_t u_t``. ``a_b``/``b_b``/``a_v``/``b_v`` hold the path's own
    share (wins by the path over all wins): its sample sizes are the row's ``n`` and one
    win of a deal the score interval's unit."""

    terms: list[tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=list)

    def value(self, variant: bool) -> tuple[float, np.ndarray | None]:
        total, z = 0.0, np.zeros(len(self.a_b))
        for c, a_b, b_b, a_v, b_v in self.terms:
            r, zt = linearize(a_v, b_v) if variant else linearize(a_b, b_b)
            if zt is None:
                continue
            total += c * r
            z = z + c * zt
        return total, z

    def deals_differ(self) -> int:
        diff = np.zeros(len(self.a_b), dtype=bool)
        for _, a_b, b_b, a_v, b_v in self.terms:
            diff |= (a_b != a_v) | (b_b != b_v)
        return int(diff.sum())

    def discordant(self) -> np.ndarray:
        u = np.zeros(len(self.a_b))
        for c, a_b, b_b, a_v, b_v in self.terms:
            if b_b.sum() > 0 and b_v.sum() > 0:
                u = u + c * discordant_parts(a_b, b_b, a_v, b_v)
        return u


def newcombe_paired(rb: float, rv: float, zb: np.ndarray, zv: np.ndarray, nb: float,
                    nv: float, z: float = Z95) -> tuple[float, float]:
    """Newcombe's interval for a paired difference of proportions (Newcombe 1998, method
    10), ``rv - rb``: each run's Wilson interval, on its effective sample size (the count
    of games its per-deal variance is worth, ``r(1 - r) / se²``; the plain count where
    that variance is 0), joined with the correlation of the runs' per-deal terms. Never of
    zero width, and the normal paired interval again when counts are large."""
    n = len(zb)

    def bounds(r: float, zz: np.ndarray, total: float) -> tuple[float, float]:
        var = float(np.var(zz, ddof=1)) / n if n > 1 else 0.0
        n_eff = r * (1 - r) / var if var > 0 and 0 < r < 1 else total
        return wilson(r * n_eff, n_eff, z)

    lb, ub = bounds(rb, zb, nb)
    lv, uv = bounds(rv, zv, nv)
    sb, sv = float(np.std(zb)), float(np.std(zv))
    phi = float(np.mean((zb - zb.mean()) * (zv - zv.mean())) / (sb * sv)) if sb > 0 and sv > 0 \
        else 0.0
    d = rv - rb
    lo = d - math.sqrt(max((rv - lv) ** 2 - 2 * phi * (rv - lv) * (ub - rb) + (ub - rb) ** 2, 0.0))
    hi = d + math.sqrt(max((uv - rv) ** 2 - 2 * phi * (uv - rv) * (rb - lb) + (rb - lb) ** 2, 0.0))
    return lo, hi


def discordant_parts(a_b: np.ndarray, b_b: np.ndarray, a_v: np.ndarray,
                     b_v: np.ndarray) -> np.ndarray:
    """The change of ``R = Σa / Σb`` split over the deals, zero on every deal that did not
    change: ``u_k = ((a_v - a_b) - R_b (b_v - b_b)) / mean(b_v)``, whose mean is exactly
    ``R_v - R_b`` (because ``Σ (a_b - R_b b_b) = 0``)."""
    r_b = float(a_b.sum()) / float(b_b.sum())
    return ((a_v - a_b) - r_b * (b_v - b_b)) / float(b_v.mean())


def _tango_stat(b: float, c: float, n: float, delta: float) -> float:
    """Tango's score statistic for a paired difference ``delta = p+ - p-`` of a trinomial
    (``b`` units up, ``c`` down, the rest unchanged, of ``n``): ``(b - c - n delta) /
    sqrt(n (2 q + delta (1 - delta)))``, ``q`` the constrained MLE of ``p-`` (Tango 1998)."""
    w = -(b + c) + (2.0 * n - b + c) * delta
    q = (-w + math.sqrt(max(w * w + 8.0 * n * c * delta * (1.0 - delta), 0.0))) / (4.0 * n)
    q = min(max(q, 0.0), 1.0)
    var = n * (2.0 * q + delta * (1.0 - delta))
    num = b - c - n * delta
    if var <= 1e-300:
        return math.copysign(math.inf, num) if num else 0.0
    return num / math.sqrt(var)


def score_interval(u: np.ndarray, unit: float, z: float = Z95) -> tuple[float, float, float]:
    """A 95% interval and p-value for ``mean(u)`` that holds its coverage when few of the
    ``u`` (per-deal differences, variant - baseline) are not zero.

    Each deal is scaled by ``s = Σu² / Σ|u|`` (so that the trinomial below has the
    deals' own second moment: ``(b + c) s² = Σu²``; ``unit`` -- one game -- when no deal
    differs) to a trinomial: ``b = Σ max(u, 0) / s`` deals up, ``c = Σ max(-u, 0) / s``
    down, of ``n`` (``b + c`` is at most the number of differing deals). The interval is ``s`` times Tango's score interval for ``p+ - p-``
    (the Δ whose score statistic is within ±z; found by bisection), and the p-value is
    McNemar's, ``(b - c) / sqrt(b + c)``. With no differing deal it is ``±s z²/(n + z²)``
    around 0 (the Wilson bound at zero), not the empty interval [0, 0].
    """
    n = float(len(u))
    mass = float(np.abs(u).sum())
    s = float((u * u).sum()) / mass if mass > 1e-15 else unit
    b = float(np.clip(u, 0, None).sum()) / s
    c = float(np.clip(-u, 0, None).sum()) / s
    est = (b - c) / n

    def solve(target: float, lo: float, hi: float) -> float:
        # _tango_stat falls as delta rises; find where it crosses ``target``
        for _ in range(80):
            mid = (lo + hi) / 2.0
            if _tango_stat(b, c, n, mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2.0

    lo = solve(z, -1.0, est)
    hi = solve(-z, est, 1.0)
    p = 1.0 if b + c <= 0 else two_sided_p((b - c) / math.sqrt(b + c))
    return s * lo, s * hi, p


# ---------------------------------------------------------------------------- the metrics


def _estimates(b: _Run, v: _Run, decks: list[str], players: int) -> list[Estimate]:
    deal = b.games["deal"].to_numpy()
    deals, unit = np.unique(deal, return_inverse=True)
    n = len(deals)
    n_decks = len(decks)
    seat_deck = b.seat_deck  # the same in both runs
    seat_unit = np.repeat(unit, players)
    flat_deck = seat_deck.ravel()
    out: list[Estimate] = []

    def per_deck(values_b: np.ndarray, values_v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key = flat_deck * n + seat_unit
        size = n_decks * n
        return (np.bincount(key, weights=values_b.ravel().astype(np.float64),
                            minlength=size).reshape(n_decks, n),
                np.bincount(key, weights=values_v.ravel().astype(np.float64),
                            minlength=size).reshape(n_decks, n))

    ones = np.ones_like(b.won, dtype=np.float64)
    held, _ = per_deck(ones, ones)
    wins_b, wins_v = per_deck(b.won, v.won)
    path_b = b.games["path"].to_numpy()
    path_v = v.games["path"].to_numpy()

    # decks: win rate
    for i, name in enumerate(decks):
        if held[i].sum() > 0:
            out.append(Estimate("deck", name, "win_rate", wins_b[i], held[i], wins_v[i], held[i]))

    # paths: overall share of the wins, and the draw rate; then each deck's shares
    dec_b = b.games["winner_seat"].to_numpy() >= 0
    dec_v = v.games["winner_seat"].to_numpy() >= 0
    all_games = np.ones(len(deal))
    for p in WIN_PATHS:
        out.append(Estimate(
            "path", "all games", f"share_{p}",
            unit_sums(unit, dec_b & (path_b == p), n), unit_sums(unit, dec_b, n),
            unit_sums(unit, dec_v & (path_v == p), n), unit_sums(unit, dec_v, n)))
    out.append(Estimate("path", "all games", "draw_rate",
                        unit_sums(unit, ~dec_b, n), unit_sums(unit, all_games, n),
                        unit_sums(unit, ~dec_v, n), unit_sums(unit, all_games, n)))
    by_deck = {}
    for p in WIN_PATHS:
        pb, pv = per_deck(b.won & (path_b == p)[:, None], v.won & (path_v == p)[:, None])
        by_deck[p] = (pb, pv)
        for i, name in enumerate(decks):
            if held[i].sum() > 0:
                out.append(Estimate("path", name, f"share_{p}", pb[i], wins_b[i], pv[i],
                                    wins_v[i]))
    out += _path_expectations(by_deck, wins_b, wins_v, held, unit, n, dec_b, dec_v,
                              path_b, path_v)

    # seats: the first seat's win rate, overall and by the P2 right
    first = b.games["first_seat"].to_numpy()
    fw_b = b.games["winner_seat"].to_numpy() == first
    fw_v = v.games["winner_seat"].to_numpy() == first
    used_b, used_v = b.p2.any(axis=1), v.p2.any(axis=1)
    for subject, mb, mv in (("all games", np.ones(len(deal), bool), np.ones(len(deal), bool)),
                            ("P2 right used", used_b, used_v),
                            ("P2 right declined", ~used_b, ~used_v)):
        out.append(Estimate("seat", subject, "first_win_rate",
                            unit_sums(unit, fw_b & mb, n), unit_sums(unit, mb, n),
                            unit_sums(unit, fw_v & mv, n), unit_sums(unit, mv, n)))

    # matchups: row deck's win rate in the games it met column deck
    present = np.zeros((len(deal), n_decks), dtype=bool)
    np.put_along_axis(present, seat_deck, True, axis=1)
    pairs = combinations(range(n_decks), 2) if players == 2 else permutations(range(n_decks), 2)
    for i, j in pairs:
        games_ij = present[:, i] & present[:, j]
        if not games_ij.any():
            continue
        rows = (seat_deck == i) & games_ij[:, None]
        out.append(Estimate(
            "matchup", f"{decks[i]} vs {decks[j]}", "win_rate",
            unit_sums(seat_unit, (b.won & rows).ravel(), n), unit_sums(seat_unit, rows.ravel(), n),
            unit_sums(seat_unit, (v.won & rows).ravel(), n), unit_sums(seat_unit, rows.ravel(), n)))

    out += _card_estimates(b, v, decks, unit, n)
    return out


def _path_expectations(by_deck: dict[str, tuple[np.ndarray, np.ndarray]],
                       wins_b: np.ndarray, wins_v: np.ndarray, held: np.ndarray,
                       unit: np.ndarray, n: int, dec_b: np.ndarray, dec_v: np.ndarray,
                       path_b: np.ndarray, path_v: np.ndarray) -> list[Estimate]:
    """Per path, over all games: ``expected_<path>``, the share of the wins the path would
    take if every deck won its fair share with its own mix of paths (the deck-pool
    expectation, ``analytics.paths.path_expectation``: ``Σ_d w_d · wins_dp / wins_d``,
    ``w_d`` the deck's share of the seats, fixed by the design), and ``gap_<path>`` =
    share − expected (positive: the decks that win by the path win more than their
    share). Both paired over deals like every other change."""
    weight = held.sum(axis=1) / held.sum()  # [deck]: the same seats in both runs
    out: list[Estimate] = []
    for p in WIN_PATHS:
        pb, pv = by_deck[p]
        share = (unit_sums(unit, dec_b & (path_b == p), n), unit_sums(unit, dec_b, n),
                 unit_sums(unit, dec_v & (path_v == p), n), unit_sums(unit, dec_v, n))
        decks = [(float(weight[i]), pb[i], wins_b[i], pv[i], wins_v[i])
                 for i in range(len(weight)) if weight[i] > 0]
        out.append(Combination("path", "all games", f"expected_{p}", *share, terms=decks))
        out.append(Combination("path", "all games", f"gap_{p}", *share,
                               terms=[(1.0, *share), *[(-w, *t) for w, *t in decks]]))
    return out


def _card_estimates(b: _Run, v: _Run, decks: list[str], unit: np.ndarray,
                    n: int) -> list[Estimate]:
    """GIH WR, played WR, play rate and IWD per card, over the decks that hold it."""
    masks = card_masks(b.decks_table)
    index = {d: i for i, d in enumerate(decks)}
    names = ("gih", "gih_wins", "played", "played_wins", "held", "held_wins")
    sums: dict[str, dict[str, list[np.ndarray]]] = {}  # card -> count -> [baseline, variant]
    players = b.seat_deck.shape[1]
    seat_unit = np.repeat(unit, players)
    for (deck,), cards in masks.partition_by("deck", as_dict=True, maintain_order=True).items():
        if deck not in index:
            continue
        rows = (b.seat_deck == index[deck]).ravel()
        if not rows.any():
            continue
        u = seat_unit[rows]
        m = cards["mask"].to_numpy().astype(np.uint64)
        per_run = []
        for run in (b, v):
            won = run.won.ravel()[rows]
            seen = (run.seen.ravel()[rows][:, None] & m[None, :]) != 0
            played = (run.played.ravel()[rows][:, None] & m[None, :]) != 0
            held = np.ones((len(u), 1), dtype=bool)
            per_run.append({
                "gih": unit_sums_2d(u, seen, n),
                "gih_wins": unit_sums_2d(u, seen & won[:, None], n),
                "played": unit_sums_2d(u, played, n),
                "played_wins": unit_sums_2d(u, played & won[:, None], n),
                "held": np.repeat(unit_sums_2d(u, held, n), len(m), axis=1),
                "held_wins": np.repeat(unit_sums_2d(u, won[:, None], n), len(m), axis=1),
            })
        for k, card in enumerate(cards["card"].to_list()):
            acc = sums.setdefault(card, {c: [np.zeros(n), np.zeros(n)] for c in names})
            for c in names:
                acc[c][0] += per_run[0][c][:, k]
                acc[c][1] += per_run[1][c][:, k]
    out: list[Estimate] = []
    for card in sorted(sums):
        s = sums[card]

        def est(metric: str, a: str, d: str, card: str = card, s=s) -> Estimate:
            return Estimate("card", card, metric, s[a][0], s[d][0], s[a][1], s[d][1])

        gns = {c: [s[f"held{w}"][r] - s[f"gih{w}"][r] for r in (0, 1)]
               for c, w in (("gns", ""), ("gns_wins", "_wins"))}
        gns_est = Estimate("card", card, "gns_wr", gns["gns_wins"][0], gns["gns"][0],
                           gns["gns_wins"][1], gns["gns"][1])
        iwd = est("iwd", "gih_wins", "gih")
        iwd.minus = gns_est
        out += [est("gih_wr", "gih_wins", "gih"), est("played_wr", "played_wins", "played"),
                est("play_rate", "played", "held"), iwd]
    return out


# ---------------------------------------------------------------------------- entry point


def rank_changes(changes: pl.DataFrame) -> pl.DataFrame:
    """Kinds in ``KINDS`` order (the patched cards before the cards they moved), then the
    largest |change| first (no change last), ties by subject and metric."""
    order = {k: i for i, k in enumerate(KINDS)}
    return changes.with_columns(
        pl.col("kind").replace_strict(order, default=len(KINDS)).alias("_kind"),
        (pl.col("role") == "moved").alias("_moved"),
        pl.col("change").abs().fill_null(-1.0).alias("_size"),
    ).sort(["_kind", "_moved", "_size", "subject", "metric"],
           descending=[False, False, True, False, False]).drop("_kind", "_moved", "_size")


def patched_cards(baseline_dir: Path, variant_dir: Path) -> dict[str, list[str]]:
    """The cards whose catalog rows differ between the runs (cards.parquet), with the
    fields that differ; a card in one catalog only is "added" or "removed"."""
    try:
        cb = pl.read_parquet(baseline_dir / "cards.parquet")
        cv = pl.read_parquet(variant_dir / "cards.parquet")
    except Exception as e:  # unreadable catalogs: report nothing as patched
        raise InputError(f"{baseline_dir} vs {variant_dir}: cannot read cards.parquet "
                         f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    fields = [c for c in cb.columns if c in cv.columns and c not in ("id", "name")]
    rows_b = {r["name"]: r for r in cb.iter_rows(named=True)}
    rows_v = {r["name"]: r for r in cv.iter_rows(named=True)}
    out: dict[str, list[str]] = {}
    for name in sorted(set(rows_b) | set(rows_v)):
        if name not in rows_v:
            out[name] = ["removed"]
        elif name not in rows_b:
            out[name] = ["added"]
        else:
            diff = [f for f in fields if rows_b[name][f] != rows_v[name][f]]
            if diff:
                out[name] = diff
    return out


def compare_runs(baseline_dir: str | Path, variant_dir: str | Path, q: float = 0.05,
                 z: float = Z95) -> Paired:
    """The paired comparison of two run dirs that played the same games.

    Raises ``InputError`` if they did not (different tables, deals, seat orders, decks).
    """
    bdir, vdir = Path(baseline_dir), Path(variant_dir)
    b, decks, mb = _load(bdir, None)
    v, _, mv = _load(vdir, decks)
    _check_same_deals(b, v, f"{bdir} vs {vdir}")
    if mb.get("seed") != mv.get("seed"):
        raise InputError(f"{bdir} vs {vdir}: the runs used different seeds "
                         f"({mb.get('seed')} and {mv.get('seed')}): their deals differ")
    players = int(mb["players"])
    patched = patched_cards(bdir, vdir)
    sw_b = (mb.get("rules") or {}).get("switches") or {}
    sw_v = (mv.get("rules") or {}).get("switches") or {}
    rules_changed = {k: (sw_b.get(k), sw_v.get(k)) for k in sorted(set(sw_b) | set(sw_v))
                     if sw_b.get(k) != sw_v.get(k)}
    estimates = _estimates(b, v, decks, players)
    rows = [e.row(z) for e in estimates]
    for r in rows:
        if r["kind"] == "card":
            r["role"] = "patched" if r["subject"] in patched else "moved"
    # a metric with no games in either run (a UA is never seen) is not a change
    rows = [r for r in rows if r["baseline"] is not None or r["variant"] is not None]
    changes = pl.DataFrame(rows, schema=CHANGE_SCHEMA, orient="row")
    p = changes["p"].to_numpy().astype(np.float64)
    p = np.where(np.isnan(p), np.nan, p)
    flags = benjamini_hochberg(p, q)
    changes = changes.with_columns(pl.Series("significant", flags.tolist(), dtype=pl.Boolean))
    deals = int(b.games["deal"].n_unique())
    return Paired(baseline_dir=bdir, variant_dir=vdir, deals=deals, games=b.games.height,
                  players=players, decks=decks, changes=rank_changes(changes),
                  tests=int(np.isfinite(p).sum()), q=q, z=z, patched=patched,
                  rules_changed=rules_changed)
