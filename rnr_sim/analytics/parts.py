"""A run dir read part by part, in whole deals: what every reader of games and seats uses.

A run dir's ``games`` and ``seats`` tables are written in parts (one per chunk, in
game_id order, ``analytics.run.check_parts``). The analysis holds a few parts at most,
never the tables: ``deal_parts`` reads one games part and its seats part at a time (the
next one read ahead) and hands them
on cut at a deal boundary. The deal ``(table_id, deal)`` is the unit of every interval,
and a deal whose games a chunk cut goes on in the next part, so a part's last deal waits
for the next part; a run dir lists its games table by table and deal by deal
(``game_id = (table × deals + deal) × players + seat order``), which is checked.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from rnr_sim.errors import InputError

GAME_COLUMNS = ("game_id", "table_id", "deal", "n_players", "first_seat", "winner_seat",
                "path", "turns")
SEAT_COLUMNS = ("game_id", "seat", "deck", "policy", "won", "is_first", "p2_right",
                "opening_mask", "drawn_mask", "played_mask")


def read_part(path: Path, columns: Sequence[str]) -> pl.DataFrame:
    """One part of a run's ``games`` or ``seats`` table, in game order (seats: then seat)."""
    try:
        frame = pl.read_parquet(path, columns=list(columns))
    except Exception as e:  # a part check_parts passed, broken since: one line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{path}: unreadable parquet part ({first})") from None
    keys = ["game_id", "seat"] if "seat" in columns else ["game_id"]
    order = frame["game_id"] * 16 + frame["seat"] if "seat" in columns else frame["game_id"]
    if not order.is_sorted():  # as written, it is: sorting is then skipped (seats < 16)
        frame = frame.sort(keys, maintain_order=True)
    return frame


def deal_parts(parts: dict[str, list[Path]], game_columns: Sequence[str] = GAME_COLUMNS,
               seat_columns: Sequence[str] = SEAT_COLUMNS
               ) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(games, seats) part by part (``parts`` from ``check_parts``), each holding whole
    deals only: the last deal of a part is held back and handed on with the next part.
    InputError if the games are not listed deal by deal (a deal's games apart)."""
    game_columns = list(dict.fromkeys(["game_id", "table_id", "deal", *game_columns]))
    seat_columns = list(dict.fromkeys(["game_id", *seat_columns]))
    held: tuple[pl.DataFrame, pl.DataFrame] | None = None
    last: tuple[int, int] | None = None
    for g_path, (games, seats) in zip(parts["games"], _read_ahead(parts, game_columns,
                                                                  seat_columns), strict=True):
        last = _check_order(games, last, g_path)
        if held is not None:
            games = pl.concat([held[0], games], how="vertical_relaxed")
            seats = pl.concat([held[1], seats], how="vertical_relaxed")
        if games.height == 0:
            held = (games, seats)
            continue
        cut = _last_deal_start(games)
        first_held = int(games["game_id"][cut])
        s_cut = int(np.searchsorted(seats["game_id"].to_numpy(), first_held, side="left"))
        held = (games.slice(cut), seats.slice(s_cut))
        if cut:
            yield games.slice(0, cut), seats.slice(0, s_cut)
    if held is not None and held[0].height:
        yield held


def _read_ahead(parts: dict[str, list[Path]], game_columns: list[str],
                seat_columns: list[str]) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """Each part's (games, seats), the next one read in a second thread while this one
    is folded (parquet reading releases the GIL): two parts in memory at the most."""
    from concurrent.futures import ThreadPoolExecutor

    def read(i: int) -> tuple[pl.DataFrame, pl.DataFrame]:
        return (read_part(parts["games"][i], game_columns),
                read_part(parts["seats"][i], seat_columns))

    n = len(parts["games"])
    with ThreadPoolExecutor(1, thread_name_prefix="rnr-read") as pool:
        ahead = pool.submit(read, 0) if n else None
        for i in range(n):
            frames = ahead.result()
            ahead = pool.submit(read, i + 1) if i + 1 < n else None
            yield frames
            del frames


def _last_deal_start(games: pl.DataFrame) -> int:
    """The row where the part's last deal begins."""
    table = games["table_id"].to_numpy()
    deal = games["deal"].to_numpy()
    same = (table == table[-1]) & (deal == deal[-1])
    return int(len(same) - np.argmin(same[::-1])) if not same.all() else 0


def _check_order(games: pl.DataFrame, last: tuple[int, int] | None, where: Path
                 ) -> tuple[int, int] | None:
    """The games' (table, deal) never go back (within the part and from the part
    before): a deal's games are together. Returns the part's last (table, deal)."""
    if games.height == 0:
        return last
    table = games["table_id"].to_numpy().astype(np.int64)
    deal = games["deal"].to_numpy().astype(np.int64)
    if last is not None:
        table = np.r_[last[0], table]
        deal = np.r_[last[1], deal]
    back = (np.diff(table) < 0) | ((np.diff(table) == 0) & (np.diff(deal) < 0))
    if back.any():
        k = int(np.argmax(back)) + 1
        raise InputError(f"{where}: the games are not in deal order (table {table[k]}, deal "
                         f"{deal[k]} after table {table[k - 1]}, deal {deal[k - 1]}): a run "
                         "dir lists its games table by table; run it again")
    return int(table[-1]), int(deal[-1])
