"""The rules of Revolt N Reign as numba kernels: one complete game from a seed.

Every kernel takes the catalog table ``cards`` (int32[n_cards, N_CARD_COLS], with the
derived columns of ``enums``), the rules profile ``rules`` (int64[N_RULES]), the seats'
policies ``w`` (float64[4, N_WEIGHTS], only read; a pilot's memory is ``memo``, see
``decisions``) and
the game state arrays described in ``layout.py``. Nothing here allocates. What a pilot
chooses (its next action, mulligan, targets) comes from ``decisions``; this module applies
the choice, and nothing here knows how a pilot values a card. Kernels called from one place run inlined there (``INLINED``, config.py). Comments cite the Constitution
(Art., Amend.) or a ruling (R-number, docs/rulings.md).
"""

import numpy as np
from numba import njit

from rnr_sim.engine.config import INLINED, KERNEL
from rnr_sim.engine.decisions import (
    choose_action,
    choose_hand_limit_discard,
    choose_mulligan,
    choose_p2_pillar,
    choose_strike_target,
    forget_card_values,
    forget_pillar_values,
    note_threats,
    pick_opponent,
)
from rnr_sim.engine.layout import (
    ACT_ACTIVATE,
    ACT_AOA,
    ACT_PLAY,
    ACT_PLAY_KICKED,
    F_ACT0,
    F_ACT1,
    F_AOA,
    F_AOA_TARGETED,
    F_BILL_TURN,
    F_DESTROYED,
    F_FOUGHT,
    F_KICKED,
    F_OD_WAIT0,
    F_OD_WAIT1,
    F_PENDING,
    F_SIDEWAYS0,
    F_SIDEWAYS1,
    G_ACTIVE,
    G_DEBUG,
    G_FIRST,
    G_N_ALIVE,
    G_N_PLAYERS,
    G_N_TRACE,
    G_OVER,
    G_PATH,
    G_RULE,
    G_STEP,
    G_TURN,
    G_VIOLATIONS,
    G_WINNER,
    L_BOARD,
    L_DRAW,
    L_FIRE,
    L_HAND,
    L_OD_WAIT,
    L_ON_DESTROY,
    L_PENDING,
    L_SCRATCH,
    LP_MAX,
    LP_MIN,
    M_DRAWN,
    M_OPENING,
    M_PLAYED,
    P_ALIVE,
    P_DECK_SIZE,
    P_DRAWS_NEXT,
    P_IP_OTHER,
    P_IP_PILLAR,
    P_LIST_OVERFLOW,
    P_LP,
    P_MULLIGAN,
    P_N_AOA,
    P_N_AOA_TARGETS,
    P_N_BOARD,
    P_N_DEFENSES,
    P_N_DRAW,
    P_N_FIRE,
    P_N_HAND,
    P_N_OD_WAIT,
    P_N_ON_DESTROY,
    P_N_PENDING,
    P_N_PETITIONS,
    P_N_PILLARS,
    P_N_SCROLL_PILLARS,
    P_N_UAS,
    P_P2_RIGHT,
    P_PILLARS_TURN,
    P_SIDEWAYS,
    P_TURNS,
    P_UAS_LOST,
    RULE_DECK_OUT_DRAW_PHASE,
    RULE_DECK_OUT_EFFECT,
    RULE_LAST_STANDING,
    RULE_LP_ZERO,
    RULE_PETITION,
    RULE_THIRD_UA,
    RULE_TURN_LIMIT,
    S_BILL_PLAYS,
    S_CARD,
    S_DP,
    S_FLAGS,
    S_NAME_SLOT,
    S_TARGET_SEAT,
    S_TARGET_SLOT,
    S_ZONE,
    Z_DISCARD,
    Z_DRAW,
    Z_EXILE,
    Z_HAND,
    Z_PETITION,
    Z_PILLAR,
    Z_PLAY,
    Z_UA,
)
from rnr_sim.engine.policies import (
    W_PILLAR_TARGET,
    W_SCROLL_PILLAR,
)
from rnr_sim.engine.rng import rand_below, stream_seed
from rnr_sim.engine.state import (  # noqa: F401 (the game's numbers, re-exported)
    GAME_STREAM,
    HAND_LIMIT,
    OPENING_HAND,
    PETITION_MIN_LP,
    PETITIONS_NEEDED,
    SCROLL_PILLARS_NEEDED,
    STARTING_LP,
    eff,
    has_activate_effect,
    has_lasting_effect,
    ip_amount,
    pillars_in_hand,
    play_cost,
)
from rnr_sim.engine.trace import (
    EV_ACTIVATE,
    EV_AOA,
    EV_AOA_RESULT,
    EV_DAMAGE,
    EV_DESTROY,
    EV_DISCARD,
    EV_DRAIN,
    EV_DRAW,
    EV_ELIMINATED,
    EV_EXILE,
    EV_HAND_LIMIT,
    EV_IP,
    EV_LP,
    EV_MILL,
    EV_MULLIGAN,
    EV_P2_RIGHT,
    EV_PETITION_LOST,
    EV_PLAY,
    EV_RECOVER,
    EV_REPAIR,
    EV_RESOLVE_STEP,
    EV_RETURN,
    EV_TURN,
    EV_TURN_END,
    EV_TUTOR,
    EV_VICTORY,
)
from rnr_sim.enums import (
    ATTACK,
    BILL,
    C_BRANCH,
    C_COST,
    C_DAMAGE,
    C_DP,
    C_DRAIN,
    C_FLAGS,
    C_IP,
    C_KEYWORDS,
    C_RESOLVE_STEPS,
    C_TURN_STEPS,
    C_TYPE,
    CF_ACTIVATE,
    CF_EACH_TURN_IP,
    CF_ON_DESTROY,
    DEFENSE,
    DRAIN_EVERY_TURN,
    DRAIN_OPPONENT,
    E_AMOUNT,
    E_COST,
    E_KICKER,
    E_TRIGGER,
    E_VERB,
    FREEDOM,
    IP_NONE,
    KW_ONE_SHOT,
    KW_PETITION,
    KW_PROTECT,
    LIFETIME_ONE_SHOT,
    MAX_EFFECTS,
    MAX_SLOTS,
    MP_FIRST_VICTORY,
    OD_BY_STEP,
    P2_OFF,
    P2_ZERO_COST_ONLY,
    PATH_ATTACK,
    PATH_DECK_OUT,
    PATH_DRAW,
    PATH_LIFE,
    PATH_NONE,
    PATH_PETITION,
    PILLAR,
    R_AOA,
    R_ATTACK_LIFETIME,
    R_ATTACK_TARGETS,
    R_DESTROYED_CARDS_RESOLVE,
    R_FIRST_PLAYER_DRAWS,
    R_IP_EFFECTS_IMMEDIATE,
    R_LP_CAP,
    R_MULTIPLAYER,
    R_ON_DESTROY_TIMING,
    R_P2_FREE_PILLAR,
    R_PILLARS_PER_TURN,
    R_TURN_LIMIT,
    R_TURN_LIMIT_SCALES,
    R_UA_DRAIN_TARGET,
    R_UA_DRAIN_WHEN,
    RESOLVE_STEP,
    RIGHTS,
    SCROLL,
    STEP_DAMAGE,
    STEP_EFFECTS,
    STEP_HEAL,
    TARGETS_PLAY_PHASE,
    TRIG_ACTIVATE,
    TRIG_EACH_TURN,
    TRIG_ON_DESTROY,
    TRIG_ON_RESOLVE,
    UA,
    V_DESTROY_PETITION,
    V_DISCARD,
    V_DRAW,
    V_EXILE,
    V_FORCE_DRAW,
    V_HEAL,
    V_LP,
    V_MILL,
    V_NONE,
    V_RECOVER,
    V_REPAIR,
    V_STRIKE,
    V_STRIKE_UA,
    V_TUTOR_PILLAR,
    VERB_GIVES_IP,
)


# =============================================================================== trace
@njit("void(int64[::1], int32[:, ::1], int64, int64, int64, int64, int64, int64, int64)", **KERNEL)
def emit(gm, tr, event, seat, a, b, c, d, e):
    """Append one event to the trace; a zero-capacity trace records nothing (bulk runs)."""
    if tr.shape[0] == 0:
        return
    k = gm[G_N_TRACE]
    if k < tr.shape[0]:
        tr[k, 0] = gm[G_TURN]
        tr[k, 1] = event
        tr[k, 2] = seat
        tr[k, 3] = a
        tr[k, 4] = b
        tr[k, 5] = c
        tr[k, 6] = d
        tr[k, 7] = e
        gm[G_N_TRACE] = k + 1


# =============================================================================== lists
@njit("void(int32[:, ::1], int16[:, :, ::1], int64, int64, int64, int64)", **KERNEL)
def list_push(pl, ls, p, lst, count_field, slot):
    n = pl[p, count_field]
    if n >= MAX_SLOTS:  # a full list: refuse the write (it would land in the next list)
        pl[p, P_LIST_OVERFLOW] += 1
        return
    ls[p, lst, n] = slot
    pl[p, count_field] = n + 1


