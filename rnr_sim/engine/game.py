"""The rules of Revolt N Reign as numba kernels: one complete game from a seed.

The kernels that act on the whole game take the two bundles of ``layout.py`` first: ``t``
(``Table``: the catalog ``cards``, the rules profile ``rules``, the seats' policy
``weights``) and ``g`` (``Game``: one game's ``players``, ``slots``, ``lists``, ``game``,
``masks``, ``rng`` and ``trace``), then the pilot's scratch where they need it (``memo``,
``acts``) and their scalars. A kernel names the arrays it uses at its top
(``pl = g.players``). Helpers that read a few arrays (``emit``, ``list_push``, ``lose``,
``put_in_play`` ...) take those arrays themselves. Fields (and the constants of ``enums``,
``policies``, ``trace``) are reached through their modules: ``L``, ``E``, ``W``, ``T``.
Nothing here allocates. What a pilot chooses (its next action, mulligan, targets) comes
from ``decisions``; this module applies the choice, and nothing here knows how a pilot
values a card. Kernels called from one place run inlined there
(``INLINED``, config.py). Comments cite the Constitution (Art., Amend.) or a ruling
(R-number, docs/rulings.md).
"""

import numpy as np
from numba import njit

from rnr_sim import enums as E
from rnr_sim.engine import layout as L
from rnr_sim.engine import policies as W
from rnr_sim.engine import trace as T
from rnr_sim.engine.config import INLINED, KERNEL, called, copied_not_inlined, inlined_by_llvm
from rnr_sim.engine.decisions import (
    MEMO_WIDTH,
    choose_action,
    choose_hand_limit_discard,
    choose_mulligan,
    choose_opponent,
    choose_p2_pillar,
    choose_strike_target,
    forget_card_values,
    forget_pillar_values,
    note_threats,
)
from rnr_sim.engine.rng import rand_below, stream_seed
from rnr_sim.engine.sig import (
    ACTS,
    CARDS,
    FIELDS,
    GAME,
    LISTS,
    MASKS,
    MEMO,
    PLAYERS,
    RNG,
    RULES,
    SLOTS,
    TABLE,
    TRACE,
    WEIGHTS,
    b1,
    i8,
    void,
)
from rnr_sim.engine.state import (  # noqa: F401 (the game's numbers, re-exported)
    GAME_STREAM,
    HAND_LIMIT,
    OPENING_HAND,
    PETITION_MIN_LP,
    PETITIONS_NEEDED,
    SCROLL_PILLARS_NEEDED,
    STARTING_LP,
    bears_each_turn,
    eff,
    effect_amount,
    has_lasting_effect,
    most_damaged,
    pillars_in_hand,
    play_cost,
    seat_after,
)


# =============================================================================== trace
@njit(void(FIELDS, TRACE, i8, i8, i8, i8, i8, i8, i8), **KERNEL)
def emit(gm, tr, event, seat, a, b, c, d, e):
    """Append one event to the trace; a zero-capacity trace records nothing (bulk runs)."""
    if tr.shape[0] == 0:
        return
    k = gm[L.G_N_TRACE]
    if k < tr.shape[0]:
        tr[k, 0] = gm[L.G_TURN]
        tr[k, 1] = event
        tr[k, 2] = seat
        tr[k, 3] = a
        tr[k, 4] = b
        tr[k, 5] = c
        tr[k, 6] = d
        tr[k, 7] = e
        gm[L.G_N_TRACE] = k + 1


# =============================================================================== lists
@njit(void(PLAYERS, LISTS, i8, i8, i8, i8), **KERNEL)
def list_push(pl, ls, p, lst, count_field, slot):
    n = pl[p, count_field]
    if n >= E.MAX_SLOTS:  # a full list: refuse the write (it would land in the next list)
        pl[p, L.P_LIST_OVERFLOW] += 1
        return
    ls[p, lst, n] = slot
    pl[p, count_field] = n + 1


@njit(b1(PLAYERS, LISTS, i8, i8, i8, i8), **KERNEL)
def list_remove(pl, ls, p, lst, count_field, slot):
    """Remove ``slot`` keeping the order of the rest (the Draw Pile's order matters)."""
    n = pl[p, count_field]
    j = -1
    for i in range(n):
        if ls[p, lst, i] == slot:
            j = i
            break
    if j < 0:
        return False
    for i in range(j, n - 1):
        ls[p, lst, i] = ls[p, lst, i + 1]
    pl[p, count_field] = n - 1
    return True


# =============================================================================== victory
@njit(void(FIELDS, TRACE, i8, i8, i8), **KERNEL)
def end_game(gm, tr, winner, path, rule):
    if gm[L.G_OVER] != 0:
        return
    gm[L.G_OVER] = 1
    gm[L.G_WINNER] = winner
    gm[L.G_PATH] = path
    gm[L.G_RULE] = rule
    emit(gm, tr, T.EV_VICTORY, winner, path, rule, 0, 0, 0)


@njit(i8(PLAYERS, FIELDS), **KERNEL)
def last_alive(pl, gm):
    for q in range(gm[L.G_N_PLAYERS]):
        if pl[q, L.P_ALIVE] != 0:
            return q
    return -1


@njit(void(RULES, PLAYERS, FIELDS, TRACE, i8, i8, i8), **KERNEL)
def lose(rules, pl, gm, tr, p, path, rule):
    """Player ``p`` meets a losing condition by ``path`` (R25, R26).

    Two players: the other wins by that path. Three or four, ``first_victory``: if ``p`` is
    not the active player, the active player brought it about and wins by that path; a
    player who loses on their own turn is eliminated. ``last_standing``: every loss
    eliminates; the last player left wins by the path of the final elimination.
    """
    if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
        return
    n = gm[L.G_N_PLAYERS]
    active = gm[L.G_ACTIVE]
    if n == 2:
        end_game(gm, tr, 1 - p, path, rule)  # R25
        return
    if rules[E.R_MULTIPLAYER] == E.MP_FIRST_VICTORY and p != active and pl[active, L.P_ALIVE] != 0:
        end_game(gm, tr, active, path, rule)  # R26: the active player brought it about
        return
    pl[p, L.P_ALIVE] = 0
    gm[L.G_N_ALIVE] -= 1
    emit(gm, tr, T.EV_ELIMINATED, p, path, rule, 0, 0, 0)
    if gm[L.G_N_ALIVE] == 1:
        end_game(gm, tr, last_alive(pl, gm), path, L.RULE_LAST_STANDING)  # R26


@njit(void(RULES, PLAYERS, FIELDS, TRACE, i8, i8, i8, i8), **KERNEL)
def change_lp(rules, pl, gm, tr, p, delta, cause, src_card):
    """Add ``delta`` LP; LP is checked continuously (Art. II §1, R23)."""
    old = pl[p, L.P_LP]
    lp = old + delta
    cap = rules[E.R_LP_CAP]
    if cap > 0 and delta > 0 and lp > cap:  # R14: gains stop at the cap
        lp = cap if cap > old else old
    if lp > L.LP_MAX:  # R46: LP is int32; gains stop at its top
        lp = L.LP_MAX
    elif lp < L.LP_MIN:
        lp = L.LP_MIN
    pl[p, L.P_LP] = lp
    emit(gm, tr, T.EV_LP, p, delta, lp, cause, src_card, 0)
    if lp <= 0:
        lose(rules, pl, gm, tr, p, E.PATH_LIFE, L.RULE_LP_ZERO)  # Art. III §1


# =============================================================================== drawing
@njit(b1(RULES, PLAYERS, SLOTS, LISTS, FIELDS, MASKS, TRACE, i8, b1), **KERNEL)
def draw_one(rules, pl, sl, ls, gm, masks, tr, p, in_draw_phase):
    """Draw the top card; an empty Draw Pile loses at once (Art. III §4, Art. VI §1, R23)."""
    n = pl[p, L.P_N_DRAW]
    if n == 0:
        rule = L.RULE_DECK_OUT_DRAW_PHASE if in_draw_phase else L.RULE_DECK_OUT_EFFECT
        lose(rules, pl, gm, tr, p, E.PATH_DECK_OUT, rule)
        return False
    s = ls[p, L.L_DRAW, n - 1]
    pl[p, L.P_N_DRAW] = n - 1
    sl[p, s, L.S_ZONE] = L.Z_HAND
    list_push(pl, ls, p, L.L_HAND, L.P_N_HAND, s)
    if gm[L.G_TURN] >= 0:
        masks[p, L.M_DRAWN] |= np.uint64(1) << np.uint64(s)
    emit(gm, tr, T.EV_DRAW, p, sl[p, s, L.S_CARD], n - 1, 0, 0, 0)
    return True


@njit(void(PLAYERS, LISTS, RNG, i8, i8), **KERNEL)
def shuffle_draw_pile(pl, ls, rng, p, stream):
    n = pl[p, L.P_N_DRAW]
    for i in range(n - 1, 0, -1):
        j = rand_below(rng, stream, i + 1)
        ctype = ls[p, L.L_DRAW, i]
        ls[p, L.L_DRAW, i] = ls[p, L.L_DRAW, j]
        ls[p, L.L_DRAW, j] = ctype


# =============================================================================== board
@njit(void(CARDS, PLAYERS, i8, i8, i8, i8), **KERNEL)
def count_in_play(cards, pl, p, c, zone, k):
    """Card ``c`` enters (``k`` = 1) or leaves (-1) ``p``'s ``zone`` in play: the zone
    counters and the summaries of the cards in play (``layout.P_N_DEFENSES``,
    ``P_N_ATTACKS`` ...) follow."""
    flags = cards[c, E.C_FLAGS]
    if (flags & E.CF_ACTIVATE) != 0:
        pl[p, L.P_N_ACTIVATABLE] += k
    if (flags & E.CF_EACH_TURN_IP) != 0:
        pl[p, L.P_N_EACH_TURN_IP] += k
    if cards[c, E.C_TURN_STEPS] != 0:
        pl[p, L.P_N_TURN_STEPS] += k
    ctype = cards[c, E.C_TYPE]
    if zone == L.Z_PLAY:
        if ctype == E.ATTACK:
            pl[p, L.P_N_ATTACKS] += k
        elif ctype == E.DEFENSE:
            pl[p, L.P_N_DEFENSES] += k
    elif zone == L.Z_PILLAR:
        pl[p, L.P_N_PILLARS] += k
        pl[p, L.P_PILLAR_IP] += k * cards[c, E.C_IP]
        if cards[c, E.C_BRANCH] == E.SCROLL:
            pl[p, L.P_N_SCROLL_PILLARS] += k  # Art. III §3.2
    elif zone == L.Z_PETITION:
        pl[p, L.P_N_PETITIONS] += k


@njit(void(CARDS, PLAYERS, SLOTS, LISTS, i8, i8, i8), **KERNEL)
def put_in_play(cards, pl, sl, ls, p, s, zone):
    c = sl[p, s, L.S_CARD]
    sl[p, s, L.S_ZONE] = zone
    list_push(pl, ls, p, L.L_BOARD, L.P_N_BOARD, s)
    count_in_play(cards, pl, p, c, zone, 1)
    ctype = cards[c, E.C_TYPE]
    if ctype == E.DEFENSE or ctype == E.UA:
        sl[p, s, L.S_DP] = cards[c, E.C_DP]
    elif ctype == E.ATTACK:
        sl[p, s, L.S_DP] = cards[c, E.C_DAMAGE]


@njit(void(CARDS, PLAYERS, SLOTS, LISTS, i8, i8, i8), **KERNEL)
def leave_play(cards, pl, sl, ls, p, s, to_zone):
    """Move a card in play to another zone, keeping the zone counters right."""
    zone = sl[p, s, L.S_ZONE]
    c = sl[p, s, L.S_CARD]
    list_remove(pl, ls, p, L.L_BOARD, L.P_N_BOARD, s)
    count_in_play(cards, pl, p, c, zone, -1)
    sl[p, s, L.S_ZONE] = to_zone
    sl[p, s, L.S_FLAGS] = sl[p, s, L.S_FLAGS] & ~(L.F_PENDING | L.F_AOA | L.F_ACT0 | L.F_ACT1
                                              | L.F_SIDEWAYS0 | L.F_SIDEWAYS1 | L.F_KICKED
                                              | L.F_AOA_TARGETED | L.F_FOUGHT)
    if to_zone == L.Z_HAND:
        list_push(pl, ls, p, L.L_HAND, L.P_N_HAND, s)


