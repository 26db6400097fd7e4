"""Paired analysis of two runs on the same deals (common random numbers).

Two runs of ``rnr-sim compare`` play the same tables, deals, seat orders and seeds; game g
of the baseline and game g of the variant (same ``game_id``) start from the same
shuffles, so they differ only by the change. Every metric is therefore estimated on
*pairs*:

- **Unit.** The independent unit is a table's *deal*: the game(s) of deal k at table t,
  in every seat order. Units are independent draws (each game's streams come from
  (seed, table, deal, seat order)); the tables are strata, as in the report's intervals
  (``analytics.stats.ratio_by_deal``): what a deck does against one opponent rather than
  another is the design, not noise.
- **Metric.** Every metric is a ratio of sums, ``R = Σ_k a_k / Σ_k b_k`` (a deck's wins
  over its games; a path's wins over all wins; a card's wins when seen over the games it
  was seen...), or a difference of two (IWD).
- **Per-unit difference.** Each run's ratio is linearised per unit (the delta method):
  ``z_k = (a_k - R b_k) / mean(b)``, and the change ``D = R_variant - R_baseline`` has
  the per-unit difference ``d_k = z_k(variant) - z_k(baseline)``; where the denominator
  is fixed by the design (a deck's games), ``d_k`` is just the difference of the unit's
  win rates.
- **Interval.** ``var(D) = Σ_h D_h/(D_h - 1) Σ_{k in h} (d_k - mean_h d)² / n²`` (h the
  tables, ``D_h`` a table's units, n all units), and the 95% interval is
  ``D ± 1.96 se``; the p-value is the two-sided normal one of ``D / se``. These are
  quadratic forms in moments that add up part by part (``compare.fold``), so the analysis
  needs no per-unit table: its memory does not grow with the games.
  The normal interval needs many units that differ: where fewer than ``FEW_DEALS``
  units differ between the runs (a change that rarely touches the metric), it is replaced
  by a score interval on the discordant units (``score_interval``: Tango's score interval
  for a paired difference, the inversion of McNemar's test), which keeps its coverage down
  to no differing unit at all. Changes are flagged significant by Benjamini-Hochberg at 5%
  over every change tested.
- **Paths against the deck pool.** A path's share of all wins is also set against the
  deck-pool expectation (the share it would take if every deck won its fair share with
  its own mix of paths, ``analytics.paths.path_expectation``): ``expected_<path>`` and
  ``gap_<path>`` (share - expected) are weighted sums of per-deck ratios
  (``Combination``), linearised and paired over units in the same way.
- **Patched and moved.** A card the patch edits is *patched*; every other card's figures
  can move too (its deck meets the patched card, its games get longer...): those rows are
  *moved*, listed apart and never read as a change to that card.
- **Variance reduction.** Had the two runs used independent seeds, the difference would
  have variance ``var(z_variant) + var(z_baseline)`` (stratified as above); the ratio of that to the
  paired variance is the variance-reduction factor, and an unpaired comparison would
  need that many times the games for the same interval width.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations, permutations
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.stats import Z95, benjamini_hochberg, two_sided_p, wilson
from rnr_sim.compare.fold import (
    C_HELD,
    D_HELD,
    FEW_DEALS,
    N_PATHS,
    Family,
    Fold,
    Ratio,
    card_ratios,
    deck_ratios,
    fold,
    game_ratios,
    path_ratios,
    seat_ratios,
)
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



# ---------------------------------------------------------------------------- estimators


@dataclass
class Moments:
    """One block's moments (``fold.Family``): feature sums ``S``, within-table cross-products
    ``W``, the units ``n`` of the runs, and the discordant units of one metric (how many,
    and the features of the first ``FEW_DEALS``)."""

    S: np.ndarray
    W: np.ndarray
    n: int
    differ: int
    stash: np.ndarray

    @classmethod
    def of(cls, fam: Family, block: int, template: int, n: int) -> Moments:
        return cls(fam.S[block], fam.W[block], n, int(fam.differ[block, template]),
                   fam.stashed(block, template))

    @classmethod
    def from_units(cls, *features: np.ndarray) -> Moments:
        """The moments of per-unit features (a_b, b_b, a_v, b_v) in one stratum."""
        x = np.stack([np.asarray(f, dtype=np.float64) for f in features], axis=1)
        fam = Family(1, x.shape[1], [_unit_templates(x.shape[1])])
        fam.add(np.zeros(1, dtype=np.int64), x[None])
        fam.end_table(len(x))
        return cls.of(fam, 0, 0, len(x))

    def var(self, w: np.ndarray, w2: np.ndarray | None = None) -> float:
        """``var`` of the linearised estimate with per-unit weights ``w`` (its covariance
        with ``w2``): ``Σ_h c_h Σ_{u in h} (z_u - mean_h z)(z2_u - mean_h z2) / n²``."""
        return float(w @ self.W @ (w if w2 is None else w2)) / self.n ** 2


def _unit_templates(m: int) -> np.ndarray:
    """``from_units``' template: features (a_b, b_b, a_v, b_v): a unit differs where
    a_v != a_b or b_v != b_b."""
    r = Ratio.of(m, 0, 1, 2, 3)
    return r.differs()


def linearize(S: np.ndarray, a: np.ndarray, b: np.ndarray, n: int
              ) -> tuple[float, np.ndarray | None]:
    """``R = Σa / Σb`` and the per-unit weights of its linearisation
    ``z = (a - R b) / mean(b)`` (``var(R) ≈ var(z) / n``), as a vector over the block's
    features; ``(nan, None)`` when ``Σb = 0``."""
    total_b = float(S @ b)
    if total_b <= 0:
        return math.nan, None
    r = float(S @ a) / total_b
    return r, (a - r * b) / (total_b / n)


def discordant_parts(a_b: np.ndarray, b_b: np.ndarray, a_v: np.ndarray,
                     b_v: np.ndarray, n: int | None = None,
                     totals: tuple[float, float, float] | None = None) -> np.ndarray:
    """The change of ``R = Σa / Σb`` split over the units, zero on every unit that did not
    change: ``u_k = ((a_v - a_b) - R_b (b_v - b_b)) / mean(b_v)``, whose mean over all
    ``n`` units is exactly ``R_v - R_b`` (because ``Σ (a_b - R_b b_b) = 0``). ``totals``
    (``Σa_b``, ``Σb_b``, ``Σb_v`` over all units) when the arrays hold only some units."""
    n = len(a_b) if n is None else n
    sa, sb, sv = totals if totals is not None else (a_b.sum(), b_b.sum(), b_v.sum())
    r_b = float(sa) / float(sb)
    return ((a_v - a_b) - r_b * (b_v - b_b)) / (float(sv) / n)


@dataclass
class Estimate:
    """One metric in both runs: a ratio of sums (``Ratio``: coefficient vectors over one
    block's features), or the difference of two such ratios of the block (``minus``),
    with the block's moments."""

    kind: str
    subject: str
    metric: str
    mom: Moments
    ratio: Ratio
    minus: Ratio | None = None

    @classmethod
    def from_units(cls, kind: str, subject: str, metric: str, a_b: np.ndarray,
                   b_b: np.ndarray, a_v: np.ndarray, b_v: np.ndarray) -> Estimate:
        """The metric ``Σa / Σb`` from per-unit counts of one stratum (tests, checks)."""
        return cls(kind, subject, metric, Moments.from_units(a_b, b_b, a_v, b_v),
                   Ratio.of(4, 0, 1, 2, 3))

    def _side(self, r: Ratio, variant: bool) -> tuple[float, np.ndarray | None]:
        m = self.mom
        return linearize(m.S, r.a_v, r.b_v, m.n) if variant else \
            linearize(m.S, r.a_b, r.b_b, m.n)

    def value(self, variant: bool) -> tuple[float, np.ndarray | None]:
        """The metric in one run and its linearisation's weights (``nan, None`` if it has
        no value there)."""
        r, w = self._side(self.ratio, variant)
        if self.minus is None:
            return r, w
        r2, w2 = self._side(self.minus, variant)
        if w is None or w2 is None:
            return math.nan, None
        return r - r2, w - w2

    def counts(self) -> tuple[float, float]:
        """The denominators' totals in the baseline and the variant."""
        s = self.mom.S
        return float(s @ self.ratio.b_b), float(s @ self.ratio.b_v)

    def few_events(self) -> bool:
        """A plain ratio (not a difference) whose numerator, or what it leaves of the
        denominator, counts fewer than ``FEW_EVENTS`` in either run: a path a deck almost
        never wins by. Its normal interval is far too narrow there (of zero width when the
        numerator is 0 in both runs)."""
        if self.minus is not None or type(self) is not Estimate:
            return False
        s, r = self.mom.S, self.ratio
        a_b, a_v, b_b, b_v = s @ r.a_b, s @ r.a_v, s @ r.b_b, s @ r.b_v
        return min(a_b, a_v, b_b - a_b, b_v - a_v) < FEW_EVENTS

    def _parts(self, r: Ratio) -> np.ndarray | None:
        m = self.mom
        x, s = m.stash, m.S
        sb, sv = float(s @ r.b_b), float(s @ r.b_v)
        if sb <= 0 or sv <= 0:
            return None
        return discordant_parts(x @ r.a_b, x @ r.b_b, x @ r.a_v, x @ r.b_v, m.n,
                                (float(s @ r.a_b), sb, sv))

    def discordant(self) -> np.ndarray:
        """The change split over the differing units (``discordant_parts``); every other
        unit's part is 0."""
        u = self._parts(self.ratio)
        u = np.zeros(len(self.mom.stash)) if u is None else u
        if self.minus is not None:
            u2 = self._parts(self.minus)
            if u2 is not None:
                u = u - u2
        return u

    def row(self, z_crit: float) -> dict[str, Any]:
        rb, wb = self.value(False)
        rv, wv = self.value(True)
        mom, n = self.mom, self.mom.n
        nb, nv = self.counts()
        row: dict[str, Any] = dict.fromkeys(CHANGE_SCHEMA)
        row.update(kind=self.kind, subject=self.subject, metric=self.metric,
                   baseline=None if math.isnan(rb) else rb,
                   variant=None if math.isnan(rv) else rv, significant=False,
                   n_baseline=round(nb), n_variant=round(nv), role="")
        if wb is None or wv is None or n < 2:
            return row
        change = rv - rb
        d = wv - wb
        var_b, var_v = mom.var(wb), mom.var(wv)
        # no unit differs: d is 0 in every unit, whatever rounding leaves of d'Wd
        var_p = max(mom.var(d), 0.0) if mom.differ else 0.0
        var_u = var_b + var_v
        se, se_u = math.sqrt(max(var_p, 0.0)), math.sqrt(max(var_u, 0.0))
        differ = mom.differ
        if differ < FEW_DEALS:
            one_game = 1.0 / (nb / n)
            lo, hi, p = score_interval(self.discordant(), one_game, z_crit, n=n)
            method = "score"
        elif self.few_events():
            lo, hi = newcombe_paired(rb, rv, var_b, var_v, mom.var(wb, wv), nb, nv, z_crit)
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
    """A weighted sum of ratios of one block, ``Σ_t c_t · Σa_t / Σb_t``, in both runs: the
    deck-pool expectation of a path's share (``Σ_d w_d · mix_dp``) and the gap between a
    path's share and it. ``terms`` holds ``(c_t, ratio_t)``; a term whose denominator is
    zero in a run (a deck that never won) counts 0 there, as in
    ``analytics.paths.path_expectation``. The linearisation is ``Σ_t c_t z_t`` and the
    discordant parts ``Σ_t c_t u_t``. ``ratio`` is the path's own share (wins by the path
    over all wins): its sample sizes are the row's ``n`` and one win of a unit the score
    interval's unit."""

    terms: list[tuple[float, Ratio]] = field(default_factory=list)

    def value(self, variant: bool) -> tuple[float, np.ndarray | None]:
        total, w = 0.0, np.zeros(len(self.mom.S))
        for c, r in self.terms:
            rt, wt = self._side(r, variant)
            if wt is None:
                continue
            total += c * rt
            w = w + c * wt
        return total, w

    def discordant(self) -> np.ndarray:
        u = np.zeros(len(self.mom.stash))
        for c, r in self.terms:
            ut = self._parts(r)
            if ut is not None:
                u = u + c * ut
        return u


def newcombe_paired(rb: float, rv: float, var_b: float, var_v: float, cov: float, nb: float,
                    nv: float, z: float = Z95) -> tuple[float, float]:
    """Newcombe's interval for a paired difference of proportions (Newcombe 1998, method
    10), ``rv - rb``: each run's Wilson interval, on its effective sample size (the count
    of games its variance ``var_*`` is worth, ``r(1 - r) / var``; the plain count ``n*``
    where that variance is 0), joined with the correlation ``cov / sqrt(var_b var_v)`` of
    the runs' linearised terms. Never of zero width, and the normal paired interval again
    when counts are large."""

    def bounds(r: float, var: float, total: float) -> tuple[float, float]:
        n_eff = r * (1 - r) / var if var > 0 and 0 < r < 1 else total
        return wilson(r * n_eff, n_eff, z)

    lb, ub = bounds(rb, var_b, nb)
    lv, uv = bounds(rv, var_v, nv)
    phi = cov / math.sqrt(var_b * var_v) if var_b > 0 and var_v > 0 else 0.0
    d = rv - rb
    lo = d - math.sqrt(max((rv - lv) ** 2 - 2 * phi * (rv - lv) * (ub - rb) + (ub - rb) ** 2, 0.0))
    hi = d + math.sqrt(max((uv - rv) ** 2 - 2 * phi * (uv - rv) * (rb - lb) + (rb - lb) ** 2, 0.0))
    return lo, hi


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


def score_interval(u: np.ndarray, unit: float, z: float = Z95,
                   n: int | None = None) -> tuple[float, float, float]:
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
    n = float(len(u) if n is None else n)
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


def _estimates(acc: Fold) -> Iterator[Estimate]:
    """Every change, in report order, from the folded moments."""
    decks, players, n = acc.decks, acc.players, acc.units
    fam = acc.families

    def mom(name: str, block: int, template: int) -> Moments:
        return Moments.of(fam[name], block, template, n)

    held = fam["decks"].S[:, D_HELD]
    dr = deck_ratios()

    # decks: win rate
    for i, name in enumerate(decks):
        if held[i] > 0:
            yield Estimate("deck", name, "win_rate", mom("decks", i, 0), dr[0][1])

    # paths: overall share of the wins, and the draw rate; then each deck's shares
    for t, (metric, r) in enumerate(game_ratios()):
        yield Estimate("path", "all games", metric, mom("games", 0, t), r)
    for k in range(N_PATHS):
        for i, name in enumerate(decks):
            if held[i] > 0:
                metric, r = dr[1 + k]
                yield Estimate("path", name, metric, mom("decks", i, 1 + k), r)
    weight = held / held.sum() if held.sum() > 0 else held  # [deck]: fixed by the design
    share, by_deck = path_ratios(len(decks))
    for k, p in enumerate(WIN_PATHS):
        terms = [(float(weight[i]), by_deck[i]) for i in range(len(decks)) if weight[i] > 0]
        yield Combination("path", "all games", f"expected_{p}", mom("paths", k, 0), share,
                          terms=terms)
        yield Combination("path", "all games", f"gap_{p}", mom("paths", k, 1), share,
                          terms=[(1.0, share), *[(-c, r) for c, r in terms]])

    # seats: the first seat's win rate, overall and by the P2 right
    for t, (subject, r) in enumerate(seat_ratios()):
        yield Estimate("seat", subject, "first_win_rate", mom("seats", 0, t), r)

    # matchups: row deck's win rate in the games it met column deck
    meets = fam["meets"]
    pairs = combinations(range(len(decks)), 2) if players == 2 else \
        permutations(range(len(decks)), 2)
    r = Ratio.of(3, 1, 0, 2, 0)
    for i, j in pairs:
        b = i * len(decks) + j
        if meets.S[b, 0] > 0:
            yield Estimate("matchup", f"{decks[i]} vs {decks[j]}", "win_rate",
                           mom("meets", b, 0), r)

    # cards: over the decks that hold them
    cr = card_ratios()
    cards = fam["cards"]
    for k, card in enumerate(acc.cards):  # sorted by name
        if cards.S[k, C_HELD] <= 0:
            continue
        yield Estimate("card", card, "gih_wr", mom("cards", k, 0), cr["gih_wr"])
        yield Estimate("card", card, "played_wr", mom("cards", k, 1), cr["played_wr"])
        yield Estimate("card", card, "play_rate", mom("cards", k, 2), cr["play_rate"])
        yield Estimate("card", card, "iwd", mom("cards", k, 3), cr["gih_wr"],
                       minus=cr["gns_wr"])


# ---------------------------------------------------------------------------- entry point


#: A change smaller than this (0.1 points) ranks after every larger one, whatever its kind:
#: significant on many deals, too small to matter to a designer.
TINY = 0.001


def rank_changes(changes: pl.DataFrame) -> pl.DataFrame:
    """Changes of at least ``TINY`` first; among them kinds in ``KINDS`` order (the patched
    cards before the cards they moved), then the largest |change| first (no change last),
    ties by subject and metric."""
    order = {k: i for i, k in enumerate(KINDS)}
    return changes.with_columns(
        (pl.col("change").abs().fill_null(0.0) < TINY).alias("_tiny"),
        pl.col("kind").replace_strict(order, default=len(KINDS)).alias("_kind"),
        (pl.col("role") == "moved").alias("_moved"),
        pl.col("change").abs().fill_null(-1.0).alias("_size"),
    ).sort(["_tiny", "_kind", "_moved", "_size", "subject", "metric"],
           descending=[False, False, False, True, False, False]
           ).drop("_tiny", "_kind", "_moved", "_size")


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
    acc, mb, mv = fold(bdir, vdir)
    decks = acc.decks
    if mb.get("seed") != mv.get("seed"):
        raise InputError(f"{bdir} vs {vdir}: the runs used different seeds "
                         f"({mb.get('seed')} and {mv.get('seed')}): their deals differ")
    players = int(mb["players"])
    patched = patched_cards(bdir, vdir)
    sw_b = (mb.get("rules") or {}).get("switches") or {}
    sw_v = (mv.get("rules") or {}).get("switches") or {}
    rules_changed = {k: (sw_b.get(k), sw_v.get(k)) for k in sorted(set(sw_b) | set(sw_v))
                     if sw_b.get(k) != sw_v.get(k)}
    rows = [e.row(z) for e in _estimates(acc)]
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
    return Paired(baseline_dir=bdir, variant_dir=vdir, deals=acc.deals, games=acc.games,
                  players=players, decks=decks, changes=rank_changes(changes),
                  tests=int(np.isfinite(p).sum()), q=q, z=z, patched=patched,
                  rules_changed=rules_changed)
