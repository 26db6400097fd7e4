"""The pilots' decisions, apart from the rules: how a heuristic policy (a weight vector,
``policies.py``) values an effect or a card, which action it takes next in its Play Phase,
whether it mulligans, which Pillar it places with the Player 2 right, what it discards to
the hand limit, and whom and what it targets (R37, Amend. II §4). The rules (``game``)
enumerate what is legal and apply what is chosen; nothing there knows how a pilot values
a card. A pilot's memory is its own: ``memo`` float64[MAX_PLAYERS, MEMO_WIDTH], one row
a seat (``PM_*`` below): the card values noted in a Play Phase and the threat facts of the
phase; the policy weights (``t.weights``, ``w``) are only read. ``choose_action`` and
``choose_hand_limit_discard`` take the bundles ``t`` and ``g`` of ``layout.py``; the
valuations, called per card, take the arrays they read.
"""

import numpy as np
from numba import njit

from rnr_sim import enums as E
from rnr_sim.engine import layout as L
from rnr_sim.engine import policies as W
from rnr_sim.engine.config import INLINED, KERNEL, copied_not_inlined
from rnr_sim.engine.rng import rand_below, rand_unit
from rnr_sim.engine.sig import (
    CARDS,
    FIELDS,
    LISTS,
    MEMO,
    PLAYERS,
    RNG,
    RULES,
    SLOTS,
    WEIGHTS,
    b1,
    f8,
    f8b1,
    i8,
    void,
)
from rnr_sim.engine.state import (
    GAME_STREAM,
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

# A pilot's memory, one row a seat (``memo``): never part of the game state.
PM_VALUE0 = 0  # + hand slot: the card's value, noted once per Play Phase (NaN: not yet)
PM_THREAT = E.MAX_SLOTS  # damage of the opposing Attacks in play (``note_threats``)
PM_OPP_HAS_DEFENSE = E.MAX_SLOTS + 1  # 1.0 if the opponent an Attack strikes has a Defense
PM_QUEUED0 = E.MAX_SLOTS + 2  # + verb: the amount of that verb this Play Phase's plays queued
MEMO_WIDTH = E.MAX_SLOTS + 2 + E.N_VERBS

WIN_VALUE = 1000.0  # the value of an action that wins the game now
IP_LATER = -1  # ``effect_value``'s ``spent``: IP that arrives in a later Independence Phase
IP_LOST = -2  # ... IP that arrives after the Play Phase and is lost at the end of turn (R32)


@njit(i8(PLAYERS, WEIGHTS, FIELDS, i8, i8), **KERNEL)
def pick_opponent(pl, w, gm, p, aim):
    """The opponent an effect or an Attack is aimed at (``aim``: its verb's ``VERB_AIM``, or
    ``ATTACK_AIM``): the one it hurts most (R37).

    LP damage: the lowest LP; mill, exile, force draw: the thinnest Draw Pile; discard:
    the biggest hand; strikes and Attacks: the one with most UAs lost; destroy petition:
    most Petitions. Ties go to the next player in turn order. Two players: the other one.
    """
    n = gm[L.G_N_PLAYERS]
    if n == 2:
        return 1 - p if pl[1 - p, L.P_ALIVE] != 0 else -1
    best = -1
    best_key = 0
    for k in range(1, n):
        q = seat_after(p, k, n)
        if pl[q, L.P_ALIVE] == 0:
            continue
        if aim == E.AIM_LOWEST_LP:
            key = -pl[q, L.P_LP]
        elif aim == E.AIM_THINNEST_PILE:
            key = -pl[q, L.P_N_DRAW]
        elif aim == E.AIM_BIGGEST_HAND:
            key = pl[q, L.P_N_HAND]
        elif aim == E.AIM_MOST_PETITIONS:
            key = pl[q, L.P_N_PETITIONS]
        else:
            key = pl[q, L.P_UAS_LOST]
        if best < 0 or key > best_key:
            best = q
            best_key = key
    return best


@njit(i8(PLAYERS, WEIGHTS, FIELDS, RNG, i8, i8), **KERNEL)
def choose_opponent(pl, w, gm, rng, p, aim):
    """The opponent ``p`` aims an effect or Attack at (``aim`` as ``pick_opponent``'s): for a
    heuristic policy; for the random policy, any living opponent alike (no draw from the
    stream when only one is left)."""
    if w[p, W.W_RANDOM] == 0.0:
        return pick_opponent(pl, w, gm, p, aim)
    n = gm[L.G_N_PLAYERS]
    alive = 0
    for k in range(1, n):
        if pl[seat_after(p, k, n), L.P_ALIVE] != 0:
            alive += 1
    if alive <= 1:
        return pick_opponent(pl, w, gm, p, aim)
    j = rand_below(rng, GAME_STREAM, alive)
    for k in range(1, n):
        q = seat_after(p, k, n)
        if pl[q, L.P_ALIVE] != 0:
            if j == 0:
                return q
            j -= 1
    return -1


@njit(f8(CARDS, WEIGHTS, i8, i8), **KERNEL)
def on_destroy_boon(cards, w, p, c):
    """What destroying card ``c`` gives its controller, in ``p``'s policy's own verb values:
    the amounts of its 'on destroy' effects (a UA that heals when destroyed is a worse
    target)."""
    v = 0.0
    if (cards[c, E.C_FLAGS] & E.CF_ON_DESTROY) == 0:
        return v
    for e in range(E.MAX_EFFECTS):
        verb = eff(cards, c, e, E.E_VERB)
        if verb != E.V_NONE and eff(cards, c, e, E.E_TRIGGER) == E.TRIG_ON_DESTROY:
            v += abs(w[p, W.W_VERB + verb]) * eff(cards, c, e, E.E_AMOUNT)
    return v


@njit(i8(CARDS, WEIGHTS, RNG, SLOTS, LISTS, PLAYERS, i8, i8, i8, b1), **KERNEL)
def choose_strike_target(cards, w, rng, sl, ls, pl, p, q, damage, ua_only):
    """Amend. II: a Defense while any exists (the attacker ``p`` picks: one it can destroy,
    else the weakest), otherwise a UA: one this damage destroys, giving its controller the
    least from its 'on destroy' effects (``on_destroy_boon``), else the one with least DP
    left. ``ua_only``: past Defenses. The random policy picks among the same candidates
    (the Defenses while any counts, else the UAs) alike."""
    randomly = w[p, W.W_RANDOM] != 0.0
    defense = -1
    defense_key = 0.0
    ua = -1
    ua_key = 0.0
    n_def = 0
    n_ua = 0
    # Cards still to find: the Defenses in play (when they count) and the UAs left.
    left = pl[q, L.P_N_UAS] - pl[q, L.P_UAS_LOST] + (0 if ua_only else pl[q, L.P_N_DEFENSES])
    for i in range(pl[q, L.P_N_BOARD]):
        if left <= 0:
            break
        s = ls[q, L.L_BOARD, i]
        z = sl[q, s, L.S_ZONE]
        if z == L.Z_UA:
            left -= 1
            n_ua += 1
            dp = sl[q, s, L.S_DP]
            if randomly:
                key = rand_unit(rng, GAME_STREAM)
            elif dp <= damage:  # destroyed: the least boon, then the least DP
                key = 1.0e6 - 100.0 * on_destroy_boon(cards, w, p, sl[q, s, L.S_CARD]) - dp
            else:
                key = float(-dp)
            if ua < 0 or key > ua_key:
                ua = s
                ua_key = key
        elif z == L.Z_PLAY and not ua_only and cards[sl[q, s, L.S_CARD], E.C_TYPE] == E.DEFENSE:
            left -= 1
            n_def += 1
            dp = sl[q, s, L.S_DP]
            if randomly:
                key = rand_unit(rng, GAME_STREAM)
            else:
                key = 1000.0 + dp if dp <= damage else float(-dp)  # Amend. II §4: attacker chooses
            if defense < 0 or key > defense_key:
                defense = s
                defense_key = key
    return defense if defense >= 0 else ua  # Amend. II §1-2: Defenses first


@njit(b1(PLAYERS, SLOTS, LISTS, i8, i8, b1), **KERNEL)
def last_ua_falls(pl, sl, ls, q, damage, ua_only):
    """Would ``damage`` struck at ``q`` destroy ``q``'s last UA (Art. III §2, a win)? Only
    when no Defense stands in the way (Amend. II §1) and one UA is left with DP <= damage."""
    if pl[q, L.P_N_UAS] - pl[q, L.P_UAS_LOST] != 1 or (not ua_only and pl[q, L.P_N_DEFENSES] > 0):
        return False
    for i in range(pl[q, L.P_N_BOARD]):
        s = ls[q, L.L_BOARD, i]
        if sl[q, s, L.S_ZONE] == L.Z_UA:
            return sl[q, s, L.S_DP] <= damage
    return False


@njit(i8(CARDS, PLAYERS, SLOTS, i8), **KERNEL)
def recoverable(cards, pl, sl, p):
    """Cards ``recover`` can return: ``p``'s Discard Pile but its UAs (R44)."""
    n = 0
    for s in range(pl[p, L.P_DECK_SIZE]):
        if sl[p, s, L.S_ZONE] == L.Z_DISCARD and cards[sl[p, s, L.S_CARD], E.C_TYPE] != E.UA:
            n += 1
    return n


@njit(i8(CARDS, PLAYERS, SLOTS, LISTS, i8, i8), **KERNEL)
def ip_wanted(cards, pl, sl, ls, p, spent):
    """How much more IP ``p`` could spend this turn after paying ``spent``: the play costs
    of the cards in hand (not UAs) beyond the IP left. IP not spent is lost (Art. II §2)."""
    want = 0
    for i in range(pl[p, L.P_N_HAND]):
        s = ls[p, L.L_HAND, i]
        if cards[sl[p, s, L.S_CARD], E.C_TYPE] != E.UA:
            want += play_cost(cards, sl, p, s)
    left = pl[p, L.P_IP_PILLAR] + pl[p, L.P_IP_OTHER] - spent
    return want - left if want > left else 0


@njit(f8(MEMO, PLAYERS, i8), **KERNEL)
def lp_missing(memo, pl, p):
    """The LP ``p`` lacks of its starting 100 once the healing this Play Phase's plays
    already queued lands (``PM_QUEUED0`` of each verb that heals, ``VERB_HEALS``, counted
    for each Pillar in play where ``VERB_PER_PILLAR``): what one more heal can restore."""
    missing = float(STARTING_LP - pl[p, L.P_LP])
    for v in range(E.N_VERBS):
        if E.VERB_HEALS[v] != 0:
            missing -= memo[p, PM_QUEUED0 + v] * (pl[p, L.P_N_PILLARS] if E.VERB_PER_PILLAR[v] != 0 else 1)
    return missing


@njit(f8(WEIGHTS, i8, i8), **KERNEL)
def cards_drawn_value(w, p, n):
    """What ``n`` cards drawn are worth to ``p``'s policy, the draw verb's value per card: a
    draw effect (``effect_value``) and the Player 2 right's second card (Amend. VIII)."""
    return w[p, W.W_VERB + E.V_DRAW] * n


@njit(f8b1(CARDS, WEIGHTS, MEMO, PLAYERS, SLOTS, LISTS, FIELDS, i8, i8, i8, i8), **KERNEL)
def effect_value(cards, w, memo, pl, sl, ls, gm, p, verb, amount, spent):
    """(How much ``p``'s policy wants one effect now, whether it would do nothing at all if
    it resolved now): each verb's arm, one arm a kind of verb, reads the state the effect
    acts on. The value is context-dependent and may be negative; an effect that wins now
    is worth ``WIN_VALUE``. ``spent``, for effects that give IP: ``IP_LATER`` (an 'each
    turn' IP, worth its amount), ``IP_LOST`` (IP that arrives after the Play Phase and is
    lost, R32 off), else the IP the action takes first: IP now is worth only what the hand
    can still spend of it (``ip_wanted``). What heal, repair, recover and destroy petition
    can still do is less what this Play Phase's plays already queued for the Resolve Phase
    (``PM_QUEUED0``): a second repair of one dent restores nothing. Only those verbs and IP
    can do nothing at all: a repair with nothing damaged, a recover with nothing to recover
    (R44), a heal at full LP, a destroy petition with no Petition to destroy, IP the hand
    cannot spend."""
    wv = w[p, W.W_VERB + verb]
    queued = memo[p, PM_QUEUED0 + verb]
    if verb == E.V_LP:
        q = pick_opponent(pl, w, gm, p, E.VERB_AIM[verb])
        if q < 0:
            return 0.0, False
        if pl[q, L.P_LP] <= amount:
            return WIN_VALUE, False  # Art. III §1: LP to 0
        return wv * amount, False
    if verb == E.V_STRIKE or verb == E.V_STRIKE_UA:
        q = pick_opponent(pl, w, gm, p, E.VERB_AIM[verb])
        if q < 0 or pl[q, L.P_UAS_LOST] >= pl[q, L.P_N_UAS]:
            return 0.0, False
        if last_ua_falls(pl, sl, ls, q, amount, verb == E.V_STRIKE_UA):
            return WIN_VALUE, False  # Art. III §2: the last UA
        return wv * amount, False
    if E.VERB_HEALS[verb] != 0:
        gain = effect_amount(pl, p, verb, amount)
        missing = lp_missing(memo, pl, p)
        if missing <= 0:
            return 0.0, True
        urgency = 1.0 + (2.0 if pl[p, L.P_LP] < 30 else 0.0)
        return wv * min(gain, missing) * urgency, False
    if verb == E.V_DRAW:
        if pl[p, L.P_N_DRAW] <= amount + 3:
            return -WIN_VALUE, False  # drawing ourselves out (Art. III §4)
        return cards_drawn_value(w, p, amount), False
    if verb == E.V_FORCE_DRAW:
        q = pick_opponent(pl, w, gm, p, E.VERB_AIM[verb])
        if q < 0:
            return 0.0, False
        n = pl[q, L.P_N_DRAW]
        if n < amount:
            return WIN_VALUE, False  # they cannot draw them all (Art. III §4)
        # A thinner pile, but every card drawn is theirs to play (W_GIFT each).
        return (wv * w[p, W.W_HORIZON] / (n + 5.0) - w[p, W.W_GIFT]) * amount, False
    if verb == E.V_MILL or verb == E.V_EXILE:
        q = pick_opponent(pl, w, gm, p, E.VERB_AIM[verb])
        n = pl[q, L.P_N_DRAW] if q >= 0 else 0
        if n == 0:
            return 0.0, False
        if amount >= n:
            return 0.5 * WIN_VALUE, False  # an empty pile: they lose at their next draw (Art. III §4)
        return wv * amount * w[p, W.W_HORIZON] / (n + 5.0), False
    if verb == E.V_DISCARD:
        q = pick_opponent(pl, w, gm, p, E.VERB_AIM[verb])
        if q < 0 or pl[q, L.P_N_HAND] == 0:
            return 0.0, False
        return wv * min(amount, pl[q, L.P_N_HAND]), False
    if E.VERB_GIVES_IP[verb] != 0:
        gain = effect_amount(pl, p, verb, amount)
        if spent == IP_LATER:
            return wv * gain, False
        if spent == IP_LOST:
            return 0.0, True  # it arrives after the Play Phase and is lost (R32 off)
        wanted = ip_wanted(cards, pl, sl, ls, p, spent)
        return wv * min(gain, wanted), spent >= 0 and wanted <= 0
    if verb == E.V_REPAIR:
        left = most_damaged(cards, pl, sl, ls, p)[1] - queued
        return wv * max(0.0, min(amount, left)), left <= 0
    if verb == E.V_DESTROY_PETITION:
        q = pick_opponent(pl, w, gm, p, E.VERB_AIM[verb])
        left = pl[q, L.P_N_PETITIONS] - queued if q >= 0 else 0.0
        if left <= 0:
            return 0.0, True
        return wv * min(amount, left) * (1.0 + pl[q, L.P_N_PETITIONS]), False
    if verb == E.V_RECOVER:
        left = recoverable(cards, pl, sl, p) - queued
        return wv * max(0.0, min(amount, left)), left <= 0
    if verb == E.V_TUTOR_PILLAR:
        return (wv if pl[p, L.P_N_PILLARS] < w[p, W.W_PILLAR_TARGET] else 0.0), False
    return 0.0, False


@njit(b1(CARDS, RULES, MEMO, PLAYERS, SLOTS, LISTS, FIELDS, WEIGHTS, i8, i8, b1), **KERNEL)
def futile_play(cards, rules, memo, pl, sl, ls, gm, w, p, c, kicked):
    """Would playing card ``c`` now do nothing: a Rights, Freedom or Bill card that stays
    in no Area (no Petition, nothing lasting, R27) whose every on-resolve effect (a
    kicker's if ``kicked``) would do nothing (``effect_value``)? A pilot never pays for
    that, whatever its stop threshold (a replay showed recovers into empty Discard Piles)."""
    t = cards[c, E.C_TYPE]
    if (t != E.RIGHTS and t != E.FREEDOM and t != E.BILL) or \
            (cards[c, E.C_KEYWORDS] & E.KW_PETITION) != 0 or has_lasting_effect(cards, c, kicked):
        return False
    ip_now = 0 if rules[E.R_IP_EFFECTS_IMMEDIATE] != 0 else IP_LOST
    for e in range(E.MAX_EFFECTS):
        verb = eff(cards, c, e, E.E_VERB)
        if verb == E.V_NONE or eff(cards, c, e, E.E_TRIGGER) != E.TRIG_ON_RESOLVE or \
                (eff(cards, c, e, E.E_KICKER) != 0 and not kicked):
            continue
        if not effect_value(cards, w, memo, pl, sl, ls, gm, p, verb,
                            eff(cards, c, e, E.E_AMOUNT), ip_now)[1]:
            return False
    return True


@njit(i8(CARDS, WEIGHTS, MEMO, PLAYERS, SLOTS, LISTS, FIELDS, i8), **KERNEL)
@copied_not_inlined
def note_threats(cards, w, memo, pl, sl, ls, gm, p):
    """Facts the policy's valuations share during a phase (nothing in ``p``'s own Play Phase
    changes them): the opposing Attacks in play (the possible Attack-on-Attack targets),
    each opponent ``q``'s listed in ``q``'s own scratch list, ``P_N_AOA_TARGETS`` long (a
    list of ``q``'s slots cannot outgrow its 64 entries, whatever the number of opponents;
    ``q``'s scratch is idle outside ``q``'s Resolve Phase), their total damage (the threat
    to our UAs), and whether the opponent ``p`` strikes holds a Defense; nothing queued yet
    (``PM_QUEUED0``). Returns how many Attacks were listed."""
    for v in range(E.N_VERBS):
        memo[p, PM_QUEUED0 + v] = 0.0  # a new phase: nothing queued yet
    n = 0
    total = 0
    for q in range(gm[L.G_N_PLAYERS]):
        pl[q, L.P_N_AOA_TARGETS] = 0
        if q == p or pl[q, L.P_ALIVE] == 0:
            continue
        k = 0
        left = pl[q, L.P_N_ATTACKS]
        for i in range(pl[q, L.P_N_BOARD] if left > 0 else 0):
            s = ls[q, L.L_BOARD, i]
            if sl[q, s, L.S_ZONE] != L.Z_PLAY:
                continue
            if cards[sl[q, s, L.S_CARD], E.C_TYPE] == E.ATTACK:
                ls[q, L.L_SCRATCH, k] = s
                k += 1
                total += sl[q, s, L.S_DP]
                if k == left:
                    break
        pl[q, L.P_N_AOA_TARGETS] = k
        n += k
    memo[p, PM_THREAT] = total
    q = pick_opponent(pl, w, gm, p, E.ATTACK_AIM)
    memo[p, PM_OPP_HAS_DEFENSE] = 1.0 if q >= 0 and pl[q, L.P_N_DEFENSES] > 0 else 0.0
    return n


@njit(b1(PLAYERS, i8, i8, i8), **KERNEL)
def petition_wins_with(pl, p, petitions, scroll_pillars):
    """Would ``p`` win by Petition at this turn's step v (Art. III §3) holding these counts?"""
    return petitions >= PETITIONS_NEEDED and scroll_pillars >= SCROLL_PILLARS_NEEDED \
        and pl[p, L.P_LP] >= PETITION_MIN_LP


@njit(f8(CARDS, RULES, WEIGHTS, MEMO, PLAYERS, SLOTS, LISTS, FIELDS, i8, i8), **KERNEL)
def card_value(cards, rules, w, memo, pl, sl, ls, gm, p, c):
    """How much ``p``'s policy wants to play card ``c`` now, before its cost. It reads
    ``p``'s Pillars and Petitions, the IP and hand when ``c`` gives IP at once
    (``value_reads_ip``), and state no Play Phase of ``p``'s changes."""
    ctype = cards[c, E.C_TYPE]
    v = 0.0
    if ctype == E.PILLAR:
        limit = rules[E.R_PILLARS_PER_TURN]
        if limit > 0 and pl[p, L.P_PILLARS_TURN] >= limit:  # R10
            return -1.0e9
        short = w[p, W.W_PILLAR_TARGET] - pl[p, L.P_N_PILLARS]
        if short > 0:
            v += w[p, W.W_PILLAR] * cards[c, E.C_IP] * min(1.0, short / 3.0)
        else:
            v += w[p, W.W_PILLAR_EXTRA] * cards[c, E.C_IP]  # more IP for Bills and kickers
        if cards[c, E.C_BRANCH] == E.SCROLL and pl[p, L.P_N_SCROLL_PILLARS] < SCROLL_PILLARS_NEEDED:
            v += w[p, W.W_SCROLL_PILLAR]
            if petition_wins_with(pl, p, pl[p, L.P_N_PETITIONS], pl[p, L.P_N_SCROLL_PILLARS] + 1):
                return WIN_VALUE
    elif ctype == E.ATTACK:
        q = pick_opponent(pl, w, gm, p, E.ATTACK_AIM)
        if q >= 0 and pl[q, L.P_UAS_LOST] < pl[q, L.P_N_UAS]:
            dmg = cards[c, E.C_DAMAGE]
            if last_ua_falls(pl, sl, ls, q, dmg, False):
                return WIN_VALUE  # Art. III §2: it strikes at step iii this turn
            lasting = 1.0 if ((cards[c, E.C_KEYWORDS] & E.KW_ONE_SHOT) != 0
                              or rules[E.R_ATTACK_LIFETIME] == E.LIFETIME_ONE_SHOT) else 3.0
            f = 1.0 if memo[p, PM_OPP_HAS_DEFENSE] != 0.0 else w[p, W.W_UA_ATTACK]
            v += w[p, W.W_ATTACK] * dmg * lasting * f
    elif ctype == E.DEFENSE:
        threat = memo[p, PM_THREAT]
        v += w[p, W.W_DEFENSE] * cards[c, E.C_DP] * (0.5 + min(2.0, threat / 6.0))
    if (cards[c, E.C_KEYWORDS] & E.KW_PETITION) != 0:
        if pl[p, L.P_N_PETITIONS] < PETITIONS_NEEDED:
            if petition_wins_with(pl, p, pl[p, L.P_N_PETITIONS] + 1, pl[p, L.P_N_SCROLL_PILLARS]):
                return WIN_VALUE
            v += w[p, W.W_PETITION]
        else:
            v += 0.2 * w[p, W.W_PETITION]  # a spare against 'destroy petition'
    ip_now = IP_LOST if rules[E.R_IP_EFFECTS_IMMEDIATE] == 0 else 0  # R32
    for e in range(E.MAX_EFFECTS):
        verb = eff(cards, c, e, E.E_VERB)
        if verb == E.V_NONE or eff(cards, c, e, E.E_KICKER) != 0:
            continue
        trig = eff(cards, c, e, E.E_TRIGGER)
        spent = ip_now if trig == E.TRIG_ON_RESOLVE else IP_LATER
        ev = effect_value(cards, w, memo, pl, sl, ls, gm, p, verb, eff(cards, c, e, E.E_AMOUNT),
                          spent)[0]
        if trig == E.TRIG_ON_RESOLVE:
            v += ev
        elif trig == E.TRIG_EACH_TURN:
            v += ev * w[p, W.W_EACH_TURN] if ev > 0 else ev
        elif trig == E.TRIG_ACTIVATE:  # used again each turn, or once (R29 literal)
            uses = w[p, W.W_EACH_TURN] if rules[E.R_SIDEWAYS_RESET] == E.UPRIGHT_EVERY_CARD \
                or bears_each_turn(cards, c, False) else 1.0
            v += 0.5 * ev * uses if ev > 0 else 0.0
        else:
            v += 0.3 * ev
    return v


@njit(b1(CARDS, RULES, i8), **KERNEL)
def value_reads_ip(cards, rules, c):
    """Does ``card_value`` of ``c`` read the IP and hand (an on-resolve IP effect that gives
    its IP at once, R32)? Such a value changes with every play, so it is never noted."""
    return rules[E.R_IP_EFFECTS_IMMEDIATE] != 0 and (cards[c, E.C_FLAGS] & E.CF_IP_ON_RESOLVE) != 0


@njit(f8(WEIGHTS, RNG, i8, f8), **KERNEL)
def score(w, rng, p, value):
    """A policy's score of an action: its value, or uniform noise for the random policy."""
    if w[p, W.W_RANDOM] != 0.0:
        return rand_unit(rng, GAME_STREAM)
    return value


@njit(void(MEMO, i8), **KERNEL)
def forget_card_values(memo, p):
    """Clear the card values ``p``'s policy noted (every slot: a card may reach the hand
    between two Play Phases)."""
    for s in range(E.MAX_SLOTS):
        memo[p, PM_VALUE0 + s] = np.nan


@njit(**INLINED)
def forget_pillar_values(cards, pl, sl, ls, memo, p):
    """After a Pillar or Petition is played: clear the noted values that read them
    (``CF_VALUE_READS_PILLARS``; a heal's among them, ``enums.VERB_TABLE``)."""
    for i in range(pl[p, L.P_N_HAND]):
        s = ls[p, L.L_HAND, i]
        if (cards[sl[p, s, L.S_CARD], E.C_FLAGS] & E.CF_VALUE_READS_PILLARS) != 0:
            memo[p, PM_VALUE0 + s] = np.nan


@njit(**INLINED)
def noted_card_value(cards, rules, w, memo, pl, sl, ls, gm, p, s, c):
    """``card_value`` of card ``c`` in hand slot ``s``, noted once per Play Phase: a play
    changes no value but those that read Pillars and Petitions (``CF_VALUE_READS_PILLARS``),
    which ``play_phase`` forgets when it plays a Pillar or Petition, and those that read
    the IP left (``value_reads_ip``), never noted. Debug mode recomputes and counts any
    difference as a broken invariant."""
    if value_reads_ip(cards, rules, c):
        return card_value(cards, rules, w, memo, pl, sl, ls, gm, p, c)
    v = memo[p, PM_VALUE0 + s]
    if v != v:  # NaN: not noted in this Play Phase yet
        v = card_value(cards, rules, w, memo, pl, sl, ls, gm, p, c)
        memo[p, PM_VALUE0 + s] = v
    elif gm[L.G_DEBUG] != 0 and v != card_value(cards, rules, w, memo, pl, sl, ls, gm, p, c):
        gm[L.G_VIOLATIONS] += 1
    return v


@njit(**INLINED)
def hand_value(cards, rules, w, memo, pl, sl, ls, gm, p, s):
    c = sl[p, s, L.S_CARD]
    return card_value(cards, rules, w, memo, pl, sl, ls, gm, p, c) - w[p, W.W_COST] * play_cost(cards, sl, p, s)


@njit(**INLINED)
def choose_action(t, g, memo, p, acts, n_acts):
    """The pilot's next Play Phase action (Art. VII §5 phase three): the index in
    ``acts[:n_acts]`` (the legal actions the rules listed, ``game.legal_actions``: rows
    columns ``layout.A_*``) of the best one, or -1 to stop. Stopping is scored first
    (``W_STOP``), then each legal action in order (``score``: its value, or noise for the
    random policy). An action that would do nothing (``effect_value``, ``futile_play``) is
    never taken by a heuristic pilot, whatever its stop threshold. An Attack-on-Attack is
    worth the opposing damage it removes (``W_AOA``, for the turns that Attack would
    strike) and what is left of our Attack if it survives (Amend. I §3-4, R17): so even
    trades and blocks of a bigger Attack are weighed too. An Attack already in play
    fighting (R55) is weighed the same way, less the damage it holds and the strike it
    forgoes this turn (R17).
    """
    cards, rules, w = t.cards, t.rules, t.weights
    pl, sl, ls, gm, rng = g.players, g.slots, g.lists, g.game, g.rng
    randomly = w[p, W.W_RANDOM] != 0.0
    best = -1
    best_score = score(w, rng, p, w[p, W.W_STOP])
    v = 0.0  # the value of the last card's plain play (its kicked plays add to it)
    ip_now = IP_LOST if rules[E.R_IP_EFFECTS_IMMEDIATE] == 0 else 0  # R32
    for i in range(n_acts):
        kind = acts[i, L.A_KIND]
        s = acts[i, L.A_SLOT]
        c = sl[p, s, L.S_CARD]
        if randomly:
            sc = score(w, rng, p, 0.0)
        elif kind == L.ACT_ACTIVATE:
            e = acts[i, L.A_EFFECT]
            spent = acts[i, L.A_COST] if ip_now == 0 else IP_LOST
            ev, futile = effect_value(cards, w, memo, pl, sl, ls, gm, p,
                                      eff(cards, c, e, E.E_VERB), eff(cards, c, e, E.E_AMOUNT),
                                      spent)
            sc = ev - w[p, W.W_COST] * acts[i, L.A_COST]
            if sc > best_score and futile:
                continue  # an activation that would do nothing is never paid for
        elif kind == L.ACT_PLAY:
            v = noted_card_value(cards, rules, w, memo, pl, sl, ls, gm, p, s, c) \
                - w[p, W.W_COST] * acts[i, L.A_COST]
            sc = v
            if sc > best_score and futile_play(cards, rules, memo, pl, sl, ls, gm, w, p, c, False):
                continue  # checked only for a new best: skipping any other changes nothing
        elif kind == L.ACT_PLAY_KICKED:
            e = acts[i, L.A_EFFECT]
            k = eff(cards, c, e, E.E_COST)
            kv, futile = effect_value(cards, w, memo, pl, sl, ls, gm, p,
                                      eff(cards, c, e, E.E_VERB), eff(cards, c, e, E.E_AMOUNT),
                                      k if ip_now == 0 else IP_LOST)
            sc = v + w[p, W.W_KICKER] * kv - w[p, W.W_COST] * k
            if sc > best_score and futile:
                continue  # a kicker that would do nothing is not paid for
        else:  # ACT_AOA: Amend. I §3-4: the lesser is destroyed, the greater loses the lesser
            in_play = kind == L.ACT_AOA_IN_PLAY  # R55: an Attack already in play fights
            dmg = sl[p, s, L.S_DP] if in_play else cards[c, E.C_DAMAGE]
            theirs = sl[acts[i, L.A_SEAT], acts[i, L.A_TARGET], L.S_DP]
            removed = dmg if dmg < theirs else theirs
            left = dmg - theirs if dmg > theirs else 0
            ours_lasts = 0.0 if ((cards[c, E.C_KEYWORDS] & E.KW_ONE_SHOT) != 0
                                 or rules[E.R_ATTACK_LIFETIME] == E.LIFETIME_ONE_SHOT) else 2.0
            sc = w[p, W.W_AOA] * removed * 3.0 + w[p, W.W_ATTACK] * left * ours_lasts \
                - w[p, W.W_COST] * acts[i, L.A_COST]
            if in_play:  # it held its damage already, and forgoes this turn's strike (R17)
                sc -= w[p, W.W_ATTACK] * dmg * (ours_lasts + 1.0)
        if sc > best_score:
            best, best_score = i, sc
    note_choice(t, g, memo, p, acts, best)
    return best


@njit(**INLINED)
def note_choice(t, g, memo, p, acts, k):
    """``p`` takes action ``k`` of ``acts`` (-1: stops): its heuristic pilot notes what the
    action queues for the Resolve Phase (``note_queued``); the random policy values
    nothing and notes nothing. ``choose_action`` calls it for its own pick; a pilot that
    picks otherwise (the search) calls it for the action it takes."""
    if k >= 0 and t.weights[p, W.W_RANDOM] == 0.0:
        note_queued(t.cards, memo, g.slots, g.lists, g.players, p, acts, k)


@njit(**INLINED)
def note_queued(cards, memo, sl, ls, pl, p, acts, i):
    """Action ``i`` was chosen: add what it queues of the capped verbs (``VERB_QUEUES``) for the
    Resolve Phase to the pilot's memory; if anything, the noted values of the cards that
    read it are forgotten (``forget_queue_values``)."""
    kind = acts[i, L.A_KIND]
    c = sl[p, acts[i, L.A_SLOT], L.S_CARD]
    added = False
    for e in range(E.MAX_EFFECTS):
        verb = eff(cards, c, e, E.E_VERB)
        if E.VERB_QUEUES[verb] == 0:
            continue
        if kind == L.ACT_ACTIVATE:
            fires = e == acts[i, L.A_EFFECT]
        elif kind == L.ACT_AOA_IN_PLAY:
            fires = False  # R55: a card in play fights; nothing of it resolves anew
        else:
            fires = eff(cards, c, e, E.E_TRIGGER) == E.TRIG_ON_RESOLVE and \
                (eff(cards, c, e, E.E_KICKER) == 0 or kind == L.ACT_PLAY_KICKED)
        if fires:
            memo[p, PM_QUEUED0 + verb] += eff(cards, c, e, E.E_AMOUNT)
            added = True
    if added:
        forget_queue_values(cards, memo, sl, ls, pl, p)


@njit(**INLINED)
def forget_queue_values(cards, memo, sl, ls, pl, p):
    """Forget the noted values of the cards in hand that read what is queued
    (``CF_VALUE_READS_QUEUE``)."""
    for i in range(pl[p, L.P_N_HAND]):
        s = ls[p, L.L_HAND, i]
        if (cards[sl[p, s, L.S_CARD], E.C_FLAGS] & E.CF_VALUE_READS_QUEUE) != 0:
            memo[p, PM_VALUE0 + s] = np.nan


@njit(**INLINED)
def choose_mulligan(cards, w, pl, sl, ls, rng, q):
    """Amend. VII: does ``q`` send its opening hand back? The heuristic keeps a hand holding
    ``W_MULLIGAN_MIN`` to ``W_MULLIGAN_MAX`` Pillars; the random policy tosses a coin."""
    if w[q, W.W_RANDOM] != 0.0:
        return rand_below(rng, GAME_STREAM, 2) == 1
    k = pillars_in_hand(cards, pl, sl, ls, q)
    return k < w[q, W.W_MULLIGAN_MIN] or k > w[q, W.W_MULLIGAN_MAX]


@njit(**INLINED)
def choose_p2_pillar(cards, w, pl, sl, ls, gm, rng, p2, zero_cost_only):
    """Art. VII §4, Amend. VIII, R7: the hand slot of the Pillar the second seat places
    free, or -1 to decline (the random policy declines on a coin toss, else places any
    Pillar alike; ``W_P2_RIGHT`` = 0 never takes it). The heuristic weighs each Pillar in hand: its IP (``W_PILLAR``), a Scroll Pillar's
    ``W_SCROLL_PILLAR``, and the second card of the first Draw Phase (``verb:draw``), less
    the value of its on-resolve effects, which a placed Pillar loses (R41); it takes the
    best if that is worth anything, else declines. ``zero_cost_only``: only a Pillar of
    printed cost 0 may be placed (R7)."""
    best = -1
    best_key = 0.0
    short = w[p2, W.W_PILLAR_TARGET] - pl[p2, L.P_N_PILLARS]
    per_ip = w[p2, W.W_PILLAR] * min(1.0, short / 3.0) if short > 0 else w[p2, W.W_PILLAR_EXTRA]
    for i in range(pl[p2, L.P_N_HAND]):
        s = ls[p2, L.L_HAND, i]
        c = sl[p2, s, L.S_CARD]
        if cards[c, E.C_TYPE] != E.PILLAR:
            continue
        if zero_cost_only and cards[c, E.C_COST] != 0:
            continue
        key = per_ip * cards[c, E.C_IP] + cards_drawn_value(w, p2, 1) + 0.01 * cards[c, E.C_COST]
        if cards[c, E.C_BRANCH] == E.SCROLL:
            key += w[p2, W.W_SCROLL_PILLAR]
        for e in range(E.MAX_EFFECTS):
            verb = eff(cards, c, e, E.E_VERB)
            if verb != E.V_NONE and eff(cards, c, e, E.E_TRIGGER) == E.TRIG_ON_RESOLVE:
                key -= w[p2, W.W_VERB + verb] * eff(cards, c, e, E.E_AMOUNT)  # its worth later
        if key > best_key:
            best = s
            best_key = key
    if w[p2, W.W_P2_RIGHT] == 0.0:
        return -1
    if w[p2, W.W_RANDOM] != 0.0:  # R7: declines with probability 1/2, else any Pillar alike
        n = 0
        for i in range(pl[p2, L.P_N_HAND]):
            c = sl[p2, ls[p2, L.L_HAND, i], L.S_CARD]
            if cards[c, E.C_TYPE] == E.PILLAR and (not zero_cost_only or cards[c, E.C_COST] == 0):
                n += 1
        if n == 0:
            return -1
        k = rand_below(rng, GAME_STREAM, 2 * n)
        if k >= n:
            return -1
        for i in range(pl[p2, L.P_N_HAND]):
            s = ls[p2, L.L_HAND, i]
            c = sl[p2, s, L.S_CARD]
            if cards[c, E.C_TYPE] == E.PILLAR and (not zero_cost_only or cards[c, E.C_COST] == 0):
                if k == 0:
                    return s
                k -= 1
    return best


@njit(**INLINED)
def choose_hand_limit_discard(t, g, memo, p):
    """Step ix (Art. VI §7): the hand slot ``p`` discards next, the least wanted."""
    cards, rules, w = t.cards, t.rules, t.weights
    pl, sl, ls, gm, rng = g.players, g.slots, g.lists, g.game, g.rng
    worst = ls[p, L.L_HAND, 0]
    worst_v = 1.0e300
    for i in range(pl[p, L.P_N_HAND]):
        s = ls[p, L.L_HAND, i]
        v = score(w, rng, p, hand_value(cards, rules, w, memo, pl, sl, ls, gm, p, s))
        if v < worst_v:
            worst = s
            worst_v = v
    return worst
