"""Baseline and variant on the same deals: planning, sequential stopping, the two run dirs.

``run_compare`` plays the same tables, deals, seat orders and seed twice -- once with the
baseline catalog and rules, once with the patched catalog and/or the variant rules -- so
the two runs differ only by the change (common random numbers: a game is a pure function
of (seed, table, deal, seat order) and its inputs).

Deals are simulated in *looks*: deals ``[n_prev, n)`` of every table, in chunks of at
most ``chunk_size`` games per run, staged as parquet: each look is one call of the
execution loop ``rnr-sim run`` uses (``rnr_sim.runs.execution.execute``). Without
``precision`` there is one look of ``games`` deals. With it, the run stops at the first
look where every deck's win-rate change meets the Chow-Robbins fixed-width rule
(``stopping_rule``), or at the ``games`` cap; a later look only appends deals (the deal
index continues under the same seed), it never re-plays one. At the end each run dir is
written exactly as ``rnr-sim run --games n`` would write it (the same ``game_id`` s, parts
of ``chunk_size`` games), with a ``compare`` key in its manifest naming the other run.
"""

from __future__ import annotations

import itertools
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim import enums
from rnr_sim.analytics.stats import Z95
from rnr_sim.errors import InputError
from rnr_sim.files import write_json, write_parquet
from rnr_sim.runs import bounds, manifests, outdir, planning, rundir
from rnr_sim.runs.arguments import check_count, check_threads
from rnr_sim.runs.execution import (
    Chunk,
    PartSink,
    Progress,
    StopOnInterrupt,
    engine_play,
    execute,
    log_to_stderr,
    open_backend,
    part_name,
)
from rnr_sim.runs.inputs import GameInputs
from rnr_sim.runs.schema import GAMES_SCHEMA, SEATS_SCHEMA

DEFAULT_GAMES = planning.DEFAULT_GAMES  # deals per table without --precision
DEFAULT_PRECISION_CAP = 50_000  # deals per table: the cap of --precision without --games
DEFAULT_MIN_DEALS = 200  # Chow-Robbins' initial sample n0 (deals per table)
MAX_GROWTH = 4.0  # a look at most quadruples the deals
VARIANT_CATALOG = "variant-catalog.toml"
SUMMARY = "compare.json"
STAGING = ".staging"


class Interrupted(Exception):
    """Ctrl-C before any look was complete: there is nothing to compare."""


@dataclass
class CompareOptions:
    """What ``rnr-sim compare`` was asked for. ``games`` is deals per table: the number
    played, or with ``precision`` the cap (``None``: the defaults above)."""

    decks: Sequence[str | Path]
    patch: str | Path | None = None
    rules_b: str | Path | None = None
    deck_b: str | Path | None = None  # a second version of one of decks, played in its place
    games: int | None = None
    players: int = 2
    seed: int = planning.DEFAULT_SEED
    rules: str | Path | None = None
    cards: planning.CatalogPaths = None  # one file or several, layered in order
    policy: str | None = None
    threads: int | None = None
    out: str | Path | None = None
    precision: float | None = None
    min_deals: int = DEFAULT_MIN_DEALS
    chunk_size: int = planning.DEFAULT_CHUNK_SIZE
    command: str | None = None
    backend: str = "local"  # where the games are played: "local" or "ray"
    address: str | None = None  # a Ray cluster to join (default: start one)


@dataclass
class Excluded:
    """A deck left out of both runs, and why."""

    deck: str
    path: str
    reason: str


@dataclass
class Look:
    """One look of the sequential procedure: deals per table so far, the widest deck
    half-width, and whether the stopping rule was met."""

    deals: int
    widest: float | None
    widest_deck: str | None
    met: bool
    next_deals: int | None = None


@dataclass
class CompareResult:
    out: Path
    baseline_dir: Path
    variant_dir: Path
    deals: int  # per table
    games: int  # per run
    excluded: list[Excluded]
    looks: list[Look]
    stopping: dict[str, Any]
    patch_lines: list[str]
    rules_changes: dict[str, tuple[Any, Any]]  # switch -> (baseline, variant)
    timings: dict[str, float]
    interrupted: bool = False
    patch_path: str | None = None  # as given (the manifests hold the resolved paths)
    rules_b_path: str | None = None
    patch_name: str = ""
    patch_note: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    deck_b_path: str | None = None  # as given
    deck_b_name: str | None = None  # the deck it replaced (and played as)
    deck_b_lines: list[str] = field(default_factory=list)  # "B.txt in place of A.txt: ..."


# ---------------------------------------------------------------------------- checks


