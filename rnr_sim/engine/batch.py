"""Batch kernels: many games over ``prange``, and one game with its trace.

Each prange task owns its scratch state (allocated once per task, reset per game) and
writes only its own games' output rows, so no two threads touch the same memory.
"""

import numpy as np
from numba import njit, prange

from rnr_sim.engine.config import BATCH
from rnr_sim.engine.game import play_game
from rnr_sim.engine.layout import (
    G_DEBUG,
    G_N_TRACE,
    G_PATH,
    G_TURN,
    G_VIOLATIONS,
    G_WINNER,
    M_DRAWN,
    M_OPENING,
    M_PLAYED,
    N_GAME_FIELDS,
    N_LISTS,
    N_PLAYER_FIELDS,
    N_SLOT_FIELDS,
    P_LP,
    P_MULLIGAN,
    P_N_PETITIONS,
    P_N_SCROLL_PILLARS,
    P_P2_RIGHT,
    P_UAS_LOST,
    TRACE_WIDTH,
)
from rnr_sim.engine.policies import N_WEIGHTS, W_ROW
from rnr_sim.enums import MAX_PLAYERS, MAX_SLOTS

GAMES_PER_TASK = 256  # games per prange task: scratch state is allocated once per task


@njit(**BATCH)
def new_state():
    pl = np.zeros((MAX_PLAYERS, N_PLAYER_FIELDS), dtype=np.int32)
    sl = np.zeros((MAX_PLAYERS, MAX_SLOTS, N_SLOT_FIELDS), dtype=np.int32)
    ls = np.zeros((MAX_PLAYERS, N_LISTS, MAX_SLOTS), dtype=np.int16)
    gm = np.zeros(N_GAME_FIELDS, dtype=np.int64)
    masks = np.zeros((MAX_PLAYERS, 3), dtype=np.uint64)
    rng = np.zeros(MAX_PLAYERS + 1, dtype=np.uint64)
    return pl, sl, ls, gm, masks, rng


@njit(**BATCH)
def load_seats(g, deck_cards, deck_size, seat_deck, seat_policy, policies, dc, ds, w):
    n_players = seat_deck.shape[1]
    for q in range(n_players):
        d = seat_deck[g, q]
        ds[q] = deck_size[d]
        for s in range(MAX_SLOTS):
            dc[q, s] = deck_cards[d, s]
        w[q, :N_WEIGHTS] = policies[seat_policy[g, q], :]


@njit(parallel=True, **BATCH)
def play_games_nb(cards, deck_cards, deck_size, seat_deck, seat_policy, policies, table_id,
                  deal, first_seat, rules, seed, debug,
                  out_game, out_seat, out_mask):
    """Play ``n`` games. Shapes: ``seat_deck``/``seat_policy`` int32[n, P]; ``out_game``
    int32[n, 4] (winner, path, turns, invariant violations); ``out_seat`` int32[n, P, 6]
    (final LP, UAs lost, Petitions, Scroll Pillars, mulligan, P2 right); ``out_mask``
    uint64[n, P, 3] (opening, drawn, played)."""
    n = seat_deck.shape[0]
    n_players = seat_deck.shape[1]
    n_tasks = (n + GAMES_PER_TASK - 1) // GAMES_PER_TASK
    for task in prange(n_tasks):
        # Each task reads its own copies of the shared tables: the kernels' calls take
        # references to them, and shared reference counts would bounce between cores.
        cards_t = cards.copy()
        rules_t = rules.copy()
        policies_t = policies.copy()
        pl, sl, ls, gm, masks, rng = new_state()
        tr = np.zeros((0, TRACE_WIDTH), dtype=np.int32)
        dc = np.full((MAX_PLAYERS, MAX_SLOTS), -1, dtype=np.int32)
        ds = np.zeros(MAX_PLAYERS, dtype=np.int32)
        w = np.zeros((MAX_PLAYERS, W_ROW), dtype=np.float64)
        lo = np.int64(task) * GAMES_PER_TASK
        hi = min(lo + GAMES_PER_TASK, n)
        for g in range(lo, hi):
            load_seats(g, deck_cards, deck_size, seat_deck, seat_policy, policies_t, dc, ds, w)
            gm[G_DEBUG] = debug
            play_game(cards_t, rules_t, w, pl, sl, ls, gm, masks, rng, tr, dc, ds, n_players,
                      first_seat[g], seed, table_id[g], deal[g])
            out_game[g, 0] = gm[G_WINNER]
            out_game[g, 1] = gm[G_PATH]
            out_game[g, 2] = gm[G_TURN]
            out_game[g, 3] = gm[G_VIOLATIONS]
            for q in range(n_players):
                out_seat[g, q, 0] = pl[q, P_LP]
                out_seat[g, q, 1] = pl[q, P_UAS_LOST]
                out_seat[g, q, 2] = pl[q, P_N_PETITIONS]
                out_seat[g, q, 3] = pl[q, P_N_SCROLL_PILLARS]
                out_seat[g, q, 4] = pl[q, P_MULLIGAN]
                out_seat[g, q, 5] = pl[q, P_P2_RIGHT]
                out_mask[g, q, 0] = masks[q, M_OPENING]
                out_mask[g, q, 1] = masks[q, M_DRAWN]
                out_mask[g, q, 2] = masks[q, M_PLAYED]


@njit(**BATCH)
def trace_game_nb(cards, deck_cards, deck_size, seat_deck, seat_policy, policies, table_id,
                  deal, first_seat, rules, seed, capacity):
    """Play one game with the trace on; returns (trace rows, game fields, player fields)."""
    pl, sl, ls, gm, masks, rng = new_state()
    tr = np.zeros((capacity, TRACE_WIDTH), dtype=np.int32)
    dc = np.full((MAX_PLAYERS, MAX_SLOTS), -1, dtype=np.int32)
    ds = np.zeros(MAX_PLAYERS, dtype=np.int32)
    w = np.zeros((MAX_PLAYERS, W_ROW), dtype=np.float64)
    load_seats(0, deck_cards, deck_size, seat_deck, seat_policy, policies, dc, ds, w)
    gm[G_DEBUG] = 1
    play_game(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, dc, ds, seat_deck.shape[1],
              first_seat[0], seed, table_id[0], deal[0])
    return tr[: gm[G_N_TRACE]].copy(), gm.copy(), pl.copy()


