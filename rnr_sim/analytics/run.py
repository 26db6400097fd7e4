"""Open a run dir (docs/design.md "Run dir") as lazy polars frames plus its manifest."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from rnr_sim.errors import InputError
from rnr_sim.runs.schema import DECKS_SCHEMA, GAMES_SCHEMA, SEATS_SCHEMA

GAMES_COLUMNS = tuple(GAMES_SCHEMA)
SEATS_COLUMNS = tuple(SEATS_SCHEMA)
DECKS_COLUMNS = tuple(DECKS_SCHEMA)
CARDS_COLUMNS = ("name", "type", "branch")
LP_COLUMNS = ("game_id", "table_id", "turn", "seat", "deck", "lp")


@dataclass(frozen=True)
class Run:
    """One run dir: its manifest and lazy frames over its parquet tables.

    ``games`` (one row per game), ``seats`` (one row per seat per game), ``decks`` (deck,
    slot, card), ``cards`` (the catalog) and, when the run traced games, ``lp_curves``.
    """

    path: Path
    manifest: dict[str, Any]
    games: pl.LazyFrame
    seats: pl.LazyFrame
    decks: pl.LazyFrame
    cards: pl.LazyFrame
    lp_curves: pl.LazyFrame | None = None
    parts: dict[str, list[Path]] | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return self.path.name

    def deal_parts(self, game_columns: tuple[str, ...] | None = None,
                   seat_columns: tuple[str, ...] | None = None
                   ) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
        """The run's games and seats part by part, in whole deals (``parts.deal_parts``;
        the columns given, else all the analysis reads): the only way the report reads
        them."""
        from rnr_sim.analytics import parts as p

        checked = self.parts if self.parts is not None else check_parts(self.path,
                                                                        self.manifest)
        return p.deal_parts(checked, game_columns or p.GAME_COLUMNS,
                            seat_columns or p.SEAT_COLUMNS)


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _chunk_names(run_dir: Path, manifest: dict[str, Any]) -> dict[str, int | None]:
    """The part names the manifest records as complete, each with its chunk number."""
    chunks = manifest.get("chunks")
    complete = chunks.get("complete") if isinstance(chunks, dict) else None
    if not isinstance(complete, list):
        raise InputError(f"{run_dir / 'manifest.json'}: no list of complete chunks "
                         "(chunks.complete); not a run dir written by `rnr-sim run`")
    names: dict[str, int | None] = {}
    for c in complete:
        if isinstance(c, int) and not isinstance(c, bool):
            names[f"part-{c:05d}.parquet"] = c
        else:
            names[Path(str(c)).name] = None
    return names


def _part_stats(part: Path) -> tuple[int, int | None, int | None]:
    """(rows, smallest game_id, largest game_id) of one parquet part, from its metadata
    and one column; InputError naming the part if it cannot be read."""
    try:
        row = pl.scan_parquet(part).select(
            pl.len(), pl.col("game_id").min().alias("lo"), pl.col("game_id").max().alias("hi")
        ).collect().row(0)
    except Exception as e:  # a truncated or foreign file is bad input, not a crash
        raise InputError(f"{part}: unreadable parquet part ({_first_line(e)}); remove it "
                         f"and re-play it with `rnr-sim run --resume {part.parent.parent}`"
                         ) from None
    return int(row[0]), row[1], row[2]


def check_parts(run_dir: str | Path, manifest: dict[str, Any]) -> dict[str, list[Path]]:
    """The run dir's ``games`` and ``seats`` parts, checked against its manifest.

    Every part of ``chunks.complete`` must be there in both folders, readable, and hold
    the games of its chunk (rows and ``game_id`` range, when the manifest records its
    ``chunk_size`` and ``games_total``); no other part may be there; the games add up to
    ``games_done``; and each file is the run's own (``rundir.verify_run_dir``: its
    identity, place and SHA-256). Any breach is an InputError naming the file (the report
    would otherwise publish figures over a different set of games). Returns table -> parts
    in chunk order.
    """
    run_dir = Path(run_dir)
    names = _chunk_names(run_dir, manifest)
    resume = f"`rnr-sim run --resume {run_dir}`"
    out: dict[str, list[Path]] = {}
    for table in ("games", "seats"):
        folder = run_dir / table
        if not folder.is_dir():
            raise InputError(f"{run_dir}: not a run dir (no {table}/ folder)")
        present = {p.name for p in folder.glob("*.parquet")}
        missing = sorted(set(names) - present)
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise InputError(f"{folder / missing[0]}: missing{more}: the manifest records "
                             f"this chunk as complete; re-play it with {resume}")
        extra = sorted(present - set(names))
        if extra:
            more = f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""
            raise InputError(f"{folder / extra[0]}: a part the manifest does not record "
                             f"(chunks.complete){more}; remove it, or finish the run with "
                             f"{resume}")
        if not names:
            raise InputError(f"{run_dir}: no complete chunk yet (no parquet in {table}/); "
                             f"finish the run with {resume}")
        out[table] = [folder / n for n in sorted(names, key=lambda n: (names[n] is None,
                                                                       names[n] or 0, n))]

    players = manifest.get("players")
    size, total = manifest.get("chunk_size"), manifest.get("games_total")
    exact = all(isinstance(x, int) and x > 0 for x in (size, total, players))
    games_seen = 0
    for g_part, s_part in zip(out["games"], out["seats"], strict=True):
        n_g, lo_g, hi_g = _part_stats(g_part)
        n_s, lo_s, hi_s = _part_stats(s_part)
        games_seen += n_g
        c = names[g_part.name]
        if exact and c is not None:
            start = c * size
            stop = min(start + size, total)
            want = (stop - start, start, stop - 1)
            if (n_g, lo_g, hi_g) != want:
                raise InputError(
                    f"{g_part}: holds {n_g:,} games (game_id {lo_g}..{hi_g}), but chunk {c} "
                    f"of this run is {want[0]:,} games (game_id {start}..{stop - 1}): the "
                    "part does not belong to this run dir; run it again")
            if (n_s, lo_s, hi_s) != (want[0] * players, start, stop - 1):
                raise InputError(
                    f"{s_part}: holds {n_s:,} seat rows (game_id {lo_s}..{hi_s}), but chunk "
                    f"{c} of this run is {want[0] * players:,} seat rows (game_id "
                    f"{start}..{stop - 1}): the part does not belong to this run dir; "
                    "run it again")
    done = manifest.get("games_done")
    if isinstance(done, int) and not isinstance(done, bool) and done != games_seen:
        raise InputError(f"{run_dir / 'games'}: the parts hold {games_seen:,} games, the "
                         f"manifest records {done:,} (games_done): the run dir was altered; "
                         "run it again")
    from rnr_sim.runs.rundir import verify_run_dir

    verify_run_dir(run_dir, manifest)  # by content: each part's identity and SHA-256
    return out


def run_progress(manifest: dict[str, Any]) -> tuple[int, int] | None:
    """(games played, games planned) of a stopped run; None for a complete run (or a
    manifest that does not say)."""
    done, total = manifest.get("games_done"), manifest.get("games_total")
    if not (isinstance(done, int) and isinstance(total, int)):
        return None
    if manifest.get("status") == "incomplete" or done < total:
        return done, total
    return None


def _check_columns(frame: pl.LazyFrame, needed: tuple[str, ...], where: Path) -> None:
    try:
        have = set(frame.collect_schema().names())
    except Exception as e:  # a broken parquet file is bad input, not a crash
        raise InputError(f"{where}: cannot read parquet ({_first_line(e)})") from None
    missing = [c for c in needed if c not in have]
    if missing:
        raise InputError(f"{where}: missing column(s) {', '.join(missing)}")


def load_run(run_dir: str | Path) -> Run:
    """Open ``run_dir`` lazily; raise InputError (one line) if it is not a readable run dir,
    or if its parquet parts do not match its manifest (``check_parts``)."""
    path = Path(run_dir)
    if not path.exists():
        raise InputError(f"{path}: no such run dir")
    if not path.is_dir():
        raise InputError(f"{path}: not a directory; a run dir holds manifest.json and parquet")
    manifest_path = path / "manifest.json"
    if not manifest_path.is_file():
        raise InputError(f"{path}: not a run dir (no manifest.json)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{manifest_path}: unreadable manifest ({e})") from None
    if not isinstance(manifest, dict):
        raise InputError(f"{manifest_path}: the manifest must be a JSON object")

    parts = check_parts(path, manifest)
    games = pl.scan_parquet(parts["games"])
    seats = pl.scan_parquet(parts["seats"])
    _check_columns(games, GAMES_COLUMNS, path / "games")
    _check_columns(seats, SEATS_COLUMNS, path / "seats")
    frames = {}
    for table, needed in (("decks", DECKS_COLUMNS), ("cards", CARDS_COLUMNS)):
        file = path / f"{table}.parquet"
        if not file.is_file():
            raise InputError(f"{path}: not a run dir (no {table}.parquet)")
        frames[table] = pl.scan_parquet(file)
        _check_columns(frames[table], needed, file)
    lp = None
    lp_file = path / "lp_curves.parquet"
    if lp_file.is_file():
        lp = pl.scan_parquet(lp_file)
        _check_columns(lp, LP_COLUMNS, lp_file)
    return Run(path, manifest, games, seats, frames["decks"], frames["cards"], lp, parts)


def seat_games(games: pl.LazyFrame, seats: pl.LazyFrame) -> pl.LazyFrame:
    """Seats joined with their game: one row per (game, seat).

    Columns: every seats column plus ``table_id``, ``n_players``, ``first_seat``,
    ``winner_seat``, ``path``, ``turns`` from games, and ``draw`` (bool: winner_seat == -1).
    """
    g = games.select(
        "game_id", "table_id", "n_players", "first_seat", "winner_seat", "path", "turns"
    )
    return seats.join(g, on="game_id", how="inner").with_columns(
        (pl.col("winner_seat") == -1).alias("draw")
    )
