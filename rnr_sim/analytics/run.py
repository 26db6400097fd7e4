"""Open a run dir (docs/design.md "Run dir") as lazy polars frames plus its manifest."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl

from rnr_sim.errors import InputError

GAMES_COLUMNS = (
    "game_id", "table_id", "deal", "n_players", "first_seat", "winner_seat", "path", "turns",
)
SEATS_COLUMNS = (
    "game_id", "seat", "deck", "policy", "won", "is_first", "final_lp", "uas_lost",
    "petitions", "scroll_pillars", "mulligan", "p2_right", "opening_mask", "drawn_mask",
    "played_mask",
)
DECKS_COLUMNS = ("deck", "slot", "card")
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
    materialized: bool = field(default=False, compare=False)

    @property
    def name(self) -> str:
        return self.path.name

    def materialize(self) -> Run:
        """The same run with games, seats, decks and cards read into memory once.

        The report evaluates many small pipelines over the same tables; reading each
        parquet file once and handing out ``.lazy()`` views of the frames keeps it fast.
        """
        if self.materialized:
            return self
        games, seats, decks, cards = pl.collect_all(
            [self.games, self.seats, self.decks, self.cards]
        )
        # runs are written in game order: flag it so joins on game_id can merge
        games, seats = _flag_sorted(games), _flag_sorted(seats)
        return replace(
            self,
            games=games.lazy(),
            seats=seats.lazy(),
            decks=decks.lazy(),
            cards=cards.lazy(),
            materialized=True,
        )


def _flag_sorted(frame: pl.DataFrame) -> pl.DataFrame:
    if frame.height and frame["game_id"].is_sorted():
        return frame.with_columns(pl.col("game_id").set_sorted())
    return frame


def _parts(run_dir: Path, table: str, manifest: dict[str, Any]) -> list[Path]:
    """The parquet parts of ``table``: the manifest's complete chunks if it lists them."""
    folder = run_dir / table
    if not folder.is_dir():
        raise InputError(f"{run_dir}: not a run dir (no {table}/ folder)")
    parts = sorted(folder.glob("*.parquet"))
    complete = (manifest.get("chunks") or {}).get("complete")
    if complete:
        names: set[str] = set()
        for c in complete:
            if isinstance(c, int):
                names.add(f"part-{c:05d}.parquet")
            else:
                names.add(Path(str(c)).name)
        listed = [p for p in parts if p.name in names]
        if listed:
            parts = listed
    if not parts:
        raise InputError(f"{run_dir}: no parquet files in {table}/")
    return parts


def _check_columns(frame: pl.LazyFrame, needed: tuple[str, ...], where: Path) -> None:
    try:
        have = set(frame.collect_schema().names())
    except Exception as e:  # a broken parquet file is bad input, not a crash
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{where}: cannot read parquet ({first})") from None
    missing = [c for c in needed if c not in have]
    if missing:
        raise InputError(f"{where}: missing column(s) {', '.join(missing)}")


def load_run(run_dir: str | Path) -> Run:
    """Open ``run_dir`` lazily; raise InputError (one line) if it is not a readable run dir."""
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

    games = pl.scan_parquet(_parts(path, "games", manifest))
    seats = pl.scan_parquet(_parts(path, "seats", manifest))
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
    return Run(path, manifest, games, seats, frames["decks"], frames["cards"], lp)


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