# =============================================================================== verbs
# =============================================================================== targets
@njit(i8(PLAYERS, FIELDS, i8), **KERNEL)
def next_opponent(pl, gm, p):
    n = gm[L.G_N_PLAYERS]
    for k in range(1, n):
        q = seat_after(p, k, n)
        if pl[q, L.P_ALIVE] != 0:
            return q
    return -1


# =============================================================================== damage
@njit(void(TABLE, GAME, i8, i8, i8), **KERNEL)
def destroy(t, g, q, s, by):
    """A card of player ``q`` is destroyed (DP 0, AoA, or an effect) and discarded
    (Art. II §3); the third UA lost ends the game (Art. III §2). Its ``on destroy``
    effects are queued and fired by ``fire_on_destroy`` as soon as the effect that
    destroyed it has resolved (a queue rather than recursion keeps compiling fast).
    """
    cards, rules = t.cards, t.rules
    pl, sl, ls, gm, tr = g.players, g.slots, g.lists, g.game, g.trace
    c = sl[q, s, L.S_CARD]
    ctype = cards[c, E.C_TYPE]
    pending = sl[q, s, L.S_FLAGS] & L.F_PENDING
    activated = sl[q, s, L.S_FLAGS] & (L.F_ACT0 | L.F_ACT1)
    leave_play(cards, pl, sl, ls, q, s, L.Z_DISCARD)
    if pending != 0:
        sl[q, s, L.S_FLAGS] |= L.F_DESTROYED  # its effects may still wait (R50)
    sl[q, s, L.S_FLAGS] |= activated  # paid activations wait too (R52)
    emit(gm, tr, T.EV_DESTROY, q, c, by, 0, 0, 0)
    if (cards[c, E.C_FLAGS] & E.CF_ON_DESTROY) != 0:
        list_push(pl, ls, q, L.L_ON_DESTROY, L.P_N_ON_DESTROY, s)  # fired by fire_on_destroy
    if ctype == E.UA:
        pl[q, L.P_UAS_LOST] += 1
        if pl[q, L.P_UAS_LOST] >= pl[q, L.P_N_UAS]:
            lose(rules, pl, gm, tr, q, E.PATH_ATTACK, L.RULE_THIRD_UA)  # Art. III §2


@njit(void(TABLE, GAME, i8, i8, i8, i8, i8), **KERNEL)
def deal_damage(t, g, q, s, amount, by, src_card):
    """Damage to one card; no overflow, no splitting (Amend. II §5)."""
    sl, gm, tr = g.slots, g.game, g.trace
    left = sl[q, s, L.S_DP] - amount
    if left < 0:
        left = 0
    sl[q, s, L.S_DP] = left
    emit(gm, tr, T.EV_DAMAGE, by, src_card, q, sl[q, s, L.S_CARD], amount, left)
    if left == 0:
        destroy(t, g, q, s, by)  # Art. II §3


@njit(void(TABLE, GAME, i8, i8, i8, b1, i8), **KERNEL)
def strike(t, g, p, q, amount, ua_only, src_card):
    cards, w = t.cards, t.weights
    pl, sl, ls, rng = g.players, g.slots, g.lists, g.rng
    if amount <= 0 or q < 0:
        return
    s = choose_strike_target(cards, w, rng, sl, ls, pl, p, q, amount, ua_only)
    if s >= 0:
        deal_damage(t, g, q, s, amount, p, src_card)


# =============================================================================== effects
@njit(void(CARDS, PLAYERS, SLOTS, LISTS, FIELDS, TRACE, i8, i8, b1, b1, i8, i8), **KERNEL)
def mill(cards, pl, sl, ls, gm, tr, q, amount, exile, keep_protect, by, src_card):
    """The top ``amount`` cards of ``q``'s Draw Pile go to the Discard Pile (mill) or out of
    the game (exile). A milled Protect card stays in place when ``keep_protect`` (Amend.
    III, R19; R56's switch); exile is not stopped by Protect.
    """
    if q < 0:
        return
    n = pl[q, L.P_N_DRAW]
    lo = n - amount
    if lo < 0:
        lo = 0
    kept = 0
    moved = 0
    # Walk the top ``amount`` cards from the bottom of that window up, compacting the kept.
    for i in range(lo, n):
        s = ls[q, L.L_DRAW, i]
        c = sl[q, s, L.S_CARD]
        if keep_protect and not exile and (cards[c, E.C_KEYWORDS] & E.KW_PROTECT) != 0:
            ls[q, L.L_DRAW, lo + kept] = s
            kept += 1
        else:
            sl[q, s, L.S_ZONE] = L.Z_EXILE if exile else L.Z_DISCARD
            moved += 1
    pl[q, L.P_N_DRAW] = lo + kept
    emit(gm, tr, T.EV_EXILE if exile else T.EV_MILL, q, moved, lo + kept, kept, src_card, by)


@njit(void(CARDS, PLAYERS, SLOTS, LISTS, FIELDS, RNG, TRACE, i8, i8, i8, i8), **KERNEL)
def discard_random(cards, pl, sl, ls, gm, rng, tr, q, amount, by, src_card):
    """``q`` discards ``amount`` random cards from hand; Protect cards are immune (Amend. III)."""
    if q < 0:
        return
    for _ in range(amount):
        n_ok = 0
        for i in range(pl[q, L.P_N_HAND]):
            s = ls[q, L.L_HAND, i]
            if (cards[sl[q, s, L.S_CARD], E.C_KEYWORDS] & E.KW_PROTECT) == 0:
                n_ok += 1
        if n_ok == 0:
            return
        k = rand_below(rng, GAME_STREAM, n_ok)
        for i in range(pl[q, L.P_N_HAND]):
            s = ls[q, L.L_HAND, i]
            if (cards[sl[q, s, L.S_CARD], E.C_KEYWORDS] & E.KW_PROTECT) == 0:
                if k == 0:
                    list_remove(pl, ls, q, L.L_HAND, L.P_N_HAND, s)
                    sl[q, s, L.S_ZONE] = L.Z_DISCARD
                    emit(gm, tr, T.EV_DISCARD, q, sl[q, s, L.S_CARD], src_card, by, 0, 0)
                    break
                k -= 1


@njit(void(CARDS, PLAYERS, SLOTS, LISTS, FIELDS, TRACE, i8, i8, i8), **KERNEL)
def repair(cards, pl, sl, ls, gm, tr, p, amount, src_card):
    """Restore DP to the most damaged of ``p``'s Defenses and UAs, not above printed DP."""
    best, best_missing = most_damaged(cards, pl, sl, ls, p)
    if best >= 0:
        add = amount if amount < best_missing else best_missing
        sl[p, best, L.S_DP] += add
        emit(gm, tr, T.EV_REPAIR, p, sl[p, best, L.S_CARD], add, sl[p, best, L.S_DP], src_card, 0)


@njit(void(CARDS, WEIGHTS, PLAYERS, SLOTS, LISTS, FIELDS, MASKS, TRACE, i8, i8, i8), **KERNEL)
def recover(cards, w, pl, sl, ls, gm, masks, tr, p, amount, src_card):
    """Return up to ``amount`` cards from the Discard Pile to hand: the costliest first,
    Pillars first while short of the Pillar target.
    """
    for _ in range(amount):
        best = -1
        best_key = -1.0e9
        for s in range(pl[p, L.P_DECK_SIZE]):
            c = sl[p, s, L.S_CARD]
            if sl[p, s, L.S_ZONE] != L.Z_DISCARD or cards[c, E.C_TYPE] == E.UA:
                continue  # R44: a UA leaves its Area only when destroyed (Art. VI §5)
            key = float(cards[c, E.C_COST])
            if cards[c, E.C_TYPE] == E.PILLAR and pl[p, L.P_N_PILLARS] < w[p, W.W_PILLAR_TARGET]:
                key += 100.0
            if key > best_key:
                best = s
                best_key = key
        if best < 0:
            return
        sl[p, best, L.S_ZONE] = L.Z_HAND
        list_push(pl, ls, p, L.L_HAND, L.P_N_HAND, best)
        masks[p, L.M_DRAWN] |= np.uint64(1) << np.uint64(best)  # seen: any route into the hand
        emit(gm, tr, T.EV_RECOVER, p, sl[p, best, L.S_CARD], src_card, 0, 0, 0)


@njit(void(TABLE, GAME, i8, i8), **KERNEL)
@called
def tutor_pillar(t, g, p, src_card):
    """Move a Pillar (the most IP, Scroll first for a Petition player) to hand, then shuffle."""
    cards, w = t.cards, t.weights
    pl, sl, ls, gm, masks, rng, tr = g.players, g.slots, g.lists, g.game, g.masks, g.rng, g.trace
    best = -1
    best_key = -1.0
    for i in range(pl[p, L.P_N_DRAW]):
        s = ls[p, L.L_DRAW, i]
        c = sl[p, s, L.S_CARD]
        if cards[c, E.C_TYPE] == E.PILLAR:
            key = cards[c, E.C_IP] + (w[p, W.W_SCROLL_PILLAR] if cards[c, E.C_BRANCH] == E.SCROLL else 0.0)
            if key > best_key:
                best = s
                best_key = key
    if best >= 0:
        list_remove(pl, ls, p, L.L_DRAW, L.P_N_DRAW, best)
        sl[p, best, L.S_ZONE] = L.Z_HAND
        list_push(pl, ls, p, L.L_HAND, L.P_N_HAND, best)
        masks[p, L.M_DRAWN] |= np.uint64(1) << np.uint64(best)
        emit(gm, tr, T.EV_TUTOR, p, sl[p, best, L.S_CARD], src_card, 0, 0, 0)
    shuffle_draw_pile(pl, ls, rng, p, p)


@njit(void(TABLE, GAME, i8, i8, i8, i8, i8), **KERNEL)
@copied_not_inlined
def apply_effect(t, g, p, verb, amount, src_card, target):
    """Resolve one effect controlled by ``p`` (docs/design.md effect grammar).

    ``target``: the opponent it is aimed at, or -1 to let ``p``'s policy pick one.
    """
    cards, rules, w = t.cards, t.rules, t.weights
    pl, sl, ls, gm, masks, rng, tr = g.players, g.slots, g.lists, g.game, g.masks, g.rng, g.trace
    if gm[L.G_OVER] != 0:
        return
    q = target
    if q < 0 or pl[q, L.P_ALIVE] == 0:
        q = choose_opponent(pl, w, gm, rng, p, E.VERB_AIM[verb])
    if verb == E.V_LP:
        if q >= 0:
            change_lp(rules, pl, gm, tr, q, -amount, E.V_LP, src_card)  # Amend. II §3
    elif verb == E.V_STRIKE:
        strike(t, g, p, q, amount, False, src_card)
    elif verb == E.V_STRIKE_UA:
        strike(t, g, p, q, amount, True, src_card)
    elif E.VERB_HEALS[verb] != 0:  # healing (per Pillar: those in play as it resolves)
        change_lp(rules, pl, gm, tr, p, effect_amount(pl, p, verb, amount), E.V_HEAL, src_card)
    elif verb == E.V_DRAW:
        for _ in range(amount):
            if not draw_one(rules, pl, sl, ls, gm, masks, tr, p, False):
                return
    elif verb == E.V_FORCE_DRAW:
        for _ in range(amount):
            if q < 0 or not draw_one(rules, pl, sl, ls, gm, masks, tr, q, False):
                return
    elif verb == E.V_MILL:
        mill(cards, pl, sl, ls, gm, tr, q, amount, False,
             rules[E.R_PROTECT_STOPS_MILL] != 0, p, src_card)  # R19, R38; R56
    elif verb == E.V_EXILE:
        mill(cards, pl, sl, ls, gm, tr, q, amount, True, False, p, src_card)  # Amend. III
    elif verb == E.V_DISCARD:
        discard_random(cards, pl, sl, ls, gm, rng, tr, q, amount, p, src_card)
    elif E.VERB_GIVES_IP[verb] != E.IP_NONE:
        gained = effect_amount(pl, p, verb, amount)
        pl[p, L.P_IP_OTHER] += gained  # Amend. VI: non-Pillar IP, spent first
        emit(gm, tr, T.EV_IP, p, gained, src_card, 0, 0, 0)
    elif verb == E.V_REPAIR:
        repair(cards, pl, sl, ls, gm, tr, p, amount, src_card)
    elif verb == E.V_DESTROY_PETITION:
        for _ in range(amount):
            if q < 0 or pl[q, L.P_N_PETITIONS] == 0:
                break
            for i in range(pl[q, L.P_N_BOARD]):
                s = ls[q, L.L_BOARD, i]
                if sl[q, s, L.S_ZONE] == L.Z_PETITION:
                    emit(gm, tr, T.EV_PETITION_LOST, q, sl[q, s, L.S_CARD], p, 0, 0, 0)
                    destroy(t, g, q, s, p)
                    break
    elif verb == E.V_RECOVER:
        recover(cards, w, pl, sl, ls, gm, masks, tr, p, amount, src_card)
    elif verb == E.V_TUTOR_PILLAR:
        tutor_pillar(t, g, p, src_card)