def _check_precision(precision: float | None) -> None:
    if precision is None:
        return
    if isinstance(precision, bool) or not isinstance(precision, (int, float)) or not (
        0 < precision < 0.5
    ) or math.isnan(precision):
        raise InputError(f"--precision must be a half-width between 0 and 0.5 (0.01 = one "
                         f"percentage point), not {precision!r}")


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


#: The variant's copy of --deck-b in the compare folder: named as the deck it replaces.
DECK_B = "deck-b.txt"


@dataclass
class DeckB:
    """``--deck-b``: the text the variant plays (B's cards under A's ``Name:``) and the lines
    saying what differs."""

    name: str  # the deck it replaces (and whose name it plays under)
    text: str
    lines: list[str]


def _version_of(path_b: Path, paths: list[Path], base_catalog, variant_catalog
                ) -> tuple[Path, str]:
    """The deck ``--deck-b`` is a version of: the given deck of the same name (its ``Name:``
    header), else the one that shares the most cards with it (the first given of those);
    and why it was chosen. One that shares less than half of B's cards is refused: B is
    then no version of any of them."""
    from rnr_sim.decks import load_deck

    b = load_deck(path_b, variant_catalog)
    decks = []
    for p in paths:
        try:
            decks.append((p, load_deck(p, base_catalog)))
        except InputError:  # a deck the baseline cannot read: said by _select_decks
            continue
    same = [p for p, a in decks if a.name == b.name]
    if same:
        return same[0], f"the same name, '{b.name}'"
    shared = [(sum(min(n, a.counts.get(c, 0)) for c, n in b.counts.items()), p)
              for p, a in decks]
    best = max(shared, key=lambda x: x[0], default=(0, None))
    size = sum(b.counts.values())
    if best[1] is None or 2 * best[0] < size:
        near = "" if best[1] is None else f" (the most, {best[0]}, with {best[1]})"
        raise InputError(f"--deck-b {path_b}: shares less than half of its {size} cards with "
                         f"every deck given{near}: give the deck it is a version of, or "
                         "name it as that deck's Name: line does")
    return best[1], f"{best[0]} of its {size} cards shared"


def _deck_b(path_a: Path, kept: list[Path], path_b: Path, base_catalog, variant_catalog,
            profile, why: str = "") -> DeckB:
    """Check ``--deck-b`` (legal with the variant's cards and rules) against the deck it
    is a version of (``path_a``, which must be played: ``_version_of``), and write what
    differs: ``+2 X, -2 Y``. B plays under A's name and with A's pilot, so that only the
    cards differ."""
    from rnr_sim.decks import _COMMENT, _HEADER_LINE, load_deck, validate_deck
    from rnr_sim.errors import decode_text, read_input

    if path_a not in kept:
        raise InputError(f"--deck-b {path_b}: the deck it replaces ({path_a}) is left out of "
                         "both runs")
    a = load_deck(path_a, base_catalog)
    b = load_deck(path_b, variant_catalog)
    errors = [x for x in validate_deck(b, variant_catalog, profile) if not x.warning]
    if errors:
        raise InputError(f"--deck-b {path_b} is illegal: {errors[0]}; see `rnr-sim validate "
                         f"{path_b}`")
    text = decode_text(read_input(path_b, "deck list", "a deck list"), str(path_b),
                       "a deck list is lines like '4 Minuteman Volley'")
    body = [line for line in text.splitlines()  # its Name: and Cards: headers replaced
            if (m := _HEADER_LINE.fullmatch(_COMMENT.sub("", line).strip())) is None
            or m.group(1).strip().lower() not in ("name", "cards", "policy")]
    if a.policy is not None:  # A's pilot plays B (the runs pair its games); a policy file
        near = path_a.parent / a.policy  # is read from A's folder: the copy names it whole
        body.insert(0, f"Policy: {near.resolve() if near.is_file() else a.policy}")
    diff = [f"{b.counts.get(n, 0) - a.counts.get(n, 0):+d} {n}"
            for n in dict.fromkeys([*a.counts, *b.counts])
            if b.counts.get(n, 0) != a.counts.get(n, 0)]
    what = ", ".join(diff) if diff else "the same cards"
    lines = [f"{path_b} in place of {path_a} ('{a.name}'{'; ' + why if why else ''}; the "
             f"same deals): {what}; the card rows leave '{a.name}' out (its slots differ "
             "between the runs)"]
    return DeckB(a.name, "\n".join([f"Name: {a.name}", *body]) + "\n", lines)


