"""The metagame's figures a target is about, from the games of its decks, with intervals.

The games are pairs of the metagame's decks (``Games``: deck ``a`` in seat 0, ``b`` in
seat 1), each on the same deals in every seat order. The figures, each deck weighted by
the metagame's mix ``w`` (equal for a field of decks, without mirror matches, as
``compare`` plays them; the equilibrium mix of a discovery, with mirror matches: a
metagame of mixes meets itself, and its equilibrium may play one deck alone):

- **deck win rate** of deck i: its wins over its games against the other decks, each
  opponent j weighted by ``w_j`` (equal weights: ``compare``'s and the report's deck win
  rate; a draw is not a win);
- **path share**: the wins by a victory path over all wins, each pair of decks weighted by
  ``w_a w_b`` (equal weights: ``compare``'s share of wins);
- **first seat**: the first seat's wins over the games, pairs weighted the same way;
- **support**: the decks the equilibrium of the win-share matrix (a draw half a win) plays
  at least ``SUPPORT_MIN`` of the time;
- **IWD** of a watched card (``iwd``, with an ``iwd_max`` target): the report's adjusted
  IWD on these games;
- **entry gap** of a deck outside the support: how much its win share (a draw half)
  against the equilibrium mix falls short of the game's value, one half: how much the
  support's decks must lose against it before the equilibrium admits it. A continuous
  measure where the support count is a step (docs/design.md, "Balance objective").

An **adaptive** metagame (a discovery's: its mix is an equilibrium, and players move with
it) weights the figures by the equilibrium of the games measured, not by the mix given:
a patch that admits a second deck to the equilibrium changes the weights its path and
seat figures are judged under. Those figures are flat until the equilibrium moves, so a
missed path target adds the entry gap of the nearest deck outside the support whose own
wins (``deck_paths``) meet the band's missed side: the gradient toward a metagame that
meets it.

Intervals: every figure but the support is a ratio ``R = Σ c a / Σ c b`` over units (a
pair's deal: its games in every seat order), linearised per unit (``z = c (a - R b) /
mean(c b)``) with the pairs as strata, the deal the unit (docs/statistics.md); a paired
change (two catalogs on the same deals) is the same form over ``z_variant - z_baseline``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rnr_sim import enums
from rnr_sim.analytics.stats import Z95, nash_equilibrium
from rnr_sim.balance.targets import Targets
from rnr_sim.runs.schema import WIN_PATHS

SUPPORT_MIN = 0.01  # a deck the equilibrium plays at least 1% of the time
#: The least one deck missing from the equilibrium's support adds to the distance (a
#: tenth of a point): a deck whose entry gap is 0 but that the mix plays less than
#: ``SUPPORT_MIN`` still misses the target.
SUPPORT_FLOOR = 0.001
_PATH_CODE = {p: i for i, p in enumerate(enums.PATHS)}


@dataclass
class Games:
    """Games of pairs of metagame decks: ``pairs[p] = (a, b)`` (a in seat 0), and per pair,
    deal and seat order ``winner`` (0: a won, 1: b won, -1: a draw) and ``path``
    (``enums.PATHS`` index). Seat order r: seat r moves first. With an ``iwd_max`` target
    also ``turns`` (the game's length) and ``seen`` (uint64[P, D, R, 2], each seat's deck
    slots seen: opening hand or drawn), what a card's adjusted IWD needs (``iwd``)."""

    pairs: np.ndarray  # int64[P, 2]
    winner: np.ndarray  # int8[P, D, R]
    path: np.ndarray  # int8[P, D, R]
    turns: np.ndarray | None = None  # int32[P, D, R]
    seen: np.ndarray | None = None  # uint64[P, D, R, 2]

    @property
    def deals(self) -> int:
        return int(self.winner.shape[1])

    @classmethod
    def of_outcome(cls, outcome, subjects: np.ndarray, field: np.ndarray,
                   mirrors: bool = False) -> Games:
        """An ``evaluation.Outcome`` of subjects x field (the subject in seat 0): every
        pair, a deck against itself only with ``mirrors``."""
        s_idx, f_idx = np.meshgrid(np.arange(len(subjects)), np.arange(len(field)),
                                   indexing="ij")
        keep = mirrors | (subjects[s_idx.ravel()] != field[f_idx.ravel()])
        si, fi = s_idx.ravel()[keep], f_idx.ravel()[keep]
        score = outcome.score[si, fi]
        winner = np.where(score == 1.0, 0, np.where(score == 0.0, 1, -1)).astype(np.int8)
        pairs = np.stack([subjects[si], field[fi]], axis=1).astype(np.int64)
        seen = None if outcome.seen is None else outcome.seen[si, fi]
        turns = None if seen is None else outcome.turns[si, fi].astype(np.int32)
        return cls(pairs, winner, outcome.path[si, fi].astype(np.int8), turns, seen)

    @classmethod
    def of_run(cls, games, tables: np.ndarray, seats=None) -> Games:
        """A 2-player run dir's ``games`` table (polars, every game of ``tables``, deals
        from 0): ``tables[t]`` the decks of table t; with its ``seats`` table, the turns
        and what each seat saw too."""
        g = games.sort("game_id")
        n_t = len(tables)
        winner = g["winner_seat"].to_numpy().astype(np.int8).reshape(n_t, -1, 2)
        path = np.array([_PATH_CODE[p] for p in g["path"].to_list()],
                        dtype=np.int8).reshape(n_t, -1, 2)
        turns = seen = None
        if seats is not None:
            turns = g["turns"].to_numpy().astype(np.int32).reshape(winner.shape)
            st = seats.sort("game_id", "seat")
            seen = (st["opening_mask"].to_numpy() | st["drawn_mask"].to_numpy()).astype(
                np.uint64).reshape(*winner.shape, 2)
        return cls(np.asarray(tables, dtype=np.int64), winner, path, turns, seen)

    @property
    def _arrays(self) -> tuple:
        """The per-game arrays, in the constructor's order (None where not kept)."""
        return self.winner, self.path, self.turns, self.seen

    def _each(self, f) -> tuple:
        """``f`` of each per-game array (None stays None)."""
        return tuple(None if x is None else f(x) for x in self._arrays)

    def head(self, deals: int) -> Games:
        return Games(self.pairs, *self._each(lambda x: x[:, :deals]))

    def copy_deals(self, first: int, deals: int) -> Games:
        """Deals ``first .. first + deals - 1``, a copy (to write a candidate's pairs in)."""
        return Games(self.pairs, *self._each(lambda x: x[:, first:first + deals].copy()))

    def put(self, rows: np.ndarray, part: Games) -> None:
        """``part``'s games in pairs ``rows`` (the same deals)."""
        for mine, theirs in zip(self._arrays, part._arrays, strict=True):
            if mine is not None:
                mine[rows] = theirs

    @staticmethod
    def _stack(parts: list[Games], pairs: np.ndarray, axis: int) -> Games:
        """``parts``' per-game arrays concatenated along ``axis`` (an array some part
        lacks: None)."""
        cols = zip(*(p._arrays for p in parts), strict=True)
        return Games(pairs, *(None if any(x is None for x in c) else
                              np.concatenate(c, axis=axis) for c in cols))

    @staticmethod
    def union(parts: list[Games]) -> Games:
        """The pairs of several sets of games on the same deals, one after the other."""
        return Games._stack(parts, np.concatenate([p.pairs for p in parts]), 0)

    @staticmethod
    def join(parts: list[Games]) -> Games:
        """The same pairs on consecutive deal ranges, one after the other."""
        return Games._stack(parts, parts[0].pairs, 1)