@njit(i8(RULES, i8), **KERNEL)
def verb_step(rules, verb):
    """R13: damage and LP damage at step iii, healing at iv, everything else at vi; with
    R58's switch an `lp` effect waits for step vi ("all remaining ... effects")."""
    if verb == E.V_LP and rules[E.R_LP_EFFECTS_STEP] == E.LP_AT_EFFECTS:
        return E.STEP_EFFECTS  # R58
    return E.RESOLVE_STEP[verb]


@njit(i8(RULES, i8), **KERNEL)
def late_lp_steps(rules, steps):
    """The Resolve steps of a card's effects (bits, ``C_RESOLVE_STEPS``/``C_TURN_STEPS``, made
    from R13's table) with R58 ``effects``: a card firing at step iii may hold an `lp`
    effect, now at step vi, so it is looked at then too (each effect's own step decides)."""
    if rules[E.R_LP_EFFECTS_STEP] == E.LP_AT_EFFECTS and (steps >> E.STEP_DAMAGE) & 1 != 0:
        return steps | (1 << E.STEP_EFFECTS)  # R58
    return steps


@njit(b1(PLAYERS, FIELDS), **KERNEL)
def on_destroy_queued(pl, gm):
    """Whether any 'on destroy' effect waits to fire (most effects destroy nothing)."""
    for q in range(gm[L.G_N_PLAYERS]):
        if pl[q, L.P_N_ON_DESTROY] > 0:
            return True
    return False


@njit(void(TABLE, GAME), **KERNEL)
@called
def fire_on_destroy(t, g):
    """Fire the queued ``on destroy`` effects, each controlled by the destroyed card's owner
    and aimed at the active player when the owner is not active; effects that destroy more
    cards queue them in turn, until the queues are empty. Effects released together fire
    the active player's first, then the others' in turn order (Amend. IX: the active player
    wins ties of timing), each player's in the order its cards were destroyed. With R47
    ``by_step``, an effect
    whose verb belongs to a later Resolve step than the one in progress waits for it
    (``fire_waiting_on_destroy``)."""
    cards, rules = t.cards, t.rules
    pl, sl, ls, gm = g.players, g.slots, g.lists, g.game
    by_step = rules[E.R_ON_DESTROY_TIMING] == E.OD_BY_STEP and gm[L.G_STEP] > 0
    n_players = gm[L.G_N_PLAYERS]
    busy = True
    while busy and gm[L.G_OVER] == 0:
        busy = False
        for k in range(n_players):
            q = seat_after(gm[L.G_ACTIVE], k, n_players)  # Amend. IX: the active player first
            while pl[q, L.P_N_ON_DESTROY] > 0 and gm[L.G_OVER] == 0:
                busy = True
                n = pl[q, L.P_N_ON_DESTROY]
                s = ls[q, L.L_ON_DESTROY, 0]
                for i in range(n - 1):
                    ls[q, L.L_ON_DESTROY, i] = ls[q, L.L_ON_DESTROY, i + 1]
                pl[q, L.P_N_ON_DESTROY] = n - 1
                c = sl[q, s, L.S_CARD]
                target = -1 if q == gm[L.G_ACTIVE] else gm[L.G_ACTIVE]
                for e in range(E.MAX_EFFECTS):
                    verb = eff(cards, c, e, E.E_VERB)
                    if eff(cards, c, e, E.E_TRIGGER) != E.TRIG_ON_DESTROY or verb == E.V_NONE:
                        continue
                    if by_step and verb_step(rules, verb) > gm[L.G_STEP]:  # R47: wait for its step
                        if (sl[q, s, L.S_FLAGS] & (L.F_OD_WAIT0 | L.F_OD_WAIT1)) == 0:
                            list_push(pl, ls, q, L.L_OD_WAIT, L.P_N_OD_WAIT, s)
                        sl[q, s, L.S_FLAGS] |= L.F_OD_WAIT0 << e
                        continue
                    apply_effect(t, g, q, verb, eff(cards, c, e, E.E_AMOUNT), c, target)


@njit(b1(PLAYERS, FIELDS), **KERNEL)
def any_on_destroy_waiting(pl, gm):
    for q in range(gm[L.G_N_PLAYERS]):
        if pl[q, L.P_N_OD_WAIT] > 0:
            return True
    return False


@njit(**INLINED)
def fire_waiting_on_destroy(t, g, step):
    """R47 ``by_step``: at Resolve step ``step``, fire the waiting ``on destroy`` effects
    whose verb belongs to it or an earlier step, in the order their cards were destroyed,
    the active player's first, then the others' in turn order (Amend. IX; owner controls,
    aimed at the active player when the owner is not)."""
    cards, rules = t.cards, t.rules
    pl, sl, ls, gm = g.players, g.slots, g.lists, g.game
    n_players = gm[L.G_N_PLAYERS]
    for k in range(n_players):
        q = seat_after(gm[L.G_ACTIVE], k, n_players)  # Amend. IX: the active player first
        i = 0
        while i < pl[q, L.P_N_OD_WAIT] and gm[L.G_OVER] == 0:
            s = ls[q, L.L_OD_WAIT, i]
            c = sl[q, s, L.S_CARD]
            target = -1 if q == gm[L.G_ACTIVE] else gm[L.G_ACTIVE]
            for e in range(E.MAX_EFFECTS):
                verb = eff(cards, c, e, E.E_VERB)
                if (sl[q, s, L.S_FLAGS] & (L.F_OD_WAIT0 << e)) == 0 or \
                        verb_step(rules, verb) > step:
                    continue
                sl[q, s, L.S_FLAGS] &= ~(L.F_OD_WAIT0 << e)
                apply_effect(t, g, q, verb, eff(cards, c, e, E.E_AMOUNT), c, target)
                if on_destroy_queued(pl, gm):
                    fire_on_destroy(t, g)
                if gm[L.G_OVER] != 0:
                    return
            if (sl[q, s, L.S_FLAGS] & (L.F_OD_WAIT0 | L.F_OD_WAIT1)) == 0:
                list_remove(pl, ls, q, L.L_OD_WAIT, L.P_N_OD_WAIT, s)
            else:
                i += 1


@njit(void(PLAYERS, SLOTS, LISTS, FIELDS), **KERNEL)
def drop_waiting_on_destroy(pl, sl, ls, gm):
    """A Resolve Phase cut short (its player eliminated) leaves no effect waiting (R47)."""
    for q in range(gm[L.G_N_PLAYERS]):
        for i in range(pl[q, L.P_N_OD_WAIT]):
            s = ls[q, L.L_OD_WAIT, i]
            sl[q, s, L.S_FLAGS] &= ~(L.F_OD_WAIT0 | L.F_OD_WAIT1)
        pl[q, L.P_N_OD_WAIT] = 0


# =============================================================================== policy
@njit(void(PLAYERS, i8, i8), **KERNEL)
def pay(pl, p, cost):
    """Amend. VI: non-Pillar IP is spent before Pillar IP."""
    take = cost if cost < pl[p, L.P_IP_OTHER] else pl[p, L.P_IP_OTHER]
    pl[p, L.P_IP_OTHER] -= take
    pl[p, L.P_IP_PILLAR] -= cost - take


@njit(**INLINED)
def put_action(acts, n, kind, a, b, c, cost):
    """Append one legal action; the list holds every action a Play Phase can offer
    (``layout.MAX_ACTIONS``), so it never fills."""
    acts[n, L.A_KIND] = kind
    acts[n, L.A_SLOT] = a
    acts[n, L.A_EFFECT] = b  # or A_SEAT
    acts[n, L.A_TARGET] = c
    acts[n, L.A_COST] = cost
    return n + 1


@njit(**INLINED)
def activations(cards, sl, p, s, ip, acts, n):
    """List the 'activate' effects of ``p``'s card in play in slot ``s`` that ``p`` can pay
    for with ``ip`` and has not used this turn (Art. VII §6, Amend. V §2) as
    ``ACT_ACTIVATE`` rows from row ``n``; returns the new count."""
    c = sl[p, s, L.S_CARD]
    for e in range(E.MAX_EFFECTS):
        if eff(cards, c, e, E.E_TRIGGER) != E.TRIG_ACTIVATE or \
                eff(cards, c, e, E.E_VERB) == E.V_NONE or eff(cards, c, e, E.E_KICKER) != 0:
            continue
        if (sl[p, s, L.S_FLAGS] & (L.F_SIDEWAYS0 << e)) != 0:
            continue  # Amend. V §2: not twice in a turn
        if eff(cards, c, e, E.E_COST) <= ip:
            n = put_action(acts, n, L.ACT_ACTIVATE, s, e, -1, eff(cards, c, e, E.E_COST))
    return n


@njit(**INLINED)
def aoa_from_play(cards, pl, sl, ls, gm, p, s, ip, acts, n):
    """R55 (Art. VII §5 phase three lists declaring Attack-on-Attack as an action of its
    own): the ``ACT_AOA_IN_PLAY`` rows of ``p``'s card in slot ``s`` from row ``n``, one for
    each opposing Attack not fought this turn (R49), when the card is an Attack in the Play
    Area that was not played this turn (that one fought from hand, if at all), declares no
    fight yet, and ``p`` can pay its cost + 1 (Amend. I §1); returns the new count."""
    c = sl[p, s, L.S_CARD]
    if cards[c, E.C_TYPE] != E.ATTACK or sl[p, s, L.S_ZONE] != L.Z_PLAY or \
            (sl[p, s, L.S_FLAGS] & (L.F_PENDING | L.F_AOA)) != 0:
        return n
    cost = cards[c, E.C_COST] + 1  # Amend. I §1
    if cost > ip:
        return n
    for q in range(gm[L.G_N_PLAYERS]):
        for j in range(pl[q, L.P_N_AOA_TARGETS]):
            s2 = ls[q, L.L_SCRATCH, j]
            if (sl[q, s2, L.S_FLAGS] & L.F_AOA_TARGETED) == 0:  # R49
                n = put_action(acts, n, L.ACT_AOA_IN_PLAY, s, q, s2, cost)
    return n


