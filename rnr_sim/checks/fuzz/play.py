"""Fuzz cases: build one from a seed, play its games with invariants on, check the records.

A case is named by one integer seed: ``build_case`` draws a rules profile, a catalog and a
field of decks with policies from it (``strategies``), writes them as the files a user
would write (the catalog with the project's own TOML writer, ``patches.catalog_toml``)
and reads them back through the project's readers (``load_catalog``, ``load_profile``,
``load_deck``, ``validate_deck``), so the fuzzer tests those too. ``play_case`` then plays
``games`` games at each player count with the engine's debug checks on, checks every
record (``check.check_records``), replays a sample of the games alone on one thread
(``check.compare_records``) and plays a few alone with the event trace on, as ``rnr-sim
replay`` does (``check.trace_problems``).

Game g of a case at P players is deal g of table 0 with first seat g mod P, under the
case's seed as master seed: ``rnr-sim replay`` of the same decks (seats in order), catalog
and rules with ``--seed S --game g`` plays that very game.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rnr_sim import enums
from rnr_sim.checks.fuzz import strategies as S
from rnr_sim.checks.fuzz.check import (
    CATEGORIES,
    Batch,
    DeckFacts,
    Failure,
    check_records,
    compare_records,
    trace_problems,
)
from rnr_sim.checks.fuzz.source import NumpySource, Source
from rnr_sim.errors import InputError

CASE_GAMES = 512  # games per case and player count: two engine tasks, both cores busy
REPLAY_SHARE = 8  # one game in REPLAY_SHARE is replayed alone for the determinism check
TRACED = 2  # games per case and player count also played alone with the event trace on
TRACE_CAPACITY = 1 << 16  # trace rows kept (a longer game plays on, unrecorded)
MAX_SEED = 2**63 - 1


class Rejected(Exception):
    """A reader refused an input the generators drew as legal: ``check`` names which."""

    def __init__(self, check: str, detail: str):
        super().__init__(f"{check}: {detail}")
        self.check = check
        self.detail = detail


@dataclass
class Case:
    """One fuzz case: its files (relative path -> text) and what the readers made of them."""

    seed: int
    theme: str
    files: dict[str, str]
    switches: dict[str, Any]
    catalog: Any
    profile: Any
    decks: list
    deck_files: list[str]
    policies: list[str]
    facts: DeckFacts = field(repr=False)
    cards: np.ndarray = field(repr=False)
    deck_cards: np.ndarray = field(repr=False)
    deck_size: np.ndarray = field(repr=False)
    deck_policy: np.ndarray = field(repr=False)
    rules: np.ndarray = field(repr=False)


def _first_lines(text: str, n: int = 3) -> str:
    lines = str(text).splitlines()
    more = f" (+{len(lines) - n} more lines)" if len(lines) > n else ""
    return " | ".join(lines[:n]) + more


def build_case(src: Source, seed: int, max_cards: int = 60, max_decks: int = 6,
               workdir: Path | None = None) -> Case:
    """Draw, write and read back one case. Raises ``Rejected`` when a reader refuses a
    generated input; any other exception is a crash of the code under test."""
    from rnr_sim.cards import load_catalog
    from rnr_sim.decks import is_legal, load_deck, validate_deck
    from rnr_sim.engine.driver import policy_index
    from rnr_sim.patches import catalog_toml
    from rnr_sim.rules import load_profile

    own_dir = workdir is None
    root = Path(tempfile.mkdtemp(prefix="rnr-fuzz-")) if own_dir else Path(workdir)
    try:
        theme = S.Theme.draw(src)
        switches = S.gen_profile(src, theme)
        files: dict[str, str] = {}
        files["rules.toml"] = S.profile_toml(switches, name=f"fuzz {seed}" if src.chance(0.5)
                                             else None, table=src.chance(0.5))
        tables = S.gen_catalog(src, max_cards, theme)
        files["catalog.toml"] = catalog_toml(tables["set"], tables["cards"])
        for rel in files:
            (root / rel).write_text(files[rel], encoding="utf-8")
        try:
            profile = load_profile(root / "rules.toml")
        except InputError as e:
            raise Rejected("profile", _first_lines(e)) from None
        try:
            catalog = load_catalog(root / "catalog.toml")
        except InputError as e:
            raise Rejected("catalog", _first_lines(e)) from None
        if len(catalog) != len(tables["cards"]):
            raise Rejected("catalog", f"{len(tables['cards'])} cards written, "
                           f"{len(catalog)} read")
        (root / "decks").mkdir(exist_ok=True)
        decks, deck_files, policies = [], [], []
        dominant, verb = S.gen_field_style(src, catalog, theme)
        for k in range(src.integer(2, max_decks)):
            counts = S.gen_deck_counts(src, catalog, profile, dominant, verb)
            policy = S.gen_policy(src)
            rel = f"decks/deck-{k}.txt"
            files[rel] = S.deck_list(src, counts, f"Fuzz deck {k}", policy)
            (root / rel).write_text(files[rel], encoding="utf-8", newline="")
            try:
                deck = load_deck(root / rel, catalog)
            except InputError as e:
                raise Rejected("deck", _first_lines(e)) from None
            if deck.counts != counts:
                raise Rejected("deck", f"{rel}: read {len(deck)} cards, not the "
                               f"{sum(counts.values())} written")
            bad = validate_deck(deck, catalog, profile)
            if not is_legal(bad):
                raise Rejected("deck", f"{rel}: " + "; ".join(str(v) for v in bad
                                                               if not v.warning))
            if (deck.policy or "balanced") != policy:
                raise Rejected("deck", f"{rel}: policy {deck.policy!r}, not {policy!r}")
            decks.append(deck)
            deck_files.append(rel)
            policies.append(policy)
    finally:
        if own_dir:
            shutil.rmtree(root, ignore_errors=True)
    deck_cards = np.full((len(decks), enums.MAX_SLOTS), -1, dtype=np.int32)
    deck_size = np.zeros(len(decks), dtype=np.int32)
    for i, deck in enumerate(decks):
        deck_cards[i, : len(deck.card_ids)] = deck.card_ids
        deck_size[i] = len(deck.card_ids)
    return Case(
        seed=seed, theme=theme.name, files=files, switches=switches, catalog=catalog,
        profile=profile,
        decks=decks, deck_files=deck_files, policies=policies,
        facts=DeckFacts.of(catalog, decks),
        cards=np.ascontiguousarray(catalog.compile(), dtype=np.int32),
        deck_cards=deck_cards, deck_size=deck_size,
        deck_policy=np.array([policy_index(p) for p in policies], dtype=np.int32),
        rules=np.ascontiguousarray(profile.compile(), dtype=np.int64),
    )


def case_source(seed: int) -> NumpySource:
    """The source of case ``seed``'s inputs (its games draw from ``game_plan``'s own)."""
    return NumpySource(np.random.default_rng([seed, 0]))


def game_plan(seed: int, n_decks: int, players: int, games: int):
    """Seats of case ``seed``'s games at ``players``: (seat_deck int32[n, P], deal
    int64[n], first_seat int32[n]). Mostly distinct decks, sometimes mirrors."""
    rng = np.random.default_rng([seed, players])
    if n_decks >= players:
        seat_deck = rng.random((games, n_decks)).argsort(axis=1)[:, :players]
    else:
        seat_deck = rng.integers(0, n_decks, size=(games, players))
    mirror = rng.random(games) < 0.1
    seat_deck[mirror] = rng.integers(0, n_decks, size=(int(mirror.sum()), players))
    deal = np.arange(games, dtype=np.int64)
    return (np.ascontiguousarray(seat_deck, dtype=np.int32), deal,
            (deal % players).astype(np.int32))


def play(case: Case, seat_deck, deal, first_seat, threads: int | None, debug: bool = True):
    """The records of the given games of ``case`` (the real parallel driver)."""
    from rnr_sim.engine import driver

    return driver.play_games(
        case.cards, case.deck_cards, case.deck_size, seat_deck,
        np.ascontiguousarray(case.deck_policy[seat_deck]),
        np.zeros(len(deal), dtype=np.int64), deal, first_seat, case.rules, case.seed,
        threads=threads, debug=debug)


@dataclass
class CaseResult:
    """What one case played and found."""

    seed: int
    games: dict[int, int] = field(default_factory=dict)  # players -> games played
    failures: list[Failure] = field(default_factory=list)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)  # failing games
    case: Case | None = None

    def add(self, failures: list[Failure], counts: dict) -> None:
        self.failures += failures
        for k, v in counts.items():
            self.counts[k] = self.counts.get(k, 0) + v


def all_threads() -> int:
    import numba

    return int(numba.config.NUMBA_NUM_THREADS)


def play_case(seed: int, players: Sequence[int] = (2, 3, 4), games: int = CASE_GAMES,
              threads: int | None = None, workdir: Path | None = None,
              on_games: Callable[[int], None] | None = None, limit: int = 5) -> CaseResult:
    """Build case ``seed`` and play ``games`` games at each player count, checking each
    record, replaying one game in ``REPLAY_SHARE`` (a random sample) alone on one thread,
    and playing ``TRACED`` random games (and the first failing one) alone with the event
    trace on. Exceptions become ``crash`` failures, refused inputs ``rejected`` ones."""
    result = CaseResult(seed)
    threads = threads or all_threads()
    try:
        case = build_case(case_source(seed), seed, workdir=workdir)
    except Rejected as e:
        result.add([Failure("rejected", e.check, seed, detail=e.detail)],
                   {("rejected", e.check): 1})
        return result
    except Exception as e:  # noqa: BLE001 - the code under test crashed
        result.add([Failure("crash", "build", seed, detail=_crash(e))], {("crash", "build"): 1})
        return result
    result.case = case
    for P in players:
        seat_deck, deal, first_seat = game_plan(seed, len(case.decks), P, games)
        batch = Batch(seed, seat_deck, first_seat, case.facts, case.profile.values)
        try:
            rec = play(case, seat_deck, deal, first_seat, threads)
            found, counts = check_records(rec, batch, limit)
            result.add(found, counts)
            rng = np.random.default_rng([seed, P, 1])
            idx = rng.choice(games, size=max(1, games // REPLAY_SHARE), replace=False)
            again = play(case, seat_deck[idx], deal[idx], first_seat[idx], threads=1)
            result.add(*compare_records(rec, again, batch, idx, limit))
            # Traced: random games, and the first game failing a record check (its trace
            # shows what went wrong the way `rnr-sim replay` would).
            traced = [f.game for f in found if f.game >= 0][:1]
            traced += rng.choice(games, size=min(TRACED, games), replace=False).tolist()
            result.add(*check_traces(case, rec, seat_deck, deal, first_seat,
                                     list(dict.fromkeys(traced)), limit))
        except Exception as e:  # noqa: BLE001
            result.add([Failure("crash", "engine", seed, P, detail=_crash(e))],
                       {("crash", "engine"): 1})
        finally:
            # The replay ran on one thread: the next batch gets every thread back.
            play_threads(threads)
        result.games[P] = games
        if on_games is not None:
            on_games(games)
    return result


def check_traces(case: Case, rec, seat_deck, deal, first_seat, idx, limit: int):
    """Play games ``idx`` alone with the event trace on and compare (``trace_problems``)."""
    from rnr_sim.engine import driver

    is_ua = np.array([c.type == "ua" for c in case.catalog.cards], dtype=bool)
    category = {"trace": "nondeterminism", "trace_ua": "record"}
    failures: list[Failure] = []
    counts: dict[tuple[str, str], int] = {}
    for g in idx:
        seats = seat_deck[g]
        trace, gm, pl = driver.trace_game(
            case.cards, case.deck_cards[seats], case.deck_size[seats],
            case.deck_policy[seats], case.rules, case.seed, table_id=0, deal=int(deal[g]),
            first_seat=int(first_seat[g]), capacity=TRACE_CAPACITY)
        by_check: dict[str, list[str]] = {}
        for check, what in trace_problems(rec, int(g), trace, gm, pl, is_ua):
            by_check.setdefault(check, []).append(what)
        for check, whats in by_check.items():
            key = (category[check], check)
            counts[key] = counts.get(key, 0) + 1
            if counts[key] <= limit:
                failures.append(Failure(key[0], check, case.seed, len(seats), int(g),
                                        "; ".join(whats)))
    return failures, counts


def play_threads(threads: int) -> None:
    import numba

    numba.set_num_threads(max(1, min(int(threads), all_threads())))


def _crash(e: BaseException) -> str:
    frame = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"{type(e).__name__}: {_first_lines(str(e), 2)}{where}"


# ---------------------------------------------------------------------------- a whole run


@dataclass
class FuzzReport:
    """A fuzz run's counts, coverage and failures (``failures`` capped per check)."""

    seed: int
    players: list[int]
    case_games: int
    cases: int = 0
    catalogs: int = 0
    cards: int = 0
    decks: int = 0
    profiles: set = field(default_factory=set)
    games: dict[int, int] = field(default_factory=dict)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    seeds: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    coverage: dict[str, set] = field(default_factory=lambda: {
        "types": set(), "branches": set(), "rarities": set(), "keywords": set(),
        "trigger_verb": set(), "kicker_verbs": set(), "switches_changed": set(),
        "themes": set()})
    elapsed_s: float = 0.0
    indices_checked: bool = False  # the engine's checked build played (engine/indexing.py)

    @property
    def total_games(self) -> int:
        return sum(self.games.values())

    def by_category(self) -> dict[str, int]:
        out = dict.fromkeys(CATEGORIES, 0)
        for (cat, _check), n in self.counts.items():
            out[cat] = out.get(cat, 0) + n
        return out

    @property
    def clean(self) -> bool:
        return not self.counts

    def note(self, r: CaseResult, keep: int) -> None:
        self.cases += 1
        for P, n in r.games.items():
            self.games[P] = self.games.get(P, 0) + n
        for k, n in r.counts.items():
            self.counts[k] = self.counts.get(k, 0) + n
            seeds = self.seeds.setdefault(k, [])
            if r.seed not in seeds:
                seeds.append(r.seed)
        for f in r.failures:
            if sum(1 for g in self.failures if (g.category, g.check) == (f.category, f.check)
                   ) < keep:
                self.failures.append(f)
        if r.case is None:
            return
        c = r.case
        self.catalogs += 1
        self.cards += len(c.catalog)
        self.decks += len(c.decks)
        self.profiles.add(tuple(sorted(c.profile.values.items())))
        cov = self.coverage
        cov["switches_changed"].update(c.profile.changed())
        cov["themes"].add(c.theme)
        for card in c.catalog.cards:
            cov["types"].add(card.type)
            cov["branches"].add(card.branch)
            cov["rarities"].add(card.rarity)
            cov["keywords"].update(card.keywords)
            for e in card.effects:
                cov["trigger_verb"].add((e.trigger, e.verb))
            if card.kicker is not None:
                cov["kicker_verbs"].add(card.kicker.verb)

    def to_dict(self) -> dict:
        cov = self.coverage
        return {
            "seed": self.seed, "players": self.players, "case_games": self.case_games,
            "cases": self.cases, "catalogs": self.catalogs, "cards": self.cards,
            "decks": self.decks, "profiles": len(self.profiles),
            "games": self.total_games,
            "games_by_players": {str(k): v for k, v in sorted(self.games.items())},
            "elapsed_s": round(self.elapsed_s, 1),
            "indices_checked": self.indices_checked,
            "failures_by_category": self.by_category(),
            "failures_by_check": [
                {"category": cat, "check": chk, "games": n,
                 "seeds": self.seeds.get((cat, chk), [])[:20]}
                for (cat, chk), n in sorted(self.counts.items())],
            "failures": [f.to_dict() for f in self.failures],
            "coverage": {
                "types": len(cov["types"]), "branches": len(cov["branches"]),
                "rarities": len(cov["rarities"]), "keywords": len(cov["keywords"]),
                "trigger_verb": len(cov["trigger_verb"]),
                "kicker_verbs": len(cov["kicker_verbs"]),
                "switches_changed": len(cov["switches_changed"]),
                "themes": sorted(cov["themes"])},
            "clean": self.clean,
        }


