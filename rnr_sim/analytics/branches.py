"""Branches: decks grouped by their main branch (the branch with most cards in the deck)."""

from __future__ import annotations

import polars as pl

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


def branch_table(members: pl.LazyFrame, agg: pl.LazyFrame, same: pl.LazyFrame,
                 win_rate: pl.LazyFrame) -> pl.LazyFrame:
    """``branch_summary``'s table from its parts: per branch its ``members`` (decks,
    deck_names), ``agg`` (games, wins, draws against other branches), ``same``
    (same_branch_games) and the win rate's interval (``ratio_by_deal``)."""
    counts = ("decks", "games", "wins", "draws", "same_branch_games")
    wr = win_rate.select("branch", "win_rate", "win_rate_lo", "win_rate_hi", "win_rate_deff")
    out = (
        members.join(agg, on="branch", how="full", coalesce=True)
        .join(same, on="branch", how="left")
        .with_columns(
            pl.col("deck_names").fill_null(""),
            *[pl.col(c).fill_null(0).cast(pl.Int64) for c in counts],
        )
        .join(wr, on="branch", how="left")
    )
    return out.sort("branch")


def branch_members(branches: pl.LazyFrame | pl.DataFrame) -> pl.LazyFrame:
    """Per main branch: ``decks`` (how many) and ``deck_names`` (sorted, comma-separated)."""
    return branches.lazy().group_by(pl.col("main_branch").alias("branch")).agg(
        pl.len().alias("decks"), pl.col("deck").sort().str.join(", ").alias("deck_names")
    )
