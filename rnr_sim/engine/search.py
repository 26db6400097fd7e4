"""The search pilot: Monte-Carlo over the Play Phase's legal actions, its rollout pilot
as prior (rnr-sim issues 12 and 40), the yardstick the heuristic pilots are checked with.

At each Play Phase decision of a search seat (which card to play or activate next, an
Attack-on-Attack declaration, or stop), its rollout pilot's own pick is asked first (the
prior), then every legal action and "stop" is weighed by playing the game out from a copy
of the state: ``N`` determinizations of what the seat cannot see times ``K`` rollouts per
action, every rollout played to the end of the game by the heuristic pilots (the seat's
own weight row is its rollout pilot; the opponents keep theirs); score: win 1, draw 1/2,
loss 0. Every option is played on the same deals and streams, so each playout gives a
paired difference from the pick. The gate (``B_GATE``, z): the search leaves the pick only
for the option of the largest mean difference among those better than the pick by more
than z standard errors of that difference; z = 0 takes the best mean (issue 12's search,
which lost to its own rollout pilot on two sample decks: docs/benchmarks.md).

What the seat cannot see (R59): with open lists (``B_OPEN``) each opponent's hand and Draw
Pile are pooled and dealt again (``state_api.determinize``); with hidden lists, the
default, the opponents' hidden cards are first given cards anew from what the seat has
seen and a prior over the deck lists (``state_api.read_opponents``, once per decision;
``state_api.determinize_seen``, per playout). Either way its own Draw Pile is reshuffled
and its own hand and every public zone kept.

No peeking: a determinization starts from the hidden cards in slot order, never from
their place in the real state (with hidden lists, nor from their identity), and every
stream of the copy (shuffles, random discards, random pilots) is seeded anew, so two
states that differ only in what the seat cannot see give the same choices. Same seeds,
same game: every draw of the search comes from counter-based streams keyed by (the game's
streams' seed, seat, decision number, determinization, rollout); the actions of one
determinization and rollout share their deal and streams (common random numbers).

It plays through the rules' state API (``state_api.py``) only: ``next_decision`` brings the
game to a search seat's Play Phase, ``legal_actions`` lists, ``clone`` and the deal make the
copy a rollout starts from, ``apply_action`` applies an option (on the copy) or the pick
(on the game), ``play_out`` plays a copy to its end, ``end_turn`` ends the turn.

Scratch (``sg``, ``smemo``, ``sacts``, ``vals``, ``know``, ``post``): a second ``Game``
bundle without trace, a memo, an action list, the options' values (``N_VALUES``) and what
the seat believes of its opponents' lists, allocated once per worker
(``search_batch.search_state``); nothing is allocated per decision.
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
    BUDGET,
    BUDGETS,
    DECK_CARDS,
    DECK_SIZES,
    GAME,
    KNOW,
    MEMO,
    POSTERIOR,
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
    determinize_seen,
    end_turn,
    legal_actions,
    next_decision,
    play_out,
    read_opponents,
    record,
    start_game,
    start_play_phase,
)

# The budget row's columns are in layout.py (B_*: the driver reads them without the search).
SEARCH_WIDTH, B_ROLLOUTS, B_DETS, B_GATE, B_OPEN = (L.SEARCH_WIDTH, L.B_ROLLOUTS, L.B_DETS,
                                                   L.B_GATE, L.B_OPEN)
DEFAULT_GATE = L.DEFAULT_GATE
SEARCH_STREAM = 7  # the stream family of the search's keys (stream_seed's 4th argument)
#: ``vals`` holds three rows of this width: the options' means, the sums of their paired
#: differences from the rollout pilot's pick, and the sums of those differences squared.
ROW = L.MAX_ACTIONS + 1
N_VALUES = 3 * ROW


@njit(**INLINED)
def deal_hidden(t, sg, smemo, p, prior_cards, prior_size, know, post, open_lists, dseed,
                rseed):
    """A copy's hidden cards dealt anew: from the true lists (``determinize``) when they
    are open, else from what ``p`` has seen and the prior (``determinize_seen``, R59)."""
    if open_lists:
        determinize(sg, smemo, p, dseed, rseed)
    else:
        determinize_seen(t, sg, smemo, p, prior_cards, prior_size, know, post, dseed, rseed)


@njit(i8(TABLE, GAME, MEMO, ACTS, i8, i8, GAME, MEMO, ACTS, VALUES, BUDGET, DECK_CARDS,
         DECK_SIZES, KNOW, POSTERIOR, u8), **KERNEL)
@called
def search_action(t, g, memo, acts, n, p, sg, smemo, sacts, vals, budget, prior_cards,
                  prior_size, know, post, key):
    """The search pilot's pick among ``acts[:n]`` and stop (-1); ``vals[i]`` is left
    holding option i's mean score (``vals[n]``: stop). See the module docstring."""
    if n == 0:
        vals[0] = 0.0
        return -1
    k_roll, n_det = budget[B_ROLLOUTS], budget[B_DETS]
    open_lists = budget[B_OPEN] != 0
    # The rollout pilot's own choice is the prior: asked on a copy, so that neither what
    # it would queue (decisions.note_queued) nor a random pilot's draw touches the game.
    clone(g, memo, sg, smemo)
    pick = choose_action(t, sg, smemo, p, acts, n)
    ref = n if pick < 0 else pick
    for i in range(n + 1):
        vals[i] = 0.0
        vals[ROW + i] = 0.0
        vals[2 * ROW + i] = 0.0
    if not open_lists:
        read_opponents(t.cards, g, p, prior_cards, prior_size, know, post)
    for d in range(n_det):
        for r in range(k_roll):
            # The heuristic pilots are deterministic, so a rollout's only chance is its deal
            # of the hidden cards: each (determinization, rollout) gets its own deal.
            dseed = stream_seed(key, d, r, 1, 0)
            rseed = stream_seed(key, d, r, 2, 0)
            x_ref = 0.0
            for j in range(n + 1):  # the pick first, then the others in order
                i = ref if j == 0 else (j - 1 if j - 1 < ref else j)
                clone(g, memo, sg, smemo)
                deal_hidden(t, sg, smemo, p, prior_cards, prior_size, know, post, open_lists,
                            dseed, rseed)
                if i < n:  # as the rollout pilot would have, had it chosen the option
                    note_choice(t, sg, smemo, p, acts, i)
                    apply_action(t, sg, smemo, acts, p, i)
                x = play_out(t, sg, smemo, sacts, p, i == n)
                vals[i] += x
                if j == 0:
                    x_ref = x
                else:
                    vals[ROW + i] += x - x_ref
                    vals[2 * ROW + i] += (x - x_ref) * (x - x_ref)
    m = k_roll * n_det
    for i in range(n + 1):
        vals[i] /= m
    best = ref
    if budget[B_GATE] <= 0:  # issue 12: the best mean; a tie keeps the pick
        for i in range(n + 1):
            if vals[i] > vals[best]:
                best = i
    else:
        z = budget[B_GATE] / 100.0
        gain = 0.0
        for i in range(n + 1):
            if i == ref:
                continue
            md = vals[ROW + i] / m
            if md <= gain:
                continue
            var = max(vals[2 * ROW + i] / m - md * md, 0.0) * m / max(m - 1, 1)
            if md > z * np.sqrt(var / m):
                best = i
                gain = md
    return -1 if best == n else best


