"""The state API for pilots, in the manner of OpenSpiel's ``legal_actions`` /
``apply_action`` / ``clone``: the kernels the rules export to a pilot that plays from
outside them (the search pilot, ``search.py``, and any later one). A pilot reads the state
through the layout (``layout.py``: ``g.players[p, L.P_LP]``, a row's ``acts[k, L.A_SLOT]``)
and changes it only through these kernels; how a turn is played, what is legal and how an
action resolves stay in ``game.py``.

A game with such pilots goes: ``start_game``; then ``next_decision`` plays turns by the
heuristic pilots until a seat that decides for itself is in its Play Phase (its Draw and
Independence Phases done); there the pilot lists the legal actions (``legal_actions``),
applies the ones it picks (``apply_action``) and stops, and ``end_turn`` plays the rest of
its turn (Resolve and End Phases). To look ahead a pilot copies the state (``clone``),
deals the cards it cannot see anew (``determinize``: Art. VI §1, §7), and plays the copy to
its end by the heuristic pilots (``play_out``). Nothing here allocates; the copy is the
pilot's own scratch.

The game's big steps a pilot reaches through here (``play_turns``, ``finish_play_phase``,
``finish_turn``, ``take_action``) are ``@called`` kernels (``linker.py``): compiled once
when this module is imported, called by the rollouts and the search's own game alike,
where copied into each they were compiled twice (the first compile's time, the same games
and speed: docs/benchmarks.md).
"""

import numpy as np
from numba import njit