def _warn_unheld(patched, kept: list[Path], catalog, log: Callable[[str], None]) -> None:
    """Say so before any game when no deck of the comparison holds a card the patch
    changes or removes: then the patch cannot change a game and both runs play alike."""
    from rnr_sim.decks import load_deck

    touched = {c for c, *_ in patched.changed} | set(patched.removed)
    held = set().union(*(load_deck(p, catalog).slots for p in kept)) if kept else set()
    if touched and not touched & held:
        log(f"Note: no deck here holds {', '.join(sorted(touched))}: the patch cannot change "
            "a game, so both runs will play the same games; add a deck that plays it.")


def _select_decks(paths: list[Path], base_catalog, variant_catalog, base_profile,
                  variant_profile) -> tuple[list[Path], list[Excluded]]:
    """The decks both sides can play. A deck the baseline cannot read or finds illegal is
    an error (as for ``rnr-sim run``); one the change makes unreadable or illegal is left
    out of both runs, with the reason."""
    from rnr_sim.decks import load_deck, validate_deck

    kept, excluded = [], []
    for path in paths:
        deck = load_deck(path, base_catalog)
        errors = [x for x in validate_deck(deck, base_catalog, base_profile) if not x.warning]
        if errors:
            raise InputError(f"deck '{deck.name}' ({path}) is illegal before any change: "
                             f"{errors[0]}; see `rnr-sim validate {path}`")
        try:
            deck_v = load_deck(path, variant_catalog)
        except InputError as e:
            excluded.append(Excluded(deck.name, str(path),
                                     f"unreadable with the variant's catalog: {_first_line(e)}"))
            continue
        errors = [x for x in validate_deck(deck_v, variant_catalog, variant_profile)
                  if not x.warning]
        if errors:
            shown = "; ".join(str(x) for x in errors[:2])
            excluded.append(Excluded(deck.name, str(path), f"illegal in the variant: {shown}"))
            continue
        kept.append(path)
    return kept, excluded


# ---------------------------------------------------------------------------- stopping


def stopping_rule(precision: float, min_deals: int, z: float = Z95) -> str:
    """The stopping rule, stated for the output and the docs."""
    return (
        f"Chow-Robbins fixed-width sequential interval: deals are added in looks; the run "
        f"stops at the first look with n >= {min_deals:,} deals per table at which, for "
        f"every deck, n >= (z/h)^2 * (s_n^2 + v_n/n), where s_n^2 is the sample variance of "
        f"the deck's per-deal win-rate difference (variant - baseline), v_n the sample "
        f"variance of its per-deal win rate in the baseline (the fixed term's scale, so that "
        f"the rule reads the same in any unit and a change that has moved no deal yet does "
        f"not stop the run), z = {z:.2f} and h = {precision:g}. Then every deck's 95% "
        f"interval z*s_n/sqrt(n) is at most +/-{precision:g}, and its coverage tends to 95% "
        "as h shrinks (Chow and Robbins 1965); a look only appends deals, never replays one."
    )


def chow_robbins_need(s2: float, precision: float, z: float = Z95,
                      scale: float = 1.0) -> float:
    """The smallest n with n >= (z/h)^2 (s2 + scale/n).

    ``scale/n`` is Chow and Robbins' fixed term, which keeps the rule from stopping while
    the sample variance ``s2`` is still 0 by chance; ``scale`` is the metric's own
    variance (``deck_half_widths``), so that the rule does not depend on the unit (a
    rate in [0, 1], points...) and means the same for a metric of any spread.
    """
    a = (z / precision) ** 2
    return (a * s2 + math.sqrt((a * s2) ** 2 + 4 * a * max(scale, 0.0))) / 2


@dataclass
class WinMoments:
    """The stopping rule's data, in memory that does not grow with the deals: per table
    and seat position (``[table, position]``), over the deals played, the sums of
    ``x = wins_variant - wins_baseline`` and of ``y = wins_baseline`` of the deck there
    (each summed over the deal's seat orders) and of their squares."""

    n: np.ndarray
    sx: np.ndarray
    sxx: np.ndarray
    sy: np.ndarray
    syy: np.ndarray

    @classmethod
    def zeros(cls, n_tables: int, players: int) -> WinMoments:
        return cls(*(np.zeros((n_tables, players)) for _ in range(5)))

    def add_deals(self, table: np.ndarray, wins_b: np.ndarray, wins_v: np.ndarray) -> None:
        """Deals of ``table[k]`` with their wins per position (``wins_*[k, position]``)."""
        x = wins_v - wins_b
        np.add.at(self.n, table, 1.0)
        for total, v in ((self.sx, x), (self.sxx, x * x), (self.sy, wins_b),
                         (self.syy, wins_b * wins_b)):
            np.add.at(total, table, v)

    def merge(self, other: WinMoments) -> None:
        for a, b in zip((self.n, self.sx, self.sxx, self.sy, self.syy),
                        (other.n, other.sx, other.sxx, other.sy, other.syy), strict=True):
            a += b