# compiled on its own, like still_legal: inlined in numba's IR, the two cost take_turn's
# compile 3.7 s (12.2 s against 8.5 s, timed per kernel)
@njit(i8(CARDS, RULES, PLAYERS, SLOTS, LISTS, FIELDS, i8, i8, ACTS), **KERNEL)
def legal_actions(cards, rules, pl, sl, ls, gm, p, n_targets, acts):
    """Every action ``p`` may take next in its Play Phase (Art. VII §5 phase three), listed
    in ``acts`` as rows of the columns ``layout.A_*`` (kind, slot, effect or seat, target,
    the IP it takes); returns how many. In order: each card in hand that ``p`` can pay
    for (Art. II §2; not a UA, Art. IV §3.2; a Bill once a turn, Art. IV §7.1; Pillars per
    R10) as ``ACT_PLAY`` (slot), then its paid kickers as
    ``ACT_PLAY_KICKED`` (slot, kicker effect), then, for an Attack, each opposing Attack
    not already fought this turn as ``ACT_AOA`` (slot, seat, slot) at cost + 1 (Amend. I
    §1, R49); then each 'activate' effect ``p`` can pay for and has not used this turn
    (Art. VII §6, Amend. V §2) as ``ACT_ACTIVATE`` (slot, effect). Stopping is always legal
    and not listed. ``n_targets``: opposing Attacks listed by ``note_threats`` (0: no
    Attack-on-Attack, R17). With R55 (``aoa_from_play``) each of ``p``'s Attacks already in
    play (not played this turn, not fighting yet) may fight an opposing Attack too, as
    ``ACT_AOA_IN_PLAY`` (slot, seat, slot) at its cost + 1 (Amend. I §1), listed with the
    board's activations, card by card in board order."""
    ip = pl[p, L.P_IP_PILLAR] + pl[p, L.P_IP_OTHER]
    n = 0
    for i in range(pl[p, L.P_N_HAND]):
        s = ls[p, L.L_HAND, i]
        c = sl[p, s, L.S_CARD]
        ctype = cards[c, E.C_TYPE]
        if ctype == E.UA:  # Art. IV §3.2
            continue
        if ctype == E.BILL and (sl[p, sl[p, s, L.S_NAME_SLOT], L.S_FLAGS] & L.F_BILL_TURN) != 0:
            continue  # Art. IV §7.1: once per turn
        if ctype == E.PILLAR and rules[E.R_PILLARS_PER_TURN] > 0 and \
                pl[p, L.P_PILLARS_TURN] >= rules[E.R_PILLARS_PER_TURN]:
            continue  # R10
        cost = play_cost(cards, sl, p, s)
        if cost > ip:  # Art. II §2
            continue
        n = put_action(acts, n, L.ACT_PLAY, s, -1, -1, cost)
        if ctype == E.FREEDOM:
            for e in range(E.MAX_EFFECTS):
                if eff(cards, c, e, E.E_KICKER) != 0 and cost + eff(cards, c, e, E.E_COST) <= ip:
                    n = put_action(acts, n, L.ACT_PLAY_KICKED, s, e, -1,
                                   cost + eff(cards, c, e, E.E_COST))
        if ctype == E.ATTACK and n_targets > 0 and cost + 1 <= ip:  # Amend. I §1: cost + 1
            for q in range(gm[L.G_N_PLAYERS]):
                for j in range(pl[q, L.P_N_AOA_TARGETS]):
                    s2 = ls[q, L.L_SCRATCH, j]
                    if (sl[q, s2, L.S_FLAGS] & L.F_AOA_TARGETED) == 0:  # R49
                        n = put_action(acts, n, L.ACT_AOA, s, q, s2, cost + 1)
    from_play = n_targets > 0 and rules[E.R_AOA_FROM_PLAY] != 0 and pl[p, L.P_N_ATTACKS] > 0
    for i in range(pl[p, L.P_N_BOARD] if pl[p, L.P_N_ACTIVATABLE] > 0 or from_play else 0):
        s = ls[p, L.L_BOARD, i]
        if from_play:
            n = aoa_from_play(cards, pl, sl, ls, gm, p, s, ip, acts, n)
        if (cards[sl[p, s, L.S_CARD], E.C_FLAGS] & E.CF_ACTIVATE) != 0:
            n = activations(cards, sl, p, s, ip, acts, n)
    return n


@njit(i8(CARDS, RULES, PLAYERS, SLOTS, LISTS, FIELDS, i8, i8, ACTS, i8), **KERNEL)
@called
def listed_apart(cards, rules, pl, sl, ls, gm, p, n_targets, acts, n):
    """Debug mode: 1 if the kept list ``acts[:n]`` differs from what ``legal_actions``
    lists now (made in the rows after it), else 0."""
    fresh = acts[n:]
    n_fresh = legal_actions(cards, rules, pl, sl, ls, gm, p, n_targets, fresh)
    if n_fresh != n:
        return 1
    for i in range(n):
        for f in range(L.ACT_WIDTH):
            if fresh[i, f] != acts[i, f]:
                return 1
    return 0


@njit(**INLINED)
def play_phase(t, g, memo, acts, p):
    """Art. VII §5 phase three: the rules list the legal actions (``legal_actions``), the
    pilot picks one (``decisions.choose_action``) and the rules apply it, one action at a
    time, until the pilot stops. ``acts`` int64[MAX_ACTIONS, ACT_WIDTH] is the worker's scratch."""
    n_targets = play_phase_start(t, g, memo, p)
    play_phase_rest(t, g, memo, acts, p, n_targets)


@njit(**INLINED)
def play_phase_rest(t, g, memo, acts, p, n_targets):
    """The Play Phase's actions from here on, chosen by ``p``'s heuristic pilot; a copied Play
    Phase played out resumes here (``state_api.play_out``). The list of legal actions is
    made once (``legal_actions``), then kept up to date after each action
    (``still_legal``), or made again when the action gave IP (R32)."""
    cards, rules = t.cards, t.rules
    pl, sl, ls, gm = g.players, g.slots, g.lists, g.game
    if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
        return
    n = legal_actions(cards, rules, pl, sl, ls, gm, p, n_targets, acts)
    while True:
        k = choose_action(t, g, memo, p, acts, n)
        if k < 0:
            return
        ip_left = pl[p, L.P_IP_PILLAR] + pl[p, L.P_IP_OTHER] - acts[k, L.A_COST]
        do_action(t, g, memo, p, acts[k, L.A_KIND], acts[k, L.A_SLOT], acts[k, L.A_EFFECT],
                  acts[k, L.A_TARGET])
        if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
            return
        if pl[p, L.P_IP_PILLAR] + pl[p, L.P_IP_OTHER] == ip_left:  # it cost its row's IP
            n = still_legal(cards, rules, pl, sl, p, acts, n, k)
            if gm[L.G_DEBUG] != 0 and n <= L.MAX_ACTIONS // 2:
                gm[L.G_VIOLATIONS] += listed_apart(cards, rules, pl, sl, ls, gm, p, n_targets,
                                                   acts, n)
        else:  # an effect gave IP at once (R32): cards out of reach may be legal now
            n = legal_actions(cards, rules, pl, sl, ls, gm, p, n_targets, acts)


@njit(i8(CARDS, RULES, PLAYERS, SLOTS, i8, ACTS, i8, i8), **KERNEL)
def still_legal(cards, rules, pl, sl, p, acts, n, k):
    """The legal actions after action ``k`` of ``acts[:n]`` (the list ``legal_actions``
    made, or this function kept) was taken at the IP its row says: the same rows as
    ``legal_actions`` would list now, in its order, without walking the hand. Nothing but
    the action changed what is legal: IP only went down (Art. II §2); a card played left the
    hand (its rows go) and, holding 'activate' effects, entered play at the end of the
    board (its rows come last, as the board is walked in order); a Bill's name is played
    for the turn (Art. IV §7.1), a Pillar counts towards R10, an Attack-on-Attack target
    is taken (R49), an effect activated is sideways (Amend. V §2). Returns how many rows.
    It reasons from the action, not by testing each row against the state as
    ``legal_actions`` does: that way (each row's card read again) played 1% slower and
    the search 4% slower; debug mode and a scenario test compare the two lists."""
    kind = acts[k, L.A_KIND]
    a = acts[k, L.A_SLOT]
    b = acts[k, L.A_EFFECT]  # or A_SEAT
    c = acts[k, L.A_TARGET]
    ip = pl[p, L.P_IP_PILLAR] + pl[p, L.P_IP_OTHER]
    played = kind != L.ACT_ACTIVATE and kind != L.ACT_AOA_IN_PLAY
    fought = kind == L.ACT_AOA or kind == L.ACT_AOA_IN_PLAY  # a fight declared (R49)
    card = sl[p, a, L.S_CARD]
    ctype = cards[card, E.C_TYPE]
    bill_name = sl[p, a, L.S_NAME_SLOT] if played and ctype == E.BILL else -1
    limit = rules[E.R_PILLARS_PER_TURN]
    pillars_done = played and ctype == E.PILLAR and limit > 0 and \
        pl[p, L.P_PILLARS_TURN] >= limit  # R10
    m = 0
    for i in range(n):
        row_kind = acts[i, L.A_KIND]
        s = acts[i, L.A_SLOT]
        if acts[i, L.A_COST] > ip:  # Art. II §2
            continue
        if row_kind == L.ACT_ACTIVATE:
            if kind == L.ACT_ACTIVATE and s == a and acts[i, L.A_EFFECT] == b:
                continue  # Amend. V §2: sideways now
        elif row_kind == L.ACT_AOA_IN_PLAY:
            if kind == L.ACT_AOA_IN_PLAY and s == a:
                continue  # R55: that Attack fights already
            if fought and acts[i, L.A_SEAT] == b and acts[i, L.A_TARGET] == c:
                continue  # R49: that Attack is fought already
        else:
            if played and s == a:
                continue  # left the hand
            if bill_name >= 0 and sl[p, s, L.S_NAME_SLOT] == bill_name:
                continue  # Art. IV §7.1: its name is played this turn
            if pillars_done and cards[sl[p, s, L.S_CARD], E.C_TYPE] == E.PILLAR:
                continue  # R10
            if fought and row_kind == L.ACT_AOA and acts[i, L.A_SEAT] == b and \
                    acts[i, L.A_TARGET] == c:
                continue  # R49: that Attack is fought already
        if m != i:
            for f in range(L.ACT_WIDTH):
                acts[m, f] = acts[i, f]
        m += 1
    if played and (cards[card, E.C_FLAGS] & E.CF_ACTIVATE) != 0:
        m = activations(cards, sl, p, a, ip, acts, m)
    return m


@njit(**INLINED)
def play_phase_start(t, g, memo, p):
    """What a Play Phase notes before its first action (``state_api.start_play_phase``
    too): the Attack-on-Attack targets (``note_threats``, 0 when
    R17 is off); returns how many. The cards in play with an 'activate' effect are
    counted as they enter and leave play (``layout.P_N_ACTIVATABLE``)."""
    cards, rules, w = t.cards, t.rules, t.weights
    pl, sl, ls, gm = g.players, g.slots, g.lists, g.game
    n_targets = note_threats(cards, w, memo, pl, sl, ls, gm, p)  # Attack-on-Attack targets
    if rules[E.R_AOA] == 0:  # R17 switched off
        n_targets = 0
    forget_card_values(memo, p)
    return n_targets


@njit(**INLINED)
def do_action(t, g, memo, p, kind, a, b, c):
    """Apply one legal action row ``(kind, a, b, c)`` of ``p``'s Play Phase (Art. VII §5
    phase three, §6)."""
    cards = t.cards
    pl, sl, ls = g.players, g.slots, g.lists
    if kind == L.ACT_ACTIVATE:
        activate(t, g, p, a, b)
        return
    if kind == L.ACT_AOA_IN_PLAY:
        declare_aoa_from_play(t, g, p, a, b, c)  # R55
        return
    if kind == L.ACT_AOA:
        q, s2 = b, c
    else:
        q, s2 = -1, -1
    play_card(t, g, p, a, kind == L.ACT_PLAY_KICKED, q, s2)
    card = sl[p, a, L.S_CARD]
    if cards[card, E.C_TYPE] == E.PILLAR or (cards[card, E.C_KEYWORDS] & E.KW_PETITION) != 0:
        forget_pillar_values(cards, pl, sl, ls, memo, p)


