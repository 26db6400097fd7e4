"""Runs of games: tables of play, seeds, chunks, progress, and the run dir (docs/design.md).

A run plays every *table* (a tuple of P deck indices, one per seat) for ``games`` deals,
each deal in every cyclic rotation of the first seat, so seat advantage cancels inside
each table. Games are numbered so that a game's identity never depends on how the run
is cut up::

    game_id = (table * games + deal) * players + rotation        first_seat = rotation

and the engine makes each game a pure function of (inputs, seed, table, deal,
first_seat). Games are simulated in chunks of consecutive ``game_id`` s; chunk c is
written as ``games/part-{c:05d}.parquet`` and ``seats/part-{c:05d}.parquet`` (each
atomically: a temporary name, then ``os.replace``), and only then recorded in
``manifest.json`` (written the same way). So the tables of a run are the same for any
thread count or chunk size, and a run stopped between chunks (Ctrl-C, a full disk) is a
valid run dir that ``resume_run`` finishes to exactly what an uninterrupted run writes.
Memory is one chunk's, whatever the number of games. The chunks are played and written
by the execution loop every command shares (``rnr_sim.execution.execute``).

Each file carries the run's identity and the manifest records its SHA-256
(``rnr_sim.rundir``: ``--resume`` checks them first); a run dir has one writer at a time
(``rnr_sim.dirlock``); sizes are bounded and a full disk answered (``rnr_sim.bounds``).

The public entry points are ``start_run``, ``resume_run``, ``summarize`` /
``format_summary`` (the end-of-run table) and ``bench_run``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import shlex
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim import __version__, bounds, enums, identity, rundir
from rnr_sim.dirlock import LOCK_NAME, DirLock
from rnr_sim.errors import InputError
from rnr_sim.execution import (
    Chunk,
    PartSink,
    Progress,
    chunk_frames,  # noqa: F401  (re-exported: the engine's docs name runner.chunk_frames)
    engine_play,
    execute,
    log_to_stderr,
    open_backend,
    part_name,
    write_json,
    write_parquet,
)
from rnr_sim.pilots import policy_rows, resolve_policies
from rnr_sim.schema import DECKS_SCHEMA, GAMES_SCHEMA, SEATS_SCHEMA, WIN_PATHS  # noqa: F401

#: ``--cards`` as the commands take it: one catalog file, several layered in order
#: (docs/design.md, "Layered catalogs"), or ``None`` / empty for the shipped sample.
CatalogPaths = str | Path | Sequence[str | Path] | None

DEFAULT_SEED = 20251129
DEFAULT_GAMES = 1000  # deals per table
DEFAULT_CHUNK_SIZE = 100_000  # games per chunk (and per parquet part)
DEFAULT_POLICY = "balanced"
MANIFEST = "manifest.json"
SEED_LIMIT = 2**64

def engine_driver():
    """The engine driver, imported on first use (numba is slow to import); tests swap it."""
    from rnr_sim.engine import driver

    return driver


# ---------------------------------------------------------------------------- tables of play


def make_tables(n_decks: int, players: int, mirrors: bool = False,
                vs: int | None = None) -> np.ndarray:
    """Every table of ``players`` distinct decks, as int32[n_tables, players] deck indices.

    Tables are in lexicographic order of their index tuples, which fixes ``table_id``.
    ``mirrors`` adds, for each deck, the table of ``players`` copies of it (for 2 players:
    the deck against itself). ``vs`` keeps only the tables holding deck ``vs``.
    """
    tables = set(itertools.combinations(range(n_decks), players))
    if mirrors:
        tables.update((d,) * players for d in range(n_decks))
    if vs is not None:
        tables = {t for t in tables if vs in t}
    out = np.array(sorted(tables), dtype=np.int32)
    return out.reshape(len(tables), players)


def game_coordinates(game_id: np.ndarray, games: int, players: int):
    """(table, deal, rotation) of each ``game_id`` (int64 arrays): the inverse of
    ``game_id = (table * games + deal) * players + rotation``."""
    game_id = np.asarray(game_id, dtype=np.int64)
    return game_id // (games * players), (game_id // players) % games, game_id % players


def main_branch(deck, catalog) -> str:
    """The Branch with the most cards in ``deck`` (ties: the first in ``enums.BRANCHES``)."""
    counts = Counter(catalog.cards[int(i)].branch for i in deck.card_ids)
    return max(enums.BRANCHES, key=lambda b: counts.get(b, 0))


# ---------------------------------------------------------------------------- the plan


@dataclass
class RunOptions:
    """What ``rnr-sim run`` was asked for; ``None`` means the default."""

    decks: Sequence[str | Path]
    games: int = DEFAULT_GAMES
    players: int = 2
    seed: int = DEFAULT_SEED
    rules: str | Path | None = None
    cards: CatalogPaths = None  # one file or several, layered in order
    policy: str | None = None
    threads: int | None = None
    out: str | Path | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE
    mirrors: bool = False
    vs: str | Path | None = None
    allow_illegal: bool = False
    command: str | None = None
    backend: str = "local"  # where the chunks are played: "local" or "ray"
    address: str | None = None  # --address: a Ray cluster to join (default: start one)
    space_check: bool = True  # refuse a run whose estimated parquet exceeds the free space
    #: The options the calling command takes that an error may offer as a fix
    #: (``--allow-illegal``, ``--mirrors``): a message names no fix the user cannot give.
    fixes: tuple[str, ...] = ()


@dataclass
class RunPlan:
    """Everything that determines a run's results, resolved and checked."""

    catalog: Any
    decks: list  # list[rnr_sim.decks.Deck]
    profile: Any  # rnr_sim.rules.RulesProfile
    policies: list[str]  # per deck: a built-in name, or a policy file's absolute path
    players: int
    games: int  # deals per table
    seed: int
    tables: np.ndarray  # int32[n_tables, players]
    chunk_size: int
    mirrors: bool = False
    vs: int | None = None
    allow_illegal: bool = False
    # Engine inputs, filled by ``compile``.
    cards: np.ndarray | None = field(default=None, repr=False)
    deck_cards: np.ndarray | None = field(default=None, repr=False)
    deck_size: np.ndarray | None = field(default=None, repr=False)
    deck_policy: np.ndarray | None = field(default=None, repr=False)
    rules: np.ndarray | None = field(default=None, repr=False)
    # The policy table the engine reads: the built-ins' rows, then each policy file's.
    policy_table: np.ndarray | None = field(default=None, repr=False)
    policy_names: list[str] = field(default_factory=list)

    @property
    def deck_names(self) -> list[str]:
        return [d.name for d in self.decks]

    @property
    def games_total(self) -> int:
        return len(self.tables) * self.games * self.players

    @property
    def n_chunks(self) -> int:
        return -(-self.games_total // self.chunk_size)

    def chunk_range(self, chunk: int) -> tuple[int, int]:
        start = chunk * self.chunk_size
        return start, min(start + self.chunk_size, self.games_total)

    def compile(self, driver) -> None:
        """The arrays the engine reads (policies by the driver's index)."""
        self.cards = np.ascontiguousarray(self.catalog.compile(), dtype=np.int32)
        self.deck_cards = np.full((len(self.decks), enums.MAX_SLOTS), -1, dtype=np.int32)
        self.deck_size = np.zeros(len(self.decks), dtype=np.int32)
        for i, deck in enumerate(self.decks):
            self.deck_cards[i, : len(deck.card_ids)] = deck.card_ids
            self.deck_size[i] = len(deck.card_ids)
        self.policy_names, self.policy_table, index = policy_rows(self.policies)
        self.deck_policy = np.array([index[p] for p in self.policies], dtype=np.int32)
        self.rules = np.ascontiguousarray(self.profile.compile(), dtype=np.int64)

    def chunk_inputs(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """The per-game engine inputs of games ``start..stop-1``."""
        game_id = np.arange(start, stop, dtype=np.int64)
        table, deal, rotation = game_coordinates(game_id, self.games, self.players)
        seat_deck = np.ascontiguousarray(self.tables[table])
        return {
            "game_id": game_id,
            "seat_deck": seat_deck,
            "seat_policy": np.ascontiguousarray(self.deck_policy[seat_deck]),
            "table_id": table,
            "deal": deal,
            "first_seat": rotation.astype(np.int32),
        }


def check_count(value: int, what: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (
        high is not None and value > high
    ):
        span = f"{low}..{high}" if high is not None else f"at least {low}"
        raise InputError(f"{what} must be a whole number {span}, not {value!r}")
    return value


def check_threads(threads: int | None) -> None:
    if threads is None:
        return
    import numba

    top = numba.config.NUMBA_NUM_THREADS
    check_count(threads, "--threads", 1, top)


def _load_decks(paths: Sequence[Path], catalog) -> list:
    from rnr_sim.decks import load_deck

    decks = [load_deck(p, catalog) for p in paths]
    seen: dict[str, Any] = {}
    for deck in decks:
        other = seen.setdefault(deck.name, deck)
        if other is not deck:
            raise InputError(
                f"two decks are named '{deck.name}': {other.path} and {deck.path}; the "
                "results name decks, so give one a different 'Name:' header"
            )
        if len(deck.card_ids) > enums.MAX_SLOTS:
            raise InputError(f"{deck.path}: {len(deck.card_ids)} cards; the engine plays "
                             f"decks of at most {enums.MAX_SLOTS}")
    return decks


def _check_legal(decks: list, catalog, profile, fixes: tuple[str, ...] = ()) -> None:
    from rnr_sim.decks import validate_deck

    for deck in decks:
        errors = [v for v in validate_deck(deck, catalog, profile) if not v.warning]
        if errors:
            shown = "; ".join(str(v) for v in errors[:3])
            more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
            anyway = (", or pass --allow-illegal to play it anyway"
                      if "--allow-illegal" in fixes else "")
            raise InputError(
                f"deck '{deck.name}' ({deck.path}) is illegal: {shown}{more}; "
                f"see `rnr-sim validate {shlex.quote(str(deck.path))}`{anyway}"
            )


def plan_run(options: RunOptions) -> RunPlan:
    """Load and check a run's catalog, decks, rules and shape (raises ``InputError``)."""
    from rnr_sim.cards import load_catalog
    from rnr_sim.rules import load_profile

    players = check_count(options.players, "--players", 2, enums.MAX_PLAYERS)
    games = check_count(options.games, "--games", 1)
    chunk_size = check_count(options.chunk_size, "--chunk-size", 1)
    seed = check_count(options.seed, "--seed", 0, SEED_LIMIT - 1)
    check_threads(options.threads)

    paths = [Path(p) for p in options.decks]
    if not paths and options.vs is None:
        raise InputError("no decks: give deck list files, e.g. rnr-sim run decks/*.txt")
    vs_index = None
    if options.vs is not None:
        vs_path = Path(options.vs)
        resolved = [p.resolve() for p in paths]
        if vs_path.resolve() in resolved:
            vs_index = resolved.index(vs_path.resolve())
        else:
            paths.append(vs_path)
            vs_index = len(paths) - 1
    from rnr_sim.decks import catalog_paths

    catalog = load_catalog(catalog_paths(options.cards, paths))
    profile = load_profile(None if options.rules is None else Path(options.rules).resolve())
    decks = _load_decks(paths, catalog)
    if not options.allow_illegal:
        _check_legal(decks, catalog, profile, options.fixes)
    policies = resolve_policies(decks, options.policy)
    tables = make_tables(len(decks), players, options.mirrors, vs_index)
    if len(tables) == 0:
        raise InputError(
            f"{len(decks)} {'deck makes' if len(decks) == 1 else 'decks make'} no {players}-player "
            f"table: give at least {players} distinct decks"
            + (", or --mirrors" if "--mirrors" in options.fixes else "")
        )
    bounds.check_shape(len(tables), games, players)
    plan = RunPlan(catalog=catalog, decks=decks, profile=profile, policies=policies,
                   players=players, games=games, seed=seed, tables=tables,
                   chunk_size=chunk_size, mirrors=options.mirrors, vs=vs_index,
                   allow_illegal=options.allow_illegal)
    return plan


# ---------------------------------------------------------------------------- the manifest


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def _policy_weights(plan: RunPlan, driver) -> dict[str, list[float]]:
    """The weights of every policy the run's decks use, by name."""
    names, table, index = policy_rows(plan.policies)
    return {names[index[p]]: [float(x) for x in table[index[p]]]
            for p in sorted(set(plan.policies), key=lambda r: names[index[r]])}


def new_manifest(plan: RunPlan, driver, command: str | None) -> dict[str, Any]:
    """The manifest of a run not yet started (no chunk complete)."""
    catalog = plan.catalog
    names = plan.deck_names
    manifest = {
        "tool_version": __version__,
        "created": _now(),
        "command": command,
        "status": "incomplete",
        "seed": plan.seed,
        "games_requested": plan.games,
        "games_total": plan.games_total,
        "games_done": 0,
        "players": plan.players,
        "mirrors": plan.mirrors,
        "vs": None if plan.vs is None else names[plan.vs],
        "allow_illegal": plan.allow_illegal,
        "rules": plan.profile.to_dict(),
        "rules_changed": plan.profile.changed(),
        "rules_sha256": file_sha256(plan.profile.source),
        "catalog": {
            "name": catalog.name,
            "version": catalog.version,
            "path": None if catalog.path is None else str(Path(catalog.path).resolve()),
            "sha256": catalog.sha256,
            "sources": catalog_sources(catalog),
        },
        "decks": [
            {
                "name": d.name,
                "path": str(Path(d.path).resolve()),
                "sha256": d.sha256,
                "policy": policy,
                "main_branch": main_branch(d, catalog),
            }
            for d, policy in zip(plan.decks, plan.policies, strict=True)
        ],
        "tables": [[names[i] for i in t] for t in plan.tables.tolist()],
        "policies": _policy_weights(plan, driver),
        "chunk_size": plan.chunk_size,
        "chunks": {"total": plan.n_chunks, "complete": []},
        "timings": {"compile_s": 0.0, "simulate_s": 0.0, "write_s": 0.0, "total_s": 0.0,
                    "games_per_s": 0.0},
        "resumed": [],
    }
    manifest["identity"] = identity.seal(rundir.run_identity(manifest))
    manifest["files"] = {}  # path in the run dir -> SHA-256, as each file is written
    return manifest


def catalog_sources(catalog) -> list[dict[str, str | None]]:
    """Every file of ``catalog`` in load order (a base before the file naming it): its
    absolute path and SHA-256, as the manifest records them."""
    return [{"path": None if s.path is None else str(Path(s.path).resolve()),
             "sha256": s.sha256} for s in catalog.sources]


def _reload_catalog(cat: dict[str, Any], where: str):
    """The catalog a run was started with, re-read from its files (``sources``, in load
    order; a manifest from before layered catalogs has only ``path``). Raises
    ``InputError`` naming the first file whose SHA-256 differs."""
    from rnr_sim.cards import load_catalog

    sources = cat.get("sources")
    if sources:
        catalog = load_catalog([s["path"] for s in sources])
        now = catalog_sources(catalog)
        for i, source in enumerate(sources):
            if i >= len(now) or now[i] != source:
                raise InputError(f"{where}: the card catalog file {source['path']} changed "
                                 "since the run started (SHA-256 differs); start a new run")
    else:
        catalog = load_catalog(cat["path"])
    if catalog.sha256 != cat["sha256"]:
        shown = cat.get("path") or " + ".join(str(s["path"]) for s in sources or ())
        raise InputError(f"{where}: the card catalog {shown} changed since the run "
                         "started (SHA-256 differs); start a new run")
    return catalog


def file_sha256(path: str | Path | None) -> str | None:
    """A file's SHA-256 (None for no file); an unreadable file is the user's error
    (``identity.file_sha256``)."""
    return None if path is None else identity.file_sha256(Path(path))


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    """A run dir's manifest (raises ``InputError`` when there is none or it is broken)."""
    path = Path(run_dir) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{run_dir}: not a run dir (no {MANIFEST})") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: broken manifest ({e})") from None
    if not isinstance(manifest, dict) or "chunks" not in manifest:
        raise InputError(f"{path}: not an rnr-sim run manifest")
    return manifest


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    write_json(run_dir / MANIFEST, manifest)


def write_tables(run_dir: Path, plan: RunPlan, manifest: dict[str, Any],
                 cards: pl.DataFrame | None = None) -> None:
    """``decks.parquet`` and ``cards.parquet`` (``cards``: the catalog's own table unless
    given), stamped with the run's identity, their SHA-256 recorded in ``manifest``."""
    frames = {"decks.parquet": decks_frame(plan),
              "cards.parquet": plan.catalog.to_polars(with_set=True) if cards is None
              else cards}
    for name, frame in frames.items():
        manifest.setdefault("files", {})[name] = write_parquet(
            run_dir / name, frame, rundir.table_stamp(manifest, name))


# ---------------------------------------------------------------------------- run dir tables


def decks_frame(plan: RunPlan) -> pl.DataFrame:
    """One row per deck slot: deck, slot (int16, the deck's own order), card."""
    rows = [(d.name, k, name) for d in plan.decks for k, name in enumerate(d.slots)]
    return pl.DataFrame(rows, schema=DECKS_SCHEMA, orient="row")


# ---------------------------------------------------------------------------- running


@dataclass
class RunResult:
    run_dir: Path
    manifest: dict[str, Any]
    interrupted: bool
    already_complete: bool = False  # ``--resume`` of a finished run: nothing was changed

    @property
    def complete(self) -> bool:
        return self.manifest["games_done"] == self.manifest["games_total"]


def _out_name(prefix: str = "") -> Path:
    return Path("runs") / f"{prefix}{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def default_out(prefix: str = "") -> Path:
    """A new folder under runs/ named by the time (``prefix`` first): runs/20261129-201500
    (not created: ``claim_out`` creates it)."""
    base = _out_name(prefix)
    out, k = base, 1
    while out.exists():
        k += 1
        out = base.with_name(f"{base.name}-{k}")
    return out


def check_out(out: Path, command: str = "run", checkpoint: str | None = None,
              what: str | None = None) -> None:
    """Refuse a dir that exists with anything in it: a command never overwrites files.
    ``command`` (``run``, ``discover``, ``balance``, ``power``...) and its ``checkpoint``
    folder (``.discover``...) shape the fix the message offers: a stopped command of that
    kind is continued with its own ``--resume``; a finished one, or another command's dir,
    is left alone for another ``--out``."""
    if out.exists():
        if not out.is_dir():
            raise InputError(f"--out {out}: exists and is not a directory")
        try:  # the lock, and a manifest half-written by a killed start, are not a run
            entries = any(p.name not in (LOCK_NAME, f".{MANIFEST}.tmp") for p in out.iterdir())
        except OSError as e:
            raise InputError(f"--out {out}: cannot read ({e.strerror})") from None
        if not entries:
            return
        quoted = shlex.quote(str(out))
        if (out / MANIFEST).exists():
            from rnr_sim.searchdirs import manifest_kind

            kind = manifest_kind(out) or None  # "" (a run dir) or unreadable: None
            if kind is None and command == "run":  # a run dir: run --resume finishes it
                raise InputError(
                    f"--out {out}: already holds a run; continue it with "
                    f"`rnr-sim run --resume {quoted}`, or choose another --out")
            held = {None: "run", "discovery": "discovery", "balance": "balance run",
                    "power": "power run"}.get(kind, str(kind))
            raise InputError(f"--out {out}: already holds a {held} (manifest.json); choose "
                             "another --out (a command never overwrites files)")
        if checkpoint is not None and (out / checkpoint).is_dir():
            raise InputError(f"--out {out}: holds a stopped {what or command}; continue it with "
                             f"`rnr-sim {command} --resume --out {quoted}` and the same "
                             "options, or choose another --out")
        raise InputError(f"--out {out}: not empty; choose a new or empty directory "
                         "(a command never overwrites files)")


def check_dir(out: Path, resume: bool, command: str, checkpoint: str, kind: str,
              what: str, given: bool = True) -> None:
    """Where a resumable search command (``discover``, ``balance``, ``power``) writes:
    with ``--resume``, a dir holding its stopped ``checkpoint`` (``given``: the user named
    it with ``--out``; a default new folder holds nothing to resume); else one
    ``check_out`` accepts. ``kind``: the manifest kind of its finished dir; ``what``: the
    dir in words ("discovery", "balance run")."""
    if resume and not given:
        raise InputError(f"--resume continues a stopped {what}: give its --out DIR (the "
                         f"folder the stopped `rnr-sim {command}` wrote to)")
    if not resume:
        check_out(out, command, checkpoint, what)
        return
    if (out / checkpoint / "plan.json").exists():
        return
    if (out / MANIFEST).exists():
        from rnr_sim.searchdirs import manifest_kind

        kind_here = manifest_kind(out)
        if kind_here == kind:
            raise InputError(f"--resume {out}: this {what} is complete; nothing to resume")
        held = {None: "unreadable", "": "run"}.get(kind_here, kind_here)
        raise InputError(f"--resume {out}: holds a {held} dir, not a stopped "
                         f"{what}; give the --out of the stopped `rnr-sim {command}`")
    raise InputError(f"--resume {out}: no stopped {what} here (no {checkpoint}/plan.json); "
                     f"give the --out of the stopped `rnr-sim {command}`")


@contextlib.contextmanager
def resume_on_full_disk(command: str, out: Path):
    """A full disk while a resumable command (``discover``, ``balance``, ``power``) writes
    its checkpoints or its dir: one line that says how to carry on once there is room."""
    try:
        yield
    except bounds.DiskFull as e:
        raise InputError(f"{e}; free some space, then continue with `rnr-sim {command} "
                         f"--resume --out {shlex.quote(str(out))}` and the same options "
                         "(the games played so far are kept)") from None


def claim_out(out: Path | None, prefix: str = "", what: str = "run dir",
              ) -> tuple[Path, bool, DirLock]:
    """Create the output folder and take its lock: ``out``, or without it a new folder
    runs/<prefix><YYYYmmdd-HHMMSS> (``-2``, ``-3``... when taken: the name is claimed by
    creating it, so two commands started in the same second get two folders). Returns
    (folder, created, lock); the folder is checked to be empty under the lock."""
    created = False
    if out is None:
        base, k = _out_name(prefix), 1
        while True:
            out = base if k == 1 else base.with_name(f"{base.name}-{k}")
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.mkdir()
                created = True
                break
            except FileExistsError:
                k += 1
            except OSError as e:
                raise InputError(f"--out {out}: cannot create ({e.strerror})") from None
    else:
        created = not out.exists()
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"--out {out}: cannot create the {what} ({e.strerror})") from None
    try:
        lock = DirLock(out, what).acquire()
    except InputError:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise
    try:
        check_out(out)
    except InputError:
        lock.release()
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise
    return out, created, lock


def remove_started(out: Path, created: bool) -> None:
    """Remove what a command that wrote nothing worth keeping put in ``out`` (the folder
    itself if it created it, else its contents: it was empty)."""
    if created:
        shutil.rmtree(out, ignore_errors=True)
        return
    for entry in out.iterdir() if out.is_dir() else ():
        if entry.name == LOCK_NAME:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _resume_hint(out: Path) -> str:
    return f"rnr-sim run --resume {shlex.quote(str(out))}"


def start_run(options: RunOptions, progress: bool = True,
              log: Callable[[str], None] = log_to_stderr) -> RunResult:
    """Plan, create the run dir (``options.out``, else ``runs/<YYYYmmdd-HHMMSS>``), lock it
    (one writer at a time, ``dirlock``) and simulate every chunk. Ctrl-C stops after the
    current chunk (``interrupted``); stopped before the first chunk is under way, or
    failing to write the run dir's first files, it leaves nothing behind."""
    out = Path(options.out) if options.out is not None else None
    if out is not None:
        check_out(out)
    plan = plan_run(options)
    if options.space_check:
        bounds.check_space(out if out is not None else Path("runs"), plan.games_total,
                           plan.players)
    bounds.check_chunks(plan.games_total, plan.chunk_size)
    where = open_backend(options.backend, options.address, options.threads)
    driver = engine_driver()
    out, created, lock = claim_out(out)
    try:
        try:  # the manifest first: from then on the dir is a run --resume can finish
            (out / f".{MANIFEST}.tmp").unlink(missing_ok=True)
            manifest = new_manifest(plan, driver, options.command)
            write_manifest(out, manifest)
            for sub in ("games", "seats"):
                (out / sub).mkdir(exist_ok=True)
            write_tables(out, plan, manifest)
            write_manifest(out, manifest)
        except OSError as e:
            remove_started(out, created)
            raise InputError(f"--out {out}: cannot create the run dir ({e.strerror})") from None
        except bounds.DiskFull as e:
            remove_started(out, created)
            need = plan.games_total * bounds.bytes_per_game(plan.players)
            raise InputError(f"{e.path}: no space left on the device ({e.reason}); the run "
                             f"needs about {bounds.format_bytes(need)} and "
                             f"{bounds.format_bytes(bounds.free_bytes(out.parent) or 0)} are "
                             "free; nothing was written") from None
        except BaseException:
            remove_started(out, created)
            raise
        try:
            return _execute(plan, out, manifest, driver, where, progress, log)
        except KeyboardInterrupt:
            if not manifest["chunks"]["complete"]:  # before the loop took over Ctrl-C
                remove_started(out, created)
            raise
    finally:
        lock.release()


def _plan_from_manifest(run_dir: Path, manifest: dict[str, Any]) -> RunPlan:
    """Re-load what a run was started with; any changed input file is an error."""
    from rnr_sim.rules import load_profile

    where = f"--resume {run_dir}"
    if manifest.get("tool_version") != __version__:
        raise InputError(f"{where}: the run was started by rnr-sim "
                         f"{manifest.get('tool_version')}, this is {__version__}; its "
                         "games would differ, so start a new run")
    catalog = _reload_catalog(manifest["catalog"], where)
    rules = manifest["rules"]
    profile = load_profile(rules.get("source"))
    if profile.to_dict() != rules or file_sha256(rules.get("source")) != manifest.get(
        "rules_sha256"
    ):
        changed = sorted(k for k, v in profile.values.items()
                         if rules["switches"].get(k) != v)
        raise InputError(f"{where}: the rules file {rules.get('source')} changed since the "
                         f"run started ({', '.join(changed) or 'its name'}); start a new run")
    entries = manifest["decks"]
    decks = _load_decks([Path(e["path"]) for e in entries], catalog)
    for deck, entry in zip(decks, entries, strict=True):
        if deck.sha256 != entry["sha256"] or deck.name != entry["name"]:
            raise InputError(f"{where}: the deck list {entry['path']} changed since the run "
                             "started (SHA-256 differs); start a new run")
    names = [d.name for d in decks]
    vs = None if manifest.get("vs") is None else names.index(manifest["vs"])
    plan = RunPlan(catalog=catalog, decks=decks, profile=profile,
                   policies=[e["policy"] for e in entries], players=manifest["players"],
                   games=manifest["games_requested"], seed=manifest["seed"],
                   tables=make_tables(len(decks), manifest["players"], manifest["mirrors"], vs),
                   chunk_size=manifest["chunk_size"], mirrors=manifest["mirrors"], vs=vs,
                   allow_illegal=manifest.get("allow_illegal", False))
    tables = [[names[i] for i in t] for t in plan.tables.tolist()]
    if tables != manifest["tables"] or plan.games_total != manifest["games_total"] or (
        plan.n_chunks != manifest["chunks"]["total"]
    ):
        raise InputError(f"{where}: the manifest's tables or games do not match its decks; "
                         "was it edited? Start a new run")
    driver = engine_driver()
    for deck, ref in zip(decks, plan.policies, strict=True):
        try:
            policy_rows([ref])
        except InputError as e:
            raise InputError(f"{where}: deck '{deck.name}': {e}") from None
    if _policy_weights(plan, driver) != manifest["policies"]:
        raise InputError(f"{where}: the engine's policy weights changed since the run "
                         "started; start a new run")
    return plan


def resume_run(run_dir: str | Path, threads: int | None = None, progress: bool = True,
               log: Callable[[str], None] = log_to_stderr, backend: str = "local",
               address: str | None = None, space_check: bool = True) -> RunResult:
    """Finish the chunks a stopped run did not complete; the result equals the run done
    in one go, whichever backend played which chunks. The run dir is locked (one writer
    at a time) and checked by content first (``rundir.verify_run_dir``: its parts, the
    manifest's seed and switches); its inputs are re-read and must be unchanged
    (SHA-256). A finished run is left as it is (``already_complete``)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InputError(f"--resume {run_dir}: no such run dir")
    check_threads(threads)
    read_manifest(run_dir)  # not a run dir: say so before taking a lock in it
    with DirLock(run_dir, "run dir"):
        manifest = read_manifest(run_dir)
        for name in rundir.TABLE_FILES:  # written, but killed before it was recorded
            if name not in (manifest.get("files") or {}):
                (run_dir / name).unlink(missing_ok=True)
        if not rundir.verify_run_dir(run_dir, manifest):
            raise InputError(f"--resume {run_dir}: the run was started by an rnr-sim that "
                             "did not record its parts' identity; start a new run")
        plan = _plan_from_manifest(run_dir, manifest)
        if _finished(run_dir, manifest):
            return RunResult(run_dir, manifest, interrupted=False, already_complete=True)
        if space_check:
            bounds.check_space(run_dir, plan.games_total - _games_on_disk(run_dir, manifest),
                               plan.players)
        where = open_backend(backend, address, threads)
        driver = engine_driver()
        for sub in ("games", "seats", "."):  # and the files a killed run was writing
            try:
                (run_dir / sub).mkdir(exist_ok=True)
                for tmp in (run_dir / sub).glob(".*.tmp"):
                    tmp.unlink()
            except OSError as e:
                raise InputError(f"{run_dir / sub}: cannot write ({e.strerror})") from None
        missing = [n for n in rundir.TABLE_FILES if not (run_dir / n).exists()]
        if missing:
            try:
                write_tables(run_dir, plan, manifest)
            except InputError as e:
                raise InputError(f"{e}; the run dir is as it was: fix the cause and "
                                 f"continue with `{_resume_hint(run_dir)}`") from None
        manifest["resumed"] = [*manifest.get("resumed", []), _now()]
        return _execute(plan, run_dir, manifest, driver, where, progress, log)


def _games_on_disk(run_dir: Path, manifest: dict[str, Any]) -> int:
    """Games of the complete chunks whose parts are both on disk."""
    size, total = manifest["chunk_size"], manifest["games_total"]
    return sum(min(size, total - c * size) for c in manifest["chunks"]["complete"]
               if (run_dir / "games" / part_name(c)).exists()
               and (run_dir / "seats" / part_name(c)).exists())


def _finished(run_dir: Path, manifest: dict[str, Any]) -> bool:
    """Every game played and every file the manifest vouches for on disk."""
    return (manifest.get("status") == "complete"
            and manifest.get("games_done") == manifest.get("games_total")
            and all((run_dir / rel).is_file() for rel in rundir.expected_files(manifest)))


def _execute(plan: RunPlan, out: Path, manifest: dict[str, Any], driver, where,
             progress: bool, log: Callable[[str], None]) -> RunResult:
    """Simulate and write every chunk not yet complete (``execution.execute`` on
    ``backend``), recording each in the manifest once its parts are written, with the
    backend and each chunk's play seconds (``execution``: one entry per start or resume)."""
    with where:
        return _execute_on(plan, out, manifest, driver, where, progress, log)


def _remove_unrecorded(out: Path, complete: list[int]) -> None:
    """Parts on disk of chunks the manifest does not record (written, then stopped before
    the manifest was): the run dir is left holding only whole, recorded chunks."""
    keep = {part_name(c) for c in complete}
    for sub in ("games", "seats"):
        for part in (out / sub).glob("part-*.parquet"):
            if part.name not in keep:
                part.unlink(missing_ok=True)


def _bytes_per_game(out: Path, complete: list[int], done: int, players: int) -> float:
    """Parquet bytes a game of this run takes: measured on its ``complete`` chunks' parts
    (``done`` games) when it has some, else the estimate."""
    parts = [out / sub / part_name(c) for c in complete for sub in ("games", "seats")]
    size = sum(p.stat().st_size for p in parts if p.exists())
    return size / done if done and size else bounds.bytes_per_game(players)


def _execute_on(plan: RunPlan, out: Path, manifest: dict[str, Any], driver, where,
                progress: bool, log: Callable[[str], None]) -> RunResult:
    t_start = time.perf_counter()
    session = {**where.describe(), "started": _now(), "chunk_s": {}}
    manifest["execution"] = [*manifest.get("execution", []), session]
    timings = manifest["timings"]
    complete = sorted(c for c in manifest["chunks"]["complete"]
                      if (out / "games" / part_name(c)).exists()
                      and (out / "seats" / part_name(c)).exists())
    games_done = manifest["games_done"] = sum(b - a for a, b in map(plan.chunk_range, complete))
    saved = {"complete": complete, "games_done": games_done}  # as last written to disk
    plan.compile(driver)
    engine = engine_play(driver, plan, where.threads)
    sink = PartSink(out, plan, plan.policy_names,
                    metadata=lambda table, c: rundir.part_stamp(manifest, table, c))

    def save(tally) -> None:
        session["chunk_s"] = {str(c): round(s, 3) for c, s in tally.chunk_s.items()}
        elapsed = time.perf_counter() - t_start
        compile_s = tally.compile_s
        manifest["chunks"]["complete"] = sorted(complete + tally.written)
        manifest["games_done"] = games_done + tally.games
        manifest["status"] = ("complete" if manifest["games_done"] == plan.games_total
                              else "incomplete")
        manifest.setdefault("files", {}).update(sink.sha)
        run_s = timings["total_s"] + elapsed - timings["compile_s"] - compile_s
        manifest["timings"] = {
            "compile_s": round(timings["compile_s"] + compile_s, 3),
            "simulate_s": round(timings["simulate_s"] + sum(tally.simulate_s.values()), 3),
            "write_s": round(timings["write_s"] + sum(tally.write_s.values()), 3),
            "total_s": round(timings["total_s"] + elapsed, 3),
            # Steady throughput: every game simulated and written, the compile aside.
            "games_per_s": round(manifest["games_done"] / run_s, 1) if run_s > 0 else 0.0,
        }
        write_manifest(out, manifest)
        saved.update(complete=list(manifest["chunks"]["complete"]),
                     games_done=manifest["games_done"])

    chunks = (Chunk(c, plan.chunk_inputs(*plan.chunk_range(c))) for c in range(plan.n_chunks))
    bar = Progress("rnr-sim run", plan.games_total, games_done, show=progress, log=log)
    try:
        with bar:
            tally = execute(chunks, lambda chunk: engine(chunk.inputs), sink,
                            skip=set(complete), backend=where, progress=bar,
                            warm_up=driver.needs_compile,
                            after=lambda chunk, tally: save(tally))
        save(tally)
    except InputError as e:
        # The manifest on disk is the last one written: the message counts its games, and
        # parts it does not record go, as after a Ctrl-C.
        _remove_unrecorded(out, saved["complete"])
        done = saved["games_done"]
        if isinstance(e, bounds.DiskFull):
            per_game = _bytes_per_game(out, saved["complete"], done, plan.players)
            raise InputError(bounds.disk_full_message(
                e, out, plan.games_total - done, per_game, done, _resume_hint(out))) from None
        raise InputError(
            f"{e}; the run dir keeps the {done:,} games done: fix the cause and "
            f"continue with `{_resume_hint(out)}`"
        ) from None
    if tally.interrupted:
        _remove_unrecorded(out, saved["complete"])
    return RunResult(out, manifest, tally.interrupted)


# ---------------------------------------------------------------------------- reading results


def complete_parts(run_dir: str | Path) -> list[str]:
    """The part file names of the chunks a run's manifest records as complete, in order
    (a part on disk the manifest does not name is ignored: it is re-made on resume)."""
    return [part_name(c) for c in sorted(read_manifest(run_dir)["chunks"]["complete"])]


def scan_table(run_dir: str | Path, table: str) -> pl.LazyFrame:
    """A run's ``games`` or ``seats`` table over its complete chunks, in game_id order."""
    parts = [Path(run_dir) / table / name for name in complete_parts(run_dir)]
    if not parts:
        return pl.LazyFrame(schema=GAMES_SCHEMA if table == "games" else SEATS_SCHEMA)
    return pl.scan_parquet(parts)


def summarize(run_dir: str | Path) -> pl.DataFrame:
    """Per deck, from the run's parquet, against the field (mirror games, a deck against
    itself, are left out and counted in ``mirror_games``): games (seat rows), wins,
    win_rate with its 95% interval (ci_low, ci_high) and design effect ``deff``, draw
    rate, and the share of its wins by each victory path. Best win rate first.

    The interval has the deal as the unit (``analytics.stats.ratio_by_deal``): the games
    of one deal share their shuffles, so the interval comes from the spread of per-deal
    wins between the deals of each table, as a Wilson interval on games / deff.

    Counted part by part (a chunk's games and seats parts hold the same games): per-deal
    sums are folded into per-table moments as soon as a deal is complete (only a part's
    last deal can go on in the next part), so memory is one part's whatever the size of
    the run.
    """
    from rnr_sim.analytics.stats import deal_moments, ratio_from_moments

    run_dir = Path(run_dir)
    paths = [(pl.col("won") & (pl.col("path") == path)).sum().cast(pl.Int64).alias(path)
             for path in WIN_PATHS]
    sums_schema = {"deck": pl.String, "table_id": pl.Int32, "deal": pl.Int64,
                   "y": pl.Float64, "n": pl.Float64}
    totals, moments, mirrors = [], [], []
    pending = pl.DataFrame(schema=sums_schema)
    for name in complete_parts(run_dir):
        games = pl.scan_parquet(run_dir / "games" / name).select(
            "game_id", "table_id", "deal", "path")
        rows = pl.scan_parquet(run_dir / "seats" / name).select("game_id", "deck", "won").join(
            games, on="game_id").with_columns(
            (pl.col("deck").n_unique().over("game_id") == 1).alias("mirror")).collect()
        mirrors.append(rows.filter(pl.col("mirror")).group_by("deck").agg(
            pl.len().cast(pl.Int64).alias("mirror_games")))
        field = rows.filter(~pl.col("mirror"))
        totals.append(field.group_by("deck").agg(
            pl.len().cast(pl.Int64).alias("games"),
            pl.col("won").sum().cast(pl.Int64).alias("wins"),
            (pl.col("path") == "draw").sum().cast(pl.Int64).alias("draws"), *paths))
        per_deal = pl.concat([pending, field.group_by("deck", "table_id", "deal").agg(
            pl.col("won").sum().cast(pl.Float64).alias("y"),
            pl.len().cast(pl.Float64).alias("n"))], how="vertical_relaxed")
        per_deal = per_deal.group_by("deck", "table_id", "deal").agg(pl.col("y", "n").sum())
        last = games.select(pl.col("table_id", "deal").sort_by("game_id").last()).collect()
        if last.height and last["table_id"][0] is not None:
            t, d = last["table_id"][0], last["deal"][0]
            at_end = (pl.col("table_id") == t) & (pl.col("deal") == d)
            pending = per_deal.filter(at_end)
            per_deal = per_deal.filter(~at_end)
        moments.append(deal_moments(per_deal.lazy(), ["deck"]).collect())
    moments.append(deal_moments(pending.lazy(), ["deck"]).collect())
    schema = {"deck": pl.String, "games": pl.Int64, "wins": pl.Int64, "draws": pl.Int64,
              **dict.fromkeys(WIN_PATHS, pl.Int64)}
    per = pl.concat(totals) if totals else pl.DataFrame(schema=schema)
    per = per.group_by("deck").sum()
    mirror = (pl.concat(mirrors) if mirrors else
              pl.DataFrame(schema={"deck": pl.String, "mirror_games": pl.Int64}))
    mirror = mirror.group_by("deck").sum()
    raw = pl.concat(moments).group_by("deck", "table_id").sum()
    ci = ratio_from_moments(raw.lazy(), ["deck"], name="win_rate").collect()
    n = pl.col("games").cast(pl.Float64)
    wins = pl.col("wins").cast(pl.Float64)
    per = per.join(mirror, on="deck", how="full", coalesce=True).with_columns(
        [pl.col(c).fill_null(0) for c in ("games", "wins", "draws", "mirror_games",
                                          *WIN_PATHS)])
    per = per.join(ci.select("deck", "win_rate_lo", "win_rate_hi", "win_rate_deff"),
                   on="deck", how="left").select(
        "deck", "games", "wins",
        pl.when(n > 0).then(wins / n).otherwise(None).alias("win_rate"),
        pl.col("win_rate_lo").alias("ci_low"),
        pl.col("win_rate_hi").alias("ci_high"),
        pl.col("win_rate_deff").alias("deff"),
        pl.when(n > 0).then(pl.col("draws") / n).otherwise(None).alias("draw_rate"),
        *[pl.when(wins > 0).then(pl.col(path) / wins).otherwise(0.0).alias(path)
          for path in WIN_PATHS],
        "mirror_games",
    )
    return per.sort(["win_rate", "deck"], descending=[True, False], nulls_last=True)


def format_summary(summary: pl.DataFrame) -> str:
    """The end-of-run table: one line per deck."""
    head = ["deck", "games", "win", "95% CI", *WIN_PATHS, "draws"]
    body = []
    for r in summary.iter_rows(named=True):
        if r["win_rate"] is None:  # played mirrors only
            body.append([r["deck"], "0", "-", "-", *["-" for _ in WIN_PATHS], "-"])
            continue
        body.append([
            r["deck"],
            f"{r['games']:,}",
            f"{100 * r['win_rate']:.1f}%",
            f"{100 * r['ci_low']:.1f}-{100 * r['ci_high']:.1f}%",
            *[f"{100 * r[p]:.0f}%" for p in WIN_PATHS],
            f"{100 * r['draw_rate']:.1f}%",
        ])
    widths = [max(len(str(row[i])) for row in [head, *body]) for i in range(len(head))]
    lines = []
    for row in [head, *body]:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:],
                                                                        strict=True)]
        lines.append("  ".join(cells))
    lines.insert(1, "  ".join("-" * w for w in widths))
    if body:
        lines.append("(win shares by path: the share of the deck's wins; 95% CI: the deal "
                     "is the unit)")
    if "mirror_games" in summary.columns and summary["mirror_games"].sum():
        lines.append("(against the field: games of a deck against itself are left out)")
    return "\n".join(lines)


