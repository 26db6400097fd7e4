"""Controlled swaps: a deck with some of its cards exchanged, slot for slot.

A deck is its slot array (catalog ids in the deck list's order). A swap writes new ids
into some slots and leaves every other slot as it was, so the changed deck meets the same
shuffles as the deck it came from (the engine shuffles slots: a card put in slot k is
drawn exactly when the card it replaced would have been). That is what makes a swap's
effect measurable on common deals.

Two swaps, both stated in docs/design.md ("Card power"):

- **A cut** (``cut``): the copies of one card of the deck leave; each freed slot takes
  one more copy of the deck's other cards of the same Order, in turn, the one with the
  most copies first (ties: catalog order), as long as it has room (Art. V §3-5, the Rare
  limit); slots no card of the Order can take go to the deck's Pillars the same way (R4:
  Pillars have no copy limit). A UA (Art. IV §3: the three bear different names) is
  replaced by the UA the field plays most that the deck does not. What a card is worth
  to its deck is the deck's paired loss under its cut.
- **A swap in** (``swap_in``): ``k`` copies of a card come in, in place of the deck's
  cards of the same Order that are worth least to it (measured by cuts), all copies of the
  least valuable first, then the next; copies the deck already holds count toward ``k``
  (``levels``: one copy, a full set, and for Pillars and Rights a larger set).

A swap that would leave an illegal deck (a Rare over the limit, a Branch gone, a copy
limit) is not made: ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnr_sim import enums

#: Copies a "full set" of a card means: the Attack and Defense copy limit (Art. V §5); the
#: same four for Pillars and Rights (four keep the measure comparable across Orders); one
#: for the single-copy Orders (UAs, Freedom, Bills).
FULL_SET = 4
#: Pillars and Rights have no copy limit (R4), and a deck plays 15 or more Pillars and about
#: 10 Rights: a card of theirs is measured at this many copies too, where more helps.
LARGE_SET = 8


@dataclass
class Host:
    """A deck that cards are swapped into: its name, slot array and pilot row."""

    name: str
    slots: np.ndarray  # int32[n_slots]: catalog ids in slot order
    pilot: int

    def counts(self, n_cards: int) -> np.ndarray:
        return np.bincount(self.slots, minlength=n_cards).astype(np.int64)


def levels(laws, card: int) -> tuple[int, ...]:
    """The copy counts a card is measured at: one, a full set (``FULL_SET``, capped by the
    card's copy limit), and ``LARGE_SET`` for a card with no copy limit (R4)."""
    full = int(min(FULL_SET, laws.cap[card]))
    if full <= 1:
        return (1,)
    return (1, full, LARGE_SET) if laws.cap[card] >= LARGE_SET else (1, full)


def _with(slots: np.ndarray, at: np.ndarray, card: int) -> np.ndarray:
    out = slots.copy()
    out[at] = card
    return out


def _room_left(laws, counts: np.ndarray, card: int) -> bool:
    """One more copy of ``card`` keeps its copy limit and the Rare limit."""
    if counts[card] >= laws.cap[card]:
        return False
    return not (laws.rare[card] and counts[laws.rare].sum() >= laws.max_rares)


def cut(laws, host: Host, card: int, field_uas: np.ndarray | None = None
        ) -> np.ndarray | None:
    """``host``'s slots with every copy of ``card`` replaced as the module docstring says,
    or None when no legal replacement exists (the card keeps a Branch in the deck, say).
    ``field_uas``: copies of each card in the field, for the UA rule (catalog order if
    None)."""
    n = laws.n_cards
    counts = host.counts(n)
    at = np.flatnonzero(host.slots == card)
    if not len(at):
        return None
    counts[card] = 0
    kind = laws.type_of[card]
    slots = host.slots.copy()
    if kind == enums.CARD_TYPES.index("ua"):
        played = np.zeros(n) if field_uas is None else np.asarray(field_uas, dtype=np.float64)
        ua = np.flatnonzero(laws.of_type("ua") & (counts == 0))
        ua = ua[ua != card]
        for u in ua[np.lexsort((ua, -played[ua]))]:
            counts[u] = 1
            if laws.legal(counts):
                slots[at] = u
                return slots
            counts[u] = 0
        return None
    same = np.flatnonzero((laws.type_of == kind) & (counts > 0))
    pillars = np.flatnonzero(laws.of_type("pillar") & (counts > 0))
    for pos in at:
        placed = False
        for group in (same, pillars):
            order = group[np.lexsort((group, -counts[group]))]
            for c in order:
                if _room_left(laws, counts, c):
                    counts[c] += 1
                    slots[pos] = c
                    placed = True
                    break
            if placed:
                break
        if not placed:
            return None
    return slots if laws.legal(counts) else None


def swap_in(laws, host: Host, card: int, copies: int, worth: dict[int, float]
            ) -> np.ndarray | None:
    """``host``'s slots with ``card`` brought to ``copies`` copies in place of its least
    valuable cards of the same Order (``worth``: card id -> the host's loss when it is cut;
    cards without a measure go last), or None when the host already holds that many, has
    too few cards of the Order to give up, or the swap would be illegal."""
    n = laws.n_cards
    counts = host.counts(n)
    need = copies - int(counts[card])
    if need <= 0:
        return None
    kind = laws.type_of[card]
    others = np.flatnonzero((laws.type_of == kind) & (counts > 0))
    others = others[others != card]
    value = np.array([worth.get(int(c), np.inf) for c in others])
    freed: list[int] = []
    for c in others[np.lexsort((others, value))]:
        take = np.flatnonzero(host.slots == c)[: need - len(freed)]
        freed.extend(int(s) for s in take)
        if len(freed) == need:
            break
    if len(freed) < need:
        return None
    slots = _with(host.slots, np.array(freed), card)
    return slots if laws.legal(np.bincount(slots, minlength=n)) else None


def exchange(laws, host: Host, out: int, card: int, copies: int) -> np.ndarray | None:
    """``host``'s slots with ``copies`` copies of ``out`` (its first slots) turned into
    ``card``: the deck doctor's swap. None when the host holds fewer copies of ``out`` or
    the swap would be illegal."""
    at = np.flatnonzero(host.slots == out)[:copies]
    if len(at) < copies or out == card:
        return None
    slots = _with(host.slots, at, card)
    return slots if laws.legal(np.bincount(slots, minlength=laws.n_cards)) else None