@njit(**INLINED)
def activate(t, g, p, s, e):
    """Pay K and turn the card sideways (Art. VII §6; Pillars stay upright, Amend. V §4 /
    R29); the effect waits for the Resolve Phase (R13) unless it is IP (R32)."""
    cards, rules = t.cards, t.rules
    pl, sl, gm, tr = g.players, g.slots, g.game, g.trace
    c = sl[p, s, L.S_CARD]
    k = eff(cards, c, e, E.E_COST)
    pay(pl, p, k)
    sl[p, s, L.S_FLAGS] |= L.F_SIDEWAYS0 << e
    pl[p, L.P_SIDEWAYS] = 1
    emit(gm, tr, T.EV_ACTIVATE, p, c, e, k, 0, 0)
    verb = eff(cards, c, e, E.E_VERB)
    if E.VERB_GIVES_IP[verb] != E.IP_NONE and rules[E.R_IP_EFFECTS_IMMEDIATE] != 0:
        apply_effect(t, g, p, verb, eff(cards, c, e, E.E_AMOUNT), c, -1)
    else:
        sl[p, s, L.S_FLAGS] |= L.F_ACT0 << e


@njit(**INLINED)
def declare_aoa_from_play(t, g, p, s, q, s2):
    """R55: ``p``'s Attack in play in slot ``s`` declares Attack-on-Attack on ``q``'s Attack
    in slot ``s2``, paying its cost + 1 (Amend. I §1); the fight is fought at step ii
    (``resolve_aoa``) and the Attack deals no damage at step iii that turn (R17)."""
    cards = t.cards
    pl, sl, gm, tr = g.players, g.slots, g.game, g.trace
    c = sl[p, s, L.S_CARD]
    pay(pl, p, cards[c, E.C_COST] + 1)
    sl[p, s, L.S_FLAGS] |= L.F_AOA
    sl[p, s, L.S_TARGET_SEAT] = q
    sl[p, s, L.S_TARGET_SLOT] = s2
    sl[q, s2, L.S_FLAGS] |= L.F_AOA_TARGETED
    pl[p, L.P_N_AOA] += 1
    emit(gm, tr, T.EV_AOA, p, c, q, sl[q, s2, L.S_CARD], 0, 0)


@njit(**INLINED)
def play_card(t, g, p, s, kicked, aoa_q, aoa_s):
    """Pay for a card and place it (Art. VII §5 phase three); its effects wait (R13)."""
    cards, rules = t.cards, t.rules
    pl, sl, ls, gm, masks, tr = g.players, g.slots, g.lists, g.game, g.masks, g.trace
    c = sl[p, s, L.S_CARD]
    ctype = cards[c, E.C_TYPE]
    cost = play_cost(cards, sl, p, s)
    if aoa_q >= 0:
        cost += 1  # Amend. I §1
    if kicked:
        for e in range(E.MAX_EFFECTS):
            if eff(cards, c, e, E.E_KICKER) != 0:
                cost += eff(cards, c, e, E.E_COST)
    pay(pl, p, cost)
    list_remove(pl, ls, p, L.L_HAND, L.P_N_HAND, s)
    masks[p, L.M_PLAYED] |= np.uint64(1) << np.uint64(s)
    emit(gm, tr, T.EV_PLAY, p, c, cost, 1 if kicked else 0, aoa_q, 0)
    if ctype == E.PILLAR:
        put_in_play(cards, pl, sl, ls, p, s, L.Z_PILLAR)  # Art. VI §3
        pl[p, L.P_PILLARS_TURN] += 1
    elif (cards[c, E.C_KEYWORDS] & E.KW_PETITION) != 0 and ctype == E.RIGHTS:
        put_in_play(cards, pl, sl, ls, p, s, L.Z_PETITION)  # Art. VI §4
    else:
        put_in_play(cards, pl, sl, ls, p, s, L.Z_PLAY)  # Art. VI §6
    sl[p, s, L.S_FLAGS] |= L.F_PENDING
    if kicked:
        sl[p, s, L.S_FLAGS] |= L.F_KICKED
    if ctype == E.BILL:
        ns = sl[p, s, L.S_NAME_SLOT]
        sl[p, ns, L.S_BILL_PLAYS] += 1  # R28: the next play of this name costs double
        sl[p, ns, L.S_FLAGS] |= L.F_BILL_TURN
        if rules[E.R_BILL_ESCALATION] == E.BILLS_PER_GAME:
            count_bill_play_elsewhere(sl, pl, gm, p, c)  # R53: Art. IV §7.3, per name
    if aoa_q >= 0:
        sl[p, s, L.S_FLAGS] |= L.F_AOA  # Amend. I, R17
        sl[p, s, L.S_TARGET_SEAT] = aoa_q
        sl[p, s, L.S_TARGET_SLOT] = aoa_s
        sl[aoa_q, aoa_s, L.S_FLAGS] |= L.F_AOA_TARGETED
        pl[p, L.P_N_AOA] += 1
        emit(gm, tr, T.EV_AOA, p, c, aoa_q, sl[aoa_q, aoa_s, L.S_CARD], 0, 0)
    list_push(pl, ls, p, L.L_PENDING, L.P_N_PENDING, s)
    if rules[E.R_IP_EFFECTS_IMMEDIATE] != 0:  # R32: IP is a Play Phase resource
        for e in range(E.MAX_EFFECTS):
            verb = eff(cards, c, e, E.E_VERB)
            if E.VERB_GIVES_IP[verb] != E.IP_NONE and eff(cards, c, e, E.E_TRIGGER) == E.TRIG_ON_RESOLVE \
                    and (eff(cards, c, e, E.E_KICKER) == 0 or kicked):
                apply_effect(t, g, p, verb, eff(cards, c, e, E.E_AMOUNT), c, -1)


@njit(void(SLOTS, PLAYERS, FIELDS, i8, i8), **KERNEL)
def count_bill_play_elsewhere(sl, pl, gm, p, c):
    """R53 ``per_game`` (Art. IV §7.3: escalation is "tracked across the entire game" for
    each name): a play of Bill ``c`` by ``p`` counts on every other player's copy of the
    name too (on its name slot, the first slot holding it), so the name costs each player
    double from then on."""
    for q in range(gm[L.G_N_PLAYERS]):
        if q == p:
            continue
        for s in range(pl[q, L.P_DECK_SIZE]):
            if sl[q, s, L.S_CARD] == c and sl[q, s, L.S_NAME_SLOT] == s:
                sl[q, s, L.S_BILL_PLAYS] += 1
                break


# =============================================================================== resolve
@njit(**INLINED)
def note_effects(cards, pl, sl, ls, p):
    """Before step ii: list the cards in play that hold 'each turn' or 'activate' effects
    (no card enters play during the Resolve Phase, so its steps walk this short list, not
    the board; a card destroyed from step ii on stays listed, R52) and return the steps at
    which ``p`` has anything to fire, as bits."""
    steps = 0
    for i in range(pl[p, L.P_N_PENDING]):
        steps |= cards[sl[p, ls[p, L.L_PENDING, i], L.S_CARD], E.C_RESOLVE_STEPS]
    n = 0
    left = pl[p, L.P_N_TURN_STEPS]  # the board's cards with such effects: most turns, none
    for i in range(pl[p, L.P_N_BOARD] if left > 0 else 0):
        s = ls[p, L.L_BOARD, i]
        turn_steps = cards[sl[p, s, L.S_CARD], E.C_TURN_STEPS]
        if turn_steps != 0:
            ls[p, L.L_FIRE, n] = s
            n += 1
            steps |= turn_steps
            if n == left:
                break
    pl[p, L.P_N_FIRE] = n
    return steps


@njit(**INLINED)
def fire_effects(t, g, p, step):
    """Fire the active player's outstanding effects that belong to Resolve step ``step``:
    on-resolve effects of the cards played this turn (in play order, kicker included if
    paid), then 'each turn' effects of cards in play, then activated effects (R13). A card
    destroyed earlier in the phase resolves what was paid for: its on-resolve effects if it
    was played this turn (R50), its activated effects (R52); its 'each turn' effects are
    gone with it. With R50's switch off both fizzle.
    """
    cards, rules = t.cards, t.rules
    pl, sl, ls, gm = g.players, g.slots, g.lists, g.game
    ip_now = rules[E.R_IP_EFFECTS_IMMEDIATE] != 0
    destroyed_resolve = rules[E.R_DESTROYED_CARDS_RESOLVE] != 0
    step_bit = 1 << step
    for i in range(pl[p, L.P_N_PENDING]):
        s = ls[p, L.L_PENDING, i]
        c = sl[p, s, L.S_CARD]
        if (late_lp_steps(rules, cards[c, E.C_RESOLVE_STEPS]) & step_bit) == 0:
            continue
        if not destroyed_resolve and (sl[p, s, L.S_FLAGS] & L.F_DESTROYED) != 0:
            continue  # R50 switched off: a card destroyed before its step resolves nothing
        for e in range(E.MAX_EFFECTS):
            verb = eff(cards, c, e, E.E_VERB)
            if verb == E.V_NONE or eff(cards, c, e, E.E_TRIGGER) != E.TRIG_ON_RESOLVE:
                continue
            if eff(cards, c, e, E.E_KICKER) != 0 and (sl[p, s, L.S_FLAGS] & L.F_KICKED) == 0:
                continue
            if verb_step(rules, verb) != step or (E.VERB_GIVES_IP[verb] != E.IP_NONE and ip_now):
                continue
            apply_effect(t, g, p, verb, eff(cards, c, e, E.E_AMOUNT), c, -1)
            if on_destroy_queued(pl, gm):
                fire_on_destroy(t, g)
            if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
                return
    for i in range(pl[p, L.P_N_FIRE]):  # noted by note_effects
        s = ls[p, L.L_FIRE, i]
        c = sl[p, s, L.S_CARD]
        if (late_lp_steps(rules, cards[c, E.C_TURN_STEPS]) & step_bit) == 0:
            continue
        z = sl[p, s, L.S_ZONE]
        in_play = z == L.Z_PLAY or z == L.Z_PILLAR or z == L.Z_PETITION or z == L.Z_UA
        if not in_play and (sl[p, s, L.S_FLAGS] & (L.F_ACT0 | L.F_ACT1)) == 0:
            continue  # left play earlier in this Resolve Phase, with nothing paid waiting
        for e in range(E.MAX_EFFECTS):
            verb = eff(cards, c, e, E.E_VERB)
            if verb == E.V_NONE or verb_step(rules, verb) != step:
                continue
            trig = eff(cards, c, e, E.E_TRIGGER)
            fire = False
            if trig == E.TRIG_EACH_TURN and in_play and E.VERB_GIVES_IP[verb] == E.IP_NONE and (
                    eff(cards, c, e, E.E_KICKER) == 0 or (sl[p, s, L.S_FLAGS] & L.F_KICKED) != 0):
                fire = True
            elif trig == E.TRIG_ACTIVATE and (sl[p, s, L.S_FLAGS] & (L.F_ACT0 << e)) != 0:
                flags = sl[p, s, L.S_FLAGS]
                sl[p, s, L.S_FLAGS] = flags & ~(L.F_ACT0 << e)
                # R52: paid for; R50 off: a destroyed card's fizzles, but a one-shot Attack
                # discarded after its damage step (R16) was not destroyed: it resolves.
                fire = in_play or destroyed_resolve or (flags & L.F_SPENT) != 0
            if fire:
                apply_effect(t, g, p, verb, eff(cards, c, e, E.E_AMOUNT), c, -1)
                if on_destroy_queued(pl, gm):
                    fire_on_destroy(t, g)
                if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
                    return  # R43: a player eliminated on their own turn stops at once
        if not in_play and (sl[p, s, L.S_FLAGS] & (L.F_ACT0 | L.F_ACT1)) == 0:
            sl[p, s, L.S_FLAGS] &= ~L.F_SPENT  # nothing paid waits any more


@njit(i8(CARDS, PLAYERS, SLOTS, LISTS, i8), **KERNEL)
def note_attacks(cards, pl, sl, ls, p):
    """Copy the slots of ``p``'s Attacks in play to the scratch list, in board order, so a
    step can walk them while 'on destroy' chains reshape the board; returns their count."""
    n = 0
    left = pl[p, L.P_N_ATTACKS]
    for i in range(pl[p, L.P_N_BOARD] if left > 0 else 0):
        s = ls[p, L.L_BOARD, i]
        if sl[p, s, L.S_ZONE] == L.Z_PLAY and cards[sl[p, s, L.S_CARD], E.C_TYPE] == E.ATTACK:
            ls[p, L.L_SCRATCH, n] = s
            n += 1
            if n == left:
                break
    return n