@njit("boolean(int32[:, ::1], int16[:, :, ::1], int64, int64, int64, int64)", **KERNEL)
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
@njit("void(int64[::1], int32[:, ::1], int64, int64, int64)", **KERNEL)
def end_game(gm, tr, winner, path, rule):
    if gm[G_OVER] != 0:
        return
    gm[G_OVER] = 1
    gm[G_WINNER] = winner
    gm[G_PATH] = path
    gm[G_RULE] = rule
    emit(gm, tr, EV_VICTORY, winner, path, rule, 0, 0, 0)


@njit(**KERNEL)
def last_alive(pl, gm):
    for q in range(gm[G_N_PLAYERS]):
        if pl[q, P_ALIVE] != 0:
            return q
    return -1


@njit("void(int64[::1], int32[:, ::1], int64[::1], int32[:, ::1], int64, int64, int64)", **KERNEL)
def lose(rules, pl, gm, tr, p, path, rule):
    """Player ``p`` meets a losing condition by ``path`` (R25, R26).

    Two players: the other wins by that path. Three or four, ``first_victory``: if ``p`` is
    not the active player, the active player brought it about and wins by that path; a
    player who loses on their own turn is eliminated. ``last_standing``: every loss
    eliminates; the last player left wins by the path of the final elimination.
    """
    if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
        return
    n = gm[G_N_PLAYERS]
    active = gm[G_ACTIVE]
    if n == 2:
        end_game(gm, tr, 1 - p, path, rule)  # R25
        return
    if rules[R_MULTIPLAYER] == MP_FIRST_VICTORY and p != active and pl[active, P_ALIVE] != 0:
        end_game(gm, tr, active, path, rule)  # R26: the active player brought it about
        return
    pl[p, P_ALIVE] = 0
    gm[G_N_ALIVE] -= 1
    emit(gm, tr, EV_ELIMINATED, p, path, rule, 0, 0, 0)
    if gm[G_N_ALIVE] == 1:
        end_game(gm, tr, last_alive(pl, gm), path, RULE_LAST_STANDING)  # R26


@njit("void(int64[::1], int32[:, ::1], int64[::1], int32[:, ::1], int64, int64, int64, int64)", **KERNEL)
def change_lp(rules, pl, gm, tr, p, delta, cause, src_card):
    """Add ``delta`` LP; LP is checked continuously (Art. II §1, R23)."""
    old = pl[p, P_LP]
    lp = old + delta
    cap = rules[R_LP_CAP]
    if cap > 0 and delta > 0 and lp > cap:  # R14: gains stop at the cap
        lp = cap if cap > old else old
    if lp > LP_MAX:  # R46: LP is int32; gains stop at its top
        lp = LP_MAX
    elif lp < LP_MIN:
        lp = LP_MIN
    pl[p, P_LP] = lp
    emit(gm, tr, EV_LP, p, delta, lp, cause, src_card, 0)
    if lp <= 0:
        lose(rules, pl, gm, tr, p, PATH_LIFE, RULE_LP_ZERO)  # Art. III §1


# =============================================================================== drawing
@njit("boolean(int64[::1], int32[:, ::1], int32[:, :, ::1], int16[:, :, ::1], int64[::1], uint64[:, ::1], int32[:, ::1], int64, boolean)", **KERNEL)
def draw_one(rules, pl, sl, ls, gm, masks, tr, p, in_draw_phase):
    """Draw the top card; an empty Draw Pile loses at once (Art. III §4, Art. VI §1, R23)."""
    n = pl[p, P_N_DRAW]
    if n == 0:
        rule = RULE_DECK_OUT_DRAW_PHASE if in_draw_phase else RULE_DECK_OUT_EFFECT
        lose(rules, pl, gm, tr, p, PATH_DECK_OUT, rule)
        return False
    s = ls[p, L_DRAW, n - 1]
    pl[p, P_N_DRAW] = n - 1
    sl[p, s, S_ZONE] = Z_HAND
    list_push(pl, ls, p, L_HAND, P_N_HAND, s)
    if gm[G_TURN] >= 0:
        masks[p, M_DRAWN] |= np.uint64(1) << np.uint64(s)
    emit(gm, tr, EV_DRAW, p, sl[p, s, S_CARD], n - 1, 0, 0, 0)
    return True


@njit(**KERNEL)
def shuffle_draw_pile(pl, ls, rng, p, stream):
    n = pl[p, P_N_DRAW]
    for i in range(n - 1, 0, -1):
        j = rand_below(rng, stream, i + 1)
        t = ls[p, L_DRAW, i]
        ls[p, L_DRAW, i] = ls[p, L_DRAW, j]
        ls[p, L_DRAW, j] = t


# =============================================================================== board
@njit("void(int32[:, ::1], int32[:, ::1], int32[:, :, ::1], int16[:, :, ::1], int64, int64, int64)", **KERNEL)
def put_in_play(cards, pl, sl, ls, p, s, zone):
    c = sl[p, s, S_CARD]
    sl[p, s, S_ZONE] = zone
    list_push(pl, ls, p, L_BOARD, P_N_BOARD, s)
    t = cards[c, C_TYPE]
    if t == DEFENSE or t == UA:
        sl[p, s, S_DP] = cards[c, C_DP]
        if t == DEFENSE and zone == Z_PLAY:
            pl[p, P_N_DEFENSES] += 1
    elif t == ATTACK:
        sl[p, s, S_DP] = cards[c, C_DAMAGE]
    if zone == Z_PILLAR:
        pl[p, P_N_PILLARS] += 1
        if cards[c, C_BRANCH] == SCROLL:
            pl[p, P_N_SCROLL_PILLARS] += 1  # Art. III §3.2
    elif zone == Z_PETITION:
        pl[p, P_N_PETITIONS] += 1


@njit("void(int32[:, ::1], int32[:, ::1], int32[:, :, ::1], int16[:, :, ::1], int64, int64, int64)", **KERNEL)
def leave_play(cards, pl, sl, ls, p, s, to_zone):
    """Move a card in play to another zone, keeping the zone counters right."""
    zone = sl[p, s, S_ZONE]
    c = sl[p, s, S_CARD]
    list_remove(pl, ls, p, L_BOARD, P_N_BOARD, s)
    if zone == Z_PLAY and cards[c, C_TYPE] == DEFENSE:
        pl[p, P_N_DEFENSES] -= 1
    elif zone == Z_PILLAR:
        pl[p, P_N_PILLARS] -= 1
        if cards[c, C_BRANCH] == SCROLL:
            pl[p, P_N_SCROLL_PILLARS] -= 1
    elif zone == Z_PETITION:
        pl[p, P_N_PETITIONS] -= 1
    sl[p, s, S_ZONE] = to_zone
    sl[p, s, S_FLAGS] = sl[p, s, S_FLAGS] & ~(F_PENDING | F_AOA | F_ACT0 | F_ACT1
                                              | F_SIDEWAYS0 | F_SIDEWAYS1 | F_KICKED
                                              | F_AOA_TARGETED)
    if to_zone == Z_HAND:
        list_push(pl, ls, p, L_HAND, P_N_HAND, s)


# =============================================================================== verbs


# =============================================================================== targets
@njit(**KERNEL)
def next_opponent(pl, gm, p):
    n = gm[G_N_PLAYERS]
    for k in range(1, n):
        q = (p + k) % n
        if pl[q, P_ALIVE] != 0:
            return q
    return -1






# =============================================================================== damage
@njit("void(int32[:, ::1], int64[::1], float64[:, ::1], int32[:, ::1], int32[:, :, ::1], int16[:, :, ::1], int64[::1], uint64[:, ::1], uint64[::1], int32[:, ::1], int64, int64, int64)", **KERNEL)
def destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, q, s, by):
    """A card of player ``q`` is destroyed (DP 0, AoA, or an effect) and discarded
    (Art. II §3); the third UA lost ends the game (Art. III §2). Its ``on destroy``
    effects are queued and fired by ``fire_on_destroy`` as soon as the effect that
    destroyed it has resolved (a queue rather than recursion keeps compiling fast).
    """
    c = sl[q, s, S_CARD]
    t = cards[c, C_TYPE]
    pending = sl[q, s, S_FLAGS] & F_PENDING
    leave_play(cards, pl, sl, ls, q, s, Z_DISCARD)
    if pending != 0:
        sl[q, s, S_FLAGS] |= F_DESTROYED  # its effects may still wait (R50)
    emit(gm, tr, EV_DESTROY, q, c, by, 0, 0, 0)
    if (cards[c, C_FLAGS] & CF_ON_DESTROY) != 0:
        list_push(pl, ls, q, L_ON_DESTROY, P_N_ON_DESTROY, s)  # fired by fire_on_destroy
    if t == UA:
        pl[q, P_UAS_LOST] += 1
        if pl[q, P_UAS_LOST] >= pl[q, P_N_UAS]:
            lose(rules, pl, gm, tr, q, PATH_ATTACK, RULE_THIRD_UA)  # Art. III §2


@njit("void(int32[:, ::1], int64[::1], float64[:, ::1], int32[:, ::1], int32[:, :, ::1], int16[:, :, ::1], int64[::1], uint64[:, ::1], uint64[::1], int32[:, ::1], int64, int64, int64, int64, int64)", **KERNEL)
def deal_damage(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, q, s, amount, by, src_card):
    """Damage to one card; no overflow, no splitting (Amend. II §5)."""
    left = sl[q, s, S_DP] - amount
    if left < 0:
        left = 0
    sl[q, s, S_DP] = left
    emit(gm, tr, EV_DAMAGE, by, src_card, q, sl[q, s, S_CARD], amount, left)
    if left == 0:
        destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, q, s, by)  # Art. II §3


