"""Batch kernels: many games on worker threads, and one game with its trace.

The kernels allocate nothing: numba's allocation and array-copy helpers cost seconds of
first compile, so the workers' scratch state is allocated here in Python (``new_state``,
``worker_state``) and reset per game. Worker k of n (one thread each, ``on_workers``) plays
tasks k, k + n, ... in its own copy of the state, and every game writes only its own
output rows, so no two threads write the same memory; the copies sit ``gap`` rows apart,
so no two workers' copies share a cache line. The kernels run without reference counting
(``_nrt=False``, config.py): nothing to count, and no counts to bounce between cores on the
shared tables.
"""

import threading

import numba
import numpy as np
from numba import njit

from rnr_sim import enums as E
from rnr_sim.engine import layout as L
from rnr_sim.engine import policies as W
from rnr_sim.engine.config import BATCH, INLINED
from rnr_sim.engine.decisions import MEMO_WIDTH
from rnr_sim.engine.game import play_game
from rnr_sim.engine.records import new_records

GAMES_PER_TASK = 256  # games per task; worker k of n plays tasks k, k + n, ...

# One game's state: (name, per-game shape, dtype), in the kernels' argument order.
STATE = (
    ("pl", (E.MAX_PLAYERS, L.N_PLAYER_FIELDS), np.int32),
    ("sl", (E.MAX_PLAYERS, E.MAX_SLOTS, L.N_SLOT_FIELDS), np.int32),
    ("ls", (E.MAX_PLAYERS, L.N_LISTS, E.MAX_SLOTS), np.int16),
    ("gm", (L.N_GAME_FIELDS,), np.int64),
    ("masks", (E.MAX_PLAYERS, L.N_MASKS), np.uint64),
    ("rng", (E.MAX_PLAYERS + 1,), np.uint64),
)
SEATS = (  # the seats' decks and policy weights, loaded per game
    ("dc", (E.MAX_PLAYERS, E.MAX_SLOTS), np.int32),
    ("ds", (E.MAX_PLAYERS,), np.int32),
    ("w", (E.MAX_PLAYERS, W.N_WEIGHTS), np.float64),
    ("memo", (E.MAX_PLAYERS, MEMO_WIDTH), np.float64),  # the pilots' memory (decisions.py)
    ("acts", (L.MAX_ACTIONS, L.ACT_WIDTH), np.int64),  # the Play Phase's legal actions (game.py)
)


def new_state():
    """Zeroed state of one game: (pl, sl, ls, gm, masks, rng)."""
    return tuple(np.zeros(shape, dtype=dtype) for _, shape, dtype in STATE)


@njit(**BATCH)
def load_seats(i, deck_cards, deck_size, seat_deck, seat_policy, policies, dc, ds, w):
    """Game ``i``'s decks and policy weights into the worker's ``dc``, ``ds``, ``w``."""
    n_players = seat_deck.shape[1]
    for q in range(n_players):
        d = seat_deck[i, q]
        ds[q] = deck_size[d]
        for s in range(E.MAX_SLOTS):
            dc[q, s] = deck_cards[d, s]
        for j in range(W.N_WEIGHTS):
            w[q, j] = policies[seat_policy[i, q], j]


CACHE_LINE = 64  # bytes