def summary_json(result: RunResult, summary: pl.DataFrame | None) -> dict[str, Any]:
    """The machine-readable summary ``rnr-sim run --json`` prints."""
    m = result.manifest
    return {
        "run_dir": str(result.run_dir),
        "status": m["status"],
        "interrupted": result.interrupted,
        "seed": m["seed"],
        "players": m["players"],
        "games_done": m["games_done"],
        "games_total": m["games_total"],
        "timings": m["timings"],
        "decks": [] if summary is None else summary.to_dicts(),
    }


# ---------------------------------------------------------------------------- bench


def sample_decks() -> list[Path]:
    """The shipped sample deck lists (``decks/*.txt`` of the source tree, or of the
    current directory)."""
    for base in (Path(__file__).resolve().parent.parent / "decks", Path("decks")):
        found = sorted(base.glob("*.txt"))
        if found:
            return found
    raise InputError("no sample decks found (decks/*.txt)")


def bench_run(games: int = 200_000, threads: int | None = None, backend: str = "local",
              address: str | None = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
              manifest: dict[str, Any] | None = None) -> float:
    """Games per second of ``rnr-sim run`` end to end on the sample decks: simulate and
    write about ``games`` two-player games into a temporary run dir (the compile or
    cache load before the first game excluded; with Ray, the start of Ray excluded but
    each worker's engine load included). ``manifest``: filled with the run's manifest."""
    decks = sample_decks()
    n_tables = len(make_tables(len(decks), 2))
    deals = max(1, math.ceil(games / (2 * n_tables)))
    with tempfile.TemporaryDirectory(prefix="rnr-sim-bench-") as tmp:
        options = RunOptions(decks=decks, games=deals, players=2, threads=threads,
                             out=Path(tmp) / "run", command="bench_run",
                             chunk_size=chunk_size, backend=backend, address=address)
        result = start_run(options, progress=False, log=lambda m: None)
        if manifest is not None:
            manifest.update(result.manifest)
        return float(result.manifest["timings"]["games_per_s"])