@njit("void(int32[:, ::1], int64[::1], float64[:, ::1], int32[:, ::1], int32[:, :, ::1], int16[:, :, ::1], int64[::1], uint64[:, ::1], uint64[::1], int32[:, ::1], int64, int64, int64, boolean, int64)", **KERNEL)
def strike(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, q, amount, ua_only, src_card):
    if amount <= 0 or q < 0:
        return
    s = choose_strike_target(cards, sl, ls, pl, q, amount, ua_only)
    if s >= 0:
        deal_damage(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, q, s, amount, p, src_card)


# =============================================================================== effects
@njit(**KERNEL)
def mill(cards, pl, sl, ls, gm, tr, q, amount, exile, by, src_card):
    """The top ``amount`` cards of ``q``'s Draw Pile go to the Discard Pile (mill) or out of
    the game (exile). A milled Protect card stays in place (Amend. III, R19); exile is not
    stopped by Protect.
    """
    if q < 0:
        return
    n = pl[q, P_N_DRAW]
    lo = n - amount
    if lo < 0:
        lo = 0
    kept = 0
    moved = 0
    # Walk the top ``amount`` cards from the bottom of that window up, compacting the kept.
    for i in range(lo, n):
        s = ls[q, L_DRAW, i]
        c = sl[q, s, S_CARD]
        if not exile and (cards[c, C_KEYWORDS] & KW_PROTECT) != 0:
            ls[q, L_DRAW, lo + kept] = s
            kept += 1
        else:
            sl[q, s, S_ZONE] = Z_EXILE if exile else Z_DISCARD
            moved += 1
    pl[q, P_N_DRAW] = lo + kept
    emit(gm, tr, EV_EXILE if exile else EV_MILL, q, moved, lo + kept, kept, src_card, by)


@njit(**KERNEL)
def discard_random(cards, pl, sl, ls, gm, rng, tr, q, amount, by, src_card):
    """``q`` discards ``amount`` random cards from hand; Protect cards are immune (Amend. III)."""
    if q < 0:
        return
    for _ in range(amount):
        n_ok = 0
        for i in range(pl[q, P_N_HAND]):
            s = ls[q, L_HAND, i]
            if (cards[sl[q, s, S_CARD], C_KEYWORDS] & KW_PROTECT) == 0:
                n_ok += 1
        if n_ok == 0:
            return
        k = rand_below(rng, GAME_STREAM, n_ok)
        for i in range(pl[q, P_N_HAND]):
            s = ls[q, L_HAND, i]
            if (cards[sl[q, s, S_CARD], C_KEYWORDS] & KW_PROTECT) == 0:
                if k == 0:
                    list_remove(pl, ls, q, L_HAND, P_N_HAND, s)
                    sl[q, s, S_ZONE] = Z_DISCARD
                    emit(gm, tr, EV_DISCARD, q, sl[q, s, S_CARD], src_card, by, 0, 0)
                    break
                k -= 1


@njit(**KERNEL)
def repair(cards, pl, sl, ls, gm, tr, p, amount, src_card):
    """Restore DP to the most damaged of ``p``'s Defenses and UAs, not above printed DP."""
    best = -1
    best_missing = 0
    for i in range(pl[p, P_N_BOARD]):
        s = ls[p, L_BOARD, i]
        c = sl[p, s, S_CARD]
        t = cards[c, C_TYPE]
        if (t == DEFENSE or t == UA) and sl[p, s, S_ZONE] != Z_DISCARD:
            missing = cards[c, C_DP] - sl[p, s, S_DP]
            if missing > best_missing:
                best = s
                best_missing = missing
    if best >= 0:
        add = amount if amount < best_missing else best_missing
        sl[p, best, S_DP] += add
        emit(gm, tr, EV_REPAIR, p, sl[p, best, S_CARD], add, sl[p, best, S_DP], src_card, 0)


@njit(**KERNEL)
def recover(cards, w, pl, sl, ls, gm, masks, tr, p, amount, src_card):
    """Return up to ``amount`` cards from the Discard Pile to hand: the costliest first,
    Pillars first while short of the Pillar target.
    """
    for _ in range(amount):
        best = -1
        best_key = -1.0e9
        for s in range(pl[p, P_DECK_SIZE]):
            c = sl[p, s, S_CARD]
            if sl[p, s, S_ZONE] != Z_DISCARD or cards[c, C_TYPE] == UA:
                continue  # R44: a UA leaves its Area only when destroyed (Art. VI §5)
            key = float(cards[c, C_COST])
            if cards[c, C_TYPE] == PILLAR and pl[p, P_N_PILLARS] < w[p, W_PILLAR_TARGET]:
                key += 100.0
            if key > best_key:
                best = s
                best_key = key
        if best < 0:
            return
        sl[p, best, S_ZONE] = Z_HAND
        list_push(pl, ls, p, L_HAND, P_N_HAND, best)
        masks[p, M_DRAWN] |= np.uint64(1) << np.uint64(best)  # seen: any route into the hand
        emit(gm, tr, EV_RECOVER, p, sl[p, best, S_CARD], src_card, 0, 0, 0)


@njit(**KERNEL)
def tutor_pillar(cards, w, pl, sl, ls, gm, masks, rng, tr, p, src_card):
    """Move a Pillar (the most IP, Scroll first for a Petition player) to hand, then shuffle."""
    best = -1
    best_key = -1.0
    for i in range(pl[p, P_N_DRAW]):
        s = ls[p, L_DRAW, i]
        c = sl[p, s, S_CARD]
        if cards[c, C_TYPE] == PILLAR:
            key = cards[c, C_IP] + (w[p, W_SCROLL_PILLAR] if cards[c, C_BRANCH] == SCROLL else 0.0)
            if key > best_key:
                best = s
                best_key = key
    if best >= 0:
        list_remove(pl, ls, p, L_DRAW, P_N_DRAW, best)
        sl[p, best, S_ZONE] = Z_HAND
        list_push(pl, ls, p, L_HAND, P_N_HAND, best)
        masks[p, M_DRAWN] |= np.uint64(1) << np.uint64(best)
        emit(gm, tr, EV_TUTOR, p, sl[p, best, S_CARD], src_card, 0, 0, 0)
    shuffle_draw_pile(pl, ls, rng, p, p)


@njit("void(int32[:, ::1], int64[::1], float64[:, ::1], int32[:, ::1], int32[:, :, ::1], int16[:, :, ::1], int64[::1], uint64[:, ::1], uint64[::1], int32[:, ::1], int64, int64, int64, int64, int64)", **KERNEL)
def apply_effect(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, verb, amount, src_card,
                 target):
    """Resolve one effect controlled by ``p`` (docs/design.md effect grammar).

    ``target``: the opponent it is aimed at, or -1 to let ``p``'s policy pick one.
    """
    if gm[G_OVER] != 0:
        return
    q = target
    if q < 0 or pl[q, P_ALIVE] == 0:
        q = pick_opponent(pl, w, gm, p, verb)
    if verb == V_LP:
        if q >= 0:
            change_lp(rules, pl, gm, tr, q, -amount, V_LP, src_card)  # Amend. II §3
    elif verb == V_STRIKE:
        strike(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, q, amount, False, src_card)
    elif verb == V_STRIKE_UA:
        strike(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, q, amount, True, src_card)
    elif verb == V_HEAL:
        change_lp(rules, pl, gm, tr, p, amount, V_HEAL, src_card)
    elif verb == V_DRAW:
        for _ in range(amount):
            if not draw_one(rules, pl, sl, ls, gm, masks, tr, p, False):
                return
    elif verb == V_FORCE_DRAW:
        for _ in range(amount):
            if q < 0 or not draw_one(rules, pl, sl, ls, gm, masks, tr, q, False):
                return
    elif verb == V_MILL:
        mill(cards, pl, sl, ls, gm, tr, q, amount, False, p, src_card)
    elif verb == V_EXILE:
        mill(cards, pl, sl, ls, gm, tr, q, amount, True, p, src_card)
    elif verb == V_DISCARD:
        discard_random(cards, pl, sl, ls, gm, rng, tr, q, amount, p, src_card)
    elif VERB_GIVES_IP[verb] != IP_NONE:
        gained = ip_amount(pl, p, verb, amount)
        pl[p, P_IP_OTHER] += gained  # Amend. VI: non-Pillar IP, spent first
        emit(gm, tr, EV_IP, p, gained, src_card, 0, 0, 0)
    elif verb == V_REPAIR:
        repair(cards, pl, sl, ls, gm, tr, p, amount, src_card)
    elif verb == V_DESTROY_PETITION:
        for _ in range(amount):
            if q < 0 or pl[q, P_N_PETITIONS] == 0:
                break
            for i in range(pl[q, P_N_BOARD]):
                s = ls[q, L_BOARD, i]
                if sl[q, s, S_ZONE] == Z_PETITION:
                    emit(gm, tr, EV_PETITION_LOST, q, sl[q, s, S_CARD], p, 0, 0, 0)
                    destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, q, s, p)
                    break
    elif verb == V_RECOVER:
        recover(cards, w, pl, sl, ls, gm, masks, tr, p, amount, src_card)
    elif verb == V_TUTOR_PILLAR:
        tutor_pillar(cards, w, pl, sl, ls, gm, masks, rng, tr, p, src_card)