@njit(**INLINED)
def resolve_aoa(t, g, p):
    """Step ii, Amend. I §2-4: both Attacks deal damage at once; the greater survives with
    the difference (R17), the lesser is destroyed; equal damage destroys both. Every fight
    declared this turn is fought before any of them has consequences (Art. VII §5 step ii:
    "all AoA declarations resolve simultaneously"): the 'on destroy' effects of every
    card destroyed in step ii fire together after the last fight, the active player's
    first (R36, Amend. IX), so the order the Attacks were played decides nothing. Each
    fight's target loses its mark as its fight is fought (R49), every target whatever
    comes of the fight."""
    cards = t.cards
    pl, sl, ls, gm, tr = g.players, g.slots, g.lists, g.game, g.trace
    if pl[p, L.P_N_AOA] == 0:
        return  # none declared this turn: most turns
    pl[p, L.P_N_AOA] = 0
    for i in range(note_attacks(cards, pl, sl, ls, p)):
        s = ls[p, L.L_SCRATCH, i]
        if (sl[p, s, L.S_FLAGS] & L.F_AOA) == 0 or sl[p, s, L.S_ZONE] != L.Z_PLAY:
            continue
        sl[p, s, L.S_FLAGS] &= ~L.F_AOA
        sl[p, s, L.S_FLAGS] |= L.F_FOUGHT  # deals no damage at step iii this turn (R17)
        q = sl[p, s, L.S_TARGET_SEAT]
        s2 = sl[p, s, L.S_TARGET_SLOT]
        sl[q, s2, L.S_FLAGS] &= ~L.F_AOA_TARGETED  # R49: its fight is fought now
        if sl[q, s2, L.S_ZONE] != L.Z_PLAY or pl[q, L.P_ALIVE] == 0:
            continue
        mine = sl[p, s, L.S_DP]
        theirs = sl[q, s2, L.S_DP]
        emit(gm, tr, T.EV_AOA_RESULT, p, sl[p, s, L.S_CARD], q, sl[q, s2, L.S_CARD], mine, theirs)
        # Destroying an Attack ends no game (only a UA's does, Art. III §2), so every fight
        # is fought; 'on destroy' effects wait in their queue (fire_on_destroy).
        if mine > theirs:
            sl[p, s, L.S_DP] = mine - theirs
            destroy(t, g, q, s2, p)
        elif theirs > mine:
            sl[q, s2, L.S_DP] = theirs - mine
            destroy(t, g, p, s, p)
        else:  # Amend. I §4: equal damage, both destroyed
            destroy(t, g, q, s2, p)
            destroy(t, g, p, s, p)
    fire_on_destroy(t, g)  # Art. VII §5 step ii, Amend. I §2: after every fight


@njit(void(CARDS, WEIGHTS, PLAYERS, SLOTS, LISTS, FIELDS, RNG, i8), **KERNEL)
@called
def declare_attack_targets(cards, w, pl, sl, ls, gm, rng, p):
    """R48 ``play_phase``, Amend. II §4: at the end of the Play Phase each of ``p``'s
    Attacks in play that fights no Attack-on-Attack declares the card its damage will
    strike at step iii, chosen as ``strike`` would choose it now."""
    for i in range(pl[p, L.P_N_BOARD]):
        s = ls[p, L.L_BOARD, i]
        if sl[p, s, L.S_ZONE] != L.Z_PLAY or cards[sl[p, s, L.S_CARD], E.C_TYPE] != E.ATTACK \
                or (sl[p, s, L.S_FLAGS] & L.F_AOA) != 0:
            continue
        q = choose_opponent(pl, w, gm, rng, p, E.ATTACK_AIM)
        sl[p, s, L.S_TARGET_SEAT] = q
        sl[p, s, L.S_TARGET_SLOT] = -1 if q < 0 else \
            choose_strike_target(cards, w, rng, sl, ls, pl, p, q, sl[p, s, L.S_DP], False)


@njit(**INLINED)
def attack_damage_step(t, g, p):
    """Step iii: each of the active player's Attacks in play deals its damage (R16), to a
    Defense while the target has one, else a UA (Amend. II, R18). A one-shot Attack is
    then discarded; an Attack that fought Attack-on-Attack deals none this turn (R17)."""
    cards, rules, w = t.cards, t.rules, t.weights
    pl, sl, ls, gm, rng, tr = g.players, g.slots, g.lists, g.game, g.rng, g.trace
    one_shot_all = rules[E.R_ATTACK_LIFETIME] == E.LIFETIME_ONE_SHOT
    declared = rules[E.R_ATTACK_TARGETS] == E.TARGETS_PLAY_PHASE
    for i in range(note_attacks(cards, pl, sl, ls, p)):
        s = ls[p, L.L_SCRATCH, i]
        c = sl[p, s, L.S_CARD]
        if sl[p, s, L.S_ZONE] != L.Z_PLAY:
            continue  # destroyed by an 'on destroy' chain earlier in this step
        fought = (sl[p, s, L.S_FLAGS] & L.F_FOUGHT) != 0
        if fought:
            sl[p, s, L.S_FLAGS] &= ~L.F_FOUGHT  # R17: this turn only (R55: not pending)
        if not fought and declared:  # R48 play_phase: the target fixed in the Play Phase
            q = sl[p, s, L.S_TARGET_SEAT]
            s2 = sl[p, s, L.S_TARGET_SLOT]
            if q >= 0 and s2 >= 0 and sl[p, s, L.S_DP] > 0 and pl[q, L.P_ALIVE] != 0 and \
                    (sl[q, s2, L.S_ZONE] == L.Z_PLAY or sl[q, s2, L.S_ZONE] == L.Z_UA):
                deal_damage(t, g, q, s2, sl[p, s, L.S_DP], p, c)
            # A target gone since the Play Phase takes nothing: the choice "may not be
            # changed after declaration" (Amend. II §4), and damage never splits (§5).
            if on_destroy_queued(pl, gm):
                fire_on_destroy(t, g)
            if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
                return
        elif not fought:
            q = choose_opponent(pl, w, gm, rng, p, E.ATTACK_AIM)
            strike(t, g, p, q, sl[p, s, L.S_DP], False, c)
            if on_destroy_queued(pl, gm):
                fire_on_destroy(t, g)
            if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
                return
        if sl[p, s, L.S_ZONE] == L.Z_PLAY and \
                (one_shot_all or (cards[c, E.C_KEYWORDS] & E.KW_ONE_SHOT) != 0):  # R16
            # An activation paid for this turn still resolves at its step (R52): the
            # discard keeps its marks, as ``destroy`` does.
            activated = sl[p, s, L.S_FLAGS] & (L.F_ACT0 | L.F_ACT1)
            leave_play(cards, pl, sl, ls, p, s, L.Z_DISCARD)
            if activated != 0:
                sl[p, s, L.S_FLAGS] |= activated | L.F_SPENT
            emit(gm, tr, T.EV_DESTROY, p, c, -1, 0, 0, 0)


@njit(**INLINED)
def petition_check(cards, rules, pl, gm, tr):
    """Step v (Art. III §3, R23): every player, the active player first."""
    n = gm[L.G_N_PLAYERS]
    a = gm[L.G_ACTIVE]
    for k in range(n):
        q = seat_after(a, k, n)
        if pl[q, L.P_ALIVE] != 0 and pl[q, L.P_N_PETITIONS] >= PETITIONS_NEEDED \
                and pl[q, L.P_N_SCROLL_PILLARS] >= SCROLL_PILLARS_NEEDED \
                and pl[q, L.P_LP] >= PETITION_MIN_LP:
            end_game(gm, tr, q, E.PATH_PETITION, L.RULE_PETITION)
            return


@njit(**INLINED)
def drain_step(t, g, p):
    """Step vii, Amend. IV: each UA drains once (R21: the active player's, or every
    player's), from its controller (R20 default) or the next opponent; a UA destroyed
    earlier in this phase is gone and drains nothing (R22). Drains land together and LP
    is then checked, the active player winning ties (Amend. IX, R24); LP stops at
    ``LP_MIN`` as ``change_lp``'s does (R46)."""
    cards, rules = t.cards, t.rules
    pl, sl, ls, gm, tr = g.players, g.slots, g.lists, g.game, g.trace
    n = gm[L.G_N_PLAYERS]
    every = rules[E.R_UA_DRAIN_WHEN] == E.DRAIN_EVERY_TURN
    for k in range(n):
        q = seat_after(p, k, n)
        if pl[q, L.P_ALIVE] == 0 or (q != p and not every):
            continue
        victim = q if rules[E.R_UA_DRAIN_TARGET] != E.DRAIN_OPPONENT else next_opponent(pl, gm, q)
        if victim < 0:
            continue
        left = pl[q, L.P_N_UAS] - pl[q, L.P_UAS_LOST]  # UAs still in the UA Area
        for i in range(pl[q, L.P_N_BOARD]):
            if left <= 0:
                break
            s = ls[q, L.L_BOARD, i]
            if sl[q, s, L.S_ZONE] == L.Z_UA:
                left -= 1
                amount = cards[sl[q, s, L.S_CARD], E.C_DRAIN]
                lp = pl[victim, L.P_LP] - amount
                pl[victim, L.P_LP] = lp if lp >= L.LP_MIN else L.LP_MIN  # R46: no wrap
                emit(gm, tr, T.EV_DRAIN, q, sl[q, s, L.S_CARD], victim, amount, pl[victim, L.P_LP], 0)
    # LP checks after the simultaneous drain: opponents first, so the active player wins ties.
    for k in range(1, n + 1):
        q = seat_after(p, k, n)
        if pl[q, L.P_ALIVE] != 0 and pl[q, L.P_LP] <= 0:
            lose(rules, pl, gm, tr, q, E.PATH_LIFE, L.RULE_LP_ZERO)
            if gm[L.G_OVER] != 0:
                return


@njit(**INLINED)
def hand_limit_step(t, g, memo, p):
    """Step ix (Art. VI §7): discard down to seven, the least wanted first."""
    cards, w = t.cards, t.weights
    pl, sl, ls, gm, tr = g.players, g.slots, g.lists, g.game, g.trace
    if pl[p, L.P_N_HAND] > HAND_LIMIT:
        note_threats(cards, w, memo, pl, sl, ls, gm, p)
    while pl[p, L.P_N_HAND] > HAND_LIMIT:
        worst = choose_hand_limit_discard(t, g, memo, p)
        list_remove(pl, ls, p, L.L_HAND, L.P_N_HAND, worst)
        sl[p, worst, L.S_ZONE] = L.Z_DISCARD
        emit(gm, tr, T.EV_HAND_LIMIT, p, sl[p, worst, L.S_CARD], 0, 0, 0, 0)


@njit(**INLINED)
def finish_pending(cards, pl, sl, ls, gm, tr, p):
    """After step vi: Bills return to hand (Art. IV §7.2); Rights and Freedom cards are
    discarded unless a Petition or holding a lasting effect (Art. IV §2, R27)."""
    for i in range(pl[p, L.P_N_PENDING]):
        s = ls[p, L.L_PENDING, i]
        # Nothing is played after the Resolve Phase: this turn's marks end here. F_KICKED
        # stays: a paid kicker lasts while its card is in play (Art. IV §6).
        sl[p, s, L.S_FLAGS] &= ~(L.F_PENDING | L.F_FOUGHT | L.F_AOA | L.F_DESTROYED)
        sl[p, sl[p, s, L.S_NAME_SLOT], L.S_FLAGS] &= ~L.F_BILL_TURN
        if sl[p, s, L.S_ZONE] != L.Z_PLAY:
            continue
        c = sl[p, s, L.S_CARD]
        ctype = cards[c, E.C_TYPE]
        if ctype == E.BILL:
            leave_play(cards, pl, sl, ls, p, s, L.Z_HAND)
            emit(gm, tr, T.EV_RETURN, p, c, 0, 0, 0, 0)
        elif (ctype == E.RIGHTS or ctype == E.FREEDOM) and \
                not has_lasting_effect(cards, c, (sl[p, s, L.S_FLAGS] & L.F_KICKED) != 0):
            leave_play(cards, pl, sl, ls, p, s, L.Z_DISCARD)
    pl[p, L.P_N_PENDING] = 0


