"""The run dir's tables: their columns and dtypes (the contract of docs/design.md, "Run
dir"), defined once for the runner that writes them, the analytics that read them and
compare."""

from __future__ import annotations

import polars as pl

from rnr_sim import enums

GAMES_SCHEMA: dict[str, pl.DataType] = {
    "game_id": pl.Int64,
    "table_id": pl.Int32,
    "deal": pl.Int64,
    "n_players": pl.Int8,
    "first_seat": pl.Int8,
    "winner_seat": pl.Int8,
    "path": pl.String,
    "turns": pl.Int32,
}
SEATS_SCHEMA: dict[str, pl.DataType] = {
    "game_id": pl.Int64,
    "seat": pl.Int8,
    "deck": pl.String,
    "policy": pl.String,
    "won": pl.Boolean,
    "is_first": pl.Boolean,
    "final_lp": pl.Int32,
    "uas_lost": pl.Int8,
    "petitions": pl.Int8,
    "scroll_pillars": pl.Int8,
    "mulligan": pl.Boolean,
    "p2_right": pl.Boolean,
    "opening_mask": pl.UInt64,
    "drawn_mask": pl.UInt64,
    "played_mask": pl.UInt64,
}
DECKS_SCHEMA: dict[str, pl.DataType] = {"deck": pl.String, "slot": pl.Int16, "card": pl.String}
#: The victory paths a win can take (``draw`` is no one's win).
WIN_PATHS = tuple(p for p in enums.PATHS if p != "draw")