@njit("boolean(int32[:, ::1], int64[::1])", **KERNEL)
def on_destroy_queued(pl, gm):
    """Whether any 'on destroy' effect waits to fire (most effects destroy nothing)."""
    for q in range(gm[G_N_PLAYERS]):
        if pl[q, P_N_ON_DESTROY] > 0:
            return True
    return False


@njit("void(int32[:, ::1], int64[::1], float64[:, ::1], int32[:, ::1], int32[:, :, ::1], int16[:, :, ::1], int64[::1], uint64[:, ::1], uint64[::1], int32[:, ::1])", **KERNEL)
def fire_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr):
    """Fire the queued ``on destroy`` effects, each controlled by the destroyed card's owner
    and aimed at the active player when the owner is not active; effects that destroy more
    cards queue them in turn, until the queues are empty. With R47 ``by_step``, an effect
    whose verb belongs to a later Resolve step than the one in progress waits for it
    (``fire_waiting_on_destroy``)."""
    by_step = rules[R_ON_DESTROY_TIMING] == OD_BY_STEP and gm[G_STEP] > 0
    busy = True
    while busy and gm[G_OVER] == 0:
        busy = False
        for q in range(gm[G_N_PLAYERS]):
            while pl[q, P_N_ON_DESTROY] > 0 and gm[G_OVER] == 0:
                busy = True
                n = pl[q, P_N_ON_DESTROY]
                s = ls[q, L_ON_DESTROY, 0]
                for i in range(n - 1):
                    ls[q, L_ON_DESTROY, i] = ls[q, L_ON_DESTROY, i + 1]
                pl[q, P_N_ON_DESTROY] = n - 1
                c = sl[q, s, S_CARD]
                target = -1 if q == gm[G_ACTIVE] else gm[G_ACTIVE]
                for e in range(MAX_EFFECTS):
                    verb = eff(cards, c, e, E_VERB)
                    if eff(cards, c, e, E_TRIGGER) != TRIG_ON_DESTROY or verb == V_NONE:
                        continue
                    if by_step and RESOLVE_STEP[verb] > gm[G_STEP]:  # R47: wait for its step
                        if (sl[q, s, S_FLAGS] & (F_OD_WAIT0 | F_OD_WAIT1)) == 0:
                            list_push(pl, ls, q, L_OD_WAIT, P_N_OD_WAIT, s)
                        sl[q, s, S_FLAGS] |= F_OD_WAIT0 << e
                        continue
                    apply_effect(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, q, verb,
                                 eff(cards, c, e, E_AMOUNT), c, target)


@njit(**KERNEL)
def any_on_destroy_waiting(pl, gm):
    for q in range(gm[G_N_PLAYERS]):
        if pl[q, P_N_OD_WAIT] > 0:
            return True
    return False


@njit(**KERNEL)
def fire_waiting_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, step):
    """R47 ``by_step``: at Resolve step ``step``, fire the waiting ``on destroy`` effects
    whose verb belongs to it or an earlier step, in the order their cards were destroyed,
    seat by seat (owner controls, aimed at the active player when the owner is not)."""
    for q in range(gm[G_N_PLAYERS]):
        i = 0
        while i < pl[q, P_N_OD_WAIT] and gm[G_OVER] == 0:
            s = ls[q, L_OD_WAIT, i]
            c = sl[q, s, S_CARD]
            target = -1 if q == gm[G_ACTIVE] else gm[G_ACTIVE]
            for e in range(MAX_EFFECTS):
                verb = eff(cards, c, e, E_VERB)
                if (sl[q, s, S_FLAGS] & (F_OD_WAIT0 << e)) == 0 or RESOLVE_STEP[verb] > step:
                    continue
                sl[q, s, S_FLAGS] &= ~(F_OD_WAIT0 << e)
                apply_effect(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, q, verb,
                             eff(cards, c, e, E_AMOUNT), c, target)
                if on_destroy_queued(pl, gm):
                    fire_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr)
                if gm[G_OVER] != 0:
                    return
            if (sl[q, s, S_FLAGS] & (F_OD_WAIT0 | F_OD_WAIT1)) == 0:
                list_remove(pl, ls, q, L_OD_WAIT, P_N_OD_WAIT, s)
            else:
                i += 1


@njit(**KERNEL)
def drop_waiting_on_destroy(pl, sl, ls, gm):
    """A Resolve Phase cut short (its player eliminated) leaves no effect waiting (R47)."""
    for q in range(gm[G_N_PLAYERS]):
        for i in range(pl[q, P_N_OD_WAIT]):
            s = ls[q, L_OD_WAIT, i]
            sl[q, s, S_FLAGS] &= ~(F_OD_WAIT0 | F_OD_WAIT1)
        pl[q, P_N_OD_WAIT] = 0


# =============================================================================== policy








@njit("void(int32[:, ::1], int64, int64)", **KERNEL)
def pay(pl, p, cost):
    """Amend. VI: non-Pillar IP is spent before Pillar IP."""
    take = cost if cost < pl[p, P_IP_OTHER] else pl[p, P_IP_OTHER]
    pl[p, P_IP_OTHER] -= take
    pl[p, P_IP_PILLAR] -= cost - take










@njit(**INLINED)
def legal_actions(cards, rules, pl, sl, ls, gm, p, n_targets, n_activatable, acts):
    """Every action ``p`` may take next in its Play Phase (Art. VII §5 phase three), listed
    in ``acts`` as rows ``(kind, a, b, c)``; returns how many. In order: each card in hand
    that ``p`` can pay for (Art. II §2; not a UA, Art. IV §3.2; a Bill once a turn, Art. IV
    §7.1; Pillars per R10) as ``ACT_PLAY`` (slot), then its paid kickers as
    ``ACT_PLAY_KICKED`` (slot, kicker effect), then, for an Attack, each opposing Attack
    not already fought this turn as ``ACT_AOA`` (slot, seat, slot) at cost + 1 (Amend. I
    §1, R49); then each 'activate' effect ``p`` can pay for and has not used this turn
    (Art. VII §6, Amend. V §2) as ``ACT_ACTIVATE`` (slot, effect). Stopping is always legal
    and not listed. ``n_targets``: opposing Attacks listed by ``note_threats`` (0: no
    Attack-on-Attack, R17); ``n_activatable``: cards in play with an 'activate' effect."""
    ip = pl[p, P_IP_PILLAR] + pl[p, P_IP_OTHER]
    n = 0
    for i in range(pl[p, P_N_HAND]):
        s = ls[p, L_HAND, i]
        c = sl[p, s, S_CARD]
        t = cards[c, C_TYPE]
        cost = play_cost(cards, sl, p, s)
        if cost > ip:  # Art. II §2
            continue
        if t == BILL and (sl[p, sl[p, s, S_NAME_SLOT], S_FLAGS] & F_BILL_TURN) != 0:
            continue  # Art. IV §7.1: once per turn
        if t == PILLAR and rules[R_PILLARS_PER_TURN] > 0 and \
                pl[p, P_PILLARS_TURN] >= rules[R_PILLARS_PER_TURN]:
            continue  # R10
        if t == UA:
            continue
        n = put_action(acts, n, ACT_PLAY, s, -1, -1)
        if t == FREEDOM:
            for e in range(MAX_EFFECTS):
                if eff(cards, c, e, E_KICKER) != 0 and cost + eff(cards, c, e, E_COST) <= ip:
                    n = put_action(acts, n, ACT_PLAY_KICKED, s, e, -1)
        if t == ATTACK and n_targets > 0 and cost + 1 <= ip:  # Amend. I §1: cost + 1
            for q in range(gm[G_N_PLAYERS]):
                for j in range(pl[q, P_N_AOA_TARGETS]):
                    s2 = ls[q, L_SCRATCH, j]
                    if (sl[q, s2, S_FLAGS] & F_AOA_TARGETED) == 0:  # R49
                        n = put_action(acts, n, ACT_AOA, s, q, s2)
    for i in range(pl[p, P_N_BOARD] if n_activatable > 0 else 0):
        s = ls[p, L_BOARD, i]
        c = sl[p, s, S_CARD]
        if (cards[c, C_FLAGS] & CF_ACTIVATE) == 0:
            continue
        for e in range(MAX_EFFECTS):
            if eff(cards, c, e, E_TRIGGER) != TRIG_ACTIVATE or \
                    eff(cards, c, e, E_VERB) == V_NONE or eff(cards, c, e, E_KICKER) != 0:
                continue
            if (sl[p, s, S_FLAGS] & (F_SIDEWAYS0 << e)) != 0:
                continue  # Amend. V §2: not twice in a turn
            if eff(cards, c, e, E_COST) <= ip:
                n = put_action(acts, n, ACT_ACTIVATE, s, e, -1)
    return n


@njit(**INLINED)
def put_action(acts, n, kind, a, b, c):
    """Append one legal action; the list holds every action a Play Phase can offer
    (``layout.MAX_ACTIONS``), so it never fills."""
    acts[n, 0] = kind
    acts[n, 1] = a
    acts[n, 2] = b
    acts[n, 3] = c
    return n + 1