def ratio(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[float, np.ndarray]:
    """``R = Σ c a / Σ c b`` over units ``[pair, deal]`` (``c`` per pair) and its
    linearisation per unit (module docstring); ``(nan, 0)`` when ``Σ c b`` is 0."""
    cb = float((c[:, None] * b).sum())
    if cb <= 0:
        return math.nan, np.zeros(a.shape)
    r = float((c[:, None] * a).sum()) / cb
    return r, c[:, None] * (a - r * b) / (cb / a.size)


def variance(z: np.ndarray) -> float:
    """The variance of ``mean(z)``, pairs as strata: ``Σ_h D/(D-1) Σ (z - mean_h z)² /
    N²`` (D deals a pair, N units)."""
    d = z.shape[1]
    if d < 2:
        return math.inf
    dev = z - z.mean(axis=1, keepdims=True)
    return float(d / (d - 1) * (dev * dev).sum() / z.size ** 2)


@dataclass
class Figure:
    """One figure: its ``value`` and its per-unit linearisation ``z``."""

    value: float
    z: np.ndarray

    @property
    def se(self) -> float:
        return math.sqrt(variance(self.z))

    def interval(self) -> tuple[float, float]:
        h = Z95 * self.se
        return self.value - h, self.value + h


@dataclass
class Figures:
    """Every figure of a metagame (module docstring)."""

    deck: list[Figure]
    path: list[Figure]  # by WIN_PATHS
    first: Figure
    share: np.ndarray  # [deck, deck]: i's win share against j (a draw half)
    mix: np.ndarray
    support: int
    deals: int
    entry: list[Figure | None]  # each deck's entry gap (None: in the support)
    weights: np.ndarray  # the weights the figures were judged under
    deck_paths: np.ndarray  # [deck, path]: each deck's wins by each path over its wins
    adaptive: bool = False
    iwd: dict[int, Figure] = field(default_factory=dict)  # watched card id -> its IWD

    @classmethod
    def of(cls, games: Games, weights: np.ndarray, n_decks: int,
           adaptive: bool = False, watch: dict[int, np.ndarray] | None = None) -> Figures:
        """The figures of ``games``, decks weighted by ``weights``, or (``adaptive``) by
        the equilibrium of these games (module docstring); ``watch``: card id -> its slot
        masks, the cards whose IWD is a figure (``iwd.watch``)."""
        a, b = games.pairs[:, 0], games.pairs[:, 1]
        r = games.winner.shape[2]
        wins_a = (games.winner == 0).sum(axis=2).astype(np.float64)  # [P, D]
        wins_b = (games.winner == 1).sum(axis=2).astype(np.float64)
        n_games = np.full(wins_a.shape, float(r))
        score = wins_a + 0.5 * (r - wins_a - wins_b)  # a's share of the deal's games
        share, mix = _equilibrium(games, score, r, n_decks)
        w = mix if adaptive else np.asarray(weights, dtype=np.float64)

        def deck_figure(i: int, num_a, num_b, c_w) -> Figure:
            in_a, in_b = a == i, b == i
            num = num_a * in_a[:, None] + num_b * in_b[:, None]
            # a mirror: the deck holds both seats, so its games count twice
            den = n_games * (in_a.astype(np.float64) + in_b)[:, None]
            c = np.where(in_a, c_w[b], np.where(in_b, c_w[a], 0.0))
            return Figure(*ratio(num, den, c))

        decks = [deck_figure(i, wins_a, wins_b, w) for i in range(n_decks)]
        support = int((mix >= SUPPORT_MIN).sum())
        entry: list[Figure | None] = []
        for i in range(n_decks):
            if mix[i] >= SUPPORT_MIN:
                entry.append(None)
                continue
            u = deck_figure(i, score, r - score, mix)  # its share against the mix
            entry.append(Figure(0.5 - u.value, -u.z))
        c_pair = w[a] * w[b]
        decided = wins_a + wins_b
        paths = []
        for p in WIN_PATHS:
            num = ((games.path == _PATH_CODE[p]) & (games.winner >= 0)).sum(axis=2)
            paths.append(Figure(*ratio(num.astype(np.float64), decided, c_pair)))
        first_wins = (games.winner == np.arange(r)[None, None, :]).sum(axis=2)
        first = Figure(*ratio(first_wins.astype(np.float64), n_games, c_pair))
        deck_paths = np.zeros((n_decks, len(WIN_PATHS)))
        for k, p in enumerate(WIN_PATHS):
            by = games.path == _PATH_CODE[p]
            np.add.at(deck_paths[:, k], a, ((games.winner == 0) & by).sum(axis=(1, 2)))
            np.add.at(deck_paths[:, k], b, ((games.winner == 1) & by).sum(axis=(1, 2)))
        deck_paths /= np.maximum(deck_paths.sum(axis=1, keepdims=True), 1.0)
        iwd = {}
        if watch and games.seen is not None:
            from rnr_sim.balance.iwd import card_iwd

            iwd = {c: f for c, m in watch.items() if (f := card_iwd(games, m)) is not None}
        return cls(decks, paths, first, share, mix, support, games.deals, entry, w,
                   deck_paths, adaptive, iwd)


def _equilibrium(games: Games, score: np.ndarray, r: int, n_decks: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The win-share matrix of ``games`` (i's share against j, a draw half; 0.5 where not
    played) and the equilibrium mix of the decks that played."""
    a, b = games.pairs[:, 0], games.pairs[:, 1]
    tot = np.zeros((n_decks, n_decks))
    cnt = np.zeros((n_decks, n_decks))
    np.add.at(tot, (a, b), score.sum(axis=1))
    np.add.at(tot, (b, a), (r - score).sum(axis=1))
    np.add.at(cnt, (a, b), float(r * games.deals))
    np.add.at(cnt, (b, a), float(r * games.deals))
    share = np.where(cnt > 0, tot / np.maximum(cnt, 1.0), 0.5)
    played = (cnt - np.diag(np.diag(cnt))).sum(axis=1) > 0
    np.fill_diagonal(share, 0.5)
    mix = np.zeros(n_decks)
    if played.sum() >= 1:
        sub = share[np.ix_(played, played)]
        mix[played] = nash_equilibrium((sub - sub.T) / 2.0)
    return share, mix


@dataclass
class Judged:
    """How far figures are from the targets: ``distance`` (0: every target met; the sum of
    each figure's distance outside its band, in shares), its per-unit linearisation, and
    the targets missed (their names, ``Targets.names``)."""

    distance: float
    z: np.ndarray
    missed: list[str]


def _over(x: float, lo: float | None, hi: float | None) -> tuple[float, float]:
    """The distance of ``x`` outside ``[lo, hi]`` and its slope in ``x``."""
    if hi is not None and x > hi:
        return x - hi, 1.0
    if lo is not None and x < lo:
        return lo - x, -1.0
    return 0.0, 0.0


def judge(fig: Figures, t: Targets, tol: float = 1e-12) -> Judged:
    """The figures against the targets (``iwd_max``: the watched cards' IWD, ``iwd``;
    the verification reads every card's)."""
    total = 0.0
    z = np.zeros_like(fig.first.z)
    missed: list[str] = []

    def add(name: str, f: Figure, lo: float | None, hi: float | None) -> None:
        nonlocal total, z
        if math.isnan(f.value):
            return
        d, slope = _over(f.value, lo, hi)
        if d > tol:
            total += d
            z = z + slope * f.z
            if name not in missed:
                missed.append(name)

    if t.deck_share_max is not None:
        for f in fig.deck:
            add("deck_share_max", f, None, t.deck_share_max)
    for k, p in enumerate(WIN_PATHS):
        if p in t.path_share:
            lo, hi = t.path_share[p]
            add("path_share", fig.path[k], lo, hi)
            v = fig.path[k].value
            if fig.adaptive and not math.isnan(v) and not lo <= v <= hi:
                # the nearest deck outside the support whose own wins meet the band's
                # missed side (a deck that wins by the path at most hi, or at least lo)
                lean = fig.deck_paths[:, k] <= hi if v > hi else fig.deck_paths[:, k] >= lo
                near = [f for i, f in enumerate(fig.entry) if f is not None and lean[i]]
                if near:
                    f = min(near, key=lambda f: f.value)
                    total += max(f.value, SUPPORT_FLOOR)
                    if f.value > SUPPORT_FLOOR:
                        z = z + f.z
    if t.first_seat is not None:
        add("first_seat", fig.first, *t.first_seat)
    if t.iwd_max is not None:
        for f in fig.iwd.values():
            add("iwd_max", f, None, t.iwd_max)
    if t.min_support is not None and fig.support < t.min_support:
        # The decks nearest to entering, as many as the support lacks: their entry gaps.
        gaps = sorted((f for f in fig.entry if f is not None), key=lambda f: f.value)
        for f in gaps[: t.min_support - fig.support]:
            total += max(f.value, SUPPORT_FLOOR)
            if f.value > SUPPORT_FLOOR:
                z = z + f.z
        missed.append("min_support")
    return Judged(total, z, missed)


def safe(fig: Figures, t: Targets, margin: float) -> bool:
    """Every target met with room: each figure inside its band by ``margin`` standard
    errors (a change found on the search's deals that only just crosses a target would
    miss it on fresh deals about half the time); the support as ``judge`` counts it."""
    def inside(f: Figure, lo: float | None, hi: float | None) -> bool:
        if math.isnan(f.value):
            return True
        h = margin * f.se
        return (lo is None or f.value - h >= lo) and (hi is None or f.value + h <= hi)

    ok = t.deck_share_max is None or all(inside(f, None, t.deck_share_max) for f in fig.deck)
    ok = ok and all(inside(fig.path[k], *t.path_share[p]) for k, p in enumerate(WIN_PATHS)
                    if p in t.path_share)
    ok = ok and (t.first_seat is None or inside(fig.first, *t.first_seat))
    ok = ok and (t.iwd_max is None or all(inside(f, None, t.iwd_max) for f in fig.iwd.values()))
    return ok and (t.min_support is None or fig.support >= t.min_support)


def paired(before: Figure, after: Figure) -> tuple[float, float, float]:
    """The change ``after - before`` on the same deals with its paired 95% interval."""
    change = after.value - before.value
    h = Z95 * math.sqrt(variance(after.z - before.z))
    return change, change - h, change + h
