"""What a run can hold, and what it will take: sizes checked before anything is written,
and a full disk answered in one line (docs/design.md, "Run dir").

- **Coordinates.** A game is numbered ``game_id = (table * games + deal) * players +
  rotation`` in an int64 (the run dir's ``game_id`` and ``deal`` columns), so a run holds
  at most ``2**63 - 1`` games: ``check_shape`` refuses more, naming the most deals per
  table that fit.
- **Chunks.** The manifest lists every chunk done and each part's SHA-256 and is
  rewritten after each chunk, so a run has at most ``MAX_CHUNKS`` chunks (about 25 MB of
  manifest); more asks for a larger ``--chunk-size``.
- **Disk.** ``check_space`` refuses a run whose parquet would not fit in the free space
  of its file system, with the estimate, unless the user says to go on anyway
  (``--no-space-check``). The estimate is ``bytes_per_game`` (measured, docs/benchmarks.md).
- **A full disk** while writing is ``DiskFull``: one line saying how much more space the
  rest of the run needs (``disk_full_message``).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

from rnr_sim.errors import InputError
from rnr_sim.files import DiskFull

#: The most games a run can number (game_id is an int64).
GAME_ID_MAX = 2**63 - 1
#: The most chunks of a run (its manifest is rewritten after each one).
MAX_CHUNKS = 100_000
#: Parquet bytes a game takes in a run dir (games + seats parts), a + b x players:
#: measured on the sample decks at 2, 3 and 4 players (38.3, 48.6, 59.2 bytes a game,
#: docs/benchmarks.md), rounded up.
BYTES_FIXED, BYTES_PER_SEAT = 18, 11
SPACE_FLAG = "--no-space-check"


def format_bytes(n: float) -> str:
    """``n`` bytes in words: 512 B, 3.4 MB, 66 TB (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" or n >= 100 else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.0f} PB"  # pragma: no cover


def bytes_per_game(players: int) -> int:
    """The estimated parquet bytes of one game of ``players`` seats."""
    return BYTES_FIXED + BYTES_PER_SEAT * players


def most_deals(n_tables: int, players: int) -> int:
    """The most deals per table a run of ``n_tables`` tables can number."""
    return GAME_ID_MAX // (n_tables * players)


def check_shape(n_tables: int, games: int, players: int, flag: str = "--games") -> None:
    """Refuse a run whose games do not fit its coordinates (a 64-bit ``game_id``)."""
    total = n_tables * games * players
    if total > GAME_ID_MAX:
        raise InputError(
            f"{flag} {games:,}: {n_tables:,} tables x {games:,} deals x {players} seat orders "
            f"is {total:.3g} games, more than a run can number (game_id is a 64-bit "
            f"integer); give at most {most_deals(n_tables, players):,} deals per table")


def check_chunks(total: int, chunk_size: int) -> None:
    """Refuse a run of ``total`` games cut into more than ``MAX_CHUNKS`` chunks."""
    chunks = -(-total // chunk_size)
    if chunks > MAX_CHUNKS:
        least = -(-total // MAX_CHUNKS)
        raise InputError(
            f"--chunk-size {chunk_size:,}: {total:,} games make {chunks:,} chunks, more than "
            f"the {MAX_CHUNKS:,} a run dir keeps track of; give --chunk-size {least:,} or "
            "more")


def check_deal(deal: int, players: int, flag: str = "--game") -> None:
    """Refuse a deal (``replay --game K``) that no run could number."""
    top = GAME_ID_MAX // players - 1
    if isinstance(deal, bool) or not 0 <= deal <= top:
        raise InputError(f"{flag} must be a whole number 0..{top:,} (a run numbers its "
                         f"games in 64 bits), not {deal}")


def free_bytes(path: Path) -> int | None:
    """Free bytes of the file system holding ``path`` (or its nearest existing parent)."""
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p).free
    except OSError:
        return None


def check_space(out: Path, games: int, players: int) -> None:
    """Refuse a run of ``games`` games into ``out`` whose estimated parquet is more than
    the free space there (``--no-space-check`` skips this)."""
    need = games * bytes_per_game(players)
    free = free_bytes(out)
    if free is not None and need > free:
        raise InputError(
            f"--out {out}: the run's {games:,} games would take about {format_bytes(need)} "
            f"({bytes_per_game(players)} bytes a game) and {format_bytes(free)} are free "
            f"there; play fewer games, choose an --out with room, or pass {SPACE_FLAG} to "
            "start anyway")


def disk_full_message(error: DiskFull, run_dir: Path, games_left: int,
                      per_game: float, games_done: int, resume: str) -> str:
    """The one line of a full disk: the space the rest of the run needs and what to do."""
    need = math.ceil(games_left * per_game) + (1 << 20)  # the manifest and a margin
    free = free_bytes(run_dir) or 0
    todo = (f"free at least {format_bytes(need - free)} more and continue" if need > free
            else "continue")
    return (f"{error.path}: no space left on the device ({error.reason}); the rest of the "
            f"run ({games_left:,} games) needs about {format_bytes(need)} and "
            f"{format_bytes(free)} are free: {todo} with `{resume}` (the run dir keeps the "
            f"{games_done:,} games done)")
