"""The search pilot's batch kernel: ``batch.play_games_worker`` with search seats.

Its own module, imported only when some seat searches (``batch.play_games_nb``), so a
run of heuristic pilots neither imports nor compiles the search (``search.py``).
"""

import numpy as np
from numba import njit

from rnr_sim import enums as E
from rnr_sim.engine import layout as L
from rnr_sim.engine.batch import (
    SEATS,
    STATE,
    load_seats,
    on_workers,
    worker_state,
    worker_views,
    write_records,
)
from rnr_sim.engine.config import BATCH
from rnr_sim.engine.search import SEARCH_WIDTH, play_search_game


@njit(nogil=True, **BATCH)
def play_search_games_worker(k, n_workers, cards, deck_cards, deck_size, seat_deck,
                             seat_policy, policies, search, table_id, deal, first_seat, rules,
                             seed, debug, game_rec, seat_rec, gap, pl_w, sl_w, ls_w, gm_w,
                             masks_w, rng_w, dc_w, ds_w, w_w, memo_w, acts_w, tr, spl_w, ssl_w,
                             sls_w, sgm_w, smasks_w, srng_w, smemo_w, sacts_w, vals_w, kn_w):
    """``play_games_worker`` with search pilots: ``search`` int64[k, SEARCH_WIDTH] holds
    each policy row's (rollouts, determinizations), (0, 0) for a heuristic pilot; the
    ``s*_w`` arrays are each worker's search scratch (a second state), ``vals_w`` its
    options' values, ``kn_w`` its seats' search budgets. One game per task."""
    n = seat_deck.shape[0]
    n_players = seat_deck.shape[1]
    notrace = tr[:0]
    j = k * gap
    dc, ds, w, t, g, memo, acts = worker_views(j, cards, rules, tr, pl_w, sl_w, ls_w, gm_w,
                                               masks_w, rng_w, dc_w, ds_w, w_w, memo_w,
                                               acts_w)
    sg = L.Game(spl_w[j], ssl_w[j], sls_w[j], sgm_w[j], smasks_w[j], srng_w[j], notrace)
    kn = kn_w[j]
    for i in range(k, n, n_workers):
        load_seats(i, deck_cards, deck_size, seat_deck, seat_policy, policies, dc, ds, w)
        for q in range(n_players):
            kn[0, q] = search[seat_policy[i, q], 0]
            kn[1, q] = search[seat_policy[i, q], 1]
        g.game[L.G_DEBUG] = debug
        play_search_game(t, g, memo, acts, sg, smemo_w[j], sacts_w[j], vals_w[j], kn[0],
                         kn[1], dc, ds, n_players, first_seat[i], seed, table_id[i], deal[i])
        write_records(g, n_players, game_rec[i], seat_rec[i])


def search_state(n_workers: int):
    """Each worker's search scratch after ``worker_state``'s own: a second game state, memo
    and action list, the options' values and the seats' (rollouts, determinizations)."""
    gap, arrays = worker_state(n_workers)
    extra = [np.zeros((n_workers * gap, L.MAX_ACTIONS + 1), dtype=np.float64),
             np.zeros((n_workers * gap, SEARCH_WIDTH, E.MAX_PLAYERS), dtype=np.int64)]
    spec = STATE + SEATS
    keep = [i for i, (name, *_r) in enumerate(spec) if name not in ("dc", "ds", "w")]
    return [arrays[i] for i in keep] + extra


def play_search_games(cards, deck_cards, deck_size, seat_deck, seat_policy, policies, search,
                      table_id, deal, first_seat, rules, seed, debug, game_rec, seat_rec, tr,
                      n_workers):
    """Play the games on ``n_workers`` workers, one game per task; returns the workers'
    state (``worker_state``'s arrays), worker 0's first."""
    gap, state = worker_state(n_workers)
    on_workers(play_search_games_worker, n_workers, cards, deck_cards, deck_size, seat_deck,
               seat_policy, policies, search, table_id, deal, first_seat, rules, seed, debug,
               game_rec, seat_rec, np.int64(gap), *state, tr, *search_state(n_workers))
    return state
