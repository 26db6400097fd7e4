"""The card record and the card TOML contract: which fields each Order of card may carry.

One ``Card`` is one ``[[cards]]`` table of a catalog (docs/design.md, "Cards"). Stats absent from
the table are 0. The tables below are the whole contract the catalog loader checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rnr_sim import enums
from rnr_sim.cards.grammar import Effect

#: Numeric stats, in the order of the compiled columns ``C_COST .. C_DRAIN``.
STATS = ("cost", "ip", "damage", "dp", "drain")
#: Fields every card may carry, besides its Order's stats.
COMMON_FIELDS = ("name", "type", "branch", "rarity", "effects", "keywords", "text")
#: The stats each Order may carry (Art. IV): a UA is never played, so it has no cost.
TYPE_STATS: dict[str, tuple[str, ...]] = {
    "pillar": ("cost", "ip"),
    "rights": ("cost",),
    "ua": ("dp", "drain"),
    "attack": ("cost", "damage"),
    "defense": ("cost", "dp"),
    "freedom": ("cost",),
    "bill": ("cost",),
}
#: The stats each Order must carry.
REQUIRED_STATS: dict[str, tuple[str, ...]] = {
    "pillar": ("ip",),  # Art. IV §1: IP each Independence Phase
    "ua": ("dp", "drain"),  # Art. IV §3: destroyed at 0 DP; drains each turn
    "attack": ("damage",),  # Art. IV §4
    "defense": ("dp",),  # Art. IV §5
}
#: Stats that must be at least 1: a card at 0 DP is destroyed at once (Art. II §3).
POSITIVE_STATS: dict[str, tuple[str, ...]] = {"ua": ("dp",), "defense": ("dp",)}
#: Fields of a Freedom card's kicker: ``kicker = { cost = 2, effect = "draw 2" }`` (Art. IV §6).
KICKER_FIELDS = ("cost", "effect")
#: Keywords and the only Order that may carry each (others may go on any card).
KEYWORD_ORDER = {
    "petition": "rights",  # Art. II §4, Art. IV §2: only Rights cards are Petitions
    "one_shot": "attack",  # R16: an Attack discarded after its first damage step
}
#: How a card of each Order can be destroyed, the only moment an ``on destroy:`` effect
#: fires. Pillars, Freedom cards, Bills and Rights cards other than Petitions are never
#: destroyed: no rule and no verb of the grammar destroys them (Freedom and Rights cards
#: are discarded after resolving, R27; Bills return to hand, R28).
DESTROYED_BY: dict[str, str] = {
    "defense": "at 0 DP (Art. II §3)",
    "ua": "at 0 DP (Art. II §3, Art. IV §3.5)",
    "attack": "in Attack-on-Attack (Amend. I)",
}
#: A Rights card is destroyed only as a Petition in the Petition Area, by ``destroy petition``.
PETITION_DESTROYED_BY = "as a Petition, by 'destroy petition' (Art. II §4)"
SET_FIELDS = ("name", "version")
#: ``base``: the catalog this one builds on; ``errata``: changes to earlier files' cards.
TOP_LEVEL_KEYS = ("set", "base", "cards", "errata")


def fields_of(card_type: str) -> tuple[str, ...]:
    """Every field a card of this Order may carry."""
    extra = ("kicker",) if card_type == "freedom" else ()
    return COMMON_FIELDS + TYPE_STATS[card_type] + extra


@dataclass(frozen=True)
class Card:
    """One card of the catalog. ``type``, ``branch``, ``rarity`` and ``keywords`` are the
    names of ``enums.CARD_TYPES``, ``BRANCHES``, ``RARITIES`` and ``KEYWORDS``."""

    name: str
    type: str
    branch: str
    rarity: str
    cost: int = 0
    ip: int = 0
    damage: int = 0
    dp: int = 0
    drain: int = 0
    keywords: tuple[str, ...] = ()
    effects: tuple[Effect, ...] = ()
    kicker: Effect | None = None
    text: str = ""
    #: Where the card comes from, not what it does (so not compared): the name of the set
    #: that defines it, ``file:line`` of its ``[[cards]]`` table, and ``file:line`` of each
    #: ``[errata."Name"]`` table that changed it since, in load order.
    set: str = field(default="", compare=False)
    source: str = field(default="", compare=False)
    errata: tuple[str, ...] = field(default=(), compare=False)

    @property
    def type_id(self) -> int:
        return enums.CARD_TYPES.index(self.type)

    @property
    def branch_id(self) -> int:
        return enums.BRANCHES.index(self.branch)

    @property
    def rarity_id(self) -> int:
        return enums.RARITIES.index(self.rarity)

    @property
    def keyword_mask(self) -> int:
        mask = 0
        for kw in self.keywords:
            mask |= enums.KEYWORDS[kw]
        return mask

    @property
    def is_petition(self) -> bool:
        return "petition" in self.keywords

    def all_effects(self) -> tuple[Effect, ...]:
        """The card's own effects, then its kicker if any: the compiled slot order."""
        return self.effects + ((self.kicker,) if self.kicker is not None else ())

    def stats(self) -> str:
        """The Order's stats other than cost, e.g. ``dp 20, drain 2``."""
        return ", ".join(f"{s} {getattr(self, s)}" for s in TYPE_STATS[self.type] if s != "cost")

    def describe_effects(self, sep: str = "; ") -> str:
        """Every effect as the tool read it, kicker last."""
        return sep.join(e.describe() for e in self.all_effects())
