"""Facts about a game's state that both the rules (``game``) and the pilots (``decisions``)
read: effect slots, a card's lasting effects, what a play costs, how much IP an effect
gives, and the game's fixed numbers. Nothing here changes the state."""

import numpy as np
from numba import njit

from rnr_sim import enums as E
from rnr_sim.engine import layout as L
from rnr_sim.engine.config import KERNEL
from rnr_sim.engine.sig import CARDS, LISTS, PLAYERS, SLOTS, b1, i8, i8x2

HAND_LIMIT = 7  # Art. VI §7, Art. VII §5 step ix
OPENING_HAND = 7  # Art. VII §1.4
STARTING_LP = 100  # Art. II §1
PETITIONS_NEEDED = 3  # Art. III §3
SCROLL_PILLARS_NEEDED = 3
PETITION_MIN_LP = 20
GAME_STREAM = 4  # rng index of the game's own stream (policies, random discards)


@njit(i8(CARDS, i8, i8, i8), **KERNEL)
def eff(cards, c, e, field):
    return cards[c, E.C_EFF0 + e * E.EFF_STRIDE + field]


@njit(b1(CARDS, i8, b1), **KERNEL)
def has_lasting_effect(cards, c, kicked):
    """R27: a Rights or Freedom card stays in play if it holds an each-turn or activate
    effect (a kicker's only when it was paid)."""
    return (cards[c, E.C_FLAGS] & (E.CF_LASTING_KICKED if kicked else E.CF_LASTING)) != 0


@njit(b1(CARDS, i8, b1), **KERNEL)
def bears_each_turn(cards, c, kicked):
    """Does card ``c`` bear an 'each turn' effect (a kicker's only when it was paid)? Art.
    VII §6 and Amend. V §3 return such cards upright at their controller's next turn (R29's
    literal reading: only those)."""
    for e in range(E.MAX_EFFECTS):
        if eff(cards, c, e, E.E_TRIGGER) == E.TRIG_EACH_TURN and \
                eff(cards, c, e, E.E_VERB) != E.V_NONE and (eff(cards, c, e, E.E_KICKER) == 0 or kicked):
            return True
    return False


@njit(i8(PLAYERS, i8, i8, i8), **KERNEL)
def effect_amount(pl, p, verb, amount):
    """What an effect of ``verb`` with amount N gives ``p`` now (the IP or the LP): N, or N
    for each Pillar ``p`` has in play for a per-Pillar verb (``VERB_PER_PILLAR``)."""
    if E.VERB_PER_PILLAR[verb] != 0:
        return amount * pl[p, L.P_N_PILLARS]
    return amount


@njit(i8(i8, i8, i8), **KERNEL)
def seat_after(p, k, n):
    """The seat ``k`` places after seat ``p`` in turn order (clockwise, Art. VII §5) at a
    table of ``n`` seats, for 0 <= k <= n: ``(p + k) % n`` without a division."""
    q = p + k
    return q - n if q >= n else q


@njit(i8(CARDS, SLOTS, i8, i8), **KERNEL)
def play_cost(cards, sl, p, s):
    """IP cost of playing slot ``s`` now: a Bill doubles each time its name was played (R28)."""
    c = sl[p, s, L.S_CARD]
    cost = np.int64(cards[c, E.C_COST])  # int64 from here: the doubling needs the room
    if cards[c, E.C_TYPE] == E.BILL:
        k = np.int64(sl[p, sl[p, s, L.S_NAME_SLOT], L.S_BILL_PLAYS])
        # R28: printed cost x 2^k (a 0-cost Bill stays free), saturating at COST_MAX (R46)
        if cost > 0 and k > 0:
            cost = L.COST_MAX if k >= 62 or cost > (L.COST_MAX >> k) else cost << k
    return cost


@njit(i8(CARDS, PLAYERS, SLOTS, LISTS, i8), **KERNEL)
def pillars_in_hand(cards, pl, sl, ls, p):
    n = 0
    for i in range(pl[p, L.P_N_HAND]):
        if cards[sl[p, ls[p, L.L_HAND, i], L.S_CARD], E.C_TYPE] == E.PILLAR:
            n += 1
    return n


@njit(i8x2(CARDS, PLAYERS, SLOTS, LISTS, i8), **KERNEL)
def most_damaged(cards, pl, sl, ls, p):
    """(slot, DP missing) of the most damaged of ``p``'s Defenses and UAs on the
    board, the first found on ties; (-1, 0) when none is damaged. ``repair`` restores DP to
    it (``game.repair``); a pilot values a repair by what it is missing."""
    best = -1
    best_missing = 0
    for i in range(pl[p, L.P_N_BOARD]):
        s = ls[p, L.L_BOARD, i]
        c = sl[p, s, L.S_CARD]
        ctype = cards[c, E.C_TYPE]
        if (ctype == E.DEFENSE or ctype == E.UA) and sl[p, s, L.S_ZONE] != L.Z_DISCARD:
            missing = cards[c, E.C_DP] - sl[p, s, L.S_DP]
            if missing > best_missing:
                best = s
                best_missing = missing
    return best, best_missing
