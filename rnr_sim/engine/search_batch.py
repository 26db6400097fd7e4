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
from rnr_sim.engine.search import N_VALUES, SEARCH_WIDTH, play_search_game


@njit(nogil=True, **BATCH)
def play_search_games_worker(k, n_workers, cards, deck_cards, deck_size, seat_deck,
                             seat_policy, policies, search, table_id, deal, first_seat, rules,
                             seed, debug, game_rec, seat_rec, gap, pl_w, sl_w, ls_w, gm_w,
                             masks_w, rng_w, dc_w, ds_w, w_w, memo_w, acts_w, tr, spl_w, ssl_w,
                             sls_w, sgm_w, smasks_w, srng_w, smemo_w, sacts_w, vals_w, kn_w,
                             know_w, post_w):
    """``play_games_worker`` with search pilots: ``search`` int64[k, SEARCH_WIDTH] holds
    each policy row's budget (``search.B_*``), all 0 for a heuristic pilot; the ``s*_w``
    arrays are each worker's search scratch (a second state), ``vals_w`` its options'
    values, ``kn_w`` its seats' budgets, ``know_w``/``post_w`` what a seat believes of
    its opponents' lists. The prior over lists is ``deck_cards``: every deck of the call
    (R59). One game per task."""
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
        kn[:] = 0
        for q in range(n_players):
            for b in range(SEARCH_WIDTH):
                kn[q, b] = search[seat_policy[i, q], b]
        g.game[L.G_DEBUG] = debug
        play_search_game(t, g, memo, acts, sg, smemo_w[j], sacts_w[j], vals_w[j], kn, dc, ds,
                         n_players, first_seat[i], seed, table_id[i], deal[i], deck_cards,
                         deck_size, know_w[j], post_w[j])
        write_records(g, n_players, game_rec[i], seat_rec[i])


def search_state(n_workers: int, n_decks: int = 1):
    """Each worker's search scratch after ``worker_state``'s own: a second game state, memo
    and action list, the options' values, the seats' budgets, and what a seat believes of
    its opponents' lists among ``n_decks`` (``state_api.read_opponents``)."""
    gap, arrays = worker_state(n_workers)
    extra = [np.zeros((n_workers * gap, N_VALUES), dtype=np.float64),
             np.zeros((n_workers * gap, E.MAX_PLAYERS, SEARCH_WIDTH), dtype=np.int64),
             np.zeros((n_workers * gap, E.MAX_PLAYERS + 1, n_decks, E.MAX_SLOTS + 1),
                      dtype=np.int64),
             np.zeros((n_workers * gap, E.MAX_PLAYERS, n_decks), dtype=np.float64)]
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
               game_rec, seat_rec, np.int64(gap), *state, tr,
               *search_state(n_workers, len(deck_cards)))
    return state