def deck_half_widths(m: WinMoments, tables: np.ndarray, per_deal: np.ndarray, n: int,
                     z: float = Z95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per deck over the ``n`` deals played: the sample variance of its per-deal win-rate
    difference (variant - baseline), the 95% half-width of the change ``z * s / sqrt(n)``,
    and the sample variance of its per-deal win rate in the baseline (the stopping rule's
    fixed-term scale). A deck's per-deal win rate sums its wins over the tables it sits at
    (``tables[table, position]`` = deck) over ``per_deal`` games; the tables' deals are
    independent, so its variance is the sum of the tables' own sample variances
    (``ddof = 1``) over ``per_deal²``."""
    if n < 2:
        inf = np.full(len(per_deal), np.inf)
        return inf, inf, inf
    cells = np.maximum(m.n - 1.0, 1.0)
    var_x = np.maximum(m.sxx - m.sx * m.sx / np.maximum(m.n, 1.0), 0.0) / cells
    var_y = np.maximum(m.syy - m.sy * m.sy / np.maximum(m.n, 1.0), 0.0) / cells
    nd = len(per_deal)
    s2 = np.bincount(tables.ravel(), var_x.ravel(), minlength=nd) / per_deal ** 2
    v = np.bincount(tables.ravel(), var_y.ravel(), minlength=nd) / per_deal ** 2
    return s2, z * np.sqrt(s2 / n), v


# ---------------------------------------------------------------------------- one run dir


@dataclass
class _Side:
    role: str
    plan: Any  # planning.RunPlan
    dir: Path
    staged: list[tuple[Path, Path, int, int]] = field(default_factory=list)
    simulate_s: float = 0.0
    write_s: float = 0.0


def _inputs(plan, t0: int, t1: int, d0: int, d1: int, stride: int) -> GameInputs:
    """Engine inputs of tables [t0, t1) x deals [d0, d1) x every seat order, table-major.
    ``game_id`` is provisional: numbered with ``stride`` deals per table."""
    p = plan.players
    t, d, r = np.meshgrid(np.arange(t0, t1, dtype=np.int64), np.arange(d0, d1, dtype=np.int64),
                          np.arange(p, dtype=np.int64), indexing="ij")
    t, d, r = t.ravel(), d.ravel(), r.ravel()
    return GameInputs.at_tables(plan.tables, plan.deck_policy, t, d, r, (t * stride + d) * p + r)


def _pieces(n_tables: int, players: int, d0: int, d1: int, chunk_size: int):
    """(t0, t1, a, b) pieces of tables x deals [d0, d1) of at most ~chunk_size games."""
    per_table = (d1 - d0) * players
    if per_table <= chunk_size:
        k = max(1, chunk_size // per_table)
        for t0 in range(0, n_tables, k):
            yield t0, min(n_tables, t0 + k), d0, d1
    else:
        step = max(1, chunk_size // players)
        for t in range(n_tables):
            for a in range(d0, d1, step):
                yield t, t + 1, a, min(d1, a + step)


class _Staging:
    """The sink of the looks: each side's chunk as a staged part in ``<side>/.staging``
    (``_finalize`` cuts the final parts from them), and the decks' wins per table, seat
    position and deal folded into ``WinMoments`` (``wins``: the looks kept; the look
    under way apart, so that an interrupted look can be forgotten), which the stopping
    rule reads. A chunk's baseline wins wait for its variant (the execution loop writes
    the two sides of a piece one after the other)."""

    def __init__(self, sides: list[_Side], policy_names: Sequence[str], n_tables: int,
                 players: int):
        self.sides = {side.role: side for side in sides}
        self.parts = {side.role: PartSink(side.dir / STAGING, side.plan, policy_names)
                      for side in sides}
        self.shape = (n_tables, players)
        self.wins = WinMoments.zeros(*self.shape)
        self._look_wins = WinMoments.zeros(*self.shape)
        self._waiting: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.look: list[tuple[_Side, tuple[Path, Path, int, int]]] = []

    def start_look(self) -> None:
        self._look_wins = WinMoments.zeros(*self.shape)
        self._waiting = {}
        self.look = []

    def write(self, chunk: Chunk, rec) -> None:
        inputs, p = chunk.inputs, self.sides[chunk.tag].plan.players
        # [deal of a table, position]: the deck's wins over the deal's seat orders
        # (inputs are table-major, every seat order of a deal together)
        winner = np.asarray(rec.winner_seat).reshape(-1, p)
        wins = (winner[:, :, None] == np.arange(p)[None, None, :]).sum(axis=1).astype(float)
        table = inputs.table_id[::p]
        if chunk.tag == "baseline":
            self._waiting[chunk.index] = (table, wins)
        else:
            table_b, wins_b = self._waiting.pop(chunk.index)
            self._look_wins.add_deals(table_b, wins_b, wins)
        self.parts[chunk.tag].write(chunk, rec)
        tables = inputs.table_id
        staged = (*self.parts[chunk.tag].paths(chunk), int(tables.min()), int(tables.max()) + 1)
        self.look.append((self.sides[chunk.tag], staged))

    def keep_look(self) -> None:
        for side, staged in self.look:
            side.staged.append(staged)
        self.wins.merge(self._look_wins)
        self.start_look()

    def discard_look(self) -> None:
        """Forget the look under way: its staged parts and its wins."""
        for _side, staged in self.look:
            staged[0].unlink(missing_ok=True)
            staged[1].unlink(missing_ok=True)
        self.start_look()


def _finalize(side: _Side, deals: int, stride: int, chunk_size: int,
              manifest: dict[str, Any]) -> dict[str, str]:
    """Write the staged games as ``rnr-sim run --games deals --chunk-size chunk_size``
    writes them: part c holds games ``[c × chunk_size, (c + 1) × chunk_size)`` with
    ``game_id = (table * deals + deal) * players + seat order``, read from the staged
    parts of the tables it spans (so a part, not a table, is what is held in memory),
    each stamped with the run's identity (``manifest``'s). Returns each part's SHA-256.
    """
    plan = side.plan
    p = plan.players
    n_tables = len(plan.tables)
    per_table = deals * p
    total = n_tables * per_table
    for sub in ("games", "seats"):
        (side.dir / sub).mkdir(exist_ok=True)
    final_id = (pl.col("table_id").cast(pl.Int64) * deals + pl.col("deal")) * p \
        + pl.col("first_seat").cast(pl.Int64)
    tid = pl.col("game_id") // (stride * p)
    deal = (pl.col("game_id") // p) % stride
    seat_id = (tid * deals + deal) * p + pl.col("game_id") % p
    part = 0
    sha: dict[str, str] = {}
    for g0 in range(0, total, chunk_size):
        g1 = min(total, g0 + chunk_size)
        t0, t1 = g0 // per_table, (g1 - 1) // per_table + 1
        files = [f for f in side.staged if f[2] < t1 and f[3] > t0]
        games = (
            pl.scan_parquet([f[0] for f in files])
            .filter(pl.col("table_id").is_between(t0, t1 - 1) & (pl.col("deal") < deals))
            .with_columns(final_id.alias("game_id"))
            .filter(pl.col("game_id").is_between(g0, g1 - 1))
            .sort("game_id").collect()
        )
        seats = (
            pl.scan_parquet([f[1] for f in files])
            .filter(tid.is_between(t0, t1 - 1) & (deal < deals))
            .with_columns(seat_id.alias("game_id"))
            .filter(pl.col("game_id").is_between(g0, g1 - 1))
            .sort("game_id", "seat").collect()
        )
        if games.height != g1 - g0 or seats.height != (g1 - g0) * p:
            raise RuntimeError(f"{side.dir}: staged {games.height} games for game_id "
                               f"{g0}..{g1 - 1}, expected {g1 - g0}")
        for table, frame in (("games", games.select(list(GAMES_SCHEMA))),
                             ("seats", seats.select(list(SEATS_SCHEMA)))):
            sha[f"{table}/{part_name(part)}"] = write_parquet(
                side.dir / table / part_name(part), frame,
                rundir.part_stamp(manifest, table, part))
        part += 1
    shutil.rmtree(side.dir / STAGING, ignore_errors=True)
    return sha


# ---------------------------------------------------------------------------- the comparison


def run_compare(options: CompareOptions, progress: bool = True,
                log: Callable[[str], None] = log_to_stderr) -> CompareResult:
    """Plan, simulate and write both runs (see the module docstring). Raises InputError."""
    from rnr_sim.cards import load_catalog
    from rnr_sim.patches import apply_patch, load_patch
    from rnr_sim.rules import load_profile

    t_start = time.perf_counter()
    started = manifests.utc_now()
    if options.patch is None and options.rules_b is None and options.deck_b is None:
        raise InputError("nothing to compare: give --patch CARDS.toml, --rules-b RULES.toml, "
                         "--deck-b DECK (a second version of one of the decks), or several")
    _check_precision(options.precision)
    cap_default = DEFAULT_PRECISION_CAP if options.precision is not None else DEFAULT_GAMES
    games = cap_default if options.games is None else options.games
    check_count(games, "--games", 2)
    check_count(options.min_deals, "the initial sample (deals)", 2)
    check_count(options.players, "--players", 2, enums.MAX_PLAYERS)
    check_count(options.seed, "--seed", 0, planning.SEED_LIMIT - 1)
    check_count(options.chunk_size, "--chunk-size", 1)
    check_threads(options.threads)
    where = open_backend(options.backend, options.address, options.threads)

    out = Path(options.out) if options.out is not None else None
    if out is not None:
        outdir.check_out(out)

    from rnr_sim.decks import catalog_paths

    base_cards = catalog_paths(options.cards, options.decks)  # --cards, else the Cards: headers
    base_catalog = load_catalog(base_cards)
    patched = None
    patch = None
    if options.patch is not None:
        patch = load_patch(options.patch)
        patched = apply_patch(patch, base_catalog)
    variant_catalog = patched.catalog if patched is not None else base_catalog
    base_profile = load_profile(None if options.rules is None else Path(options.rules).resolve())
    variant_profile = (load_profile(Path(options.rules_b).resolve())
                       if options.rules_b is not None else base_profile)

    paths = [Path(p) for p in options.decks]
    if options.deck_b is not None:  # `compare mine.txt decks/*.txt` names mine.txt twice
        firsts: dict[Path, Path] = {}
        for p in paths:
            firsts.setdefault(p.resolve(), p)
        paths = list(firsts.values())
    if not paths:
        raise InputError("no decks: give deck list files, e.g. rnr-sim compare decks/*.txt "
                         "--patch change.toml")
    kept, excluded = _select_decks(paths, base_catalog, variant_catalog, base_profile,
                                   variant_profile)
    if len(kept) < options.players:
        why = "; ".join(f"{e.deck}: {e.reason}" for e in excluded)
        raise InputError(f"{len(kept)} deck{'s' if len(kept) != 1 else ''} left to compare, "
                         f"fewer than the {options.players} a table needs"
                         + (f" (left out: {why})" if why else ""))

    if patched is not None and options.rules_b is None and options.deck_b is None:
        if not patched.added and not patched.removed \
                and all(old == new for _, _, old, new in patched.changed):
            log(f"Note: {options.patch} changes nothing (every field it sets keeps its value: "
                f"{'; '.join(patched.describe()[:3]) or 'no field'}): both runs will play the "
                "same games.")
        else:
            _warn_unheld(patched, kept, base_catalog, log)
    deck_b = replaced = None
    if options.deck_b is not None:
        replaced, why = _version_of(Path(options.deck_b), paths, base_catalog, variant_catalog)
        deck_b = _deck_b(replaced, kept, Path(options.deck_b), base_catalog, variant_catalog,
                         variant_profile, why)
    n_tables = len(planning.make_tables(len(kept), options.players))
    bounds.check_shape(n_tables, games, options.players)
    bounds.check_chunks(n_tables * games * options.players, options.chunk_size)

    # The folder (claimed and locked: one writer at a time), then the variant's catalog
    # file (the variant run reads it).
    out, _created, lock = outdir.claim_out(out, "compare-", "compare folder")
    try:
        variant_cards = base_cards
        if patched is not None:
            variant_cards = out / VARIANT_CATALOG
            try:
                variant_cards.write_text(patched.text, encoding="utf-8")
            except OSError as e:
                raise InputError(f"{variant_cards}: cannot write ({e.strerror})") from None

        decks_v = kept
        if deck_b is not None:  # B, renamed as A so that the runs pair, in A's place
            copy = out / DECK_B
            try:
                copy.write_text(deck_b.text, encoding="utf-8")
            except OSError as e:
                raise InputError(f"{copy}: cannot write ({e.strerror})") from None
            decks_v = [copy if p == replaced else p for p in kept]

        def plan(cards, rules, decks):
            return planning.plan_run(planning.RunOptions(
                decks=decks, games=games, players=options.players, seed=options.seed,
                rules=rules, cards=cards, policy=options.policy, threads=options.threads,
                chunk_size=options.chunk_size))

        plan_b = plan(base_cards, options.rules, kept)
        plan_v = plan(variant_cards, options.rules_b if options.rules_b is not None
                      else options.rules, decks_v)
        assert plan_b.deck_names == plan_v.deck_names and np.array_equal(plan_b.tables,
                                                                         plan_v.tables)
        driver = planning.engine_driver()
        sides = [_Side("baseline", plan_b, out / "baseline"), _Side("variant", plan_v, out / "variant")]
        for side in sides:
            for sub in ("games", "seats"):
                (side.dir / STAGING / sub).mkdir(parents=True, exist_ok=True)
            side.plan.compile(driver)
        policy_names = plan_b.policy_names
        assert policy_names == plan_v.policy_names

        n_decks = len(plan_b.decks)
        players = options.players
        n_tables = len(plan_b.tables)
        per_deal = players * np.bincount(plan_b.tables.ravel(), minlength=n_decks).astype(float)
        stride = games  # provisional game_id numbering: the cap of deals per table

        engines = {side.role: engine_play(driver, side.plan, where.threads) for side in sides}

        def play(chunk: Chunk):
            return engines[chunk.tag](chunk.inputs)

        staging = _Staging(sides, policy_names, n_tables, players)
        numbers = itertools.count()  # staged part numbers, shared by the looks

        def look_chunks(d0: int, d1: int):
            """Deals [d0, d1) of every table: each piece once per side, the same inputs."""
            for t_a, t_b, d_a, d_b in _pieces(n_tables, players, d0, d1, options.chunk_size):
                inputs = _inputs(plan_b, t_a, t_b, d_a, d_b, stride)
                index = next(numbers)
                for side in sides:
                    yield Chunk(index, inputs, side.role)

        precision = options.precision
        min_deals = min(options.min_deals, games)
        target = games if precision is None else min_deals
        done = 0
        looks: list[Look] = []
        compile_s = 0.0
        interrupted = False
        bar = Progress("rnr-sim compare", 2 * target * n_tables * players, show=progress, log=log)
        try:
            with where, StopOnInterrupt(bar.note, "Stopping: the comparison keeps the deals of the "
                                 "looks completed so far") as stop, bar:
                while True:
                    staging.start_look()
                    tally = execute(look_chunks(done, target), play, staging, stop=stop,
                                    progress=bar, backend=where,
                                    warm_up=driver.needs_compile if not looks else None)
                    compile_s += tally.compile_s
                    for side in sides:
                        side.simulate_s += tally.simulate_s.get(side.role, 0.0)
                        side.write_s += tally.write_s.get(side.role, 0.0)
                    if tally.interrupted:
                        interrupted = True
                        staging.discard_look()
                        break
                    staging.keep_look()
                    done = target
                    if precision is None:
                        looks.append(Look(done, None, None, True))
                        break
                    s2, half, scale = deck_half_widths(staging.wins, plan_b.tables, per_deal,
                                                       done)
                    need = max(chow_robbins_need(float(v), precision, scale=float(w))
                               for v, w in zip(s2, scale, strict=True))
                    met = done >= need
                    widest = int(np.argmax(half))
                    look = Look(done, float(half[widest]), plan_b.deck_names[widest], met)
                    looks.append(look)
                    if met or done >= games:
                        bar.note(f"look {len(looks)}: {done:,} deals per table; widest deck "
                                 f"interval ±{100 * half[widest]:.2f} pp "
                                 f"({plan_b.deck_names[widest]}); "
                                 + ("target met: stop" if met else "the --games cap: stop"))
                        break
                    nxt = max(done + max(1, math.ceil(done / 10)), math.ceil(1.05 * need))
                    target = int(min(games, nxt, math.ceil(MAX_GROWTH * done)))
                    look.next_deals = target
                    bar.note(f"look {len(looks)}: {done:,} deals per table; widest deck interval "
                             f"±{100 * half[widest]:.2f} pp ({plan_b.deck_names[widest]}), target "
                             f"±{100 * precision:g} pp: continuing to {target:,} deals")
                    bar.set_total(2 * target * n_tables * players)
        except KeyboardInterrupt:
            interrupted = True

        if done == 0:
            shutil.rmtree(out, ignore_errors=True)
            raise Interrupted("stopped before the first look finished: nothing was kept")

        # Write both run dirs as `rnr-sim run --games done` would, naming each other.
        finalize_s = {}
        patch_path = None if options.patch is None else str(Path(options.patch).resolve())
        rules_b_path = None if options.rules_b is None else str(Path(options.rules_b).resolve())
        for side, other in ((sides[0], sides[1]), (sides[1], sides[0])):
            side.plan = replace(side.plan, games=done, chunk_size=options.chunk_size)
            manifest = manifests.new_manifest(side.plan, driver, options.command)
            t1 = time.perf_counter()
            manifest["files"] = _finalize(side, done, stride, options.chunk_size, manifest)
            manifests.write_tables(side.dir, side.plan, manifest, cards=cards_frame(
                side.plan.catalog, sets_from=plan_b.catalog if side is sides[1] else None))
            finalize_s[side.role] = time.perf_counter() - t1
            n_games = side.plan.games_total
            sim_s = side.simulate_s
            wr_s = side.write_s + finalize_s[side.role]
            manifest.update({
                "status": "complete",
                "games_done": n_games,
                "chunks": {"total": side.plan.n_chunks, "complete": list(range(side.plan.n_chunks))},
                "timings": {"compile_s": round(compile_s, 3), "simulate_s": round(sim_s, 3),
                            "write_s": round(wr_s, 3), "total_s": round(sim_s + wr_s, 3),
                            "games_per_s": round(n_games / (sim_s + wr_s), 1)
                            if sim_s + wr_s > 0 else 0.0},
                "execution": [{**where.describe(), "started": started}],
                "compare": {"role": side.role, "other": str(other.dir.resolve()),
                            "patch": patch_path, "rules_b": rules_b_path,
                            **({"deck_b_replaces": deck_b.name} if deck_b is not None else {})},
            })
            manifests.write_manifest(side.dir, manifest)

        rules_changes = {k: (base_profile[k], variant_profile[k]) for k in base_profile.values
                         if base_profile[k] != variant_profile[k]}
        stopping: dict[str, Any] = {"precision": precision}
        if precision is not None:
            last = looks[-1] if looks else None
            stopping.update({
                "rule": stopping_rule(precision, min_deals),
                "min_deals": min_deals,
                "cap": games,
                "looks": [lk.deals for lk in looks],
                "met": bool(last and last.met),
                "reason": ("interrupted" if interrupted else "target met" if last and last.met
                           else "the --games cap"),
            })
        result = CompareResult(
            out=out, baseline_dir=sides[0].dir, variant_dir=sides[1].dir, deals=done,
            games=done * n_tables * players, excluded=excluded, looks=looks, stopping=stopping,
            patch_lines=patched.describe() if patched is not None else [],
            rules_changes=rules_changes,
            timings={"compile_s": round(compile_s, 3),
                     "simulate_s": round(sum(s.simulate_s for s in sides), 3),
                     "write_s": round(sum(s.write_s for s in sides) + sum(finalize_s.values()), 3),
                     "total_s": round(time.perf_counter() - t_start, 3)},
            interrupted=interrupted,
            patch_path=None if options.patch is None else str(options.patch),
            rules_b_path=None if options.rules_b is None else str(options.rules_b),
            patch_name=patch.name if patch is not None else "",
            deck_b_path=None if options.deck_b is None else str(options.deck_b),
            deck_b_lines=[] if deck_b is None else deck_b.lines,
            deck_b_name=None if deck_b is None else deck_b.name,
            patch_note=patch.note if patch is not None else "",
            options={"games": games, "players": players, "seed": options.seed,
                     "precision": precision, "rules": None if options.rules is None
                     else str(options.rules), "cards": _cards_option(options.cards),
                     "policy": options.policy,
                     "command": options.command},
        )
        return result
    finally:
        lock.release()


def cards_frame(catalog, sets_from=None) -> pl.DataFrame:
    """A run dir's ``cards.parquet``: the catalog's rows with their ``set``. A patched
    catalog is written as one file (one set), so the variant's cards take their sets from
    the baseline catalog ``sets_from`` by name, and a card the patch adds takes the set of
    the baseline's last file (the layer the patch goes over): only what the patch changed
    differs between the two tables."""
    frame = catalog.to_polars(with_set=True)
    if sets_from is None:
        return frame
    top = sets_from.source_sets[-1][0] if sets_from.source_sets else sets_from.name
    sets = [top if (i := sets_from.by_name.get(c.name)) is None else sets_from.set_of(i)
            for c in catalog.cards]
    return frame.with_columns(pl.Series("set", sets, dtype=pl.String))


def _cards_option(cards: planning.CatalogPaths) -> list[str] | None:
    """``--cards`` as ``compare.json`` records it: None (the shipped sample), or the
    files in load order."""
    if cards is None:
        return None
    return [str(c) for c in ([cards] if isinstance(cards, str | Path) else cards)] or None


def write_summary(result: CompareResult, summary: dict[str, Any]) -> Path:
    """``compare.json`` beside the two run dirs."""
    path = result.out / SUMMARY
    write_json(path, summary)
    return path
