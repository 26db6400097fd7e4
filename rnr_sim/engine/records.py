"""The engine's output records: one aligned structured dtype per game and per seat, written
by field name in the batch kernel and turned into frames once, at the boundary
(``driver.play_games`` -> ``GameRecords`` -> ``execution.chunk_frames``).

A new output is one field here plus the line of the batch kernel that writes it.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

#: One row per game.
GAME_RECORD = np.dtype([
    ("winner_seat", np.int8),  # -1 for a draw (R15)
    ("path", np.int8),  # enums.PATHS index
    ("turns", np.int32),  # all seats' turns counted
    ("violations", np.int32),  # broken invariants (debug mode only)
], align=True)

#: One row per seat of a game.
SEAT_RECORD = np.dtype([
    ("final_lp", np.int32),
    ("uas_lost", np.int8),
    ("petitions", np.int8),
    ("scroll_pillars", np.int8),
    ("mulligan", np.bool_),
    ("p2_right", np.bool_),
    ("opening_mask", np.uint64),  # bit k: deck slot k in the final opening hand
    ("drawn_mask", np.uint64),  # reached the hand during the game by any route
    ("played_mask", np.uint64),  # played or put in play
], align=True)


def new_records(n_games: int, n_players: int) -> tuple[np.ndarray, np.ndarray]:
    """Zeroed records: (games GAME_RECORD[n], seats SEAT_RECORD[n, P])."""
    return np.zeros(n_games, dtype=GAME_RECORD), np.zeros((n_games, n_players), dtype=SEAT_RECORD)


#: A batch's records, one array per field: the game fields [n], the seat fields [n, P].
GameRecords = namedtuple("GameRecords", GAME_RECORD.names + SEAT_RECORD.names)


def game_records(game_rec: np.ndarray, seat_rec: np.ndarray) -> GameRecords:
    """The record arrays (``GAME_RECORD[n]``, ``SEAT_RECORD[n, P]``) as ``GameRecords``: one
    contiguous array per field, named as the run dir's columns."""
    fields = {name: np.ascontiguousarray(game_rec[name]) for name in GAME_RECORD.names}
    fields.update({name: np.ascontiguousarray(seat_rec[name]) for name in SEAT_RECORD.names})
    return GameRecords(**fields)