from rnr_sim import enums as E
from rnr_sim.engine import layout as L
from rnr_sim.engine.config import INLINED, KERNEL, called
from rnr_sim.engine.decisions import PM_VALUE0
from rnr_sim.engine.game import (
    NOT_LAID_OUT,
    copy_into,
    do_action,
    emit,
    laid_out,
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
from rnr_sim.engine.game import legal_actions as list_legal_actions
from rnr_sim.engine.rng import rand_below, rand_unit, stream_seed
from rnr_sim.engine.sig import (
    ACTS,
    CARDS,
    DECK_CARDS,
    DECK_SIZES,
    GAME,
    KNOW,
    MEMO,
    POSTERIOR,
    TABLE,
    b1,
    f8,
    i8,
    u8,
    void,
)
from rnr_sim.engine.state import GAME_STREAM


# =============================================================================== a game
@njit(**INLINED)
def start_game(t, g, deck_cards, deck_size, n_players, first_seat, seed, table_id, deal):
    """Set a game up (Art. VII §1-4, Amend. VII-VIII; ``game.setup_game``)."""
    setup_game(t, g, deck_cards, deck_size, n_players, first_seat, seed, table_id, deal)


@njit(**INLINED)
def start_play_phase(t, g, memo, p):
    """``p``'s Play Phase begins (its Draw and Independence Phases done): what its pilots
    note before the first action, and the Attack-on-Attack targets (``legal_actions``)."""
    play_phase_start(t, g, memo, p)


@njit(void(TABLE, GAME, MEMO, i8), **KERNEL)
@called
def finish_turn(t, g, memo, p):
    """``game.turn_end``, compiled once for the state API's callers."""
    turn_end(t, g, memo, p)


@njit(void(TABLE, GAME, MEMO, ACTS, i8, i8), **KERNEL)
@called
def finish_play_phase(t, g, memo, acts, p, n_targets):
    """``game.play_phase_rest``, compiled once for the state API's callers."""
    play_phase_rest(t, g, memo, acts, p, n_targets)


@njit(void(TABLE, GAME, MEMO, i8, i8, i8, i8, i8), **KERNEL)
@called
def take_action(t, g, memo, p, kind, a, b, c):
    """``game.do_action``, compiled once for the state API's callers."""
    do_action(t, g, memo, p, kind, a, b, c)


@njit(i8(TABLE, GAME, MEMO, ACTS, i8, i8), **KERNEL)
@called
def play_turns(t, g, memo, acts, p, stop_turn):
    """``game.play_from``, compiled once for the state API's callers."""
    return play_from(t, g, memo, acts, p, stop_turn)


@njit(**INLINED)
def next_decision(t, g, memo, acts, p, deciding):
    """From the start of seat ``p``'s turn (-1: the game is over), play the turns of the
    seats with ``deciding[q] <= 0`` by their heuristic pilots, until a seat with
    ``deciding[q] > 0`` is in its Play Phase (``start_play_phase`` done): that seat, or -1
    when the game ended first (a victory, or R15's turn limit)."""
    gm = g.game
    limit = turn_limit(t.rules, gm[L.G_N_PLAYERS])
    while p >= 0 and gm[L.G_OVER] == 0:
        if deciding[p] <= 0:
            p = play_turns(t, g, memo, acts, p, gm[L.G_TURN] + 1)  # one heuristic turn
            continue
        if gm[L.G_TURN] >= limit:
            p = play_turns(t, g, memo, acts, p, limit)  # R15: the draw is declared there
            continue
        gm[L.G_ACTIVE] = p
        if turn_start(t, g, p):
            start_play_phase(t, g, memo, p)
            return p
        p = next_turn(t, g, p)  # ``p`` lost in its Draw Phase
    return -1


@njit(**INLINED)
def aoa_targets(t, g, p):
    """The opposing Attacks ``p`` may fight this Play Phase, as its start noted them
    (``start_play_phase``); 0 when Attack-on-Attack is switched off (R17)."""
    pl, gm = g.players, g.game
    n = 0
    if t.rules[E.R_AOA] != 0:
        for q in range(gm[L.G_N_PLAYERS]):
            if q != p:
                n += pl[q, L.P_N_AOA_TARGETS]
    return n


@njit(**INLINED)
def legal_actions(t, g, acts, p):
    """Every action ``p`` may take next in its Play Phase, listed in ``acts`` (one row an
    action, columns ``layout.A_*``; ``game.legal_actions``); returns how many. Stopping is
    always legal and not listed."""
    return list_legal_actions(t.cards, t.rules, g.players, g.slots, g.lists, g.game, p,
                              aoa_targets(t, g, p), acts)


@njit(**INLINED)
def apply_action(t, g, memo, acts, p, k):
    """Apply row ``k`` of the legal actions ``acts`` listed for ``p`` (Art. VII §5 phase
    three, §6); the list is stale after it (list again)."""
    take_action(t, g, memo, p, acts[k, L.A_KIND], acts[k, L.A_SLOT], acts[k, L.A_EFFECT],
              acts[k, L.A_TARGET])


@njit(**INLINED)
def end_turn(t, g, memo, p):
    """``p`` stops its Play Phase: the rest of its turn (Attack targets, Resolve and End
    Phases); the seat whose turn is next, or -1 when the game is over."""
    finish_turn(t, g, memo, p)
    return next_turn(t, g, p)


@njit(**INLINED)
def record(g, event, p, a, b, c, d, e):
    """One row of the game's trace (``trace.EV_*``; a trace of no rows records nothing)."""
    emit(g.game, g.trace, event, p, a, b, c, d, e)


# =============================================================================== looking ahead
@njit(void(GAME, MEMO, GAME, MEMO), **KERNEL)
def clone(g, memo, into, into_memo):
    """Copy a game's state (not its trace) and the pilots' memory into ``into`` and
    ``into_memo`` (arrays of the same shapes), each array as one flat copy; the copy's
    debug checks are off."""
    copy_into(into.players, g.players)
    copy_into(into.slots, g.slots)
    copy_into(into.lists, g.lists)
    copy_into(into.masks, g.masks)
    copy_into(into_memo, memo)
    copy_into(into.game, g.game)
    copy_into(into.rng, g.rng)
    into.game[L.G_DEBUG] = 0


@njit(**INLINED)
def deal_pool(pl, sl, ls, memo, rng, p, q, n, n_hand, kept):
    """Seat ``q``'s pool of hidden cards (``ls[q, L_DRAW, :n]``, in slot order) shuffled
    from the game stream and dealt back: ``n_hand`` cards to the hand after the ``kept``
    ones still in it (an opponent's; ``p``'s own hand is never pooled), the rest to the
    Draw Pile (Art. VI §1, §7); an opponent's noted card values forgotten. What
    ``determinize`` and ``determinize_seen`` share once each has made its pool."""
    for i in range(n - 1, 0, -1):  # Fisher-Yates over the pool
        j = rand_below(rng, GAME_STREAM, i + 1)
        x = ls[q, L.L_DRAW, i]
        ls[q, L.L_DRAW, i] = ls[q, L.L_DRAW, j]
        ls[q, L.L_DRAW, j] = x
    if q != p:
        pl[q, L.P_N_HAND] = kept
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
            memo[q, PM_VALUE0 + s] = np.nan


@njit(**INLINED)
def restart_streams(rng, rseed):
    """Every stream of a determinized state restarted from ``rseed``."""
    for k in range(rng.shape[0]):
        rng[k] = stream_seed(rseed, k, 0, 0, 0)


@njit(void(GAME, MEMO, i8, u8, u8), **KERNEL)
def determinize(g, memo, p, dseed, rseed):
    """Deal anew, from stream ``dseed``, what seat ``p`` cannot see: the Draw Piles are
    private (Art. VI §1) and so are the other hands, whose sizes are public (Art. VI §7).
    Each opponent's hand and Draw Pile are pooled in slot order, shuffled and dealt back
    (the same hand size), and ``p``'s own Draw Pile, in slot order, shuffled; ``p``'s hand
    and every open zone are kept. Starting from slot order, never from the cards' places,
    two states that differ only in what ``p`` cannot see are dealt alike. Then every
    stream of the state restarts from ``rseed``, and the opponents' noted card values are
    forgotten."""
    pl, sl, ls, rng = g.players, g.slots, g.lists, g.rng
    rng[GAME_STREAM] = dseed
    for q in range(g.game[L.G_N_PLAYERS]):
        n_hand = pl[q, L.P_N_HAND] if q != p else 0
        n = 0
        for s in range(pl[q, L.P_DECK_SIZE]):
            z = sl[q, s, L.S_ZONE]
            if z == L.Z_DRAW or (z == L.Z_HAND and q != p):
                ls[q, L.L_DRAW, n] = s  # the pool, in slot order
                n += 1
        deal_pool(pl, sl, ls, memo, rng, p, q, n, n_hand, 0)
    restart_streams(rng, rseed)


@njit(f8(TABLE, GAME, MEMO, ACTS, i8, b1), **KERNEL)
@called
def play_out(t, g, memo, acts, p, stopped):
    """Play the game to its end from ``p``'s Play Phase, every seat by its heuristic pilot:
    the rest of that Play Phase (none when ``stopped``), then its Resolve and End Phases and
    the turns after. ``p``'s score: a win 1, a draw 1/2, a loss 0. ``acts`` is scratch."""
    if not laid_out(t, g, memo, acts):  # constant strides from here on
        raise ValueError(NOT_LAID_OUT)
    gm = g.game
    if not stopped:
        finish_play_phase(t, g, memo, acts, p, aoa_targets(t, g, p))
    finish_turn(t, g, memo, p)
    q = next_turn(t, g, p)
    if q >= 0:
        play_turns(t, g, memo, acts, q, turn_limit(t.rules, gm[L.G_N_PLAYERS]))
    if gm[L.G_WINNER] == p:
        return 1.0
    if gm[L.G_WINNER] < 0:
        return 0.5
    return 0.0


# =============================================================================== what a seat knows
#: Pseudo-count of the prior toward the pool's card frequencies (``read_opponents``): a card
#: seen that a listed deck does not hold costs that deck about log(ALPHA x its pool share /
#: 60), so a deck outside the prior lowers every list's weight alike instead of ruling all
#: of them out.
PRIOR_ALPHA = 1.0


@njit(**INLINED)
def identity_known(sl, masks, q, s):
    """Whether every seat knows which card slot ``s`` of ``q`` holds: a card in a hand or
    a Draw Pile is hidden (Art. VI §1, §7) unless it was played once (a Bill back in hand,
    Art. IV §7.2) or bears a play's marks (its Bill count or flags); every other zone is
    open (Art. VI §2-6). A card recovered from the Discard Pile to a hand counts as hidden
    again: a seat forgets it (it knows less than it could, never more)."""
    z = sl[q, s, L.S_ZONE]
    if z != L.Z_HAND and z != L.Z_DRAW:
        return True
    if (masks[q, L.M_PLAYED] >> np.uint64(s)) & np.uint64(1):
        return True
    return sl[q, s, L.S_BILL_PLAYS] != 0 or sl[q, s, L.S_FLAGS] != 0


@njit(void(CARDS, GAME, i8, DECK_CARDS, DECK_SIZES, KNOW, POSTERIOR), **KERNEL)
def read_opponents(cards, g, p, prior_cards, prior_size, know, post):
    """What seat ``p`` may believe of each opponent's deck list when no list is public
    (Art. V §7 makes registration binding only in organized play; R59): the prior is the
    lists ``prior_cards[d, :prior_size[d]]`` (the decks of the run, each as likely),
    smoothed toward the pool they make (``PRIOR_ALPHA``); the evidence, the opponent's
    cards whose identity is known (``identity_known``: its open zones, UAs included, and
    the cards it played). For each opponent ``q`` and list ``d``: ``post[q, d]``, the
    posterior probability that ``q`` plays ``d`` (the seen cards drawn from ``d`` without
    replacement); ``know[q, d, :m]``, the cards of ``d`` the seen ones leave, ``m`` in
    ``know[q, d, MAX_SLOTS]``, never a UA (Art. IV §3.2: a UA is never in a hand or a
    pile; the seen UAs weigh the lists all the same). Once per decision
    (``determinize_seen`` deals from it)."""
    pl, sl, masks = g.players, g.slots, g.masks
    n_prior = prior_cards.shape[0]
    total = 0
    for d in range(n_prior):
        total += prior_size[d]
    for q in range(g.game[L.G_N_PLAYERS]):
        if q == p:
            continue
        best = -np.inf
        for d in range(n_prior):
            nd = prior_size[d]
            for i in range(nd):
                know[q, d, i] = prior_cards[d, i]
            ll = 0.0
            for s in range(pl[q, L.P_DECK_SIZE]):
                if not identity_known(sl, masks, q, s):
                    continue
                c = sl[q, s, L.S_CARD]
                m = 0
                at = -1
                for i in range(nd):
                    if know[q, d, i] == c:
                        m += 1
                        at = i
                pool = 0
                for e in range(n_prior):
                    for i in range(prior_size[e]):
                        if prior_cards[e, i] == c:
                            pool += 1
                # a card no list holds still has a pool share: half a copy
                share = (pool + 0.5) / (total + 1.0)
                ll += np.log((m + PRIOR_ALPHA * share) / (nd + PRIOR_ALPHA))
                if at >= 0:  # that copy is accounted for
                    know[q, d, at] = know[q, d, nd - 1]
                    nd -= 1
            m = 0
            for i in range(nd):  # Art. IV §3.2: the UAs left of a list are not hidden cards
                if cards[know[q, d, i], E.C_TYPE] != E.UA:
                    know[q, d, m] = know[q, d, i]
                    m += 1
            know[q, d, E.MAX_SLOTS] = m
            post[q, d] = ll
            best = max(best, ll)
        z = 0.0
        for d in range(n_prior):
            post[q, d] = np.exp(post[q, d] - best)
            z += post[q, d]
        for d in range(n_prior):
            post[q, d] /= z


@njit(**INLINED)
def name_slots(cards, sl, masks, q, size):
    """After ``determinize_seen`` gave hidden slots of ``q`` new cards: every Bill's name
    slot (the slot that counts the plays of its name, Art. IV §7.4) holds its card again,
    every other card's is its own slot (``game.setup_game``). A slot whose identity is
    known keeps its name slot when that still holds its card; a re-dealt Bill (no plays,
    no flags: ``identity_known``) takes the name slot of a slot of the same card that has
    one, else itself."""
    for s in range(size):
        ns = sl[q, s, L.S_NAME_SLOT]
        if cards[sl[q, s, L.S_CARD], E.C_TYPE] != E.BILL:
            sl[q, s, L.S_NAME_SLOT] = s
        elif not identity_known(sl, masks, q, s) or sl[q, ns, L.S_CARD] != sl[q, s, L.S_CARD]:
            sl[q, s, L.S_NAME_SLOT] = -1
    for s in range(size):
        if sl[q, s, L.S_NAME_SLOT] >= 0:
            continue
        c = sl[q, s, L.S_CARD]
        anchor = s
        for s0 in range(size):
            if s0 != s and sl[q, s0, L.S_CARD] == c and sl[q, s0, L.S_NAME_SLOT] >= 0:
                anchor = sl[q, s0, L.S_NAME_SLOT]
                break
        sl[q, s, L.S_NAME_SLOT] = anchor


@njit(void(TABLE, GAME, MEMO, i8, DECK_CARDS, DECK_SIZES, KNOW, POSTERIOR, u8, u8), **KERNEL)
def determinize_seen(t, g, memo, p, prior_cards, prior_size, know, post, dseed, rseed):
    """``determinize`` for a seat that does not know its opponents' lists (R59): each
    opponent's hidden cards (``identity_known``) are first given cards anew, from a list
    drawn from ``post`` (``read_opponents``): the cards that list leaves once the seen ones
    are taken out, in random order (when it leaves fewer than are hidden, the rest drawn
    from that list's cards, never a UA: Art. IV §3.2). The real identities of hidden cards
    are never read. Then as ``determinize``: the hidden cards pooled in slot order,
    shuffled and dealt back (the hand size kept, Art. VI §7, a hand card whose identity is
    known kept in hand), ``p``'s own Draw Pile reshuffled (it knows its own list), every
    stream reseeded from ``rseed``, the opponents' noted card values forgotten."""
    pl, sl, ls, rng, masks = g.players, g.slots, g.lists, g.rng, g.masks
    rng[GAME_STREAM] = dseed
    n_prior = prior_cards.shape[0]
    tmp = know[E.MAX_PLAYERS, 0]
    for q in range(g.game[L.G_N_PLAYERS]):
        size = pl[q, L.P_DECK_SIZE]
        if q != p:
            u = rand_unit(rng, GAME_STREAM)
            d = 0
            acc = post[q, 0]
            while u >= acc and d < n_prior - 1:
                d += 1
                acc += post[q, d]
            m = know[q, d, E.MAX_SLOTS]
            for i in range(m):
                tmp[i] = know[q, d, i]
            k = 0
            for s in range(size):
                if identity_known(sl, masks, q, s):
                    continue
                if k < m:  # a partial Fisher-Yates over the list's cards left
                    j = k + rand_below(rng, GAME_STREAM, m - k)
                    c = tmp[j]
                    tmp[j] = tmp[k]
                    tmp[k] = c
                else:
                    c = prior_cards[d, rand_below(rng, GAME_STREAM, prior_size[d])]
                    while t.cards[c, E.C_TYPE] == E.UA:  # Art. IV §3.2: never in a pile
                        c = prior_cards[d, rand_below(rng, GAME_STREAM, prior_size[d])]
                sl[q, s, L.S_CARD] = c
                k += 1
            name_slots(t.cards, sl, masks, q, size)
        # the hidden cards in slot order (a known hand card stays in hand), then dealt
        kept = 0
        if q != p:
            for i in range(pl[q, L.P_N_HAND]):
                s = ls[q, L.L_HAND, i]
                if identity_known(sl, masks, q, s):
                    ls[q, L.L_HAND, kept] = s
                    kept += 1
        n_hand = pl[q, L.P_N_HAND] - kept if q != p else 0
        n = 0
        for s in range(size):
            z = sl[q, s, L.S_ZONE]
            if z == L.Z_DRAW or (z == L.Z_HAND and q != p
                                 and not identity_known(sl, masks, q, s)):
                ls[q, L.L_DRAW, n] = s
                n += 1
        deal_pool(pl, sl, ls, memo, rng, p, q, n, n_hand, kept)
    restart_streams(rng, rseed)
