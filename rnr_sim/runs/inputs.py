"""The per-game inputs of an engine call, as one named record (``GameInputs``): the outputs
are records too (``engine.records``: ``GAME_RECORD[n]``, ``SEAT_RECORD[n, P]``).

Game ``k`` of a call is row ``k`` of every field. The engine's kernels take the fields as
arrays of their own (``engine.driver.play_games``); everything above the engine passes the
record and calls ``play``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass(frozen=True)
class GameInputs:
    """Aligned arrays, one row a game: ``game_id`` int64[n] (its number in its run or
    matchups), ``seat_deck`` / ``seat_policy`` int32[n, P] (each seat's deck index and pilot
    row), ``table_id`` / ``deal`` int64[n] (what seeds its shuffles, with the run's seed),
    ``first_seat`` int32[n] (the seat that starts)."""

    game_id: np.ndarray
    seat_deck: np.ndarray
    seat_policy: np.ndarray
    table_id: np.ndarray
    deal: np.ndarray
    first_seat: np.ndarray

    @classmethod
    def at_tables(cls, tables: np.ndarray, deck_policy: np.ndarray, table: np.ndarray,
                  deal: np.ndarray, first_seat: np.ndarray, game_id: np.ndarray) -> GameInputs:
        """The games of tables ``tables[table]`` (deck indices a seat), each deck with its
        pilot row ``deck_policy[deck]``."""
        seat_deck = np.ascontiguousarray(tables[table])
        return cls(game_id, seat_deck, np.ascontiguousarray(deck_policy[seat_deck]), table,
                   deal, first_seat.astype(np.int32))

    def __len__(self) -> int:
        return len(self.deal)

    def __getitem__(self, rows) -> GameInputs:
        """The games at ``rows`` (a slice or indices), each field contiguous."""
        return GameInputs(*(np.ascontiguousarray(getattr(self, f.name)[rows])
                            for f in fields(self)))

    def play(self, driver, cards, deck_cards, deck_size, rules, seed: int, **options):
        """These games on the engine (``driver.play_games``; ``options``: threads,
        policies, search): their records."""
        return driver.play_games(cards, deck_cards, deck_size, self.seat_deck, self.seat_policy,
                                 self.table_id, self.deal, self.first_seat, rules, seed,
                                 **options)
