"""Branches: decks grouped by their main branch (the branch with most cards in the deck)."""

from __future__ import annotations

import polars as pl

from rnr_sim.analytics.stats import ratio_by_deal
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
    """One row per main branch that some deck has, its win rate against other branches.

    ``decks`` (how many), ``deck_names`` (comma-separated); over the branch's seat rows in
    games where no other seat plays a deck of the same main branch: ``games``, ``wins``,
    ``draws``, ``win_rate = wins / games`` with its 95% interval ``win_rate_lo``/``_hi``
    and design effect ``win_rate_deff`` (``stats.ratio_by_deal``: the deal as the unit;
    the rows need ``table_id`` and ``deal``). ``same_branch_games``: the seat rows left
    out -- a game between two decks of one branch gives that branch exactly one win per
    game (less draws) by construction, which would pull its rate toward 1 / players.
    Branches whose decks played nothing have 0 games."""
    members = branch_members(branches)
    rows = seat_games_b.with_columns(
        (pl.len().over("game_id", "branch") > 1).alias("_same_branch"))
    field = rows.filter(~pl.col("_same_branch"))
    agg = field.group_by("branch").agg(
        pl.len().alias("games"), pl.col("won").sum().alias("wins"), pl.col("draw").sum().alias("draws")
    )
    same = rows.filter(pl.col("_same_branch")).group_by("branch").agg(
        pl.len().alias("same_branch_games"))
    wr = ratio_by_deal(field, "won", pl.lit(1), by=["branch"], name="win_rate")
    return branch_table(members, agg, same, wr)


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
