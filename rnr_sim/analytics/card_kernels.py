"""Compiled loops over one deck's seat rows for every card at once (``cards.py``).

The card metrics test each seat row's uint64 masks against each card's mask. Done in
numpy, every (row, card) test is a temporary array and several passes over memory; here
each is one loop over the rows per card, with the same arithmetic in the same order as
the numpy definitions they replace (so the results are bit-identical):

- ``deal_count_vectors``: per deal, the eight ``cards._SUMS`` counts of each card;
- ``mh_histogram``: per (players, turn order, turns), each card's seen rows and their
  wins (the Mantel-Haenszel ``n1``, ``a`` before the turn bands are known);
- ``mh_deal_sums``: per deal, the sums of the rows' linearisations ``dU``, ``dV``
  (``cards._mh_parts``), added in the order ``numpy.sum`` adds them;
- ``fold_deal_terms``: the per-table moments of those linearisations, in deal order.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def deal_count_vectors(won: np.ndarray, opening: np.ndarray, seen: np.ndarray,
                       played: np.ndarray, masks: np.ndarray, starts: np.ndarray,
                       ends: np.ndarray) -> np.ndarray:
    """float32[cards, 8, deals]: per deal (rows ``starts[d]..ends[d]-1``), ``held``,
    ``held_wins``, ``oh``, ``oh_wins``, ``gih``, ``gih_wins``, ``played``, ``played_wins``
    of each card (``cards._SUMS`` order); ``won`` is 0/1 per row."""
    n_k, n_d = masks.shape[0], starts.shape[0]
    out = np.zeros((n_k, 8, n_d), dtype=np.float32)
    for k in range(n_k):
        m = masks[k]
        for d in range(n_d):
            h = hw = o = ow = g = gw = p = pw = 0
            for r in range(starts[d], ends[d]):
                w = won[r]
                xo = (opening[r] & m) != 0
                xg = (seen[r] & m) != 0
                xp = (played[r] & m) != 0
                h += 1
                hw += w
                o += xo
                ow += xo & w
                g += xg
                gw += xg & w
                p += xp
                pw += xp & w
            out[k, 0, d] = h
            out[k, 1, d] = hw
            out[k, 2, d] = o
            out[k, 3, d] = ow
            out[k, 4, d] = g
            out[k, 5, d] = gw
            out[k, 6, d] = p
            out[k, 7, d] = pw
    return out


@njit(cache=True, nogil=True, inline="always")
def _row_terms(hit: np.uint64, resid: float, g1: float, g0: float) -> tuple[float, float]:
    """One row's ``dU``, ``dV``: ``resid·g1``, ``g1²`` if seen, else ``-resid·g0``, ``g0²``
    (negating a product is exact: ``-(r·g) == (-r)·g``)."""
    seen = hit != 0
    w = g1 if seen else g0
    du = resid * w
    return (du if seen else -du), w * w


@njit(cache=True, nogil=True)
def mh_deal_sums(seen: np.ndarray, masks: np.ndarray, st: np.ndarray, resid: np.ndarray,
                 g1: np.ndarray, g0: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                 rest_apart: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per card and deal (rows ``starts[d]..ends[d]-1``): the sums of ``dU`` and ``dV``.

    A row where the card was seen has ``dU = resid * g1[card, stratum]`` and ``dV = g1²``,
    else ``dU = -resid * g0[card, stratum]`` and ``dV = g0²``. The rows of a deal are
    added one after the other from the first, as ``numpy.sum`` over a row of fewer than 8
    values does; with ``rest_apart``, the rows after the first are added up from 0 and
    then to the first, as ``numpy.add.reduceat`` does for up to 8 values (the caller
    keeps to those cases)."""
    n_k, n_d = masks.shape[0], starts.shape[0]
    zu = np.empty((n_k, n_d))
    zv = np.empty((n_k, n_d))
    for k in range(n_k):
        m = masks[k]
        for d in range(n_d):
            r = starts[d]
            fu, fv = _row_terms(seen[r] & m, resid[r], g1[k, st[r]], g0[k, st[r]])
            if rest_apart:
                su, sv = 0.0, 0.0
            else:
                su, sv = fu, fv
            for r in range(starts[d] + 1, ends[d]):
                du, dv = _row_terms(seen[r] & m, resid[r], g1[k, st[r]], g0[k, st[r]])
                su += du
                sv += dv
            if rest_apart and ends[d] - starts[d] > 1:
                su, sv = fu + su, fv + sv
            elif rest_apart:
                su, sv = fu, fv
            zu[k, d] = su
            zv[k, d] = sv
    return zu, zv


