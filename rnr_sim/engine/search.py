"""The search pilot: flat Monte-Carlo over the Play Phase's legal actions (rnr-sim issue 12).

At each Play Phase decision of a search seat (which card to play or activate next, an
Attack-on-Attack declaration, or stop), every legal action and "stop" is weighed by
playing the game out from a copy of the state: ``N`` determinizations of what the seat
cannot see (each opponent's hand and Draw Pile pooled and dealt again, hand sizes kept;
its own Draw Pile reshuffled; its own hand and every public zone kept) times ``K``
rollouts per action, every rollout played to the end of the game by the heuristic pilots
(the seat's own weight row is its rollout pilot; the opponents keep theirs). The action
with the best mean score (win 1, draw 1/2, loss 0) is taken; on a tie, the rollout
pilot's own pick when it is among the best, else the first listed (stop is last).

No peeking: a determinization starts from the hidden cards in slot order, never from
their place in the real state, and every stream of the copy (shuffles, random discards,
random pilots) is seeded anew, so two states that differ only in what the seat cannot
see give the same choices. Same seeds, same game: every draw of the search comes from
counter-based streams keyed by (the game's streams' seed, seat, decision number,
determinization, rollout); the actions of one determinization and rollout share their
deal and streams (common random numbers).

Scratch (``sg``, ``smemo``, ``sacts``, ``vals``): a second ``Game`` bundle without trace,
a memo, an action list and the options' values, allocated once per worker
(``batch.worker_state``); nothing is allocated per decision.
"""

import numpy as np
from numba import njit

from rnr_sim import enums as E
from rnr_sim.engine import layout as L
from rnr_sim.engine import trace as T
from rnr_sim.engine.config import INLINED, KERNEL, called
from rnr_sim.engine.decisions import PM_VALUE0, choose_action
from rnr_sim.engine.game import (
    NOT_LAID_OUT,
    copy_into,
    do_action,
    emit,
    laid_out,
    legal_actions,
    list_push,
    next_turn,
    play_from,
    play_phase_rest,
    play_phase_start,
    setup_game,
    turn_end,
    turn_limit,
    turn_start,
)
from rnr_sim.engine.rng import rand_below, stream_seed
from rnr_sim.engine.sig import (
    ACTS,
    BUDGETS,
    DECK_CARDS,
    DECK_SIZES,
    GAME,
    MEMO,
    TABLE,
    VALUES,
    f8,
    i8,
    u8,
    void,
)
from rnr_sim.engine.state import GAME_STREAM

SEARCH_WIDTH = 2  # per policy row: rollouts per action and determination (K), determinizations (N)
SEARCH_STREAM = 7  # the stream family of the search's keys (stream_seed's 4th argument)


@njit(void(GAME, GAME, MEMO, MEMO), **KERNEL)
def copy_game(g, sg, memo, smemo):
    """Copy a game's state (not its trace) and the pilots' memo into ``sg`` and ``smemo``
    (arrays of the same shapes), each array as one flat copy (an array assignment would
    need numba's runtime); the copy's trace is off."""
    copy_into(sg.players, g.players)
    copy_into(sg.slots, g.slots)
    copy_into(sg.lists, g.lists)
    copy_into(sg.masks, g.masks)
    copy_into(smemo, memo)
    copy_into(sg.game, g.game)
    copy_into(sg.rng, g.rng)
    sg.game[L.G_DEBUG] = 0


