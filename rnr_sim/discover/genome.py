"""A deck as a genome: copies per catalog card, its variation, and its repair to legality.

``counts`` is int64[n_cards]: copies of each catalog card. The variation operators of the
deck-search literature (Fontaine et al. 2019; Bhatt et al. 2018) change it:

- ``swap``: one copy out, one copy in (of the same Order half the time, else of any card);
- ``order_swap``: copies of a card exchanged for a card of the same Order (card type) whose
  cost is within one IP of it;
- ``move``: copies moved between two cards the deck already plays;
- ``crossover``: each card's copies taken from one parent or the other.

Every child is then ``repair`` ed to Article V (``Laws``: the rules profile's limits), and
``Laws.check`` asks the project's own validator (``decks.validate_deck``), so no illegal
deck is ever played: a repair that fails the validator is a bug, raised as such.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from rnr_sim import enums
from rnr_sim.decks import Deck, is_legal, validate_deck
from rnr_sim.rules import DECK_SIZE, N_UAS

#: A copy count no Pillar or Rights card needs to pass (Art. V sets none, R4): the caps
#: keep a child's arithmetic finite, and 60 cards are fewer than this of any one card.
UNLIMITED = DECK_SIZE


@dataclass(frozen=True)
class Laws:
    """Article V as the rules profile sets it, over one catalog (arrays by card id)."""

    catalog: object
    profile: object
    type_of: np.ndarray  # int8: index in enums.CARD_TYPES
    branch_of: np.ndarray  # int8: index in enums.BRANCHES
    cost_of: np.ndarray
    rare: np.ndarray  # bool: a Rare that is not a UA (Art. V §4 counts those)
    cap: np.ndarray  # most copies of each card (Art. IV §3, Art. V §3, §5; R4)
    size: int  # cards in a deck, UAs included (R1)
    uas: int
    min_pillars: int
    max_freedom: int
    max_bills: int
    max_rares: int

    @classmethod
    def of(cls, catalog, profile) -> Laws:
        cards = catalog.cards
        types = np.array([enums.CARD_TYPES.index(c.type) for c in cards], dtype=np.int8)
        is_t = {t: types == enums.CARD_TYPES.index(t) for t in enums.CARD_TYPES}
        cap = np.full(len(cards), UNLIMITED, dtype=np.int64)  # Pillars, Rights: R4
        cap[is_t["ua"]] = 1  # Art. IV §3: the UAs bear different names
        cap[is_t["freedom"] | is_t["bill"]] = 1  # Art. V §3 (R3)
        cap[is_t["attack"] | is_t["defense"]] = profile["max_copies_attack_defense"]  # §5
        size = DECK_SIZE + (0 if profile["deck_includes_uas"] else N_UAS)  # R1
        return cls(
            catalog=catalog, profile=profile, type_of=types,
            branch_of=np.array([enums.BRANCHES.index(c.branch) for c in cards], dtype=np.int8),
            cost_of=np.array([c.cost for c in cards], dtype=np.int64),
            rare=np.array([c.rarity == "rare" and c.type != "ua" for c in cards]),
            cap=cap, size=size, uas=N_UAS, min_pillars=int(profile["min_pillars"]),
            max_freedom=int(profile["max_freedom"]), max_bills=int(profile["max_bills"]),
            max_rares=int(profile["max_rares"]),
        )

    @property
    def n_cards(self) -> int:
        return len(self.type_of)

    def of_type(self, card_type: str) -> np.ndarray:
        return self.type_of == enums.CARD_TYPES.index(card_type)

    # ------------------------------------------------------------------ decks and their ids

    def deck(self, counts: np.ndarray, name: str = "candidate",
             policy: str | None = None) -> Deck:
        """``counts`` as a ``Deck`` (slots in card-id order)."""
        ids = np.repeat(np.arange(self.n_cards, dtype=np.int32), counts.astype(np.int64))
        names = self.catalog.cards
        slot_names = tuple(names[i].name for i in ids)
        by_name = {names[i].name: int(counts[i]) for i in np.flatnonzero(counts)}
        return Deck(name=name, policy=policy, path=None, sha256=deck_sha256(counts),
                    slots=slot_names, card_ids=ids, counts=by_name)

    def check(self, counts: np.ndarray) -> None:
        """Raise ``RuntimeError`` unless ``counts`` is a legal deck by ``validate_deck``."""
        problems = validate_deck(self.deck(counts), self.catalog, self.profile)
        if not is_legal(problems) or int(counts.sum()) > enums.MAX_SLOTS:
            shown = "; ".join(str(v) for v in problems if not v.warning)
            raise RuntimeError(f"deck repair left an illegal deck: {shown}")

    def legal(self, counts: np.ndarray) -> bool:
        """Whether ``counts`` keeps every law ``check`` asks ``validate_deck`` for, by array
        arithmetic (fast enough for thousands of swaps; the tests hold it to the validator)."""
        c = np.asarray(counts, dtype=np.int64)
        if (c < 0).any() or (c > self.cap).any() or int(c.sum()) != self.size:
            return False
        if int(c[self.of_type("ua")].sum()) != self.uas:  # Art. IV §3, Art. V §2
            return False
        if int(c[self.of_type("pillar")].sum()) < self.min_pillars:  # Art. V §2 (R2)
            return False
        if (int(c[self.of_type("freedom")].sum()) > self.max_freedom  # Art. V §3 (R3)
                or int(c[self.of_type("bill")].sum()) > self.max_bills):
            return False
        if int(c[self.rare].sum()) > self.max_rares:  # Art. V §4 (R31)
            return False
        present = np.bincount(self.branch_of, weights=c, minlength=len(enums.BRANCHES))
        return bool((present > 0).all())  # Art. V §6

    def counts_of(self, deck: Deck) -> np.ndarray:
        return np.bincount(deck.card_ids, minlength=self.n_cards).astype(np.int64)

    # ------------------------------------------------------------------ repair

    def repair(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The nearest legal deck to ``counts`` by random removals and additions: caps per
        name, exactly 3 UAs, the Freedom, Bill and Rare limits, at least the minimum of
        Pillars, each Branch present, then the deck's size (removing or adding copies,
        preferring the cards the deck already plays)."""
        c = np.minimum(np.maximum(np.asarray(counts, dtype=np.int64), 0), self.cap)
        ua = self.of_type("ua")
        self._exactly(c, ua, self.uas, rng)  # Art. IV §3, Art. V §2
        self._at_most(c, self.of_type("freedom"), self.max_freedom, rng)  # Art. V §3
        self._at_most(c, self.of_type("bill"), self.max_bills, rng)
        self._at_most(c, self.rare, self.max_rares, rng)  # Art. V §4
        pillar = self.of_type("pillar")
        while c[pillar].sum() < self.min_pillars:  # Art. V §2 (R2)
            c[self._pick_to_add(c, pillar, rng)] += 1
        self._fit_size(c, rng)
        for b in range(len(enums.BRANCHES)):  # Art. V §6 (R5)
            if not c[self.branch_of == b].any():
                of_b = self.branch_of == b
                wanted = pillar & of_b if (pillar & of_b & self._room(c)).any() else of_b
                c[self._pick_to_add(c, wanted, rng)] += 1
                c[self._pick_to_remove(c, rng, keep_branch=True)] -= 1
        return c

    def _exactly(self, c: np.ndarray, mask: np.ndarray, n: int, rng) -> None:
        while c[mask].sum() > n:
            c[rng.choice(np.flatnonzero(mask & (c > 0)))] -= 1
        while c[mask].sum() < n:
            c[rng.choice(np.flatnonzero(mask & (c < self.cap)))] += 1

    def _at_most(self, c: np.ndarray, mask: np.ndarray, n: int, rng) -> None:
        while c[mask].sum() > n:
            held = np.flatnonzero(mask & (c > 0))
            c[rng.choice(held, p=c[held] / c[held].sum())] -= 1

    def _room(self, c: np.ndarray) -> np.ndarray:
        """The cards one more copy of keeps every limit but the size."""
        room = (c < self.cap) & ~self.of_type("ua")
        if c[self.of_type("freedom")].sum() >= self.max_freedom:
            room &= ~self.of_type("freedom")
        if c[self.of_type("bill")].sum() >= self.max_bills:
            room &= ~self.of_type("bill")
        if c[self.rare].sum() >= self.max_rares:
            room &= ~self.rare
        return room

    def _pick_to_add(self, c: np.ndarray, mask: np.ndarray, rng) -> int:
        """A card of ``mask`` with room: one the deck plays, four times in five."""
        room = mask & self._room(c)
        played = np.flatnonzero(room & (c > 0))
        if len(played) and rng.random() < 0.8:
            return int(rng.choice(played))
        return int(rng.choice(np.flatnonzero(room)))

    def _pick_to_remove(self, c: np.ndarray, rng, keep_branch: bool = False) -> int:
        """A copy whose loss keeps the UAs, the minimum of Pillars and (with
        ``keep_branch``) every Branch: chosen in proportion to copies held."""
        ok = (c > 0) & ~self.of_type("ua")
        if c[self.of_type("pillar")].sum() <= self.min_pillars:
            ok &= ~self.of_type("pillar")
        if keep_branch:
            for b in np.flatnonzero(np.bincount(self.branch_of, weights=c,
                                                minlength=len(enums.BRANCHES)) == 1):
                ok &= self.branch_of != b
        held = np.flatnonzero(ok)
        return int(rng.choice(held, p=c[held] / c[held].sum()))

    def _fit_size(self, c: np.ndarray, rng) -> None:
        while c.sum() > self.size:
            c[self._pick_to_remove(c, rng)] -= 1
        while c.sum() < self.size:
            c[self._pick_to_add(c, np.ones(len(c), dtype=bool), rng)] += 1

    # ------------------------------------------------------------------ variation

    def random_deck(self, rng: np.random.Generator) -> np.ndarray:
        """A random legal deck: the minimum of Pillars and random cards of the pool."""
        c = np.zeros(self.n_cards, dtype=np.int64)
        picks = rng.choice(self.n_cards, size=self.size, replace=True)
        np.add.at(c, picks, 1)
        return self.repair(c, rng)

    def swap(self, c: np.ndarray, rng) -> None:
        """One copy out; one copy in of a card of the same Order half the time (the deck
        keeps its shape), else of any card of the pool."""
        x = int(rng.choice(np.flatnonzero(c > 0)))
        c[x] -= 1
        same = np.flatnonzero(self.type_of == self.type_of[x])
        c[int(rng.choice(same)) if rng.random() < 0.5 else int(rng.integers(self.n_cards))] += 1

    def order_swap(self, c: np.ndarray, rng) -> None:
        """Copies of a played card to a card of the same Order, cost within 1 IP."""
        x = int(rng.choice(np.flatnonzero(c > 0)))
        near = np.flatnonzero((self.type_of == self.type_of[x])
                              & (np.abs(self.cost_of - self.cost_of[x]) <= 1))
        near = near[near != x]
        if not len(near):
            return
        k = int(rng.integers(1, c[x] + 1))
        c[x] -= k
        c[int(rng.choice(near))] += k

    def move(self, c: np.ndarray, rng) -> None:
        held = np.flatnonzero(c > 0)
        if len(held) < 2:
            return
        x, y = rng.choice(held, size=2, replace=False)
        k = int(rng.integers(1, min(3, c[x]) + 1))
        c[x] -= k
        c[y] += k

    def crossover(self, a: np.ndarray, b: np.ndarray, rng) -> np.ndarray:
        take = rng.random(self.n_cards) < 0.5
        return np.where(take, a, b).astype(np.int64)

    def child(self, a: np.ndarray, b: np.ndarray | None, rng: np.random.Generator
              ) -> np.ndarray:
        """One legal child of parent ``a`` (crossed with ``b`` when given): one to four
        mutations drawn among ``swap``, ``order_swap`` and ``move``, then ``repair``."""
        c = self.crossover(a, b, rng) if b is not None else a.astype(np.int64).copy()
        for _ in range(1 + min(3, int(rng.geometric(0.5)) - 1)):
            op = rng.integers(3)
            (self.swap, self.order_swap, self.move)[op](c, rng)
        return self.repair(c, rng)


def align(slots: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """A slot array for ``counts`` that keeps ``slots`` (a parent's) wherever it can: each
    slot keeps its card while ``counts`` still wants a copy of it, and the freed slots take
    the copies no slot held yet (catalog order). A child that differs from its parent in a
    few cards then meets the same shuffles in every other slot (the engine shuffles slots),
    so the two are compared on common deals (``power.swaps`` does the same for its swaps)."""
    want = np.asarray(counts, dtype=np.int64).copy()
    out = np.asarray(slots, dtype=np.int32).copy()
    keep = np.zeros(len(out), dtype=bool)
    for k, card in enumerate(out):
        if want[card] > 0:
            want[card] -= 1
            keep[k] = True
    new = np.repeat(np.arange(len(want), dtype=np.int32), want)
    if len(new) != int((~keep).sum()):
        raise ValueError("counts and slots hold different numbers of cards")
    out[~keep] = new
    return out


def deck_sha256(counts: np.ndarray) -> str:
    """A deck's identity: the SHA-256 of its copies per card id."""
    return hashlib.sha256(np.ascontiguousarray(counts, dtype=np.int64).tobytes()).hexdigest()
