"""What an expansion does to the metagame: ``rnr-sim expansion``.

An expansion only adds cards (and may carry errata to earlier cards); the old decks' lists
do not change. So "before" and "after" differ in two ways only: new decks join the field,
and errata change cards the old decks hold. The comparison is therefore:

- **before**: the old decks against each other only (the games of tables whose seats are
  all old decks), with the base catalog's cards;
- **after**: every game of the old decks in the grown field (old and new decks), with the
  layered catalog (base + expansion).

Both sides come from runs of *all* the decks (old first, then new) with the same seed:
``table_id`` is the index of a table in the lexicographic list of deck-index tuples
(``planning.make_tables``) and every game is a pure function of (seed, table_id, deal, seat
order) and the engine inputs, so an old-vs-old table has the same id and the same deals in
both runs. Without errata on the old decks' cards the two sides are one run (the before
games are the after run's old-vs-old games themselves). With errata, a second run plays
the same decks with the expansion's new cards but without its errata (``strip_errata``),
and its old-vs-old games are the before side: the same tables, deals and seat orders,
differing only by the errata.

Every interval takes the *deal index* as the unit: deal d of every table is one unit (the
tables' deals are independent streams, so units are independent and identically
distributed), and each figure's per-deal values are paired across before and after.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from rnr_sim.analytics.stats import Z95
from rnr_sim.errors import InputError
from rnr_sim.files import make_dir
from rnr_sim.runs import manifests, outdir, planning, runner
from rnr_sim.runs.arguments import check_count
from rnr_sim.runs.execution import log_to_stderr

SUMMARY = "expansion.json"
BEFORE_CATALOG = "before-catalog.toml"
#: a TOML table header: ``[x]`` or ``[[x]]``; an errata one starts with ``errata``.
_HEADER = re.compile(r"^[ \t]*\[")
_ERRATA = re.compile(r"^[ \t]*\[\[?[ \t]*errata[ \t]*[.\]]")
_BASE = re.compile(r"^[ \t]*base[ \t]*=", re.MULTILINE)


@dataclass
class ExpansionOptions:
    """What ``rnr-sim expansion`` was asked for. ``cards``: the base catalog files (None:
    the expansion's own ``base`` chain)."""

    base_decks: Sequence[str | Path]
    expansion: str | Path
    new_decks: Sequence[str | Path] = ()
    cards: Sequence[str | Path] | None = None
    games: int = planning.DEFAULT_GAMES
    players: int = 2
    seed: int = planning.DEFAULT_SEED
    policy: str | None = None
    threads: int | None = None
    out: str | Path | None = None
    chunk_size: int = planning.DEFAULT_CHUNK_SIZE
    command: str | None = None


@dataclass
class Catalogs:
    """The base catalog, the layered one, and what the expansion changes."""

    before_paths: list[Path]
    after_paths: list[Path]
    before: Any  # rnr_sim.cards.Catalog
    after: Any
    set_name: str
    new_cards: list[str]
    errata: list[str]  # names of earlier cards the expansion changes


@dataclass
class ExpansionResult:
    out: Path
    after_dir: Path
    before_dir: Path  # == after_dir when no errata touch the old decks
    catalogs: Catalogs
    old_decks: list[str]
    new_decks: list[str]
    errata_used: dict[str, list[str]]  # old deck -> the errata'd cards it holds
    timings: dict[str, float] = field(default_factory=dict)
    interrupted: bool = False


# ---------------------------------------------------------------------------- catalogs


def resolve_catalogs(expansion: str | Path, cards: Sequence[str | Path] | None) -> Catalogs:
    """Load the base catalog and base + expansion, and check that the expansion layers
    over exactly that base (raises ``InputError``, one line)."""
    from rnr_sim.cards import load_catalog

    exp = Path(expansion)
    if cards:
        before_paths = [Path(c) for c in cards]
        before = load_catalog(before_paths)
        _check_base_chain(exp, before, before_paths)
        after = load_catalog([*before_paths, exp])
    else:
        after = load_catalog([exp])
        before_paths = [s.path for s in after.sources[:-1] if s.path is not None]
        if not before_paths:
            raise InputError(f"{exp}: has no base = \"...\" key, so there is nothing it "
                             "expands: give the base catalog with --cards BASE.toml")
        before = load_catalog(before_paths)
    base_sha = [s.sha256 for s in before.sources]
    under = [s.sha256 for s in after.sources[:-1]]
    top = after.sources[-1]
    if top.path is None or top.path.resolve() != exp.resolve() or under != base_sha:
        extra = [str(s.path) for s in after.sources[:-1] if s.sha256 not in base_sha]
        given = ", ".join(str(p) for p in before_paths)
        why = (f"its base chain brings in {', '.join(extra)}" if extra
               else "it is one of the base files or is loaded by them")
        raise InputError(f"{exp}: does not layer over the base catalog ({given}): {why}; "
                         "give --cards with the catalog the expansion names in its base key")
    n = len(before)
    errata = [after.cards[i].name for i in range(n)
              if after.cards[i].errata != before.cards[i].errata]
    new_cards = [c.name for c in after.cards[n:]]
    if not new_cards and not errata:
        raise InputError(f"{exp}: adds no cards and no errata to the base catalog: nothing "
                         "to compare")
    set_name = after.source_sets[-1][0] if after.source_sets else after.name
    return Catalogs(before_paths, [*before_paths, exp], before, after, set_name, new_cards,
                    errata)


def _check_base_chain(exp: Path, before, before_paths: list[Path]) -> None:
    """An expansion whose ``base`` key names files must name files of the given base."""
    import tomllib

    from rnr_sim.cards import load_catalog

    try:
        data = tomllib.loads(exp.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return  # load_catalog reports it, with its line
    if "base" not in data:
        return
    chain = load_catalog([exp]).sources[:-1]
    base_sha = {s.sha256 for s in before.sources}
    extra = [str(s.path) for s in chain if s.sha256 not in base_sha]
    if extra:
        given = ", ".join(str(p) for p in before_paths)
        raise InputError(f"{exp}: does not layer over the base catalog ({given}): its base "
                         f"key brings in {', '.join(extra)}; give that catalog with --cards, "
                         "or leave --cards out to use the expansion's own base")


def strip_errata(text: str) -> str:
    """The catalog TOML ``text`` without its ``[errata."..."]`` tables (and their
    sub-tables) and without its ``base`` key: the expansion's new cards only, to be loaded
    after its base files are given explicitly."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if _HEADER.match(line):
            skipping = bool(_ERRATA.match(line))
        if skipping:
            continue
        out.append(line)
    return _BASE.sub("# base =", "".join(out))


# ---------------------------------------------------------------------------- the runs


def _load_old_decks(paths: list[Path], cats: Catalogs) -> list:
    """The old decks, read with the base catalog: a deck that names an expansion card is
    not an old deck."""
    from rnr_sim.decks import load_deck

    decks = []
    for p in paths:
        try:
            decks.append(load_deck(p, cats.before))
        except InputError as e:
            try:
                load_deck(p, cats.after)
            except InputError:
                raise e from None
            raise InputError(f"{p}: uses cards of the expansion ({cats.set_name}), so it "
                             "is not a deck of the base field: pass it after --decks") from None
    return decks


def run_expansion(options: ExpansionOptions, progress: bool = True,
                  log: Callable[[str], None] = log_to_stderr) -> ExpansionResult:
    """Check the inputs, then play the after run (and the before run when errata touch
    the old decks' cards) into ``out/after`` (and ``out/before``). Raises InputError."""
    from rnr_sim.decks import load_deck

    t0 = time.perf_counter()
    check_count(options.games, "--games", 2)
    check_count(options.players, "--players", 2)
    out = Path(options.out) if options.out is not None else outdir.default_out("expansion-")
    outdir.check_out(out)
    cats = resolve_catalogs(options.expansion, options.cards)
    old_paths = [Path(p) for p in options.base_decks]
    new_paths = [Path(p) for p in options.new_decks]
    if not old_paths:
        raise InputError("no base decks: give the decks of the field before the expansion, "
                         "e.g. rnr-sim expansion decks/*.txt --with exp.toml")
    old = _load_old_decks(old_paths, cats)
    new = [load_deck(p, cats.after) for p in new_paths]
    errata_ids = {cats.after.lookup(n) for n in cats.errata}
    errata_used = {d.name: sorted({cats.after.cards[int(i)].name for i in d.card_ids
                                   if int(i) in errata_ids}) for d in old}
    errata_used = {k: v for k, v in errata_used.items() if v}
    if not new and not errata_used:
        raise InputError(f"{options.expansion}: changes no card the base decks hold and no "
                         "--decks were given: the old field plays the same games before "
                         "and after; add the expansion's decks with --decks NEW.txt ...")
    if len(old) < options.players:
        raise InputError(f"{len(old)} base deck{'s' if len(old) != 1 else ''}: the before "
                         f"field needs at least {options.players} (one table)")

    make_dir(out, "expansion dir")
    decks = [*old_paths, *new_paths]

    def run(cards: list[Path], where: Path):
        return runner.start_run(planning.RunOptions(
            decks=decks, games=options.games, players=options.players, seed=options.seed,
            cards=cards, policy=options.policy, threads=options.threads, out=where,
            chunk_size=options.chunk_size, command=options.command), progress=progress,
            log=log)

    try:
        after = run(cats.after_paths, out / "after")
        before_dir = after.run_dir
        interrupted = after.interrupted
        if errata_used and not interrupted:
            stripped = out / BEFORE_CATALOG
            text = Path(options.expansion).read_text(encoding="utf-8")
            stripped.write_text(strip_errata(text), encoding="utf-8")
            before = run([*cats.before_paths, stripped], out / "before")
            before_dir = before.run_dir
            interrupted = before.interrupted
    except InputError:
        shutil.rmtree(out, ignore_errors=True)
        raise
    return ExpansionResult(
        out=out, after_dir=after.run_dir, before_dir=before_dir, catalogs=cats,
        old_decks=[d.name for d in old], new_decks=[d.name for d in new],
        errata_used=errata_used, timings={"play_s": round(time.perf_counter() - t0, 3)},
        interrupted=interrupted)


# ---------------------------------------------------------------------------- metrics


def _parts(run_dir: str | Path) -> dict[str, list[Path]]:
    d = Path(run_dir)
    names = manifests.complete_parts(d)
    return {t: [d / t / n for n in names] for t in ("games", "seats")}


def seat_rows(games: pl.DataFrame, seats: pl.DataFrame, old_decks: Sequence[str]
              ) -> pl.DataFrame:
    """One row per seat of a part of whole deals (``analytics.parts.deal_parts``): deck,
    won, table_id, deal, path, and ``all_old`` (every seat of the game is an old deck)
    and ``new_seats`` (how many seats of the game are new decks)."""
    rows = seats.select("game_id", "deck", "won").with_columns(
        pl.col("deck").is_in(list(old_decks)).alias("_old"))
    rows = rows.with_columns(
        pl.col("_old").all().over("game_id").alias("all_old"),
        (~pl.col("_old")).sum().over("game_id").alias("new_seats"),
    ).drop("_old")
    return rows.join(games.select("game_id", "table_id", "deal", "path"), on="game_id",
                     how="left")


def deal_rates(rows: pl.LazyFrame | pl.DataFrame, num: pl.Expr, by: Sequence[str]
               ) -> pl.LazyFrame:
    """Per (``by``, deal index): ``y = Σ num`` and ``n`` = rows, over every table."""
    return rows.lazy().group_by(*by, "deal").agg(num.cast(pl.Float64).sum().alias("y"),
                                                pl.len().cast(pl.Float64).alias("n"))


def _game_paths(rows: pl.DataFrame) -> pl.DataFrame:
    """Per (deal index, path): the games (``path_changes``)."""
    return rows.unique("game_id").group_by("deal", "path").agg(
        pl.len().cast(pl.Float64).alias("y"))


def read_sums(run_dir: str | Path, old_decks: Sequence[str], new_decks: Sequence[str],
              before: bool = True, after: bool = True,
              new_cards: Sequence[str] = ()) -> dict[str, Any]:
    """The per-deal sums the summary reads from one run dir, read part by part.

    Before side (``before``): ``before_decks`` (per old deck and deal index, its wins ``y``
    and games ``n`` among old-vs-old games) and ``before_paths`` (per deal index and path,
    the old-vs-old games). After side (``after``): ``after_decks`` (every game of the old
    decks), ``after_paths`` (every game), and per (table, deal) moments
    (``stats.deal_moments``) of the new decks' wins: ``vs_old`` (games where the deck is the
    only new deck), ``field`` (every game), ``matchups`` (per opponent); and the card sums
    of ``new_cards`` (``analytics.card_sums.CardFold``: a second read of the parts).
    """
    from rnr_sim.analytics.card_sums import CardFold
    from rnr_sim.analytics.cards import card_masks, seat_units
    from rnr_sim.analytics.fold import SECOND_SEAT_COLUMNS, add_frames
    from rnr_sim.analytics.parts import deal_parts
    from rnr_sim.analytics.stats import deal_moments, deal_sums

    d = Path(run_dir)
    parts = _parts(d)
    won, new = pl.col("won"), list(new_decks)
    out: dict[str, Any] = {}

    def moments(rows: pl.DataFrame, by: list[str]) -> pl.DataFrame:
        return deal_moments(deal_sums(rows, "won", pl.lit(1), by), by).collect()

    masks = card_masks(pl.scan_parquet(d / "decks.parquet"))
    masks = masks.filter(pl.col("card").is_in(list(new_cards)))
    cards = CardFold(masks) if after and masks.height else None
    for games, seats in deal_parts(parts, seat_columns=SECOND_SEAT_COLUMNS):
        rows = seat_rows(games, seats, old_decks)
        if before:
            old_games = rows.filter(pl.col("all_old"))
            out["before_decks"] = add_frames(out.get("before_decks"), deal_rates(
                old_games, won, ["deck"]).collect(), ["deck", "deal"])
            out["before_paths"] = add_frames(out.get("before_paths"), _game_paths(old_games),
                                       ["deal", "path"])
        if after:
            out["after_decks"] = add_frames(out.get("after_decks"), deal_rates(
                rows.filter(pl.col("deck").is_in(list(old_decks))), won, ["deck"]).collect(),
                ["deck", "deal"])
            out["after_paths"] = add_frames(out.get("after_paths"), _game_paths(rows),
                                      ["deal", "path"])
            mine = rows.filter(pl.col("deck").is_in(new))
            opp = rows.select("game_id", pl.col("deck").alias("opponent"))
            pairs = mine.filter(pl.col("new_seats") == 1).join(opp, on="game_id").filter(
                pl.col("opponent") != pl.col("deck"))
            for key, frame, by in (("vs_old", mine.filter(pl.col("new_seats") == 1), ["deck"]),
                                   ("field", mine, ["deck"]),
                                   ("matchups", pairs, ["deck", "opponent"])):
                out[key] = add_frames(out.get(key), moments(frame, by), [*by, "table_id"])
            if cards is not None:
                cards.add_counts(seat_units(games.lazy(), seats.lazy()))
    if cards is not None:
        cards.finish_counts()
        for games, seats in deal_parts(parts, seat_columns=SECOND_SEAT_COLUMNS):
            cards.add_deals(seat_units(games.lazy(), seats.lazy()))
    out["cards"] = cards
    return out


def _paths_per_deal(counts: pl.DataFrame | None) -> pl.LazyFrame:
    """Per deal index and path of the side: ``n`` (the deal's games) and ``y`` (those won
    by the path; 0 where none was), from per (deal, path) game counts."""
    if counts is None or counts.is_empty():
        return pl.LazyFrame(schema={"deal": pl.Int64, "n": pl.Float64, "path": pl.String,
                                    "y": pl.Float64})
    n = counts.group_by("deal").agg(pl.col("y").sum().alias("n"))
    grid = n.join(counts.select(pl.col("path").unique()), how="cross")
    return grid.join(counts, on=["deal", "path"], how="left").with_columns(
        pl.col("y").fill_null(0.0)).lazy()


def paired_change(before: pl.LazyFrame, after: pl.LazyFrame, by: Sequence[str],
                  z: float = Z95) -> pl.DataFrame:
    """Before, after and the paired change of a rate, the deal index as the unit.

    Input: per (``by``, deal) sums ``y``, ``n`` on each side (``deal_rates``). Per group:
    ``before = Σ y_b / Σ n_b``, ``after = Σ y_a / Σ n_a``; the change's per-deal values
    ``c_d = y_a,d / n_a,d - y_b,d / n_b,d`` over the deals both sides have (a deal missing
    on one side counts 0 there); ``delta`` = their mean (= after - before when every deal
    has the same n on each side, as in a run); ``delta_lo``/``delta_hi`` = ``delta ± z
    s_c / sqrt(D)``, s_c the sample standard deviation of ``c_d`` over the D deals.
    """
    keys = list(by)
    b = before.rename({"y": "y_b", "n": "n_b"})
    a = after.rename({"y": "y_a", "n": "n_a"})
    j = a.join(b, on=[*keys, "deal"], how="full", coalesce=True).with_columns(
        pl.col("y_a", "n_a", "y_b", "n_b").fill_null(0.0))
    rb = pl.when(pl.col("n_b") > 0).then(pl.col("y_b") / pl.col("n_b")).otherwise(0.0)
    ra = pl.when(pl.col("n_a") > 0).then(pl.col("y_a") / pl.col("n_a")).otherwise(0.0)
    j = j.with_columns((ra - rb).alias("c"))
    agg = [(pl.col("y_b").sum() / pl.col("n_b").sum()).alias("before"),
           (pl.col("y_a").sum() / pl.col("n_a").sum()).alias("after"),
           pl.col("c").mean().alias("delta"), pl.col("c").std(ddof=1).alias("_s"),
           pl.len().alias("deals"), pl.col("n_b").sum().cast(pl.Int64).alias("games_before"),
           pl.col("n_a").sum().cast(pl.Int64).alias("games_after")]
    out = (j.group_by(keys).agg(agg) if keys else j.select(agg)).with_columns(
        (z * pl.col("_s").fill_null(math.inf) / pl.col("deals").sqrt()).alias("_h"))
    out = out.with_columns((pl.col("delta") - pl.col("_h")).alias("delta_lo"),
                           (pl.col("delta") + pl.col("_h")).alias("delta_hi")).drop("_s", "_h")
    return out.collect()


def old_deck_changes(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """Each old deck's win share before vs after the expansion, paired per deal.

    ``before``: the deck's wins / its games among the before run's old-vs-old games
    (every seat an old deck). ``after``: its wins / its games in the after run, every
    game (against old and new decks). ``delta = after - before`` with its paired per-deal
    interval (``paired_change``): a deck "gains" when the interval is above 0, "loses"
    when below. Inputs: per (deck, deal index) sums (``read_sums``).
    """
    return _verdict(paired_change(before.lazy(), after.lazy(), ["deck"])).sort(
        "delta", descending=True)


def _verdict(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.when(pl.col("delta_lo") > 0).then(pl.lit("gains"))
        .when(pl.col("delta_hi") < 0).then(pl.lit("loses"))
        .otherwise(pl.lit("no clear change")).alias("verdict"))


def new_deck_rates(sums: dict[str, Any], new_decks: Sequence[str]) -> pl.DataFrame:
    """Each new deck's win share against the old field: wins / games over the after run's
    games where it is the only new deck at the table, with its 95% interval from
    ``stats.ratio_by_deal`` (the deal as the unit, tables as strata: here from the
    per-deal moments of ``read_sums``); and its win share in the whole after field
    (``field``, every game it played)."""
    from rnr_sim.analytics.stats import ratio_from_moments

    if not list(new_decks):
        return pl.DataFrame(schema={"deck": pl.String, "vs_old": pl.Float64})
    vs_old = ratio_from_moments(sums["vs_old"].lazy(), ["deck"], name="vs_old").collect()
    whole = ratio_from_moments(sums["field"].lazy(), ["deck"], name="field").collect()
    return vs_old.join(whole.select("deck", "field", "field_lo", "field_hi"), on="deck",
                       how="left").sort("vs_old", descending=True)


def new_deck_matchups(sums: dict[str, Any]) -> pl.DataFrame:
    """Two-player games only: each new deck's win share against each old deck, with its
    ``ratio_by_deal`` interval (rows: deck, opponent, rate, rate_lo, rate_hi)."""
    from rnr_sim.analytics.stats import ratio_from_moments

    return ratio_from_moments(sums["matchups"].lazy(), ["deck", "opponent"], name="rate"
                              ).collect().sort("deck", "opponent")


def path_changes(before: pl.DataFrame | None, after: pl.DataFrame | None) -> pl.DataFrame:
    """Each victory path's share of the games before (the old-vs-old games) and after
    (every game of the after run), paired per deal (``paired_change``). ``draw`` is a
    path here: the shares of a side add up to 1. Inputs: per (deal index, path) game
    counts (``read_sums``)."""
    return paired_change(_paths_per_deal(before), _paths_per_deal(after), ["path"]).sort(
        "after", descending=True)


def expansion_cards(after_dir: str | Path, cards, new_cards: Sequence[str]) -> pl.DataFrame:
    """The expansion's cards that the after run's decks hold, with the card metrics of
    ``analytics.cards`` over the after run (``play_rate`` = games played / games the deck
    held it, ``iwd_adjusted`` the headline metric) and their ranks by each (1 = highest).
    ``cards``: their sums (``read_sums``), None when no deck holds one."""
    from rnr_sim.analytics.cards import card_metrics

    if cards is None:
        return pl.DataFrame(schema={"card": pl.String, "play_rate": pl.Float64,
                                    "iwd_adjusted": pl.Float64})
    d = Path(after_dir)
    adj, _ = cards.adjusted()
    ints, _ = cards.intervals()
    cm = card_metrics(cards.counts(), ("card",), adjusted=adj, intervals=ints)
    meta = pl.read_parquet(d / "cards.parquet").select(
        pl.col("name").alias("card"), *[c for c in ("set", "type", "branch")
                                        if c in pl.read_parquet_schema(d / "cards.parquet")])
    cm = cm.join(meta, on="card", how="left")
    return cm.with_columns(
        pl.col("play_rate").rank("min", descending=True).cast(pl.Int32).alias("play_rank"),
        pl.col("iwd_adjusted").rank("min", descending=True).cast(pl.Int32)
        .alias("metric_rank"),
    ).sort("metric_rank", "card", nulls_last=True)


# ---------------------------------------------------------------------------- the summary

_DEFINITION = (
    "Before: the old decks against each other only (games whose seats are all old decks), "
    "base catalog. After: every game of the old decks in the field grown by the new decks, "
    "base + expansion catalog. Old-vs-old tables have the same ids, deals and seat orders "
    "on both sides (one seed), so each change is paired per deal: the unit is the deal "
    "index, the interval delta \u00b1 1.96 s/\u221aD over D deals. A deck gains (loses) "
    "when the interval is above (below) 0."
)


def _records(frame: pl.DataFrame, cols: Sequence[str]) -> list[dict[str, Any]]:
    keep = [c for c in cols if c in frame.columns]
    out = []
    for row in frame.select(keep).iter_rows(named=True):
        out.append({k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                    for k, v in row.items()})
    return out


def summarize(result: ExpansionResult) -> dict[str, Any]:
    """The expansion summary (``expansion.json``): the metrics above as plain data."""
    t0 = time.perf_counter()
    cats = result.catalogs
    same = result.before_dir == result.after_dir
    after = read_sums(result.after_dir, result.old_decks, result.new_decks, before=same,
                      new_cards=cats.new_cards)
    before = after if same else read_sums(result.before_dir, result.old_decks,
                                          result.new_decks, after=False)
    old = old_deck_changes(before["before_decks"], after["after_decks"])
    new = new_deck_rates(after, result.new_decks)
    manifest = manifests.read_manifest(result.after_dir)
    matchups = (new_deck_matchups(after)
                if result.new_decks and manifest.get("players", 2) == 2 else None)
    paths = path_changes(before.get("before_paths"), after.get("after_paths"))
    cards = expansion_cards(result.after_dir, after["cards"], cats.new_cards)
    held = set(cards["card"].to_list()) if cards.height else set()
    change_cols = ["before", "after", "delta", "delta_lo", "delta_hi", "deals",
                   "games_before", "games_after"]
    card_cols = ["card", "set", "type", "branch", "decks", "held", "play_rate",
                 "play_rate_lo", "play_rate_hi", "gih_wr", "iwd_adjusted", "iwd_adjusted_lo",
                 "iwd_adjusted_hi", "flag", "play_rank", "metric_rank"]
    by_play = cards.sort("play_rank", "card", nulls_last=True) if cards.height else cards
    summary = {
        "expansion": {"path": str(cats.after_paths[-1]), "set": cats.set_name,
                      "cards_added": len(cats.new_cards), "errata": cats.errata,
                      "errata_in_old_decks": result.errata_used},
        "catalog": {"before": [str(p) for p in cats.before_paths],
                    "after": [str(p) for p in cats.after_paths],
                    "cards_before": len(cats.before), "cards_after": len(cats.after)},
        "runs": {"after": str(result.after_dir), "before": str(result.before_dir),
                 "same_run": result.before_dir == result.after_dir},
        "games": {"deals_per_table": manifest.get("games_requested"),
                  "players": manifest.get("players"), "seed": manifest.get("seed"),
                  "after": manifest.get("games_done")},
        "definition": _DEFINITION,
        "old_decks": _records(old, ["deck", *change_cols, "verdict"]),
        "new_decks": _records(new, ["deck", "vs_old", "vs_old_lo", "vs_old_hi", "vs_old_deals",
                                    "field", "field_lo", "field_hi"]),
        "new_vs_old": (_records(matchups, ["deck", "opponent", "rate", "rate_lo", "rate_hi"])
                       if matchups is not None else []),
        "paths": _records(paths, ["path", *change_cols]),
        "cards": {"by_metric": _records(cards, card_cols),
                  "by_play_rate": [r["card"] for r in _records(by_play, ["card"])],
                  "not_in_any_deck": [c for c in cats.new_cards if c not in held]},
    }
    result.timings["analysis_s"] = round(time.perf_counter() - t0, 3)
    return summary


def write_summary(result: ExpansionResult, summary: dict[str, Any]) -> Path:
    """``expansion.json`` in the after run dir (where ``rnr-sim report`` finds it)."""
    from rnr_sim.files import write_json

    path = result.after_dir / SUMMARY
    write_json(path, summary)
    return path


def read_summary(run_dir: str | Path) -> dict[str, Any] | None:
    """The expansion summary of a run dir, or None when it has none (or it is unreadable)."""
    path = Path(run_dir) / SUMMARY
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _pp(x: float | None) -> str:
    """Signed points with one decimal; a value that rounds to 0 prints as +0.0."""
    if x is None:
        return "-"
    v = 100 * x
    return f"{0.0 if round(v, 1) == 0 else v:+.1f}"


def format_summary(summary: dict[str, Any]) -> str:
    """The terminal text: old decks' change, new decks vs the old field, paths, cards."""
    e = summary["expansion"]
    lines = [f"Expansion {e['set']}: {e['cards_added']} cards added, "
             f"{len(e['errata'])} errata; catalog {summary['catalog']['cards_before']} -> "
             f"{summary['catalog']['cards_after']} cards", "",
             "Old decks: win share before (old field) -> after (grown field), change in pp "
             "[95% paired CI]"]
    for r in summary["old_decks"]:
        lines.append(f"  {r['deck']:<28} {100 * r['before']:5.1f}% -> {100 * r['after']:5.1f}%"
                     f"  {_pp(r['delta'])} [{_pp(r['delta_lo'])}, {_pp(r['delta_hi'])}]"
                     f"  {r['verdict']}")
    if summary["new_decks"]:
        lines += ["", "New decks: win share vs the old field [95% CI]"]
        for r in summary["new_decks"]:
            lines.append(f"  {r['deck']:<28} {100 * r['vs_old']:5.1f}% "
                         f"[{100 * r['vs_old_lo']:.1f}, {100 * r['vs_old_hi']:.1f}]")
    lines += ["", "Paths: share of games before -> after, change in pp [95% paired CI]"]
    for r in summary["paths"]:
        lines.append(f"  {r['path']:<10} {100 * r['before']:5.1f}% -> {100 * r['after']:5.1f}%"
                     f"  {_pp(r['delta'])} [{_pp(r['delta_lo'])}, {_pp(r['delta_hi'])}]")
    cards = summary["cards"]["by_metric"]
    if cards:
        lines += ["", f"Expansion cards in the decks ({len(cards)}), by the adjusted IWD "
                  "(rank by play rate in brackets):"]
        for r in cards[:15]:
            lines.append(f"  {r['card']:<32} IWD adj {_pp(r.get('iwd_adjusted'))} pp, "
                         f"play rate {100 * (r.get('play_rate') or 0):.0f}% "
                         f"(#{r.get('play_rank')})")
        if len(cards) > 15:
            lines.append(f"  ... {len(cards) - 15} more in expansion.json")
    return "\n".join(lines)