@njit(**INLINED)
def play_phase(cards, rules, w, memo, acts, pl, sl, ls, gm, masks, rng, tr, p):
    """Art. VII §5 phase three: the rules list the legal actions (``legal_actions``), the
    pilot picks one (``decisions.choose_action``) and the rules apply it, one action at a
    time, until the pilot stops. ``acts`` int32[MAX_ACTIONS, 4] is the worker's scratch."""
    n_targets = note_threats(cards, w, memo, pl, sl, ls, gm, p)  # Attack-on-Attack targets
    if rules[R_AOA] == 0:  # R17 switched off
        n_targets = 0
    n_activatable = 0  # cards in play with an 'activate' effect: most turns, none
    for i in range(pl[p, P_N_BOARD]):
        if has_activate_effect(cards, sl[p, ls[p, L_BOARD, i], S_CARD]):
            n_activatable += 1
    forget_card_values(memo, p)
    while gm[G_OVER] == 0 and pl[p, P_ALIVE] != 0:
        n = legal_actions(cards, rules, pl, sl, ls, gm, p, n_targets, n_activatable, acts)
        k = choose_action(cards, rules, w, memo, pl, sl, ls, gm, rng, p, acts, n)
        if k < 0:
            return
        kind, a = acts[k, 0], acts[k, 1]
        if kind == ACT_ACTIVATE:
            activate(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, a, acts[k, 2])
        else:
            if kind == ACT_AOA:
                q, s2 = acts[k, 2], acts[k, 3]
            else:
                q, s2 = -1, -1
            play_card(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, a,
                      kind == ACT_PLAY_KICKED, q, s2)
            c = sl[p, a, S_CARD]
            if has_activate_effect(cards, c):
                n_activatable += 1
            if cards[c, C_TYPE] == PILLAR or (cards[c, C_KEYWORDS] & KW_PETITION) != 0:
                forget_pillar_values(cards, pl, sl, ls, memo, p)


@njit(**INLINED)
def activate(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, s, e):
    """Pay K and turn the card sideways (Art. VII §6; Pillars stay upright, Amend. V §4 /
    R29); the effect waits for the Resolve Phase (R13) unless it is IP (R32)."""
    c = sl[p, s, S_CARD]
    k = eff(cards, c, e, E_COST)
    pay(pl, p, k)
    sl[p, s, S_FLAGS] |= F_SIDEWAYS0 << e
    pl[p, P_SIDEWAYS] = 1
    emit(gm, tr, EV_ACTIVATE, p, c, e, k, 0, 0)
    verb = eff(cards, c, e, E_VERB)
    if VERB_GIVES_IP[verb] != IP_NONE and rules[R_IP_EFFECTS_IMMEDIATE] != 0:
        apply_effect(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, verb,
                     eff(cards, c, e, E_AMOUNT), c, -1)
    else:
        sl[p, s, S_FLAGS] |= F_ACT0 << e


@njit(**INLINED)
def play_card(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, s, kicked, aoa_q, aoa_s):
    """Pay for a card and place it (Art. VII §5 phase three); its effects wait (R13)."""
    c = sl[p, s, S_CARD]
    t = cards[c, C_TYPE]
    cost = play_cost(cards, sl, p, s)
    if aoa_q >= 0:
        cost += 1  # Amend. I §1
    if kicked:
        for e in range(MAX_EFFECTS):
            if eff(cards, c, e, E_KICKER) != 0:
                cost += eff(cards, c, e, E_COST)
    pay(pl, p, cost)
    list_remove(pl, ls, p, L_HAND, P_N_HAND, s)
    masks[p, M_PLAYED] |= np.uint64(1) << np.uint64(s)
    emit(gm, tr, EV_PLAY, p, c, cost, 1 if kicked else 0, aoa_q, 0)
    if t == PILLAR:
        put_in_play(cards, pl, sl, ls, p, s, Z_PILLAR)  # Art. VI §3
        pl[p, P_PILLARS_TURN] += 1
    elif (cards[c, C_KEYWORDS] & KW_PETITION) != 0 and t == RIGHTS:
        put_in_play(cards, pl, sl, ls, p, s, Z_PETITION)  # Art. VI §4
    else:
        put_in_play(cards, pl, sl, ls, p, s, Z_PLAY)  # Art. VI §6
    sl[p, s, S_FLAGS] |= F_PENDING
    if kicked:
        sl[p, s, S_FLAGS] |= F_KICKED
    if t == BILL:
        ns = sl[p, s, S_NAME_SLOT]
        sl[p, ns, S_BILL_PLAYS] += 1  # R28: the next play of this name costs double
        sl[p, ns, S_FLAGS] |= F_BILL_TURN
    if aoa_q >= 0:
        sl[p, s, S_FLAGS] |= F_AOA  # Amend. I, R17
        sl[p, s, S_TARGET_SEAT] = aoa_q
        sl[p, s, S_TARGET_SLOT] = aoa_s
        sl[aoa_q, aoa_s, S_FLAGS] |= F_AOA_TARGETED
        pl[p, P_N_AOA] += 1
        emit(gm, tr, EV_AOA, p, c, aoa_q, sl[aoa_q, aoa_s, S_CARD], 0, 0)
    list_push(pl, ls, p, L_PENDING, P_N_PENDING, s)
    if rules[R_IP_EFFECTS_IMMEDIATE] != 0:  # R32: IP is a Play Phase resource
        for e in range(MAX_EFFECTS):
            verb = eff(cards, c, e, E_VERB)
            if VERB_GIVES_IP[verb] != IP_NONE and eff(cards, c, e, E_TRIGGER) == TRIG_ON_RESOLVE \
                    and (eff(cards, c, e, E_KICKER) == 0 or kicked):
                apply_effect(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, verb,
                             eff(cards, c, e, E_AMOUNT), c, -1)


# =============================================================================== resolve
@njit(**KERNEL)
def verb_step(verb):
    """R13: damage and LP damage at step iii, healing at iv, everything else at vi."""
    return RESOLVE_STEP[verb]


@njit(**INLINED)
def note_effects(cards, pl, sl, ls, p):
    """Before step iii: list the cards in play that hold 'each turn' or 'activate' effects
    (no card enters play during the Resolve Phase, so its steps walk this short list, not
    the board) and return the steps at which ``p`` has anything to fire, as bits."""
    steps = 0
    for i in range(pl[p, P_N_PENDING]):
        steps |= cards[sl[p, ls[p, L_PENDING, i], S_CARD], C_RESOLVE_STEPS]
    n = 0
    for i in range(pl[p, P_N_BOARD]):
        s = ls[p, L_BOARD, i]
        turn_steps = cards[sl[p, s, S_CARD], C_TURN_STEPS]
        if turn_steps != 0:
            ls[p, L_FIRE, n] = s
            n += 1
            steps |= turn_steps
    pl[p, P_N_FIRE] = n
    return steps


@njit("void(int32[:, ::1], int64[::1], float64[:, ::1], int32[:, ::1], int32[:, :, ::1], int16[:, :, ::1], int64[::1], uint64[:, ::1], uint64[::1], int32[:, ::1], int64, int64)", **KERNEL)
def fire_effects(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, step):
    """Fire the active player's outstanding effects that belong to Resolve step ``step``:
    on-resolve effects of the cards played this turn (in play order, kicker included if
    paid), then 'each turn' effects of cards in play, then activated effects (R13).
    """
    ip_now = rules[R_IP_EFFECTS_IMMEDIATE] != 0
    destroyed_resolve = rules[R_DESTROYED_CARDS_RESOLVE] != 0
    step_bit = 1 << step
    for i in range(pl[p, P_N_PENDING]):
        s = ls[p, L_PENDING, i]
        c = sl[p, s, S_CARD]
        if (cards[c, C_RESOLVE_STEPS] & step_bit) == 0:
            continue
        if not destroyed_resolve and (sl[p, s, S_FLAGS] & F_DESTROYED) != 0:
            continue  # R50 switched off: a card destroyed before its step resolves nothing
        for e in range(MAX_EFFECTS):
            verb = eff(cards, c, e, E_VERB)
            if verb == V_NONE or eff(cards, c, e, E_TRIGGER) != TRIG_ON_RESOLVE:
                continue
            if eff(cards, c, e, E_KICKER) != 0 and (sl[p, s, S_FLAGS] & F_KICKED) == 0:
                continue
            if verb_step(verb) != step or (VERB_GIVES_IP[verb] != IP_NONE and ip_now):
                continue
            apply_effect(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, verb,
                         eff(cards, c, e, E_AMOUNT), c, -1)
            if on_destroy_queued(pl, gm):
                fire_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr)
            if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
                return
    for i in range(pl[p, P_N_FIRE]):  # noted by note_effects
        s = ls[p, L_FIRE, i]
        c = sl[p, s, S_CARD]
        if (cards[c, C_TURN_STEPS] & step_bit) == 0:
            continue
        z = sl[p, s, S_ZONE]
        if z != Z_PLAY and z != Z_PILLAR and z != Z_PETITION and z != Z_UA:
            continue  # left play earlier in this Resolve Phase
        for e in range(MAX_EFFECTS):
            verb = eff(cards, c, e, E_VERB)
            if verb == V_NONE or verb_step(verb) != step:
                continue
            trig = eff(cards, c, e, E_TRIGGER)
            fire = False
            if trig == TRIG_EACH_TURN and VERB_GIVES_IP[verb] == IP_NONE and (
                    eff(cards, c, e, E_KICKER) == 0 or (sl[p, s, S_FLAGS] & F_KICKED) != 0):
                fire = True
            elif trig == TRIG_ACTIVATE and (sl[p, s, S_FLAGS] & (F_ACT0 << e)) != 0:
                sl[p, s, S_FLAGS] &= ~(F_ACT0 << e)
                fire = True
            if fire:
                apply_effect(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, verb,
                             eff(cards, c, e, E_AMOUNT), c, -1)
                if on_destroy_queued(pl, gm):
                    fire_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr)
                if gm[G_OVER] != 0:
                    return


