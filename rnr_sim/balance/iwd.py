"""A card's adjusted IWD on the balance search's paired games, so that ``iwd_max`` is a
target the search aims at, not only one its verification checks (docs/design.md,
"Balance objective, stated").

The figure is the report's (``analytics.cards.adjusted_iwd``, its per-card row): the seat
rows of every deck that holds the card, in strata of one deck, one turn order and one
game-length band (``turn_bands`` over that deck's rows in that turn order: exact turn
counts where dense, merged in the tails), and the Mantel-Haenszel risk difference of
winning when the card was seen (opening hand or drawn) against when it was not, the
holders' strata pooled (``cards.iwd_by_unit``, which the yardstick's check reads too). Its
linearisation per unit (a pair's deal: both seat orders), ``N (Σ dU - est Σ dV) / V``, is
the form ``metrics.variance`` reads:
a candidate's change in a card's IWD is paired with the baseline's on the same deals, as
every other figure is. A test holds the value and its standard error equal to the report's
on the same games.

Which cards: those whose baseline IWD misses ``iwd_max`` or whose interval reaches above it
(``watch``), the highest first, at most ``WATCH_MAX``; a change that lifts another card
over the bound is caught by the verification, which reads every card.
"""

from __future__ import annotations

import numpy as np

from rnr_sim.analytics.cards import iwd_by_unit
from rnr_sim.analytics.stats import Z95
from rnr_sim.balance.metrics import Figure, Games

#: The most cards a search watches (each is judged on every candidate).
WATCH_MAX = 8


def slot_masks(deck_cards: np.ndarray, deck_size: np.ndarray, card_id: int) -> np.ndarray:
    """uint64[deck]: bit k set where deck slot k holds ``card_id`` (0: the deck has none);
    slots past 63 cannot be in a mask (as in the run dir's)."""
    out = np.zeros(len(deck_size), dtype=np.uint64)
    for i in range(len(deck_size)):
        slots = np.flatnonzero(deck_cards[i, : min(int(deck_size[i]), 64)] == card_id)
        for k in slots.tolist():
            out[i] |= np.uint64(1) << np.uint64(k)
    return out


def card_iwd(games: Games, masks: np.ndarray) -> Figure | None:
    """The card's adjusted IWD on ``games`` (module docstring: ``cards.iwd_by_unit`` on the
    holders' seat rows), ``masks`` its slots in each deck (``slot_masks``); None where no
    stratum holds both seen and not seen rows, or under 2 deals."""
    n_pairs, n_deals, n_orders = games.winner.shape
    parts = []  # per holder: unit, seen, won, group, turns (each [k, D, R])
    for h in np.flatnonzero(masks).tolist():
        p, s = np.nonzero(games.pairs == h)  # the deck's seats
        if not len(p):
            continue
        shape = (len(p), n_deals, n_orders)
        unit = np.broadcast_to(p[:, None, None] * n_deals
                               + np.arange(n_deals)[None, :, None], shape)
        # the turn order: seat s, seat r moving first
        order = (s[:, None, None] - np.arange(n_orders)[None, None, :]) % n_orders
        parts.append((unit, (games.seen[p, :, :, s] & masks[h]) != 0,
                      games.winner[p] == s[:, None, None],
                      np.broadcast_to(h * n_orders + order, shape), games.turns[p]))
    if not parts or n_deals < 2:
        return None
    unit, seen, won, group, turns = (np.concatenate([x[i].ravel() for x in parts])
                                     for i in range(5))
    by = np.argsort(unit, kind="stable")
    group = np.unique(group[by], return_inverse=True)[1]  # a dense index
    got = iwd_by_unit(seen[by], won[by].astype(np.float64), group, turns[by], unit[by])
    if got is None:
        return None
    est, starts, z = got
    units = n_pairs * n_deals
    zc = np.zeros(units)
    zc[unit[by][starts]] = z
    return Figure(est, (units * zc).reshape(n_pairs, n_deals))


def watch(games: Games, deck_cards: np.ndarray, deck_size: np.ndarray, iwd_max: float,
          names: list[str]) -> tuple[dict[int, np.ndarray], tuple[str, Figure] | None]:
    """card id -> its slot masks, for the cards of the metagame's decks whose IWD on the
    baseline's ``games`` misses ``iwd_max`` or whose 95% interval reaches above it, the
    highest first, at most ``WATCH_MAX`` (``names``: the catalog's card names, for ties);
    and the card with the highest IWD (its name and figure), to say how far the bound is."""
    held = np.unique(np.concatenate([deck_cards[i, : deck_size[i]]
                                     for i in range(len(deck_size))]))
    found, top = [], None
    for cid in held.tolist():
        masks = slot_masks(deck_cards, deck_size, cid)
        f = card_iwd(games, masks)
        if f is None:
            continue
        if top is None or (-f.value, names[cid]) < (-top[1].value, top[0]):
            top = (names[cid], f)
        if f.value + Z95 * f.se > iwd_max:
            found.append((-f.value, names[cid], cid, masks))
    found.sort(key=lambda t: t[:2])
    return {cid: masks for _, _, cid, masks in found[:WATCH_MAX]}, top


def pp(f: Figure) -> str:
    """A card's IWD and its 95% interval in points: ``+12.3 pp [+10.1, +14.5]``
    (``display.pp``, ``display.interval``, as compare writes a card's adjusted IWD)."""
    from rnr_sim.display import interval
    from rnr_sim.display import pp as points

    return f"{points(f.value)} {interval(*f.interval(), 1, signed=True)}"