@njit(cache=True, nogil=True)
def mh_histogram(seen: np.ndarray, masks: np.ndarray, group: np.ndarray, turns: np.ndarray,
                 y: np.ndarray, n1: np.ndarray, a: np.ndarray) -> None:
    """Add one deck's rows to ``n1`` and ``a`` [cards, groups, turns]: per card, the rows
    where it was seen and their wins (``y`` is 0/1), by the row's (players, turn order)
    ``group`` and its game's ``turns``: the Mantel-Haenszel counts per stratum, before
    the turn bands are known. Whole numbers, exact in float64."""
    n_k = masks.shape[0]
    for k in range(n_k):
        m = masks[k]
        for r in range(seen.shape[0]):
            if seen[r] & m:
                n1[k, group[r], turns[r]] += 1.0
                a[k, group[r], turns[r]] += y[r]


@njit(cache=True, nogil=True)
def fold_deal_terms(zu: np.ndarray, zv: np.ndarray, table: np.ndarray, est: np.ndarray,
                    v: np.ndarray, row: np.ndarray, zs: np.ndarray, zss: np.ndarray,
                    zm: np.ndarray) -> None:
    """Per card (row of ``zu``, ``zv`` [cards, deals]) and deal, in deal order: the
    per-table moments of (dU, dV) into ``zm`` [5, cards, tables] (Σ dU, Σ dV, Σ dU²,
    Σ dV², Σ dU·dV), and, for a card with an estimate (``row[k] >= 0``), its
    ``z = (dU - est dV) / V`` and ``z²`` into row ``row[k]`` of ``zs``, ``zss``, per
    table."""
    n_k, n_d = zu.shape
    for k in range(n_k):
        r = row[k]
        for d in range(n_d):
            t = table[d]
            u = zu[k, d]
            w = zv[k, d]
            zm[0, k, t] += u
            zm[1, k, t] += w
            zm[2, k, t] += u * u
            zm[3, k, t] += w * w
            zm[4, k, t] += u * w
            if r >= 0:
                z = (u - est[k] * w) / v[k]
                zs[r, t] += z
                zss[r, t] += z * z