@njit(**INLINED)
def fire_step(t, g, p, step, steps, by_step):
    """Resolve step ``step`` (iii, iv or vi) of ``p``'s effects: those of its cards (when
    ``steps`` has the step's bit, ``note_effects``), then, with R47 ``by_step``, the
    'on destroy' effects that waited for it. Returns True when the phase must stop (the
    game is over or ``p`` is out)."""
    pl, gm = g.players, g.game
    if (steps >> step) & 1 != 0:
        fire_effects(t, g, p, step)
        if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
            return True
    if by_step and any_on_destroy_waiting(pl, gm):  # R47
        fire_waiting_on_destroy(t, g, step)
        if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
            return True
    return False


@njit(**INLINED)
def resolve_phase(t, g, memo, p):
    """Art. VII §5 phase four: the nine steps, in order. ``G_STEP`` names the step in
    progress (R47 reads it); it is 0 again when the phase ends."""
    cards, rules = t.cards, t.rules
    pl, sl, ls, gm, tr = g.players, g.slots, g.lists, g.game, g.trace
    by_step = rules[E.R_ON_DESTROY_TIMING] == E.OD_BY_STEP  # R47: anything can wait
    if by_step and any_on_destroy_waiting(pl, gm):
        drop_waiting_on_destroy(pl, sl, ls, gm)  # left by a phase cut short (R47)
    # i. locks and blocks: the grammar has none; declarations were fixed in the Play Phase.
    # The cards whose effects fire at steps iii-vi are noted first: one destroyed at step ii
    # still resolves an activation paid for (R52).
    steps = late_lp_steps(rules, note_effects(cards, pl, sl, ls, p))  # R58
    emit(gm, tr, T.EV_RESOLVE_STEP, p, 2, 0, 0, 0, 0)
    gm[L.G_STEP] = 2
    if pl[p, L.P_N_AOA] > 0:
        resolve_aoa(t, g, p)  # ii
        if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
            return
    # Steps iii, iv and vi in one loop, so the effects' code is compiled once, not thrice.
    for step in (E.STEP_DAMAGE, E.STEP_HEAL, E.STEP_EFFECTS):
        if step == E.STEP_EFFECTS:
            gm[L.G_STEP] = 5
            petition_check(cards, rules, pl, gm, tr)  # v
            if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
                return
        emit(gm, tr, T.EV_RESOLVE_STEP, p, step, 0, 0, 0, 0)
        gm[L.G_STEP] = step
        if step == E.STEP_DAMAGE:
            attack_damage_step(t, g, p)  # iii
            if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
                return
        if fire_step(t, g, p, step, steps, by_step):  # iii, iv, vi (R13)
            return
    gm[L.G_STEP] = 0
    finish_pending(cards, pl, sl, ls, gm, tr, p)
    emit(gm, tr, T.EV_RESOLVE_STEP, p, 7, 0, 0, 0, 0)
    drain_step(t, g, p)  # vii
    if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
        return
    # viii. LP, the third UA and deck-out were checked the moment they happened (R23);
    # Petition Victory only at step v (Art. III §3).
    if pl[p, L.P_N_HAND] > HAND_LIMIT:
        hand_limit_step(t, g, memo, p)  # ix


# =============================================================================== turn
@njit(**INLINED)
def independence_phase(t, g, p):
    """Phase two: Pillars give their IP (R11: only those in play now); 'each turn: ip'
    effects give non-Pillar IP, spent first (Amend. VI, R12)."""
    cards = t.cards
    pl, sl, ls, gm, tr = g.players, g.slots, g.lists, g.game, g.trace
    pillar_ip = pl[p, L.P_PILLAR_IP]  # the printed IP of the Pillars in play
    other_ip = 0
    left = pl[p, L.P_N_EACH_TURN_IP]  # cards with 'each turn: ip': most turns, none
    for i in range(pl[p, L.P_N_BOARD] if left > 0 else 0):
        s = ls[p, L.L_BOARD, i]
        c = sl[p, s, L.S_CARD]
        if (cards[c, E.C_FLAGS] & E.CF_EACH_TURN_IP) == 0:
            continue
        left -= 1
        for e in range(E.MAX_EFFECTS):
            verb = eff(cards, c, e, E.E_VERB)
            if E.VERB_GIVES_IP[verb] != E.IP_NONE and eff(cards, c, e, E.E_TRIGGER) == E.TRIG_EACH_TURN \
                    and (eff(cards, c, e, E.E_KICKER) == 0 or (sl[p, s, L.S_FLAGS] & L.F_KICKED) != 0):
                gained = effect_amount(pl, p, verb, eff(cards, c, e, E.E_AMOUNT))
                if cards[c, E.C_TYPE] == E.PILLAR:
                    pillar_ip += gained
                else:
                    other_ip += gained
        if left == 0:
            break
    pl[p, L.P_IP_PILLAR] = pillar_ip
    pl[p, L.P_IP_OTHER] = other_ip
    emit(gm, tr, T.EV_IP, p, pillar_ip + other_ip, -1, pillar_ip, other_ip, 0)


@njit(**INLINED)
def end_phase(pl, sl, ls, p):
    """Phase five: unspent IP is lost (Art. II §2); per-turn marks are cleared."""
    pl[p, L.P_IP_PILLAR] = 0
    pl[p, L.P_IP_OTHER] = 0
    pl[p, L.P_PILLARS_TURN] = 0
    # The per-turn card marks were cleared by finish_pending; activated effects clear
    # their own mark when they fire (fire_effects) or when their card leaves play.


@njit(**INLINED)
def turn_start(t, g, p):
    """A turn up to its Play Phase: Draw and Independence Phases (Art. VII §5); False when
    the game or the player ended in the Draw Phase."""
    cards, rules = t.cards, t.rules
    pl, sl, ls, gm, masks, tr = g.players, g.slots, g.lists, g.game, g.masks, g.trace
    gm[L.G_STEP] = 0  # outside the Resolve Phase (a phase cut short may have left a step)
    pl[p, L.P_TURNS] += 1
    emit(gm, tr, T.EV_TURN, p, pl[p, L.P_LP], pl[p, L.P_N_HAND], pl[p, L.P_N_DRAW], pl[p, L.P_N_BOARD], 0)
    # Sideways cards return upright at the start of their controller's turn (Art. VII §6,
    # Amend. V §3): every one (R29), or with its literal reading only those bearing an
    # 'each turn' effect; the others stay sideways while they stay in play.
    if pl[p, L.P_SIDEWAYS] != 0:
        pl[p, L.P_SIDEWAYS] = 0
        every = rules[E.R_SIDEWAYS_RESET] == E.UPRIGHT_EVERY_CARD
        for i in range(pl[p, L.P_N_BOARD]):
            s = ls[p, L.L_BOARD, i]
            if every or bears_each_turn(cards, sl[p, s, L.S_CARD],
                                        (sl[p, s, L.S_FLAGS] & L.F_KICKED) != 0):
                sl[p, s, L.S_FLAGS] &= ~(L.F_SIDEWAYS0 | L.F_SIDEWAYS1)
    # I. Draw Phase.
    n_draw = pl[p, L.P_DRAWS_NEXT]
    pl[p, L.P_DRAWS_NEXT] = 1
    if gm[L.G_TURN] == 0 and p == gm[L.G_FIRST] and rules[E.R_FIRST_PLAYER_DRAWS] == 0:
        n_draw = 0  # R8 switched off
    for _ in range(n_draw):
        if not draw_one(rules, pl, sl, ls, gm, masks, tr, p, True):
            return False
    independence_phase(t, g, p)  # II
    return True


@njit(**INLINED)
def turn_end(t, g, memo, p):
    """The turn after its Play Phase: Attack targets (R48), Resolve and End Phases."""
    cards, w = t.cards, t.weights
    pl, sl, ls, gm, rng, tr = g.players, g.slots, g.lists, g.game, g.rng, g.trace
    rules = t.rules
    if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
        return
    if rules[E.R_ATTACK_TARGETS] == E.TARGETS_PLAY_PHASE:
        declare_attack_targets(cards, w, pl, sl, ls, gm, rng, p)  # R48, Amend. II §4
    resolve_phase(t, g, memo, p)  # IV
    if gm[L.G_OVER] != 0 or pl[p, L.P_ALIVE] == 0:
        return
    end_phase(pl, sl, ls, p)  # V
    emit(gm, tr, T.EV_TURN_END, p, pl[p, L.P_LP], pl[p, L.P_N_HAND], pl[p, L.P_N_DRAW], pl[p, L.P_N_BOARD],
         pl[p, L.P_N_PETITIONS])


NOT_LAID_OUT = "rnr-sim engine: the state's arrays are not the layout's shapes (layout.py)"


@njit(**INLINED)
def laid_out(t, g, memo, acts):
    """Whether each array of the bundles and the scratch has the layout's row widths
    (layout.py; ``batch.worker_state`` and the tests' harness allocate them so). A kernel
    that tests it where it starts and raises when it fails indexes with constant strides
    past the test: LLVM knows the widths, so an address is shifts and adds instead of
    multiplications by widths read from the arrays (docs/engine.md, "The first compile")."""
    return t.cards.shape[1] == E.N_CARD_COLS and t.weights.shape[1] == W.N_WEIGHTS and \
        g.players.shape[1] == L.N_PLAYER_FIELDS and g.slots.shape[1] == E.MAX_SLOTS and \
        g.slots.shape[2] == L.N_SLOT_FIELDS and g.lists.shape[1] == L.N_LISTS and \
        g.lists.shape[2] == E.MAX_SLOTS and g.masks.shape[1] == L.N_MASKS and \
        g.trace.shape[1] == L.TRACE_WIDTH and memo.shape[1] == MEMO_WIDTH and \
        acts.shape[1] == L.ACT_WIDTH


# compiled on its own (inlined in numba's IR, the worker compiled in 41 s), and its copy
# inlined by LLVM into the loop of turns that calls it (linker.py)
@njit(void(TABLE, GAME, MEMO, ACTS, i8), **KERNEL)
@inlined_by_llvm
def take_turn(t, g, memo, acts, p):
    """One turn of five phases (Art. VII §5). A search pilot's turn (``search.py``) is the
    same three parts with its own Play Phase."""
    if not laid_out(t, g, memo, acts):  # constant strides from here on
        raise ValueError(NOT_LAID_OUT)
    if turn_start(t, g, p):
        play_phase(t, g, memo, acts, p)  # III
        turn_end(t, g, memo, p)


# =============================================================================== setup
@njit(void(PLAYERS, SLOTS, LISTS, i8), **KERNEL)
def draw_opening(pl, sl, ls, p):
    for _ in range(OPENING_HAND):
        n = pl[p, L.P_N_DRAW]
        if n == 0:
            return
        s = ls[p, L.L_DRAW, n - 1]
        pl[p, L.P_N_DRAW] = n - 1
        sl[p, s, L.S_ZONE] = L.Z_HAND
        list_push(pl, ls, p, L.L_HAND, L.P_N_HAND, s)


@njit(**INLINED)
def clear(a):
    """Every element of the C-contiguous array ``a`` to 0, as one flat loop (LLVM writes it
    as a memset; numba's ``a[:, :, :] = 0`` walks the index space, about 4x slower; a 1-D
    ``reshape`` calls a helper of numba's runtime each time)."""
    flat = a.flat
    for i in range(a.size):
        flat[i] = 0


@njit(**INLINED)
def copy_into(dst, src):
    """Every element of the C-contiguous array ``src`` into ``dst``, of the same shape, as
    one flat loop (LLVM writes it as one ``memcpy``; a loop per row became one call per row)."""
    to = dst.flat
    fro = src.flat
    for i in range(dst.size):
        to[i] = fro[i]