@njit(**KERNEL)
def search_decision(t, g, memo, acts, p, sg, smemo, sacts, vals, budget, prior_cards,
                    prior_size, know, post, key):
    """The first decision of ``p``'s Play Phase from this state (its Independence Phase
    done): ``(pick, n)``, the search pilot's pick among the ``n`` legal actions listed in
    ``acts`` (-1: stop), their values in ``vals`` (tests and tools)."""
    start_play_phase(t, g, memo, p)
    n = legal_actions(t, g, acts, p)
    return search_action(t, g, memo, acts, n, p, sg, smemo, sacts, vals, budget, prior_cards,
                         prior_size, know, post, key), n


@njit(**INLINED)
def search_play_phase(t, g, memo, acts, p, sg, smemo, sacts, vals, budget, prior_cards,
                      prior_size, know, post, base, dec):
    """Art. VII §5 phase three for a search seat (its start noted by ``next_decision``):
    each action picked by ``search_action`` and applied, until it picks stop; the trace
    gets each option's value (``EV_SEARCH``). Returns the decision count after it
    (``dec``: before)."""
    pl, sl, gm, tr = g.players, g.slots, g.game, g.trace
    while gm[L.G_OVER] == 0 and pl[p, L.P_ALIVE] != 0:
        n = legal_actions(t, g, acts, p)
        key = stream_seed(base, p, dec, SEARCH_STREAM, 0)
        dec += 1
        k = search_action(t, g, memo, acts, n, p, sg, smemo, sacts, vals, budget, prior_cards,
                          prior_size, know, post, key)
        if tr.shape[0] > 0 and n > 0:  # a forced stop is no decision
            for i in range(n + 1):
                card = sl[p, acts[i, L.A_SLOT], L.S_CARD] if i < n else -1
                kind = acts[i, L.A_KIND] if i < n else 0
                chosen = 1 if (i == k or (k < 0 and i == n)) else 0
                record(g, T.EV_SEARCH, p, card, kind, np.int64(vals[i] * 1000.0 + 0.5),
                       chosen, budget[B_DETS] * budget[B_ROLLOUTS])
        if k < 0:
            break
        note_choice(t, g, memo, p, acts, k)  # what the action taken queues (heal, repair ...)
        apply_action(t, g, memo, acts, p, k)
    return dec


@njit(void(TABLE, GAME, MEMO, ACTS, GAME, MEMO, ACTS, VALUES, BUDGETS, DECK_CARDS, DECK_SIZES,
           i8, i8, u8, i8, i8, DECK_CARDS, DECK_SIZES, KNOW, POSTERIOR), **KERNEL)
@called
def play_search_game(t, g, memo, acts, sg, smemo, sacts, vals, budgets, deck_cards, deck_size,
                     n_players, first_seat, seed, table_id, deal, prior_cards, prior_size,
                     know, post):
    """A game where the seats with ``budgets[q, B_ROLLOUTS] > 0`` are search pilots (their
    rows ``B_*``); the others play by their heuristic pilots (``game.play_game`` when none
    searches). ``prior_cards``/``prior_size``: the deck lists a seat that does not know its
    opponents' lists believes they play (R59; the run's decks); ``know``/``post``: its
    scratch (``state_api.read_opponents``)."""
    start_game(t, g, deck_cards, deck_size, n_players, first_seat, seed, table_id, deal)
    base = stream_seed(seed, table_id, deal, 100 + first_seat, SEARCH_STREAM)
    dec = 0
    p = next_decision(t, g, memo, acts, first_seat, budgets[:, B_ROLLOUTS])
    while p >= 0:
        dec = search_play_phase(t, g, memo, acts, p, sg, smemo, sacts, vals, budgets[p],
                                prior_cards, prior_size, know, post, base, dec)
        p = next_decision(t, g, memo, acts, end_turn(t, g, memo, p), budgets[:, B_ROLLOUTS])
