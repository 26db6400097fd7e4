"""The plan every command builds: the decks, catalog, rules and pilots of a run, its tables
of play and how its games are numbered and cut into chunks (``RunOptions`` -> ``plan_run``
-> ``RunPlan``).

A run plays every *table* (a tuple of P deck indices, one per seat) for ``games`` deals,
each deal in every cyclic rotation of the first seat, so seat advantage cancels inside
each table. Games are numbered so that a game's identity never depends on how the run
is cut up::

    game_id = (table * games + deal) * players + rotation        first_seat = rotation

and the engine makes each game a pure function of (inputs, seed, table, deal,
first_seat)."""

from __future__ import annotations

import itertools
import shlex
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rnr_sim import enums
from rnr_sim.errors import InputError
from rnr_sim.pilots import policy_rows, resolve_policies
from rnr_sim.runs import bounds
from rnr_sim.runs.arguments import check_count, check_threads
from rnr_sim.runs.inputs import GameInputs

#: ``--cards`` as the commands take it: one catalog file, several layered in order
#: (docs/design.md, "Layered catalogs"), or ``None`` / empty for the shipped sample.
CatalogPaths = str | Path | Sequence[str | Path] | None

DEFAULT_SEED = 20251129
DEFAULT_GAMES = 1000  # deals per table
DEFAULT_CHUNK_SIZE = 100_000  # games per chunk (and per parquet part)
DEFAULT_POLICY = "balanced"
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
class SearchOptions:
    """What the search commands (``discover``, ``balance``, ``power``) take beside their own:
    the seed, the rules, where the games are played, the dir and whether to resume it."""

    seed: int = DEFAULT_SEED
    rules: str | Path | None = None
    threads: int | None = None
    backend: str = "local"  # where the games are played: "local" or "ray"
    address: str | None = None  # a Ray cluster to join (default: start one)
    out: str | Path | None = None
    resume: bool = False
    command: str | None = None


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

    def chunk_inputs(self, start: int, stop: int) -> GameInputs:
        """The per-game engine inputs of games ``start..stop-1``."""
        game_id = np.arange(start, stop, dtype=np.int64)
        table, deal, rotation = game_coordinates(game_id, self.games, self.players)
        return GameInputs.at_tables(self.tables, self.deck_policy, table, deal, rotation,
                                    game_id)



def load_decks(paths: Sequence[Path], catalog) -> list:
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


def check_legal(decks: list, catalog, profile, fixes: tuple[str, ...] = ()) -> None:
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
    decks = load_decks(paths, catalog)
    if not options.allow_illegal:
        check_legal(decks, catalog, profile, options.fixes)
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



def sample_decks() -> list[Path]:
    """The shipped sample deck lists (``decks/*.txt`` of the source tree, or of the
    current directory)."""
    for base in (Path(__file__).resolve().parents[2] / "decks", Path("decks")):
        found = sorted(base.glob("*.txt"))
        if found:
            return found
    raise InputError("no sample decks found (decks/*.txt)")