def worker_state(n_workers: int):
    """Each worker's copy of a game's state and seats: ``(gap, arrays)``, worker k's copy of
    each array at index ``k * gap``, where ``gap`` leaves at least a cache line between
    two workers' copies. The deck slots start empty (-1)."""
    spec = STATE + SEATS
    smallest = min(int(np.prod(shape)) * np.dtype(dtype).itemsize for _, shape, dtype in spec)
    gap = 1 + -(-CACHE_LINE // smallest)
    arrays = [np.zeros((n_workers * gap, *shape), dtype=dtype) for _, shape, dtype in spec]
    arrays[len(STATE)][:] = -1  # dc
    return gap, arrays


@njit(**INLINED)
def worker_views(j, cards, rules, tr, pl_w, sl_w, ls_w, gm_w, masks_w, rng_w, dc_w, ds_w, w_w,
                 memo_w, acts_w):
    """Row ``j`` of the preallocated arrays, as a worker uses them: its seats' decks and
    policy weights (``dc``, ``ds``, ``w``, filled per game by ``load_seats``), its bundles
    ``t`` and ``g`` (views, layout.py), its memo and its action list."""
    w = w_w[j]
    g = L.Game(pl_w[j], sl_w[j], ls_w[j], gm_w[j], masks_w[j], rng_w[j], tr)
    return dc_w[j], ds_w[j], w, L.Table(cards, rules, w), g, memo_w[j], acts_w[j]


@njit(nogil=True, **BATCH)
def play_games_worker(k, n_workers, cards, deck_cards, deck_size, seat_deck, seat_policy,
                      policies, table_id, deal, first_seat, rules, seed, debug, game_rec,
                      seat_rec, gap, pl_w, sl_w, ls_w, gm_w, masks_w, rng_w, dc_w, ds_w, w_w,
                      memo_w, acts_w, tr):
    """Worker ``k`` of ``n_workers`` (``on_workers`` runs one per thread, without the GIL):
    it plays tasks k, k + n, ... of ``GAMES_PER_TASK`` games in its own rows of the ``*_w``
    state (the first axis, over ``gap``). ``tr`` is the trace: no rows in bulk runs (one
    worker only when it has rows)."""
    n = seat_deck.shape[0]
    n_players = seat_deck.shape[1]
    n_tasks = (n + GAMES_PER_TASK - 1) // GAMES_PER_TASK
    dc, ds, w, t, g, memo, acts = worker_views(k * gap, cards, rules, tr, pl_w, sl_w, ls_w,
                                               gm_w, masks_w, rng_w, dc_w, ds_w, w_w,
                                               memo_w, acts_w)
    gm = g.game
    for task in range(k, n_tasks, n_workers):
        lo = np.int64(task) * GAMES_PER_TASK
        hi = min(lo + GAMES_PER_TASK, n)
        for i in range(lo, hi):
            load_seats(i, deck_cards, deck_size, seat_deck, seat_policy, policies, dc, ds, w)
            gm[L.G_DEBUG] = debug
            play_game(t, g, memo, acts, dc, ds, n_players, first_seat[i], seed, table_id[i],
                      deal[i])
            write_records(g, n_players, game_rec[i], seat_rec[i])


@njit(**BATCH)
def write_records(g, n_players, rec, seat_rec):
    """A finished game's fields into its game record and seat records."""
    pl, gm, masks = g.players, g.game, g.masks
    rec["winner_seat"] = gm[L.G_WINNER]
    rec["path"] = gm[L.G_PATH]
    rec["turns"] = gm[L.G_TURN]
    rec["violations"] = gm[L.G_VIOLATIONS]
    for q in range(n_players):
        seat = seat_rec[q]
        seat["final_lp"] = pl[q, L.P_LP]
        seat["uas_lost"] = pl[q, L.P_UAS_LOST]
        seat["petitions"] = pl[q, L.P_N_PETITIONS]
        seat["scroll_pillars"] = pl[q, L.P_N_SCROLL_PILLARS]
        seat["mulligan"] = pl[q, L.P_MULLIGAN] != 0
        seat["p2_right"] = pl[q, L.P_P2_RIGHT] != 0
        seat["opening_mask"] = masks[q, L.M_OPENING]
        seat["drawn_mask"] = masks[q, L.M_DRAWN]
        seat["played_mask"] = masks[q, L.M_PLAYED]


def on_workers(worker, n_workers: int, *args) -> None:
    """Run ``worker(k, n_workers, *args)`` for k = 0 .. n_workers - 1, each on its own
    thread: the workers release the GIL (``nogil``), write disjoint rows, and share nothing
    else, so the threads run in parallel and the results do not depend on their number or
    order. The calling thread waits; a Ctrl-C reaches it at once (the workers' threads are
    daemons, left to finish on their own). The first worker error is raised here."""
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            worker(np.int64(k), np.int64(n_workers), *args)
        except BaseException as e:  # noqa: BLE001  (re-raised in the calling thread)
            errors.append(e)

    if n_workers == 1:
        worker(np.int64(0), np.int64(1), *args)
        return
    threads = [threading.Thread(target=work, args=(k,), daemon=True,
                                name=f"rnr-sim worker {k}") for k in range(n_workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


def play_games_nb(cards, deck_cards, deck_size, seat_deck, seat_policy, policies, table_id,
                  deal, first_seat, rules, seed, debug, game_rec, seat_rec, search=None):
    """Play ``n`` games on ``numba.get_num_threads()`` workers. Shapes:
    ``seat_deck``/``seat_policy`` int32[n, P]; ``game_rec`` ``records.GAME_RECORD[n]``;
    ``seat_rec`` ``records.SEAT_RECORD[n, P]`` (``records.new_records``). Arrays
    C-contiguous, of the dtypes ``driver.play_games`` passes. ``search``:
    int64[k, SEARCH_WIDTH] per policy row (rollouts, determinizations) when some seat is a
    search pilot (``search.py``), else None."""
    if search is not None:
        from rnr_sim.engine.search_batch import play_search_games  # compiled only when used

        play_search_games(cards, deck_cards, deck_size, seat_deck, seat_policy, policies,
                          search, table_id, deal, first_seat, rules, seed, debug, game_rec,
                          seat_rec, np.zeros((0, L.TRACE_WIDTH), dtype=np.int32),
                          max(1, min(numba.get_num_threads(), seat_deck.shape[0])))
        return
    n_tasks = (seat_deck.shape[0] + GAMES_PER_TASK - 1) // GAMES_PER_TASK
    n_workers = max(1, min(numba.get_num_threads(), n_tasks))
    gap, state = worker_state(n_workers)
    on_workers(play_games_worker, n_workers, cards, deck_cards, deck_size, seat_deck,
               seat_policy, policies, table_id, deal, first_seat, rules, seed, debug, game_rec,
               seat_rec, np.int64(gap), *state, np.zeros((0, L.TRACE_WIDTH), dtype=np.int32))


def trace_game_nb(cards, deck_cards, deck_size, seat_deck, seat_policy, policies, table_id,
                  deal, first_seat, rules, seed, capacity, search=None, with_seats=False):
    """Play one game with the trace on; returns (trace rows, game fields, player fields),
    and its seat records (``records.SEAT_RECORD[P]``: the final opening hand's slot mask,
    ...) after them with ``with_seats``. The batch kernel plays it (one worker, one game, debug checks
    on), so nothing more is compiled."""
    tr = np.zeros((capacity, L.TRACE_WIDTH), dtype=np.int32)
    game_rec, seat_rec = new_records(1, seat_deck.shape[1])
    if search is not None:
        from rnr_sim.engine.search_batch import play_search_games

        state = play_search_games(cards, deck_cards, deck_size, seat_deck, seat_policy,
                                  policies, search, table_id, deal, first_seat, rules, seed,
                                  np.int64(1), game_rec, seat_rec, tr, 1)
    else:
        gap, state = worker_state(1)
        on_workers(play_games_worker, 1, cards, deck_cards, deck_size, seat_deck, seat_policy,
                   policies, table_id, deal, first_seat, rules, seed, np.int64(1), game_rec,
                   seat_rec, np.int64(gap), *state, tr)
    pl, gm = state[0][0], state[3][0]  # worker 0's players and game (STATE order)
    if with_seats:
        return tr[: gm[L.G_N_TRACE]].copy(), gm.copy(), pl.copy(), seat_rec[0].copy()
    return tr[: gm[L.G_N_TRACE]].copy(), gm.copy(), pl.copy()