@njit(**KERNEL)
def note_attacks(cards, pl, sl, ls, p):
    """Copy the slots of ``p``'s Attacks in play to the scratch list, in board order, so a
    step can walk them while 'on destroy' chains reshape the board; returns their count."""
    n = 0
    for i in range(pl[p, P_N_BOARD]):
        s = ls[p, L_BOARD, i]
        if sl[p, s, S_ZONE] == Z_PLAY and cards[sl[p, s, S_CARD], C_TYPE] == ATTACK:
            ls[p, L_SCRATCH, n] = s
            n += 1
    return n


@njit(**INLINED)
def resolve_aoa(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p):
    """Step ii, Amend. I §2-4: both Attacks deal damage at once; the greater survives with
    the difference (R17), the lesser is destroyed; equal damage destroys both."""
    if pl[p, P_N_AOA] == 0:
        return  # none declared this turn: most turns
    pl[p, P_N_AOA] = 0
    for i in range(note_attacks(cards, pl, sl, ls, p)):
        s = ls[p, L_SCRATCH, i]
        if (sl[p, s, S_FLAGS] & F_AOA) == 0 or sl[p, s, S_ZONE] != Z_PLAY:
            continue
        sl[p, s, S_FLAGS] &= ~F_AOA
        sl[p, s, S_FLAGS] |= F_FOUGHT  # deals no damage at step iii this turn (R17)
        q = sl[p, s, S_TARGET_SEAT]
        s2 = sl[p, s, S_TARGET_SLOT]
        if sl[q, s2, S_ZONE] != Z_PLAY or pl[q, P_ALIVE] == 0:
            continue
        mine = sl[p, s, S_DP]
        theirs = sl[q, s2, S_DP]
        emit(gm, tr, EV_AOA_RESULT, p, sl[p, s, S_CARD], q, sl[q, s2, S_CARD], mine, theirs)
        sl[q, s2, S_FLAGS] &= ~F_AOA_TARGETED
        if mine > theirs:
            sl[p, s, S_DP] = mine - theirs
            destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, q, s2, p)
        elif theirs > mine:
            sl[q, s2, S_DP] = theirs - mine
            destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, s, p)
        else:  # Amend. I §4: equal damage, both destroyed
            destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, q, s2, p)
            if gm[G_OVER] == 0:
                destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, s, p)
        fire_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr)
        if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
            return


@njit(**KERNEL)
def declare_attack_targets(cards, w, pl, sl, ls, gm, p):
    """R48 ``play_phase``, Amend. II §4: at the end of the Play Phase each of ``p``'s
    Attacks in play that fights no Attack-on-Attack declares the card its damage will
    strike at step iii, chosen as ``strike`` would choose it now."""
    for i in range(pl[p, P_N_BOARD]):
        s = ls[p, L_BOARD, i]
        if sl[p, s, S_ZONE] != Z_PLAY or cards[sl[p, s, S_CARD], C_TYPE] != ATTACK \
                or (sl[p, s, S_FLAGS] & F_AOA) != 0:
            continue
        q = pick_opponent(pl, w, gm, p, V_STRIKE)
        sl[p, s, S_TARGET_SEAT] = q
        sl[p, s, S_TARGET_SLOT] = -1 if q < 0 else \
            choose_strike_target(cards, sl, ls, pl, q, sl[p, s, S_DP], False)


@njit(**INLINED)
def attack_damage_step(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p):
    """Step iii: each of the active player's Attacks in play deals its damage (R16), to a
    Defense while the target has one, else a UA (Amend. II, R18). A one-shot Attack is
    then discarded; an Attack that fought Attack-on-Attack deals none this turn (R17)."""
    one_shot_all = rules[R_ATTACK_LIFETIME] == LIFETIME_ONE_SHOT
    declared = rules[R_ATTACK_TARGETS] == TARGETS_PLAY_PHASE
    for i in range(note_attacks(cards, pl, sl, ls, p)):
        s = ls[p, L_SCRATCH, i]
        c = sl[p, s, S_CARD]
        if sl[p, s, S_ZONE] != Z_PLAY:
            continue  # destroyed by an 'on destroy' chain earlier in this step
        fought = (sl[p, s, S_FLAGS] & F_FOUGHT) != 0
        if not fought and declared:  # R48 play_phase: the target fixed in the Play Phase
            q = sl[p, s, S_TARGET_SEAT]
            s2 = sl[p, s, S_TARGET_SLOT]
            if q >= 0 and s2 >= 0 and sl[p, s, S_DP] > 0 and pl[q, P_ALIVE] != 0 and \
                    (sl[q, s2, S_ZONE] == Z_PLAY or sl[q, s2, S_ZONE] == Z_UA):
                deal_damage(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, q, s2,
                            sl[p, s, S_DP], p, c)
            # A target gone since the Play Phase takes nothing: the choice "may not be
            # changed after declaration" (Amend. II §4), and damage never splits (§5).
            if on_destroy_queued(pl, gm):
                fire_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr)
            if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
                return
        elif not fought:
            q = pick_opponent(pl, w, gm, p, V_STRIKE)
            strike(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, q, sl[p, s, S_DP], False, c)
            if on_destroy_queued(pl, gm):
                fire_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr)
            if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
                return
        if sl[p, s, S_ZONE] == Z_PLAY and \
                (one_shot_all or (cards[c, C_KEYWORDS] & KW_ONE_SHOT) != 0):  # R16
            leave_play(cards, pl, sl, ls, p, s, Z_DISCARD)
            emit(gm, tr, EV_DESTROY, p, c, -1, 0, 0, 0)


@njit(**INLINED)
def petition_check(cards, rules, pl, gm, tr):
    """Step v (Art. III §3, R23): every player, the active player first."""
    n = gm[G_N_PLAYERS]
    a = gm[G_ACTIVE]
    for k in range(n):
        q = (a + k) % n
        if pl[q, P_ALIVE] != 0 and pl[q, P_N_PETITIONS] >= PETITIONS_NEEDED \
                and pl[q, P_N_SCROLL_PILLARS] >= SCROLL_PILLARS_NEEDED \
                and pl[q, P_LP] >= PETITION_MIN_LP:
            end_game(gm, tr, q, PATH_PETITION, RULE_PETITION)
            return


@njit(**INLINED)
def drain_step(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p):
    """Step vii, Amend. IV: each UA drains once (R21: the active player's, or every
    player's), from its controller (R20 default) or the next opponent; a UA destroyed
    earlier in this phase is gone and drains nothing (R22). Drains land together and LP
    is then checked, the active player winning ties (Amend. IX, R24)."""
    n = gm[G_N_PLAYERS]
    every = rules[R_UA_DRAIN_WHEN] == DRAIN_EVERY_TURN
    for k in range(n):
        q = (p + k) % n
        if pl[q, P_ALIVE] == 0 or (q != p and not every):
            continue
        victim = q if rules[R_UA_DRAIN_TARGET] != DRAIN_OPPONENT else next_opponent(pl, gm, q)
        if victim < 0:
            continue
        left = pl[q, P_N_UAS] - pl[q, P_UAS_LOST]  # UAs still in the UA Area
        for i in range(pl[q, P_N_BOARD]):
            if left <= 0:
                break
            s = ls[q, L_BOARD, i]
            if sl[q, s, S_ZONE] == Z_UA:
                left -= 1
                amount = cards[sl[q, s, S_CARD], C_DRAIN]
                pl[victim, P_LP] -= amount
                emit(gm, tr, EV_DRAIN, q, sl[q, s, S_CARD], victim, amount, pl[victim, P_LP], 0)
    # LP checks after the simultaneous drain: opponents first, so the active player wins ties.
    for k in range(1, n + 1):
        q = (p + k) % n
        if pl[q, P_ALIVE] != 0 and pl[q, P_LP] <= 0:
            lose(rules, pl, gm, tr, q, PATH_LIFE, RULE_LP_ZERO)
            if gm[G_OVER] != 0:
                return




