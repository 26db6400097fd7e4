"""The card catalog: the TOML contract, the effect grammar, loading, checking, compiling.

Public API::

    DEFAULT_CATALOG                      the Original Set, every command's default catalog
    FOUNDATION_CATALOG                   the Foundation Sample, its base (package data)
    load_catalog(path=None) -> Catalog   one file or several, layered in order (base,
                                         new cards, errata); raises InputError listing
                                         every problem of the first bad file
    Catalog, Card, Effect, Source, parse_effect
"""

from rnr_sim.cards.catalog import (
    DEFAULT_CATALOG,
    FOUNDATION_CATALOG,
    Catalog,
    CatalogError,
    Source,
    load_catalog,
    parse_catalog,
)
from rnr_sim.cards.grammar import CARD_VERBS, Effect, GrammarError, parse_effect
from rnr_sim.cards.schema import Card

__all__ = [
    "CARD_VERBS",
    "DEFAULT_CATALOG",
    "FOUNDATION_CATALOG",
    "Card",
    "Catalog",
    "CatalogError",
    "Effect",
    "GrammarError",
    "Source",
    "load_catalog",
    "parse_catalog",
    "parse_effect",
]
