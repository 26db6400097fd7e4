"""The card metrics of a run folded part by part (``CardFold``), in memory that does not
grow with the games.

``cards.py`` defines the metrics (``card_counts``, ``card_deal_intervals``,
``adjusted_iwd``); this module computes them from a run read in parts of whole deals
(``analytics.parts``), in two passes over the parts:

1. ``add_counts``: per (deck, table), the first and second moments of each card's
   per-deal count vectors (``cards._SUMS``), which give the counts and every raw rate's
   per-deal interval; per (deck, players, turn order, turns), the deck's rows and wins
   and each card's seen rows and their wins, which give the adjusted IWD's strata (the
   turn bands need the whole run's game lengths) and its Mantel-Haenszel sums.
2. ``add_deals`` (after ``finish_counts``): each deal's linearisation of the adjusted
   IWD, now that the strata and the estimate are known, summed per table in deal order.

What stays in memory is a few numbers per (deck, card, table) and per (deck, card,
players, turn order, turns), and one part's per-deal vectors. Every sum of the first
pass is of whole numbers (exact in any order), and the second pass adds the deals of a
table in the order one pass over the whole run does, so the figures are those of the
run read at once.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import polars as pl

from rnr_sim.analytics import card_kernels as ck
from rnr_sim.analytics.cards import (
    ADJUSTED_COLUMNS,
    COUNT_COLUMNS,
    MIN_BAND_ROWS,
    _deal_vectors,
    _deck_parts,
    _derive,
    _rate_moments,
    _raw_iwd,
    _segment_sum,
    assemble_intervals,
    bands_of_counts,
    mh_row_terms,
)
from rnr_sim.analytics.stats import Z95, two_sided_p
from rnr_sim.analytics.units import grow, table_se_from_sums

#: The columns a part's seat rows need (``cards.seat_units`` over the part's games).
UNIT_COLUMNS = ("deck", "won", "seen", "opening", "played", "turns", "n_players", "order",
                "table_id", "unit")


class _Tables:
    """Table ids in the order met (ascending in a run dir), each a dense index."""

    def __init__(self) -> None:
        self.index: dict[int, int] = {}

    def codes(self, table_ids: np.ndarray) -> np.ndarray:
        for t in np.unique(table_ids).tolist():
            self.index.setdefault(int(t), len(self.index))
        return np.array([self.index[int(t)] for t in table_ids.tolist()], dtype=np.int64) \
            if len(table_ids) < 64 else _lookup(self.index, table_ids)

    def sorted(self) -> tuple[np.ndarray, np.ndarray]:
        """(table ids ascending, their dense indices)."""
        ids = np.array(sorted(self.index), dtype=np.int64)
        return ids, np.array([self.index[int(t)] for t in ids], dtype=np.int64)


def _lookup(index: dict[int, int], keys: np.ndarray) -> np.ndarray:
    ks = np.array(list(index), dtype=np.int64)
    vs = np.array(list(index.values()), dtype=np.int64)
    order = np.argsort(ks)
    return vs[order][np.searchsorted(ks[order], keys)]


class _Deck:
    """One deck's sums: per table (``tables``) the deals ``d``, the moments ``S``
    [table, card, 8] and ``M`` [table, card, 8, 8] of the per-deal count vectors; per
    (players, turn order) group (in the order first met) and turns, the rows, their wins,
    and each card's seen rows ``n1h`` and their wins ``ah`` [card, group, turns]."""

    def __init__(self, name: str, cards: list[str], masks: np.ndarray) -> None:
        k = len(cards)
        self.name, self.cards, self.masks = name, cards, masks
        self.tables = _Tables()
        self.d = np.zeros(0)
        self.S = np.zeros((0, k, 8))
        self.M = np.zeros((0, k, 8, 8))
        self.groups: dict[tuple[int, int], int] = {}
        self.rows_h = np.zeros((0, 0))
        self.wins_h = np.zeros((0, 0))
        self.n1h = np.zeros((k, 0, 0))
        self.ah = np.zeros((k, 0, 0))
        self.rows = 0
        self.total_turns = 0.0
        self.deals = 0
        self.size_min, self.size_max = math.inf, 0
        self.adj: dict[str, np.ndarray] | None = None  # finish_counts
        self.zm = np.zeros((5, len(cards), 0))

    # -- pass 1
    def add_counts(self, part: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fold the deck's rows of one part; returns (each deal's unit, its table index,
        its count vectors [card, 8, deal]) for the cards several decks hold. The vectors
        are whole numbers; float32 while every sum of products over the part's deals stays
        below 2^24 (exact), else float64."""
        unit = part["unit"].to_numpy()
        n = len(unit)
        starts = np.flatnonzero(np.r_[True, unit[1:] != unit[:-1]]).astype(np.int64)
        sizes = np.diff(np.r_[starts, n])
        self.deals += len(starts)
        self.size_min = min(self.size_min, int(sizes.min()))
        self.size_max = max(self.size_max, int(sizes.max()))
        won = part["won"].cast(pl.Float64).to_numpy()
        seen = part["seen"].to_numpy()
        x = _deal_vectors(won, part["opening"].to_numpy(), seen, part["played"].to_numpy(),
                          self.masks, starts)
        if int(sizes.max()) ** 2 * len(starts) >= 2**24:  # float32 sums of products: exact below
            x = x.astype(np.float64)
        tcode = self.tables.codes(part["table_id"].to_numpy()[starts].astype(np.int64))
        n_t = len(self.tables.index)
        self.d, self.S, self.M = (grow(self.d, (n_t,)), grow(self.S, (n_t, *self.S.shape[1:])),
                                  grow(self.M, (n_t, *self.M.shape[1:])))
        cuts = np.flatnonzero(np.r_[True, tcode[1:] != tcode[:-1], True])
        for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
            t = int(tcode[lo])
            blk = x[:, :, lo:hi]
            self.d[t] += hi - lo
            self.S[t] += blk.sum(axis=2)
            self.M[t] += np.matmul(blk, blk.transpose(0, 2, 1))
        self._add_strata_counts(part, won, seen)
        return unit[starts], tcode, x

    def _add_strata_counts(self, part: pl.DataFrame, y: np.ndarray, seen: np.ndarray) -> None:
        turns = part["turns"].to_numpy().astype(np.int64)
        group = self.group_of(part, grow=True)
        g, tt = len(self.groups), int(turns.max()) + 1
        k = len(self.cards)
        self.rows_h, self.wins_h = grow(self.rows_h, (g, tt)), grow(self.wins_h, (g, tt))
        self.n1h, self.ah = grow(self.n1h, (k, g, tt)), grow(self.ah, (k, g, tt))
        width = self.rows_h.shape[1]
        flat = group * width + turns
        self.rows_h += np.bincount(flat, minlength=self.rows_h.size).reshape(self.rows_h.shape)
        self.wins_h += np.bincount(flat, weights=y, minlength=self.rows_h.size).reshape(
            self.rows_h.shape)
        ck.mh_histogram(np.ascontiguousarray(seen, dtype=np.uint64), self.masks, group,
                        turns, np.ascontiguousarray(y), self.n1h, self.ah)
        self.rows += len(y)
        self.total_turns += float(turns.sum())

    def group_of(self, part: pl.DataFrame, grow: bool = False) -> np.ndarray:
        """Each row's (players, turn order) group, groups numbered in the order first met
        over the deck's rows, in deal order."""
        n_pl = part["n_players"].to_numpy().astype(np.int64)
        combo = n_pl * (int(n_pl.max()) + 1) + part["order"].to_numpy().astype(np.int64)
        width = int(n_pl.max()) + 1
        lut = np.full(int(combo.max()) + 1, -1, dtype=np.int64)
        for v in np.flatnonzero(np.bincount(combo)).tolist():
            key = (v // width, v % width)
            if key not in self.groups:
                if not grow:
                    raise KeyError(key)
                continue
            lut[v] = self.groups[key]
        if grow and (lut[combo] < 0).any():  # groups met here first, in the order met
            new = np.flatnonzero(lut[combo] < 0)
            vals, first = np.unique(combo[new], return_index=True)
            for v in vals[np.argsort(first, kind="stable")].tolist():
                lut[v] = self.groups.setdefault((v // width, v % width), len(self.groups))
        return lut[combo]

    def finish_counts(self, min_rows: int) -> None:
        """The strata (turn bands of each group), the Mantel-Haenszel sums ``U``, ``V``
        and what the second pass needs (``cards.adjusted_iwd``)."""
        k = len(self.cards)
        st_of = np.full(self.rows_h.shape, -1, dtype=np.int64)
        nxt = 0
        for g in range(self.rows_h.shape[0]):
            vals = np.flatnonzero(self.rows_h[g] > 0)
            if not len(vals):
                continue
            b = bands_of_counts(self.rows_h[g, vals], min_rows)
            st_of[g, vals] = nxt + b
            nxt += int(b.max()) + 1
        flat, ok = st_of.ravel(), st_of.ravel() >= 0
        ns = np.bincount(flat[ok], weights=self.rows_h.ravel()[ok], minlength=nxt)
        ms = np.bincount(flat[ok], weights=self.wins_h.ravel()[ok], minlength=nxt)
        n1 = np.stack([np.bincount(flat[ok], weights=self.n1h[j].ravel()[ok], minlength=nxt)
                       for j in range(k)]) if k else np.zeros((0, nxt))
        a = np.stack([np.bincount(flat[ok], weights=self.ah[j].ravel()[ok], minlength=nxt)
                      for j in range(k)]) if k else np.zeros((0, nxt))
        n0, c = ns - n1, ms - a
        big_n = np.maximum(ns, 1.0)
        # each card's strata summed on their own, as cards._mh_parts sums them
        u = np.array([float(r.sum()) for r in (a * n0 - c * n1) / big_n])
        v = np.array([float(r.sum()) for r in n1 * n0 / big_n])
        turns = np.arange(self.n1h.shape[2], dtype=np.float64)
        equal = self.size_min == self.size_max
        valid = (v > 0) & (self.deals >= 2)
        n_t = len(self.tables.index)
        self.adj = {
            "st_of": st_of, "u": u, "v": v, "valid": valid,
            "est": np.where(valid, u / np.where(valid, v, 1.0), np.nan),
            "seen_rows": n1.sum(axis=1), "seen_turns": (self.n1h * turns).sum(axis=(1, 2)),
            "g1": np.ascontiguousarray(n0 / big_n), "g0": np.ascontiguousarray(n1 / big_n),
            "mean": ms / big_n, "equal": np.array(equal),
            # the orders cards._segment_sum adds in: a row sum (equal sizes), else reduceat
            "sequential": np.array(self.size_min < 8 if equal else self.size_max <= 8),
            "zs": np.zeros((int(valid.sum()), n_t)), "zss": np.zeros((int(valid.sum()), n_t)),
            # each card's row of zs, zss (-1: no estimate)
            "row": np.where(valid, np.cumsum(valid) - 1, -1).astype(np.int64),
        }
        # pass 2, per card and table: Σ dU, Σ dV, Σ dU², Σ dV², Σ dU·dV (_Pooled)
        self.zm = np.zeros((5, k, n_t))

    # -- pass 2
    def add_deals(self, part: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, tuple]:
        """Each deal's ``dU``, ``dV`` sums (``cards._mh_parts``) of every card; the valid
        cards' ``z = (dU - est dV) / V`` added to their per-table sums. Returns (each
        deal's unit, its table index, (dU, dV), each float64[card, deal])."""
        adj = self.adj
        assert adj is not None, "finish_counts first"
        unit = part["unit"].to_numpy()
        starts = np.flatnonzero(np.r_[True, unit[1:] != unit[:-1]]).astype(np.int64)
        ends = np.r_[starts[1:], len(unit)].astype(np.int64)
        y = part["won"].cast(pl.Float64).to_numpy()
        seen = np.ascontiguousarray(part["seen"].to_numpy(), dtype=np.uint64)
        st = adj["st_of"][self.group_of(part), part["turns"].to_numpy().astype(np.int64)]
        resid = y - adj["mean"][st]
        if bool(adj["sequential"]):
            zu, zv = ck.mh_deal_sums(seen, self.masks, st, resid, adj["g1"], adj["g0"],
                                     starts, ends, not bool(adj["equal"]))
        else:
            zu, zv = np.empty((len(self.cards), len(starts))), np.empty((len(self.cards),
                                                                          len(starts)))
            for j, m in enumerate(self.masks):
                du, dv = mh_row_terms((seen & np.uint64(m)) != 0, resid, adj["g1"][j][st],
                                      adj["g0"][j][st])
                zu[j] = _segment_sum(du, starts, bool(adj["equal"]))
                zv[j] = _segment_sum(dv, starts, bool(adj["equal"]))
        tcode = self.tables.codes(part["table_id"].to_numpy()[starts].astype(np.int64))
        ck.fold_deal_terms(np.ascontiguousarray(zu), np.ascontiguousarray(zv), tcode,
                           adj["est"], adj["v"], adj["row"], adj["zs"], adj["zss"], self.zm)
        return unit[starts], tcode, (zu, zv)


class _Pooled:
    """A card several decks hold: what its per-card rows need beyond each holder's sums.

    Pass 1: the cross products of two holders' per-deal count vectors in the deals where
    both sit (``cross``, per table id: with the decks' own moments they give the moments
    of the vectors summed over the holders, ``card_deal_intervals``' per-card rows), the
    deals any holder played (``deals``, and per table id ``dz``). Pass 2: per table id the
    cross products of two holders' per-deal linearisation terms (``zcross``: dU·dU', dU·dV',
    dV·dU', dV·dV') where both sit; with each holder's per-table moments of (dU, dV)
    (``_Deck.zm``) they give the per-table sums of the pooled ``z = (ΣdU - est ΣdV) / V``
    and of its square (``adjusted_iwd``'s per-card row)."""

    def __init__(self) -> None:
        self.cross: dict[int, np.ndarray] = {}
        self.deals = 0
        self.dz: dict[int, float] = {}
        self.zcross: dict[int, np.ndarray] = {}

    def add_cross(self, common: tuple[np.ndarray, np.ndarray, np.ndarray], xa: np.ndarray,
                  xb: np.ndarray) -> None:
        """Two holders' vectors [8, deal] over their deals ``common`` = (table id of each
        common deal, its position in a's deals, in b's)."""
        for t, lo, hi in _table_runs(common[0]):
            ia, ib = common[1][lo:hi], common[2][lo:hi]
            c = xa[:, ia] @ xb[:, ib].T
            self.cross[t] = self.cross.get(t, np.zeros((8, 8))) + c + c.T

    def add_zcross(self, common: tuple[np.ndarray, np.ndarray, np.ndarray], ua: np.ndarray,
                   va: np.ndarray, ub: np.ndarray, vb: np.ndarray) -> None:
        """Two holders' dU, dV [deal] over their common deals (``add_cross``)."""
        for t, lo, hi in _table_runs(common[0]):
            ia, ib = common[1][lo:hi], common[2][lo:hi]
            x = np.array([ua[ia] @ ub[ib], ua[ia] @ vb[ib], va[ia] @ ub[ib], va[ia] @ vb[ib]])
            self.zcross[t] = self.zcross.get(t, np.zeros(4)) + x


def _table_runs(tid: np.ndarray) -> list[tuple[int, int, int]]:
    """(table id, first, end) of each run of equal ids (deals come table by table)."""
    cuts = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1], True])
    return [(int(tid[lo]), lo, hi) for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist(),
                                                       strict=True)]


