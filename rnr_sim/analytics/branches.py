"""Branches: decks grouped by their main branch (the branch with most cards in the deck)."""

from __future__ import annotations

import polars as pl

from rnr_sim.analytics.stats import with_rate
from rnr_sim.enums import BRANCHES


def card_key(decks: pl.LazyFrame, cards: pl.LazyFrame) -> str:
    """The catalog column decks.parquet's ``card`` names: ``name`` (the contract), or ``id``."""
    names = cards.collect_schema().names()
    if "id" not in names:
        return "name"
    deck_cards = decks.select(pl.col("card").unique())
    hits = {}
    for col in ("name", "id"):
        hits[col] = (
            deck_cards.join(cards.select(pl.col(col).cast(pl.String).alias("card")), on="card")
            .select(pl.len())
            .collect()
            .item()
        )
    return "id" if hits["id"] > hits["name"] else "name"


def deck_cards(decks: pl.LazyFrame, cards: pl.LazyFrame) -> pl.LazyFrame:
    """decks.parquet with each slot's catalog ``name``, ``type``, ``branch``, ``rarity``."""
    key = card_key(decks, cards)
    cols = [c for c in ("name", "type", "branch", "rarity") if c in cards.collect_schema().names()]
    cat = cards.select(pl.col(key).cast(pl.String).alias("card"), *[c for c in cols if c != key])
    if key == "name":
        cat = cat.with_columns(pl.col("card").alias("name"))
    return decks.join(cat.unique("card"), on="card", how="left")


def main_branches(decks: pl.LazyFrame, cards: pl.LazyFrame) -> pl.LazyFrame:
    """One row per deck: ``main_branch`` (most slots; ties go to the earlier of bison,
    eagle, liberty_bell, scroll), ``branch_cards`` (its slots) and ``deck_size``.
    Cards missing from the catalog count toward no branch."""
    order = {b: i for i, b in enumerate(BRANCHES)}
    counted = (
        deck_cards(decks, cards)
        .filter(pl.col("branch").is_not_null())
        .group_by("deck", "branch")
        .agg(pl.len().alias("branch_cards"))
        .with_columns(
            pl.col("branch").replace_strict(order, default=len(order), return_dtype=pl.Int64)
            .alias("_order")
        )
        .sort(["deck", "branch_cards", "_order"], descending=[False, True, False])
        .group_by("deck", maintain_order=True)
        .first()
        .select("deck", pl.col("branch").alias("main_branch"), "branch_cards")
    )
    sizes = decks.group_by("deck").agg(pl.len().alias("deck_size"))
    return sizes.join(counted, on="deck", how="left").with_columns(
        pl.col("main_branch").fill_null("unknown"), pl.col("branch_cards").fill_null(0)
    ).sort("deck")


def with_branch(seat_games: pl.LazyFrame, branches: pl.LazyFrame | pl.DataFrame) -> pl.LazyFrame:
    """``seat_games`` plus each seat's deck's ``branch`` (its main branch; "unknown" for a
    deck missing from decks.parquet)."""
    table = branches.lazy().select("deck", "main_branch").collect()
    mapping = dict(table.iter_rows())
    return seat_games.with_columns(
        pl.col("deck").replace_strict(mapping, default="unknown", return_dtype=pl.String)
        .alias("branch")
    )


def branch_summary(seat_games_b: pl.LazyFrame, branches: pl.LazyFrame) -> pl.LazyFrame:
    """One row per main branch that some deck has: ``decks`` (how many), ``deck_names``
    (comma-separated), ``games`` (seat rows), ``wins``, ``draws``, ``win_rate = wins /
    games`` with its 95% Wilson interval. Branches whose decks played nothing have 0 games."""
    members = branches.group_by(pl.col("main_branch").alias("branch")).agg(
        pl.len().alias("decks"), pl.col("deck").sort().str.join(", ").alias("deck_names")
    )
    agg = seat_games_b.group_by("branch").agg(
        pl.len().alias("games"), pl.col("won").sum().alias("wins"), pl.col("draw").sum().alias("draws")
    )
    out = members.join(agg, on="branch", how="full", coalesce=True).with_columns(
        pl.col("deck_names").fill_null(""),
        *[pl.col(c).fill_null(0).cast(pl.Int64) for c in ("decks", "games", "wins", "draws")],
    )
    return with_rate(out, "win_rate", "wins", "games").sort("branch")