@njit(void(GAME, MEMO, i8, u8, u8), **KERNEL)
def determinize(sg, smemo, p, dseed, rseed):
    """Redeal in ``sg`` what seat ``p`` cannot see, from stream ``dseed``: each opponent's
    hand and Draw Pile pooled in slot order, shuffled and dealt back (same hand size), and
    ``p``'s own Draw Pile in slot order, shuffled. Then every stream of the copy restarts
    from ``rseed``, and the opponents' noted card values are forgotten."""
    pl, sl, ls, rng = sg.players, sg.slots, sg.lists, sg.rng
    rng[GAME_STREAM] = dseed
    for q in range(sg.game[L.G_N_PLAYERS]):
        n_hand = pl[q, L.P_N_HAND] if q != p else 0
        n = 0
        for s in range(pl[q, L.P_DECK_SIZE]):
            z = sl[q, s, L.S_ZONE]
            if z == L.Z_DRAW or (z == L.Z_HAND and q != p):
                ls[q, L.L_DRAW, n] = s  # the pool, in slot order
                n += 1
        for i in range(n - 1, 0, -1):  # Fisher-Yates over the pool
            j = rand_below(rng, GAME_STREAM, i + 1)
            x = ls[q, L.L_DRAW, i]
            ls[q, L.L_DRAW, i] = ls[q, L.L_DRAW, j]
            ls[q, L.L_DRAW, j] = x
        if q != p:
            pl[q, L.P_N_HAND] = 0
        for i in range(n):
            s = ls[q, L.L_DRAW, i]
            if i < n_hand:
                sl[q, s, L.S_ZONE] = L.Z_HAND
                list_push(pl, ls, q, L.L_HAND, L.P_N_HAND, s)
            else:
                sl[q, s, L.S_ZONE] = L.Z_DRAW
                ls[q, L.L_DRAW, i - n_hand] = s
        pl[q, L.P_N_DRAW] = n - n_hand
        if q != p:
            for s in range(E.MAX_SLOTS):
                smemo[q, PM_VALUE0 + s] = np.nan
    for k in range(rng.shape[0]):
        rng[k] = stream_seed(rseed, k, 0, 0, 0)


@njit(void(TABLE, GAME, MEMO, ACTS, i8), **KERNEL)
@called
def finish_turn(t, g, memo, acts, p):
    """Seat ``p``'s turn after its Play Phase, then the game's next turns to the end."""
    if not laid_out(t, g, memo, acts):  # constant strides from here on
        raise ValueError(NOT_LAID_OUT)
    turn_end(t, g, memo, p)
    q = next_turn(t, g, p)
    if q >= 0:
        play_from(t, g, memo, acts, q, turn_limit(t.rules, g.game[L.G_N_PLAYERS]))


@njit(f8(TABLE, GAME, MEMO, ACTS, i8, i8, i8, i8, i8), **KERNEL)
@called
def rollout(t, sg, smemo, sacts, p, kind, a, b, c):
    """Play the copied game out after ``p`` takes action ``(kind, a, b, c)`` (kind 0:
    stop) in its Play Phase, every seat by its heuristic pilot; ``p``'s score."""
    if not laid_out(t, sg, smemo, sacts):  # constant strides from here on
        raise ValueError(NOT_LAID_OUT)
    pl, gm = sg.players, sg.game
    if kind != 0:
        do_action(t, sg, smemo, p, kind, a, b, c)
        n_targets = 0
        if t.rules[E.R_AOA] != 0:
            for q in range(gm[L.G_N_PLAYERS]):
                if q != p:
                    n_targets += pl[q, L.P_N_AOA_TARGETS]
        play_phase_rest(t, sg, smemo, sacts, p, n_targets)
    finish_turn(t, sg, smemo, sacts, p)
    if gm[L.G_WINNER] == p:
        return 1.0
    if gm[L.G_WINNER] < 0:
        return 0.5
    return 0.0


@njit(i8(TABLE, GAME, MEMO, ACTS, i8, i8, GAME, MEMO, ACTS, VALUES, i8, i8, u8), **KERNEL)
@called
def search_action(t, g, memo, acts, n, p, sg, smemo, sacts, vals, k_roll, n_det, key):
    """The search pilot's pick among ``acts[:n]`` and stop (-1); ``vals[i]`` is left
    holding option i's mean score (``vals[n]``: stop). See the module docstring."""
    if n == 0:
        vals[0] = 0.0
        return -1
    pick = choose_action(t, g, memo, p, acts, n)  # the rollout pilot's own choice: ties
    for i in range(n + 1):
        vals[i] = 0.0
    for d in range(n_det):
        for r in range(k_roll):
            # The heuristic pilots are deterministic, so a rollout's only chance is its deal
            # of the hidden cards: each (determinization, rollout) gets its own deal.
            dseed = stream_seed(key, d, r, 1, 0)
            rseed = stream_seed(key, d, r, 2, 0)
            for i in range(n + 1):
                copy_game(g, sg, memo, smemo)
                determinize(sg, smemo, p, dseed, rseed)
                if i < n:
                    vals[i] += rollout(t, sg, smemo, sacts, p, acts[i, L.A_KIND],
                                       acts[i, L.A_SLOT], acts[i, L.A_EFFECT],
                                       acts[i, L.A_TARGET])
                else:
                    vals[i] += rollout(t, sg, smemo, sacts, p, 0, -1, -1, -1)
    best = n if pick < 0 else pick
    for i in range(n + 1):
        vals[i] /= k_roll * n_det
    for i in range(n + 1):
        if vals[i] > vals[best]:
            best = i
    return -1 if best == n else best