@njit(**INLINED)
def setup_game(t, g, deck_cards, deck_size, n_players, first_seat, seed, table_id, deal):
    """Art. VII §1-4 and Amend. VII-VIII: UAs in play, shuffle, seven cards, 100 LP,
    mulligans, then the second seat's free Pillar right.

    ``deck_cards[q]`` is seat q's deck (card id per slot). Seat q's shuffles use the stream
    (seed, table, deal, q), so a deck gets the same cards in every seat rotation of a deal
    (common random numbers); the game's other randomness uses stream (…, first_seat).
    """
    cards, rules, w = t.cards, t.rules, t.weights
    pl, sl, ls, gm, masks, rng, tr = g.players, g.slots, g.lists, g.game, g.masks, g.rng, g.trace
    clear(pl)
    clear(sl)
    clear(masks)
    debug = gm[L.G_DEBUG]
    clear(gm)
    gm[L.G_DEBUG] = debug
    gm[L.G_N_PLAYERS] = n_players
    gm[L.G_FIRST] = first_seat
    gm[L.G_ACTIVE] = first_seat
    gm[L.G_WINNER] = -1
    gm[L.G_PATH] = E.PATH_NONE
    gm[L.G_N_ALIVE] = n_players
    gm[L.G_TURN] = -1  # setup; becomes 0 when the first turn starts
    for q in range(n_players):
        rng[q] = stream_seed(seed, table_id, deal, q, 0)
    rng[GAME_STREAM] = stream_seed(seed, table_id, deal, 100 + first_seat, 1)
    for q in range(n_players):
        n = deck_size[q]
        pl[q, L.P_DECK_SIZE] = n
        pl[q, L.P_LP] = STARTING_LP  # Art. II §1
        pl[q, L.P_ALIVE] = 1
        pl[q, L.P_DRAWS_NEXT] = 1
        n_draw = 0  # the Draw Pile in slot order, counted here (a deck fits in its list)
        for s in range(n):
            c = deck_cards[q, s]
            sl[q, s, L.S_CARD] = c
            sl[q, s, L.S_NAME_SLOT] = s
            if cards[c, E.C_TYPE] == E.BILL:  # escalation is tracked per name (Art. IV §7.4)
                for s0 in range(s):
                    if deck_cards[q, s0] == c:
                        sl[q, s, L.S_NAME_SLOT] = s0
                        break
            if cards[c, E.C_TYPE] == E.UA:
                put_in_play(cards, pl, sl, ls, q, s, L.Z_UA)  # Art. IV §3.2, Art. VII §1.2
                pl[q, L.P_N_UAS] += 1
            else:
                sl[q, s, L.S_ZONE] = L.Z_DRAW
                ls[q, L.L_DRAW, n_draw] = s
                n_draw += 1
        pl[q, L.P_N_DRAW] = n_draw
        shuffle_draw_pile(pl, ls, rng, q, q)  # Art. VII §1.3
        draw_opening(pl, sl, ls, q)  # Art. VII §1.4
    # Amend. VII: one mulligan each, independently; the new hand is final.
    for q in range(n_players):
        k = pillars_in_hand(cards, pl, sl, ls, q)
        if choose_mulligan(cards, w, pl, sl, ls, rng, q):
            for i in range(pl[q, L.P_N_HAND]):
                s = ls[q, L.L_HAND, i]
                sl[q, s, L.S_ZONE] = L.Z_DRAW
                list_push(pl, ls, q, L.L_DRAW, L.P_N_DRAW, s)
            pl[q, L.P_N_HAND] = 0
            shuffle_draw_pile(pl, ls, rng, q, q)
            draw_opening(pl, sl, ls, q)
            pl[q, L.P_MULLIGAN] = 1
            emit(gm, tr, T.EV_MULLIGAN, q, k, pillars_in_hand(cards, pl, sl, ls, q), 0, 0, 0)
        for i in range(pl[q, L.P_N_HAND]):
            masks[q, L.M_OPENING] |= np.uint64(1) << np.uint64(ls[q, L.L_HAND, i])
    # Art. VII §4, Amend. VIII, R7: the second seat may place one Pillar free.
    p2 = seat_after(first_seat, 1, n_players)
    mode = rules[E.R_P2_FREE_PILLAR]
    if mode != E.P2_OFF:
        best = choose_p2_pillar(cards, w, pl, sl, ls, gm, rng, p2, mode == E.P2_ZERO_COST_ONLY)
        if best >= 0:
            list_remove(pl, ls, p2, L.L_HAND, L.P_N_HAND, best)
            put_in_play(cards, pl, sl, ls, p2, best, L.Z_PILLAR)
            masks[p2, L.M_PLAYED] |= np.uint64(1) << np.uint64(best)
            pl[p2, L.P_P2_RIGHT] = 1
            pl[p2, L.P_DRAWS_NEXT] = 2  # Amend. VIII: two cards in the first Draw Phase
            emit(gm, tr, T.EV_P2_RIGHT, p2, sl[p2, best, L.S_CARD], 0, 0, 0, 0)
    gm[L.G_TURN] = 0


@njit(**INLINED)
def play_game(t, g, memo, acts,
              deck_cards, deck_size, n_players, first_seat, seed, table_id, deal):
    """Play one complete game; the result is left in ``gm`` (winner, path, turns) and
    ``pl``/``masks`` (per seat)."""
    setup_game(t, g, deck_cards, deck_size, n_players, first_seat, seed, table_id, deal)
    play_from(t, g, memo, acts, first_seat, turn_limit(t.rules, n_players))


@njit(i8(RULES, i8), **KERNEL)
def turn_limit(rules, n_players):
    """R15 (R45: the same number of rounds at any table)."""
    limit = rules[E.R_TURN_LIMIT]
    if rules[E.R_TURN_LIMIT_SCALES] != 0:
        limit = limit * n_players // 2
    return limit


@njit(**INLINED)
def next_turn(t, g, p):
    """After seat ``p``'s turn: the debug checks, the turn count, the next seat (-1: the
    game is over)."""
    pl, sl, ls, gm = g.players, g.slots, g.lists, g.game
    if gm[L.G_DEBUG] != 0:
        gm[L.G_VIOLATIONS] += check_invariants(t.cards, pl, sl, ls, gm)
    gm[L.G_TURN] += 1
    if gm[L.G_OVER] != 0:
        return -1
    return next_opponent(pl, gm, p)  # Art. VII §5 phase five: clockwise


# =============================================================================== debug
@njit(i8(CARDS, PLAYERS, SLOTS, LISTS, FIELDS), **KERNEL)
@called
def check_invariants(cards, pl, sl, ls, gm):
    """Count broken invariants: every card in exactly one zone and its list, all slots
    accounted for, the zone counters and the summaries of the cards in play right, no
    negative IP, DP, LP-independent counters or hand size, at most two effects activated
    per card per turn. Zero means the state is sound."""
    bad = 0
    for p in range(gm[L.G_N_PLAYERS]):
        n = pl[p, L.P_DECK_SIZE]
        if pl[p, L.P_IP_PILLAR] < 0 or pl[p, L.P_IP_OTHER] < 0 or pl[p, L.P_N_HAND] < 0 \
                or pl[p, L.P_N_DRAW] < 0 or pl[p, L.P_N_BOARD] < 0:
            bad += 1
        if pl[p, L.P_LIST_OVERFLOW] != 0:
            bad += 1  # a list write was refused: some list outgrew its 64 entries
        in_draw = 0
        in_hand = 0
        in_board = 0
        pet = 0
        pil = 0
        defenses = 0
        uas = 0
        attacks = 0
        activatable = 0
        pillar_ip = 0
        each_turn_ip = 0
        turn_steps = 0
        for s in range(n):
            z = sl[p, s, L.S_ZONE]
            if z == L.Z_DRAW:
                in_draw += 1
            elif z == L.Z_HAND:
                in_hand += 1
            elif z == L.Z_PILLAR or z == L.Z_PETITION or z == L.Z_UA or z == L.Z_PLAY:
                in_board += 1
                if z == L.Z_PETITION:
                    pet += 1
                if z == L.Z_PILLAR:
                    pil += 1
                ctype = cards[sl[p, s, L.S_CARD], E.C_TYPE]
                if z == L.Z_PLAY and ctype == E.DEFENSE:
                    defenses += 1
                if z == L.Z_UA:
                    uas += 1
                c = sl[p, s, L.S_CARD]
                if z == L.Z_PLAY and ctype == E.ATTACK:
                    attacks += 1
                if z == L.Z_PILLAR:
                    pillar_ip += cards[c, E.C_IP]
                if (cards[c, E.C_FLAGS] & E.CF_ACTIVATE) != 0:
                    activatable += 1
                if (cards[c, E.C_FLAGS] & E.CF_EACH_TURN_IP) != 0:
                    each_turn_ip += 1
                if cards[c, E.C_TURN_STEPS] != 0:
                    turn_steps += 1
                if (ctype == E.DEFENSE or ctype == E.UA) and sl[p, s, L.S_DP] <= 0:
                    bad += 1
            elif z != L.Z_DISCARD and z != L.Z_EXILE:
                bad += 1  # a card in no zone
            flags = sl[p, s, L.S_FLAGS]
            if (flags & L.F_SIDEWAYS0) != 0 and (flags & L.F_SIDEWAYS1) != 0:
                c = sl[p, s, L.S_CARD]
                n_act = 0
                for e in range(E.MAX_EFFECTS):
                    if eff(cards, c, e, E.E_TRIGGER) == E.TRIG_ACTIVATE:
                        n_act += 1
                if n_act < 2:
                    bad += 1
        if in_draw != pl[p, L.P_N_DRAW] or in_hand != pl[p, L.P_N_HAND] \
                or in_board != pl[p, L.P_N_BOARD] or pet != pl[p, L.P_N_PETITIONS] \
                or pil != pl[p, L.P_N_PILLARS] or defenses != pl[p, L.P_N_DEFENSES] \
                or uas != pl[p, L.P_N_UAS] - pl[p, L.P_UAS_LOST]:
            bad += 1
        if attacks != pl[p, L.P_N_ATTACKS] or activatable != pl[p, L.P_N_ACTIVATABLE] \
                or pillar_ip != pl[p, L.P_PILLAR_IP] or each_turn_ip != pl[p, L.P_N_EACH_TURN_IP] \
                or turn_steps != pl[p, L.P_N_TURN_STEPS]:
            bad += 1  # a summary of the cards in play is off (layout.P_N_ATTACKS ...)
        for i in range(pl[p, L.P_N_DRAW]):
            if sl[p, ls[p, L.L_DRAW, i], L.S_ZONE] != L.Z_DRAW:
                bad += 1
        for i in range(pl[p, L.P_N_HAND]):
            if sl[p, ls[p, L.L_HAND, i], L.S_ZONE] != L.Z_HAND:
                bad += 1
        for i in range(pl[p, L.P_N_BOARD]):
            z = sl[p, ls[p, L.L_BOARD, i], L.S_ZONE]
            if z != L.Z_PILLAR and z != L.Z_PETITION and z != L.Z_UA and z != L.Z_PLAY:
                bad += 1
    return bad


@njit(**INLINED)
def play_from(t, g, memo, acts, p, stop_turn):
    """Play turns from seat ``p``'s until the game ends or ``stop_turn`` turns were taken
    (all seats counted); returns the seat whose turn is next (-1: none). A game resumes
    from any turn's start with this (``state_api.py``)."""
    gm, tr = g.game, g.trace
    limit = turn_limit(t.rules, gm[L.G_N_PLAYERS])
    while gm[L.G_OVER] == 0:
        if gm[L.G_TURN] >= limit:  # R15
            end_game(gm, tr, -1, E.PATH_DRAW, L.RULE_TURN_LIMIT)
            break
        if gm[L.G_TURN] >= stop_turn:
            return p
        gm[L.G_ACTIVE] = p
        take_turn(t, g, memo, acts, p)
        p = next_turn(t, g, p)
        if p < 0:
            break
    return -1