def _adjusted_row(est: float, se: float) -> dict[str, float | None]:
    return {"iwd_adjusted": est, "iwd_adjusted_lo": max(-1.0, est - Z95 * se),
            "iwd_adjusted_hi": min(1.0, est + Z95 * se), "iwd_adjusted_se": se,
            "iwd_adjusted_p": two_sided_p(est / se) if se > 0 else (1.0 if est == 0 else 0.0)}


class CardFold:
    """Every card metric of a run, its parts folded in one at a time.

    ``masks`` (``cards.card_masks``) names the decks and their cards. Pass 1:
    ``add_counts`` each part's seat rows (``UNIT_COLUMNS``; ``unit`` a deal index, the
    same for every deck's rows of one deal), then ``finish_counts``; pass 2: ``add_deals``
    each part again. Then ``counts()`` (``cards.card_counts``), ``intervals()``
    (``card_deal_intervals``) and ``adjusted()`` (``adjusted_iwd``).
    """

    def __init__(self, masks: pl.DataFrame, min_rows: int = MIN_BAND_ROWS) -> None:
        self.masks = masks
        self.min_rows = min_rows
        self.decks: dict[str, _Deck] = {}
        self.holders: dict[str, list[tuple[str, int]]] = {}  # card -> [(deck, its index)]
        for (deck,), cards in masks.partition_by("deck", as_dict=True,
                                                 maintain_order=True).items():
            names = cards["card"].to_list()
            self.decks[deck] = _Deck(deck, names, np.ascontiguousarray(
                cards["mask"].to_numpy(), dtype=np.uint64))
            for j, c in enumerate(names):
                self.holders.setdefault(c, []).append((deck, j))
        self.pooled = {c: _Pooled() for c, h in self.holders.items() if len(h) > 1}
        # pairs of decks (in deck order) that hold a card in common
        self.pairs = sorted({(a, b) for h in self.holders.values() if len(h) > 1
                             for (a, _), (b, _) in combinations(h, 2)},
                            key=lambda ab: (list(self.decks).index(ab[0]),
                                            list(self.decks).index(ab[1])))
        self.finished = False

    def _parts(self, units: pl.DataFrame) -> dict[str, pl.DataFrame]:
        return {d: p for d, p in _deck_parts(units).items() if d in self.decks and p.height}

    def add_counts(self, units: pl.DataFrame) -> None:
        """Pass 1: one part's seat rows, sorted by deal."""
        got = {d: self.decks[d].add_counts(p) for d, p in self._parts(units).items()}
        n_units = int(units["unit"].max()) + 1 if units.height else 0
        common = self._common_deals(got)
        for card, pool in self.pooled.items():
            holders = [(d, j) for d, j in self.holders[card] if d in got]
            if len(holders) == 1:
                tables = self._table_ids(holders[0][0], got[holders[0][0]][1])
            elif holders:  # the deals any holder played, each once
                touched = np.zeros(n_units, dtype=bool)
                table = np.zeros(n_units, dtype=np.int64)
                for d, _ in holders:
                    touched[got[d][0]] = True
                    table[got[d][0]] = self._table_ids(d, got[d][1])
                tables = table[np.flatnonzero(touched)]
            else:
                continue
            pool.deals += len(tables)
            for t, n in zip(*np.unique(tables, return_counts=True), strict=True):
                pool.dz[int(t)] = pool.dz.get(int(t), 0.0) + float(n)
            for (a, ja), (b, jb) in combinations(holders, 2):
                if (a, b) in common:
                    pool.add_cross(common[(a, b)], got[a][2][ja], got[b][2][jb])

    def _common_deals(self, got: dict) -> dict[tuple[str, str], tuple]:
        """Per pair of decks holding a card in common, the deals of this part both played:
        (table id, position in the first deck's deals, in the second's)."""
        common = {}
        for a, b in self.pairs:
            if a in got and b in got:
                _, ia, ib = np.intersect1d(got[a][0], got[b][0], assume_unique=True,
                                           return_indices=True)
                if len(ia):
                    common[(a, b)] = (self._table_ids(a, got[a][1])[ia], ia, ib)
        return common

    def _table_ids(self, deck: str, tcode: np.ndarray) -> np.ndarray:
        ids = np.array(list(self.decks[deck].tables.index), dtype=np.int64)
        return ids[tcode]

    def finish_counts(self) -> None:
        for deck in self.decks.values():
            if deck.rows:
                deck.finish_counts(self.min_rows)
        self.finished = True

    def add_deals(self, units: pl.DataFrame) -> None:
        """Pass 2 (after ``finish_counts``): the same part's seat rows again."""
        got = {d: self.decks[d].add_deals(p) for d, p in self._parts(units).items()}
        common = self._common_deals(got)
        for card, pool in self.pooled.items():
            holders = [(d, j) for d, j in self.holders[card] if d in got]
            for (a, ja), (b, jb) in combinations(holders, 2):
                if (a, b) in common:
                    (ua, va), (ub, vb) = got[a][2], got[b][2]
                    pool.add_zcross(common[(a, b)], ua[ja], va[ja], ub[jb], vb[jb])

    def _card_estimate(self, card: str) -> tuple[float, float, bool]:
        """The per-card ``U / V`` (decks' U and V summed in deck order), and whether it
        has an interval (V > 0 and at least two deals)."""
        u = v = 0.0
        for d, j in self.holders[card]:
            deck = self.decks[d]
            if deck.adj is not None:
                u += float(deck.adj["u"][j])
                v += float(deck.adj["v"][j])
        deals = self._card_deals(card)
        valid = v > 0 and deals >= 2
        return (u / v if valid else math.nan), v, valid

    def _card_deals(self, card: str) -> int:
        """The deals any deck holding the card played."""
        if card in self.pooled:
            return self.pooled[card].deals
        d, _ = self.holders[card][0]
        return self.decks[d].deals

    def _pooled_sums(self, card: str, est: float, v: float
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per table (ascending ids): the deals any holder played, and the sums of the
        pooled ``z = (ΣdU - est ΣdV) / V`` and of ``z²`` over them, from the holders'
        per-table moments of (dU, dV) and their cross products where two met."""
        pool = self.pooled[card]
        acc: dict[int, np.ndarray] = {}  # table -> [ΣdU, ΣdV, ΣdU², ΣdV², ΣdU·dV]
        for name, j in self.holders[card]:
            deck = self.decks[name]
            if deck.adj is None:
                continue
            for t, i in deck.tables.index.items():
                acc[t] = acc.get(t, np.zeros(5)) + deck.zm[:, j, i]
        ids = sorted(acc)
        d = np.array([pool.dz.get(t, 0.0) for t in ids])
        m = np.array([acc[t] for t in ids]).reshape(-1, 5)
        x = np.array([pool.zcross.get(t, np.zeros(4)) for t in ids]).reshape(-1, 4)
        s_ = (m[:, 0] - est * m[:, 1]) / v
        ss = (m[:, 2] - 2.0 * est * m[:, 4] + est * est * m[:, 3]
              + 2.0 * (x[:, 0] - est * (x[:, 1] + x[:, 2]) + est * est * x[:, 3])) / (v * v)
        return d, s_, ss

    def _pooled_moments(self, card: str) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                   np.ndarray]:
        """(table ids ascending, d, S [table, 8], M [table, 8, 8]) of the card's per-deal
        vectors summed over its holders: the holders' moments and their cross products;
        ``d`` the deals of the first holder (in deck order) at each table."""
        acc: dict[int, list] = {}
        for name, j in self.holders[card]:
            deck = self.decks[name]
            for t, i in deck.tables.index.items():
                if t not in acc:
                    acc[t] = [deck.d[i], deck.S[i, j].copy(), deck.M[i, j].copy()]
                else:
                    acc[t][1] += deck.S[i, j]
                    acc[t][2] += deck.M[i, j]
        for t, c in self.pooled[card].cross.items():
            acc[t][2] += c
        ids = np.array(sorted(acc), dtype=np.int64)
        return (ids, np.array([acc[t][0] for t in ids.tolist()]),
                np.stack([acc[t][1] for t in ids.tolist()]).reshape(-1, 8),
                np.stack([acc[t][2] for t in ids.tolist()]).reshape(-1, 8, 8))

    def state_size(self) -> int:
        """How many numbers the fold keeps: per (deck, card, table), per (deck, card,
        group, turns) and per (card, table), none per deal."""
        n = 0
        for deck in self.decks.values():
            n += sum(a.size for a in (deck.d, deck.S, deck.M, deck.rows_h, deck.wins_h,
                                      deck.n1h, deck.ah, deck.zm))
            if deck.adj is not None:
                n += sum(np.size(a) for a in deck.adj.values())
        for pool in self.pooled.values():
            n += 64 * len(pool.cross) + len(pool.dz) + 4 * len(pool.zcross)
        return n

    # -- results
    def counts(self) -> pl.DataFrame:
        """``cards.card_counts``: per (deck, card), the counts over the deck's rows."""
        blocks = []
        for (deck,), cards in self.masks.partition_by("deck", as_dict=True,
                                                      maintain_order=True).items():
            s = self.decks[deck].S
            tot = s.sum(axis=0) if s.shape[0] else np.zeros((cards.height, 8))
            blocks.append(cards.select("deck", "card", "copies").hstack(
                pl.DataFrame(tot.astype(np.int64), schema=list(COUNT_COLUMNS), orient="row")))
        if not blocks:
            schema = {"deck": pl.String, "card": pl.String, "copies": pl.Int64}
            schema |= {c: pl.Int64 for c in COUNT_COLUMNS}
            return _derive(pl.DataFrame(schema=schema))
        return _derive(pl.concat(blocks).sort("deck", "card"))

    def intervals(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """``cards.card_deal_intervals``: per card, per (deck, card)."""
        deck_moments, deck_keys, deck_iwd = [], [], []
        card_moments, card_keys, card_iwd = [], [], []
        seen_cards: list[str] = []
        for deck in self.decks.values():
            if not deck.rows:
                continue
            ids, order = deck.tables.sorted()
            s_t, m_t, d = deck.S[order], deck.M[order], deck.d[order]
            deck_moments.append(_rate_moments(s_t, m_t, d, ids, len(deck_keys)))
            for j, card in enumerate(deck.cards):
                key = {"deck": deck.name, "card": card}
                deck_keys.append(key)
                deck_iwd.append(_raw_iwd(key, s_t[:, j], m_t[:, j], d))
                if card not in seen_cards:
                    seen_cards.append(card)
        for card in seen_cards:
            if card in self.pooled:
                ids, d, s_c, m_c = self._pooled_moments(card)
            else:
                name, j = self.holders[card][0]
                deck = self.decks[name]
                ids, order = deck.tables.sorted()
                s_c, m_c, d = deck.S[order][:, j], deck.M[order][:, j], deck.d[order]
            card_moments.append(_rate_moments(s_c[:, None], m_c[:, None], d, ids,
                                              len(card_keys)))
            card_keys.append({"card": card})
            card_iwd.append(_raw_iwd({"card": card}, s_c, m_c, d))
        return (assemble_intervals(card_moments, card_keys, card_iwd, ["card"]),
                assemble_intervals(deck_moments, deck_keys, deck_iwd, ["deck", "card"]))

    def adjusted(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """``cards.adjusted_iwd``: per card, per (deck, card); sorted by card (then deck)."""
        deck_rows: list[dict] = []
        acc: dict[str, list[float]] = {}  # card -> [seen turns, seen rows, other turns, rows]
        for deck in self.decks.values():
            adj = deck.adj
            if adj is None:
                continue
            ids, order = deck.tables.sorted()
            d = deck.d[order]
            for j, card in enumerate(deck.cards):
                out: dict = dict.fromkeys(ADJUSTED_COLUMNS[:5])
                if adj["valid"][j]:
                    r = int(adj["row"][j])
                    se = table_se_from_sums(d, adj["zs"][r][order], adj["zss"][r][order])
                    out.update(_adjusted_row(float(adj["est"][j]), se))
                n1, t1 = float(adj["seen_rows"][j]), float(adj["seen_turns"][j])
                gap = (t1 / n1 - (deck.total_turns - t1) / (deck.rows - n1)
                       if 0 < n1 < deck.rows else None)
                deck_rows.append({"deck": deck.name, "card": card, **out,
                                  "adjusted_deals": deck.deals, "turn_gap": gap})
                a = acc.setdefault(card, [0.0, 0.0, 0.0, 0.0])
                a[0] += t1
                a[1] += n1
                a[2] += deck.total_turns - t1
                a[3] += deck.rows - n1
        card_rows = []
        for card, (t1, n1, t0, n0) in acc.items():
            out = dict.fromkeys(ADJUSTED_COLUMNS[:5])
            est, v, valid = self._card_estimate(card)
            if valid:
                if card in self.pooled:
                    se = table_se_from_sums(*self._pooled_sums(card, est, v))
                else:  # one deck holds it: its deals and sums
                    name, j = self.holders[card][0]
                    deck = self.decks[name]
                    ids, order = deck.tables.sorted()
                    r = int(deck.adj["row"][j])
                    se = table_se_from_sums(deck.d[order], deck.adj["zs"][r][order],
                                   deck.adj["zss"][r][order])
                out.update(_adjusted_row(est, se))
            card_rows.append({"card": card, **out, "adjusted_deals": self._card_deals(card),
                              "turn_gap": t1 / n1 - t0 / n0 if n1 > 0 and n0 > 0 else None})
        schema = {c: pl.Float64 for c in ADJUSTED_COLUMNS} | {"adjusted_deals": pl.Int64}
        by_card = pl.DataFrame(card_rows, schema={"card": pl.String, **schema})
        by_deck = pl.DataFrame(deck_rows, schema={"deck": pl.String, "card": pl.String,
                                                  **schema})
        return by_card.sort("card"), by_deck.sort("deck", "card")