@njit(**KERNEL)
def search_decision(t, g, memo, acts, p, sg, smemo, sacts, vals, k_roll, n_det, key):
    """The first decision of ``p``'s Play Phase from this state (its Independence Phase
    done): ``(pick, n)``, the search pilot's pick among the ``n`` legal actions listed in
    ``acts`` (-1: stop), their values in ``vals`` (tests and tools)."""
    n_targets = play_phase_start(t, g, memo, p)
    n = legal_actions(t.cards, t.rules, g.players, g.slots, g.lists, g.game, p, n_targets,
                      acts)
    return search_action(t, g, memo, acts, n, p, sg, smemo, sacts, vals, k_roll, n_det,
                         key), n


@njit(**INLINED)
def search_play_phase(t, g, memo, acts, p, sg, smemo, sacts, vals, k_roll, n_det, base, dec):
    """Art. VII §5 phase three for a search seat: as ``game.play_phase``, each action
    picked by ``search_action``; the trace gets each option's value (``EV_SEARCH``).
    Returns the decision count after it (``dec``: before)."""
    cards, rules = t.cards, t.rules
    pl, sl, ls, gm, tr = g.players, g.slots, g.lists, g.game, g.trace
    n_targets = play_phase_start(t, g, memo, p)
    while gm[L.G_OVER] == 0 and pl[p, L.P_ALIVE] != 0:
        n = legal_actions(cards, rules, pl, sl, ls, gm, p, n_targets, acts)
        key = stream_seed(base, p, dec, SEARCH_STREAM, 0)
        dec += 1
        k = search_action(t, g, memo, acts, n, p, sg, smemo, sacts, vals, k_roll, n_det, key)
        if tr.shape[0] > 0 and n > 0:  # a forced stop is no decision
            for i in range(n + 1):
                card = sl[p, acts[i, L.A_SLOT], L.S_CARD] if i < n else -1
                kind = acts[i, L.A_KIND] if i < n else 0
                chosen = 1 if (i == k or (k < 0 and i == n)) else 0
                emit(gm, tr, T.EV_SEARCH, p, card, kind, np.int64(vals[i] * 1000.0 + 0.5),
                     chosen, n_det * k_roll)
        if k < 0:
            break
        do_action(t, g, memo, p, acts[k, L.A_KIND], acts[k, L.A_SLOT], acts[k, L.A_EFFECT],
                  acts[k, L.A_TARGET])
    return dec


@njit(void(TABLE, GAME, MEMO, ACTS, GAME, MEMO, ACTS, VALUES, BUDGETS, BUDGETS, DECK_CARDS,
           DECK_SIZES, i8, i8, u8, i8, i8), **KERNEL)
@called
def play_search_game(t, g, memo, acts, sg, smemo, sacts, vals, k_seat, n_seat,
                     deck_cards, deck_size, n_players, first_seat, seed, table_id, deal):
    """``game.play_game`` where the seats with ``k_seat[q] > 0`` are search pilots
    (``k_seat[q]`` rollouts per action and determinization, ``n_seat[q]``
    determinizations); the others play by their heuristic pilots."""
    gm = g.game
    setup_game(t, g, deck_cards, deck_size, n_players, first_seat, seed, table_id, deal)
    limit = turn_limit(t.rules, n_players)
    base = stream_seed(seed, table_id, deal, 100 + first_seat, SEARCH_STREAM)
    dec = 0
    p = first_seat
    while p >= 0 and gm[L.G_OVER] == 0:
        if k_seat[p] <= 0:
            p = play_from(t, g, memo, acts, p, gm[L.G_TURN] + 1)  # one heuristic turn
            continue
        if gm[L.G_TURN] >= limit:
            p = play_from(t, g, memo, acts, p, limit)  # R15: the draw is declared there
            continue
        gm[L.G_ACTIVE] = p
        if turn_start(t, g, p):
            dec = search_play_phase(t, g, memo, acts, p, sg, smemo, sacts, vals, k_seat[p],
                                    n_seat[p], base, dec)
            turn_end(t, g, memo, p)
        p = next_turn(t, g, p)