@njit(**INLINED)
def hand_limit_step(cards, rules, w, memo, pl, sl, ls, gm, rng, tr, p):
    """Step ix (Art. VI §7): discard down to seven, the least wanted first."""
    if pl[p, P_N_HAND] > HAND_LIMIT:
        note_threats(cards, w, memo, pl, sl, ls, gm, p)
    while pl[p, P_N_HAND] > HAND_LIMIT:
        worst = choose_hand_limit_discard(cards, rules, w, memo, pl, sl, ls, gm, rng, p)
        list_remove(pl, ls, p, L_HAND, P_N_HAND, worst)
        sl[p, worst, S_ZONE] = Z_DISCARD
        emit(gm, tr, EV_HAND_LIMIT, p, sl[p, worst, S_CARD], 0, 0, 0, 0)


@njit(**INLINED)
def finish_pending(cards, pl, sl, ls, gm, tr, p):
    """After step vi: Bills return to hand (Art. IV §7.2); Rights and Freedom cards are
    discarded unless a Petition or holding a lasting effect (Art. IV §2, R27)."""
    for i in range(pl[p, P_N_PENDING]):
        s = ls[p, L_PENDING, i]
        # Nothing is played after the Resolve Phase: this turn's marks end here. F_KICKED
        # stays: a paid kicker lasts while its card is in play (Art. IV §6).
        sl[p, s, S_FLAGS] &= ~(F_PENDING | F_FOUGHT | F_AOA | F_DESTROYED)
        sl[p, sl[p, s, S_NAME_SLOT], S_FLAGS] &= ~F_BILL_TURN
        if sl[p, s, S_ZONE] != Z_PLAY:
            continue
        c = sl[p, s, S_CARD]
        t = cards[c, C_TYPE]
        if t == BILL:
            leave_play(cards, pl, sl, ls, p, s, Z_HAND)
            emit(gm, tr, EV_RETURN, p, c, 0, 0, 0, 0)
        elif (t == RIGHTS or t == FREEDOM) and \
                not has_lasting_effect(cards, c, (sl[p, s, S_FLAGS] & F_KICKED) != 0):
            leave_play(cards, pl, sl, ls, p, s, Z_DISCARD)
    pl[p, P_N_PENDING] = 0


@njit(**INLINED)
def resolve_phase(cards, rules, w, memo, pl, sl, ls, gm, masks, rng, tr, p):
    """Art. VII §5 phase four: the nine steps, in order. ``G_STEP`` names the step in
    progress (R47 reads it); it is 0 again when the phase ends."""
    if any_on_destroy_waiting(pl, gm):
        drop_waiting_on_destroy(pl, sl, ls, gm)  # left by a phase cut short (R47)
    # i. locks and blocks: the grammar has none; declarations were fixed in the Play Phase.
    emit(gm, tr, EV_RESOLVE_STEP, p, 2, 0, 0, 0, 0)
    gm[G_STEP] = 2
    if pl[p, P_N_AOA] > 0:
        resolve_aoa(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p)  # ii
        if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
            return
    steps = note_effects(cards, pl, sl, ls, p)
    emit(gm, tr, EV_RESOLVE_STEP, p, 3, 0, 0, 0, 0)
    gm[G_STEP] = STEP_DAMAGE
    attack_damage_step(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p)  # iii
    if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
        return
    if (steps >> STEP_DAMAGE) & 1 != 0:
        fire_effects(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, STEP_DAMAGE)
        if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
            return
    if any_on_destroy_waiting(pl, gm):  # R47: lp and strike effects from step ii
        fire_waiting_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, STEP_DAMAGE)
        if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
            return
    emit(gm, tr, EV_RESOLVE_STEP, p, 4, 0, 0, 0, 0)
    gm[G_STEP] = STEP_HEAL
    if (steps >> STEP_HEAL) & 1 != 0:
        fire_effects(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, STEP_HEAL)  # iv
        if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
            return
    if any_on_destroy_waiting(pl, gm):  # R47: healing waits for step iv
        fire_waiting_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, STEP_HEAL)
        if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
            return
    gm[G_STEP] = 5
    petition_check(cards, rules, pl, gm, tr)  # v
    if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
        return
    emit(gm, tr, EV_RESOLVE_STEP, p, 6, 0, 0, 0, 0)
    gm[G_STEP] = STEP_EFFECTS
    if (steps >> STEP_EFFECTS) & 1 != 0:
        fire_effects(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p, STEP_EFFECTS)  # vi
        if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
            return
    if any_on_destroy_waiting(pl, gm):  # R47: every other effect at step vi
        fire_waiting_on_destroy(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, STEP_EFFECTS)
        if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
            return
    gm[G_STEP] = 0
    finish_pending(cards, pl, sl, ls, gm, tr, p)
    emit(gm, tr, EV_RESOLVE_STEP, p, 7, 0, 0, 0, 0)
    drain_step(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p)  # vii
    if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
        return
    # viii. LP, the third UA and deck-out were checked the moment they happened (R23);
    # Petition Victory only at step v (Art. III §3).
    if pl[p, P_N_HAND] > HAND_LIMIT:
        hand_limit_step(cards, rules, w, memo, pl, sl, ls, gm, rng, tr, p)  # ix


# =============================================================================== turn
@njit(**INLINED)
def independence_phase(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p):
    """Phase two: Pillars give their IP (R11: only those in play now); 'each turn: ip'
    effects give non-Pillar IP, spent first (Amend. VI, R12)."""
    pillar_ip = 0
    other_ip = 0
    for i in range(pl[p, P_N_BOARD]):
        s = ls[p, L_BOARD, i]
        c = sl[p, s, S_CARD]
        if sl[p, s, S_ZONE] == Z_PILLAR:
            pillar_ip += cards[c, C_IP]
        if (cards[c, C_FLAGS] & CF_EACH_TURN_IP) == 0:
            continue
        for e in range(MAX_EFFECTS):
            verb = eff(cards, c, e, E_VERB)
            if VERB_GIVES_IP[verb] != IP_NONE and eff(cards, c, e, E_TRIGGER) == TRIG_EACH_TURN \
                    and (eff(cards, c, e, E_KICKER) == 0 or (sl[p, s, S_FLAGS] & F_KICKED) != 0):
                gained = ip_amount(pl, p, verb, eff(cards, c, e, E_AMOUNT))
                if cards[c, C_TYPE] == PILLAR:
                    pillar_ip += gained
                else:
                    other_ip += gained
    pl[p, P_IP_PILLAR] = pillar_ip
    pl[p, P_IP_OTHER] = other_ip
    emit(gm, tr, EV_IP, p, pillar_ip + other_ip, -1, pillar_ip, other_ip, 0)


@njit(**INLINED)
def end_phase(pl, sl, ls, p):
    """Phase five: unspent IP is lost (Art. II §2); per-turn marks are cleared."""
    pl[p, P_IP_PILLAR] = 0
    pl[p, P_IP_OTHER] = 0
    pl[p, P_PILLARS_TURN] = 0
    # The per-turn card marks were cleared by finish_pending; activated effects clear
    # their own mark when they fire (fire_effects) or when their card leaves play.


@njit(**INLINED)
def take_turn(cards, rules, w, memo, acts, pl, sl, ls, gm, masks, rng, tr, p):
    """One turn of five phases (Art. VII §5)."""
    gm[G_STEP] = 0  # outside the Resolve Phase (a phase cut short may have left a step)
    pl[p, P_TURNS] += 1
    emit(gm, tr, EV_TURN, p, pl[p, P_LP], pl[p, P_N_HAND], pl[p, P_N_DRAW], pl[p, P_N_BOARD], 0)
    # Sideways cards return upright at the start of their controller's turn (Amend. V §3).
    if pl[p, P_SIDEWAYS] != 0:
        pl[p, P_SIDEWAYS] = 0
        for i in range(pl[p, P_N_BOARD]):
            s = ls[p, L_BOARD, i]
            sl[p, s, S_FLAGS] &= ~(F_SIDEWAYS0 | F_SIDEWAYS1)
    # I. Draw Phase.
    n_draw = pl[p, P_DRAWS_NEXT]
    pl[p, P_DRAWS_NEXT] = 1
    if gm[G_TURN] == 0 and p == gm[G_FIRST] and rules[R_FIRST_PLAYER_DRAWS] == 0:
        n_draw = 0  # R8 switched off
    for _ in range(n_draw):
        if not draw_one(rules, pl, sl, ls, gm, masks, tr, p, True):
            return
    independence_phase(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, p)  # II
    play_phase(cards, rules, w, memo, acts, pl, sl, ls, gm, masks, rng, tr, p)  # III
    if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
        return
    if rules[R_ATTACK_TARGETS] == TARGETS_PLAY_PHASE:
        declare_attack_targets(cards, w, pl, sl, ls, gm, p)  # R48, Amend. II §4
    resolve_phase(cards, rules, w, memo, pl, sl, ls, gm, masks, rng, tr, p)  # IV
    if gm[G_OVER] != 0 or pl[p, P_ALIVE] == 0:
        return
    end_phase(pl, sl, ls, p)  # V
    emit(gm, tr, EV_TURN_END, p, pl[p, P_LP], pl[p, P_N_HAND], pl[p, P_N_DRAW], pl[p, P_N_BOARD],
         pl[p, P_N_PETITIONS])


# =============================================================================== setup


@njit(**KERNEL)
def draw_opening(pl, sl, ls, p):
    for _ in range(OPENING_HAND):
        n = pl[p, P_N_DRAW]
        if n == 0:
            return
        s = ls[p, L_DRAW, n - 1]
        pl[p, P_N_DRAW] = n - 1
        sl[p, s, S_ZONE] = Z_HAND
        list_push(pl, ls, p, L_HAND, P_N_HAND, s)


