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

It plays through the rules' state API (``state_api.py``) only: ``next_decision`` brings the
game to a search seat's Play Phase, ``legal_actions`` lists, ``clone`` and ``determinize``
make the copy a rollout starts from, ``apply_action`` applies an option (on the copy) or the
pick (on the game), ``play_out`` plays a copy to its end, ``end_turn`` ends the turn.

Scratch (``sg``, ``smemo``, ``sacts``, ``vals``): a second ``Game`` bundle without trace,
a memo, an action list and the options' values, allocated once per worker
(``batch.worker_state``); nothing is allocated per decision.
"""

import numpy as np
from numba import njit

from rnr_sim.engine import layout as L
from rnr_sim.engine import trace as T
from rnr_sim.engine.config import INLINED, KERNEL, called
from rnr_sim.engine.decisions import choose_action, note_choice
from rnr_sim.engine.rng import stream_seed
from rnr_sim.engine.sig import (
    ACTS,
    BUDGETS,
    DECK_CARDS,
    DECK_SIZES,
    GAME,
    MEMO,
    TABLE,
    VALUES,
    i8,
    u8,
    void,
)
from rnr_sim.engine.state_api import (
    apply_action,
    clone,
    determinize,
    end_turn,
    legal_actions,
    next_decision,
    play_out,
    record,
    start_game,
    start_play_phase,
)

SEARCH_WIDTH = 2  # per policy row: rollouts per action and determination (K), determinizations (N)
SEARCH_STREAM = 7  # the stream family of the search's keys (stream_seed's 4th argument)


@njit(i8(TABLE, GAME, MEMO, ACTS, i8, i8, GAME, MEMO, ACTS, VALUES, i8, i8, u8), **KERNEL)
@called
def search_action(t, g, memo, acts, n, p, sg, smemo, sacts, vals, k_roll, n_det, key):
    """The search pilot's pick among ``acts[:n]`` and stop (-1); ``vals[i]`` is left
    holding option i's mean score (``vals[n]``: stop). See the module docstring."""
    if n == 0:
        vals[0] = 0.0
        return -1
    # The rollout pilot's own choice breaks ties: asked on a copy, so that neither what it
    # would queue (decisions.note_queued) nor a random pilot's draw touches the game.
    clone(g, memo, sg, smemo)
    pick = choose_action(t, sg, smemo, p, acts, n)
    for i in range(n + 1):
        vals[i] = 0.0
    for d in range(n_det):
        for r in range(k_roll):
            # The heuristic pilots are deterministic, so a rollout's only chance is its deal
            # of the hidden cards: each (determinization, rollout) gets its own deal.
            dseed = stream_seed(key, d, r, 1, 0)
            rseed = stream_seed(key, d, r, 2, 0)
            for i in range(n + 1):
                clone(g, memo, sg, smemo)
                determinize(sg, smemo, p, dseed, rseed)
                if i < n:  # as the rollout pilot would have, had it chosen the option
                    note_choice(t, sg, smemo, p, acts, i)
                    apply_action(t, sg, smemo, acts, p, i)
                vals[i] += play_out(t, sg, smemo, sacts, p, i == n)
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
    start_play_phase(t, g, memo, p)
    n = legal_actions(t, g, acts, p)
    return search_action(t, g, memo, acts, n, p, sg, smemo, sacts, vals, k_roll, n_det,
                         key), n


@njit(**INLINED)
def search_play_phase(t, g, memo, acts, p, sg, smemo, sacts, vals, k_roll, n_det, base, dec):
    """Art. VII §5 phase three for a search seat (its start noted by ``next_decision``):
    each action picked by ``search_action`` and applied, until it picks stop; the trace
    gets each option's value (``EV_SEARCH``). Returns the decision count after it
    (``dec``: before)."""
    pl, sl, gm, tr = g.players, g.slots, g.game, g.trace
    while gm[L.G_OVER] == 0 and pl[p, L.P_ALIVE] != 0:
        n = legal_actions(t, g, acts, p)
        key = stream_seed(base, p, dec, SEARCH_STREAM, 0)
        dec += 1
        k = search_action(t, g, memo, acts, n, p, sg, smemo, sacts, vals, k_roll, n_det, key)
        if tr.shape[0] > 0 and n > 0:  # a forced stop is no decision
            for i in range(n + 1):
                card = sl[p, acts[i, L.A_SLOT], L.S_CARD] if i < n else -1
                kind = acts[i, L.A_KIND] if i < n else 0
                chosen = 1 if (i == k or (k < 0 and i == n)) else 0
                record(g, T.EV_SEARCH, p, card, kind, np.int64(vals[i] * 1000.0 + 0.5),
                       chosen, n_det * k_roll)
        if k < 0:
            break
        note_choice(t, g, memo, p, acts, k)  # what the action taken queues (heal, repair ...)
        apply_action(t, g, memo, acts, p, k)
    return dec


@njit(void(TABLE, GAME, MEMO, ACTS, GAME, MEMO, ACTS, VALUES, BUDGETS, BUDGETS, DECK_CARDS,
           DECK_SIZES, i8, i8, u8, i8, i8), **KERNEL)
@called
def play_search_game(t, g, memo, acts, sg, smemo, sacts, vals, k_seat, n_seat,
                     deck_cards, deck_size, n_players, first_seat, seed, table_id, deal):
    """A game where the seats with ``k_seat[q] > 0`` are search pilots (``k_seat[q]``
    rollouts per action and determinization, ``n_seat[q]`` determinizations); the others
    play by their heuristic pilots (``game.play_game`` when none searches)."""
    start_game(t, g, deck_cards, deck_size, n_players, first_seat, seed, table_id, deal)
    base = stream_seed(seed, table_id, deal, 100 + first_seat, SEARCH_STREAM)
    dec = 0
    p = next_decision(t, g, memo, acts, first_seat, k_seat)
    while p >= 0:
        dec = search_play_phase(t, g, memo, acts, p, sg, smemo, sacts, vals, k_seat[p],
                                n_seat[p], base, dec)
        p = next_decision(t, g, memo, acts, end_turn(t, g, memo, p), k_seat)