def n_cases(games: int, players: Sequence[int], case_games: int) -> int:
    """Cases needed for at least ``games`` games (whole cases)."""
    per_case = case_games * len(players)
    return max(1, -(-games // per_case))


def run_fuzz(games: int, seed: int = 1, players: Sequence[int] = (2, 3, 4),
             case_games: int = CASE_GAMES, threads: int | None = None,
             progress: bool = False, dump: Path | None = None, keep: int = 5,
             log: Callable[[str], None] | None = None) -> FuzzReport:
    """Fuzz cases ``seed, seed + 1, ...`` until at least ``games`` games are played.
    ``dump``: write each failing case's files (catalog, rules, decks) to
    ``dump/case-<seed>/`` for ``rnr-sim replay``."""
    from rnr_sim.engine import driver, indexing

    report = FuzzReport(seed=seed, players=list(players), case_games=case_games,
                        indices_checked=indexing.CHECKED)
    k = n_cases(games, players, case_games)
    if driver.needs_compile() and log is not None:
        log("Compiling the engine (first run only, about 27 s)…")
    bar = None
    if progress:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=k * case_games * len(players), unit=" games", unit_scale=True,
                   file=sys.stderr, dynamic_ncols=True, smoothing=0.1, desc="rnr-sim fuzz")
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="rnr-fuzz-") as tmp:
            for i in range(k):
                s = seed + i
                work = Path(tmp) / f"case-{s}"
                work.mkdir()
                r = play_case(s, players, case_games, threads, work,
                              on_games=bar.update if bar is not None else None, limit=keep)
                report.note(r, keep)
                if dump is not None and r.counts:
                    target = Path(dump) / f"case-{s}"
                    shutil.rmtree(target, ignore_errors=True)
                    shutil.copytree(work, target)
                shutil.rmtree(work, ignore_errors=True)
                if bar is not None:
                    bad = sum(report.counts.values())
                    bar.set_postfix_str(f"{report.cases} cases, {bad} failing", refresh=False)
    finally:
        if bar is not None:
            bar.close()
    report.elapsed_s = time.perf_counter() - t0
    return report