@njit(**INLINED)
def setup_game(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, deck_cards, deck_size, n_players,
               first_seat, seed, table_id, deal):
    """Art. VII §1-4 and Amend. VII-VIII: UAs in play, shuffle, seven cards, 100 LP,
    mulligans, then the second seat's free Pillar right.

    ``deck_cards[q]`` is seat q's deck (card id per slot). Seat q's shuffles use the stream
    (seed, table, deal, q), so a deck gets the same cards in every seat rotation of a deal
    (common random numbers); the game's other randomness uses stream (…, first_seat).
    """
    pl[:, :] = 0
    sl[:, :, :] = 0
    masks[:, :] = 0
    debug = gm[G_DEBUG]
    gm[:] = 0
    gm[G_DEBUG] = debug
    gm[G_N_PLAYERS] = n_players
    gm[G_FIRST] = first_seat
    gm[G_ACTIVE] = first_seat
    gm[G_WINNER] = -1
    gm[G_PATH] = PATH_NONE
    gm[G_N_ALIVE] = n_players
    gm[G_TURN] = -1  # setup; becomes 0 when the first turn starts
    for q in range(n_players):
        rng[q] = stream_seed(seed, table_id, deal, q, 0)
    rng[GAME_STREAM] = stream_seed(seed, table_id, deal, 100 + first_seat, 1)
    for q in range(n_players):
        n = deck_size[q]
        pl[q, P_DECK_SIZE] = n
        pl[q, P_LP] = STARTING_LP  # Art. II §1
        pl[q, P_ALIVE] = 1
        pl[q, P_DRAWS_NEXT] = 1
        for s in range(n):
            c = deck_cards[q, s]
            sl[q, s, S_CARD] = c
            sl[q, s, S_NAME_SLOT] = s
            if cards[c, C_TYPE] == BILL:  # escalation is tracked per name (Art. IV §7.4)
                for s0 in range(s):
                    if deck_cards[q, s0] == c:
                        sl[q, s, S_NAME_SLOT] = s0
                        break
            if cards[c, C_TYPE] == UA:
                put_in_play(cards, pl, sl, ls, q, s, Z_UA)  # Art. IV §3.2, Art. VII §1.2
                pl[q, P_N_UAS] += 1
            else:
                sl[q, s, S_ZONE] = Z_DRAW
                list_push(pl, ls, q, L_DRAW, P_N_DRAW, s)
        shuffle_draw_pile(pl, ls, rng, q, q)  # Art. VII §1.3
        draw_opening(pl, sl, ls, q)  # Art. VII §1.4
    # Amend. VII: one mulligan each, independently; the new hand is final.
    for q in range(n_players):
        k = pillars_in_hand(cards, pl, sl, ls, q)
        if choose_mulligan(cards, w, pl, sl, ls, rng, q):
            for i in range(pl[q, P_N_HAND]):
                s = ls[q, L_HAND, i]
                sl[q, s, S_ZONE] = Z_DRAW
                list_push(pl, ls, q, L_DRAW, P_N_DRAW, s)
            pl[q, P_N_HAND] = 0
            shuffle_draw_pile(pl, ls, rng, q, q)
            draw_opening(pl, sl, ls, q)
            pl[q, P_MULLIGAN] = 1
            emit(gm, tr, EV_MULLIGAN, q, k, pillars_in_hand(cards, pl, sl, ls, q), 0, 0, 0)
        for i in range(pl[q, P_N_HAND]):
            masks[q, M_OPENING] |= np.uint64(1) << np.uint64(ls[q, L_HAND, i])
    # Art. VII §4, Amend. VIII, R7: the second seat may place one Pillar free.
    p2 = (first_seat + 1) % n_players
    mode = rules[R_P2_FREE_PILLAR]
    if mode != P2_OFF:
        best = choose_p2_pillar(cards, w, pl, sl, ls, rng, p2, mode == P2_ZERO_COST_ONLY)
        if best >= 0:
            list_remove(pl, ls, p2, L_HAND, P_N_HAND, best)
            put_in_play(cards, pl, sl, ls, p2, best, Z_PILLAR)
            masks[p2, M_PLAYED] |= np.uint64(1) << np.uint64(best)
            pl[p2, P_P2_RIGHT] = 1
            pl[p2, P_DRAWS_NEXT] = 2  # Amend. VIII: two cards in the first Draw Phase
            emit(gm, tr, EV_P2_RIGHT, p2, sl[p2, best, S_CARD], 0, 0, 0, 0)
    gm[G_TURN] = 0


@njit(**KERNEL)
def play_game(cards, rules, w, memo, acts, pl, sl, ls, gm, masks, rng, tr, deck_cards, deck_size,
              n_players,
              first_seat, seed, table_id, deal):
    """Play one complete game; the result is left in ``gm`` (winner, path, turns) and
    ``pl``/``masks`` (per seat)."""
    setup_game(cards, rules, w, pl, sl, ls, gm, masks, rng, tr, deck_cards, deck_size,
               n_players, first_seat, seed, table_id, deal)
    limit = rules[R_TURN_LIMIT]
    if rules[R_TURN_LIMIT_SCALES] != 0:  # R45: the same number of rounds at any table
        limit = limit * n_players // 2
    p = first_seat
    while gm[G_OVER] == 0:
        if gm[G_TURN] >= limit:  # R15
            end_game(gm, tr, -1, PATH_DRAW, RULE_TURN_LIMIT)
            break
        gm[G_ACTIVE] = p
        take_turn(cards, rules, w, memo, acts, pl, sl, ls, gm, masks, rng, tr, p)
        if gm[G_DEBUG] != 0:
            gm[G_VIOLATIONS] += check_invariants(cards, pl, sl, ls, gm)
        gm[G_TURN] += 1
        if gm[G_OVER] != 0:
            break
        q = next_opponent(pl, gm, p)  # Art. VII §5 phase five: clockwise
        if q < 0:
            break
        p = q


# =============================================================================== debug
@njit(**KERNEL)
def check_invariants(cards, pl, sl, ls, gm):
    """Count broken invariants: every card in exactly one zone and its list, all slots
    accounted for, no negative IP, DP, LP-independent counters or hand size, at most two
    effects activated per card per turn. Zero means the state is sound."""
    bad = 0
    for p in range(gm[G_N_PLAYERS]):
        n = pl[p, P_DECK_SIZE]
        if pl[p, P_IP_PILLAR] < 0 or pl[p, P_IP_OTHER] < 0 or pl[p, P_N_HAND] < 0 \
                or pl[p, P_N_DRAW] < 0 or pl[p, P_N_BOARD] < 0:
            bad += 1
        if pl[p, P_LIST_OVERFLOW] != 0:
            bad += 1  # a list write was refused: some list outgrew its 64 entries
        in_draw = 0
        in_hand = 0
        in_board = 0
        pet = 0
        pil = 0
        defenses = 0
        uas = 0
        for s in range(n):
            z = sl[p, s, S_ZONE]
            if z == Z_DRAW:
                in_draw += 1
            elif z == Z_HAND:
                in_hand += 1
            elif z == Z_PILLAR or z == Z_PETITION or z == Z_UA or z == Z_PLAY:
                in_board += 1
                if z == Z_PETITION:
                    pet += 1
                if z == Z_PILLAR:
                    pil += 1
                t = cards[sl[p, s, S_CARD], C_TYPE]
                if z == Z_PLAY and t == DEFENSE:
                    defenses += 1
                if z == Z_UA:
                    uas += 1
                if (t == DEFENSE or t == UA) and sl[p, s, S_DP] <= 0:
                    bad += 1
            elif z != Z_DISCARD and z != Z_EXILE:
                bad += 1  # a card in no zone
            flags = sl[p, s, S_FLAGS]
            if (flags & F_SIDEWAYS0) != 0 and (flags & F_SIDEWAYS1) != 0:
                c = sl[p, s, S_CARD]
                n_act = 0
                for e in range(MAX_EFFECTS):
                    if eff(cards, c, e, E_TRIGGER) == TRIG_ACTIVATE:
                        n_act += 1
                if n_act < 2:
                    bad += 1
        if in_draw != pl[p, P_N_DRAW] or in_hand != pl[p, P_N_HAND] \
                or in_board != pl[p, P_N_BOARD] or pet != pl[p, P_N_PETITIONS] \
                or pil != pl[p, P_N_PILLARS] or defenses != pl[p, P_N_DEFENSES] \
                or uas != pl[p, P_N_UAS] - pl[p, P_UAS_LOST]:
            bad += 1
        for i in range(pl[p, P_N_DRAW]):
            if sl[p, ls[p, L_DRAW, i], S_ZONE] != Z_DRAW:
                bad += 1
        for i in range(pl[p, P_N_HAND]):
            if sl[p, ls[p, L_HAND, i], S_ZONE] != Z_HAND:
                bad += 1
        for i in range(pl[p, P_N_BOARD]):
            z = sl[p, ls[p, L_BOARD, i], S_ZONE]
            if z != Z_PILLAR and z != Z_PETITION and z != Z_UA and z != Z_PLAY:
                bad += 1
    return bad