@njit(cache=True, nogil=True)
def fold_seat_rows(unit: np.ndarray, table: np.ndarray, keys: np.ndarray, w: np.ndarray,
                   yidx: np.ndarray, nidx: np.ndarray, x: np.ndarray, tot: np.ndarray,
                   exp_family: int, e_d: np.ndarray, e_tot: np.ndarray, e_sa: np.ndarray,
                   e_sw: np.ndarray, e_maa: np.ndarray, e_maw: np.ndarray,
                   e_mww: np.ndarray) -> None:
    """The report fold's seat-row families over one part (``fold.RunFold``), in one pass.

    Rows in deal order: ``unit`` (deal index), ``table[unit]`` its table code; per family
    f, ``keys[f, row]`` the row's key (-1: not in the family), numerators ``w[yidx[f, r]]``
    (r < 4, -1 unused) and denominator ``w[nidx[f]]`` (-1: 1 per row); ``w`` rows: won,
    the four paths' wins, draws. Adds per (f, key, table) the deal moments (``x`` [f, 15,
    key, table]: d, Σn, Σn², Σy_r, Σy_r², Σy_r·n) and per (f, key) the totals (``tot``:
    rows, won, draws, wins by path); for family ``exp_family`` (keyed by deck) also the
    deck-pool expectation's per-table moments of each deal's (wins by path, wins) per deck
    (``paths.PathExpectation``, over ``e_*``). Sums of whole numbers: exact in any order."""
    n_f, n = keys.shape
    n_k = x.shape[2]
    acc_n = np.zeros((n_f, n_k))
    acc_y = np.zeros((n_f, n_k, 4))
    acc_rows = np.zeros((n_f, n_k))
    stamp = np.full((n_f, n_k), -1, dtype=np.int64)
    touched = np.empty((n_f, n_k), dtype=np.int64)
    n_touched = np.zeros(n_f, dtype=np.int64)
    r0 = 0
    while r0 < n:
        u = unit[r0]
        r1 = r0
        while r1 < n and unit[r1] == u:
            r1 += 1
        t = table[u]
        for f in range(n_f):
            n_touched[f] = 0
            for r in range(r0, r1):
                k = keys[f, r]
                if k < 0:
                    continue
                if stamp[f, k] != u:
                    stamp[f, k] = u
                    acc_n[f, k] = 0.0
                    acc_rows[f, k] = 0.0
                    for j in range(4):
                        acc_y[f, k, j] = 0.0
                    touched[f, n_touched[f]] = k
                    n_touched[f] += 1
                acc_rows[f, k] += 1.0
                acc_n[f, k] += 1.0 if nidx[f] < 0 else w[nidx[f], r]
                for j in range(4):
                    if yidx[f, j] >= 0:
                        acc_y[f, k, j] += w[yidx[f, j], r]
                tot[f, k, 0] += 1.0
                tot[f, k, 1] += w[0, r]
                tot[f, k, 2] += w[5, r]
                for j in range(4):
                    tot[f, k, 3 + j] += w[1 + j, r]
            for i in range(n_touched[f]):
                k = touched[f, i]
                nn = acc_n[f, k]
                x[f, 0, k, t] += 1.0
                x[f, 1, k, t] += nn
                x[f, 2, k, t] += nn * nn
                for j in range(4):
                    y = acc_y[f, k, j]
                    x[f, 3 + j, k, t] += y
                    x[f, 7 + j, k, t] += y * y
                    x[f, 11 + j, k, t] += y * nn
        m = n_touched[exp_family]
        if m:
            e_d[t] += 1.0
            f = exp_family
            for i in range(m):
                a = touched[f, i]
                wa = acc_n[f, a]  # the family's denominator: wins
                e_tot[0, a] += acc_rows[f, a]
                e_tot[1, a] += wa
                e_sw[t, a] += wa
                for j in range(4):
                    e_tot[2 + j, a] += acc_y[f, a, j]
                    e_sa[j, t, a] += acc_y[f, a, j]
                for i2 in range(m):
                    b = touched[f, i2]
                    wb = acc_n[f, b]
                    e_mww[t, a, b] += wa * wb
                    for j in range(4):
                        e_maa[j, t, a, b] += acc_y[f, a, j] * acc_y[f, b, j]
                        e_maw[j, t, a, b] += acc_y[f, a, j] * wb
        r0 = r1


@njit(cache=True, nogil=True)
def two_player_deals(r0: np.ndarray, unit: np.ndarray, deck: np.ndarray, won: np.ndarray,
                     first: np.ndarray, rank: np.ndarray, n_decks: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each two-player deal's outcome per matchup (``nash.matchup_deals``): for the games
    whose seat rows are ``r0[i]`` and ``r0[i] + 1`` (in deal order), per (deal, decks a <
    b by ``rank``): the pair ``a * n_decks + b``, the deal's ``unit``, and a's then b's
    wins and games moving first, wins and games moving second (int64[8]). Games of a deck
    against itself are left out."""
    n = r0.shape[0]
    pairs = np.empty(n, dtype=np.int64)
    units = np.empty(n, dtype=np.int64)
    vals = np.zeros((n, 8), dtype=np.int64)
    m = 0
    for i in range(n):
        r = r0[i]
        da, db = deck[r], deck[r + 1]
        if da == db:
            continue
        a, b = (da, db) if rank[da] < rank[db] else (db, da)
        code = a * n_decks + b
        u = unit[r]
        j = m - 1  # a deal's games are together: look back over this deal's pairs
        while j >= 0 and units[j] == u and pairs[j] != code:
            j -= 1
        if j < 0 or units[j] != u:
            j = m
            pairs[j] = code
            units[j] = u
            m += 1
        for q in (r, r + 1):
            side = 0 if deck[q] == a else 4
            w = won[q]
            f = first[q]
            vals[j, side + 0] += w and f
            vals[j, side + 1] += f
            vals[j, side + 2] += w and not f
            vals[j, side + 3] += not f
    return pairs[:m], units[:m], vals[:m]
