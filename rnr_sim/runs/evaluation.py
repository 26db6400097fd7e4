"""The evaluation service: the one seam through which a command plays games for scores.

A caller says *play these subjects against this field on these deals*, and gets each
game's outcome for the subject back::

    pool = Pool.of_plan(plan)                      # the engine's arrays: cards, decks, pilots
    games = Matchups(subject_deck, subject_policy, field_deck, field_policy, field_table,
                     first_deal=0, deals=200)
    with Evaluator(driver, backend=where, progress=bar) as ev:
        outcome = ev.play(pool, games, seed, key="gen-0007")   # None once Ctrl-C stopped it
        outcome.per_deal()                          # float64[subjects, field, deals]

- A *subject* is a deck row with a pilot row (``tune``: candidate pilots of one deck;
  ``discover``: candidate decks, each with its pilot; ``skill``: one deck's pilots).
- The *field* is a list of (deck row, pilot row, engine table): every subject meets every
  field entry on the same ``deals`` (the table id and the deal fix a game's shuffles, so
  all subjects share them: common random numbers), in both seat orders, the subject in
  seat 0 (``first_seat`` 0 and 1).
- The games are cut into chunks and played by ``execution.execute`` (the loop every command
  shares): the local engine or Ray (``backend``), the compile clock on the first call, a
  tqdm bar counting games (``progress``), Ctrl-C between chunks (``stop``).
- What each seat saw: an evaluator opened with ``seen=True`` also returns each seat's
  cards seen (``Outcome.seen``: the opening hand's and the drawn cards' deck slots, as the
  run dir's ``opening_mask | drawn_mask``), what a card's adjusted IWD needs (``balance``
  with an ``iwd_max`` target).
- Checkpoints: with a ``BatchStore``, every call given a ``key`` is written as one part of
  the store once played, and a later call with the same key (a resumed command replaying
  its deterministic sequence of calls) reads it back instead of playing it. A command built
  on the service resumes by running again from the start: it replays its calls, the stored
  ones at once, and carries on where it stopped. Each call's wall time goes with its
  outcome (``Outcome.seconds``), kept in its part.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim import enums
from rnr_sim.errors import InputError
from rnr_sim.files import write_json, write_parquet
from rnr_sim.runs.execution import Chunk, Progress, StopOnInterrupt, execute, local
from rnr_sim.runs.inputs import GameInputs

#: Games per chunk when played here: small enough that Ctrl-C and the bar answer within a
#: second or two, large enough that the engine's threads stay busy.
LOCAL_CHUNK = 200_000
#: Games per chunk at least when a remote backend (Ray) plays them.
MIN_REMOTE_CHUNK = 2_000
SEAT_ORDERS = 2  # two players: the subject moves first, then second
SEATS = 2  # the subject's seat (0) and the field deck's (1)


@dataclass
class Pool:
    """The engine's arrays for one catalog and rules profile: the catalog (``cards``), the
    rules, every deck a call may name (``deck_cards``/``deck_size`` rows) and every pilot
    (``policies`` rows; ``search`` budgets per row, or None: no search pilot)."""

    cards: np.ndarray
    rules: np.ndarray
    deck_cards: np.ndarray
    deck_size: np.ndarray
    policies: np.ndarray
    search: np.ndarray | None = None

    @classmethod
    def of_plan(cls, plan, policies: np.ndarray | None = None,
                search: np.ndarray | None = None) -> Pool:
        """The arrays of a compiled ``planning.RunPlan`` (its decks; its policy table unless
        ``policies`` is given)."""
        table = plan.policy_table if policies is None else policies
        return cls(plan.cards, plan.rules, plan.deck_cards, plan.deck_size,
                   np.ascontiguousarray(table, dtype=np.float64), search)

    def with_decks(self, card_ids: Sequence[np.ndarray]) -> Pool:
        """This pool with ``card_ids`` (one int array of catalog ids per deck) as its decks."""
        deck_cards = np.full((len(card_ids), enums.MAX_SLOTS), -1, dtype=np.int32)
        deck_size = np.zeros(len(card_ids), dtype=np.int32)
        for i, ids in enumerate(card_ids):
            deck_cards[i, : len(ids)] = ids
            deck_size[i] = len(ids)
        return Pool(self.cards, self.rules, deck_cards, deck_size, self.policies, self.search)

    def with_policies(self, policies: np.ndarray, search: np.ndarray | None = None) -> Pool:
        return Pool(self.cards, self.rules, self.deck_cards, self.deck_size,
                    np.ascontiguousarray(policies, dtype=np.float64), search)

    def with_yardstick(self, budget: Sequence[int] | None = None) -> Pool:
        """This pool with every pilot a search pilot (issue 40's yardstick: a stronger pilot
        in every seat), each row's own weights its rollout pilot and prior; ``budget`` a
        budget row (``skill.search_budget``; default ``skill.SEARCH_DEFAULT`` at the
        default gate, hidden lists: each seat believes its opponent plays one of this
        pool's decks, R59). For checking a verdict on a subsample of its deals: a game
        costs about 2 x 55,000 / 46 heuristic games at the default (docs/benchmarks.md)."""
        from rnr_sim.skill import SEARCH_DEFAULT, search_budget

        row = search_budget(*SEARCH_DEFAULT) if budget is None else tuple(budget)
        search = np.tile(np.asarray(row, dtype=np.int64), (len(self.policies), 1))
        return Pool(self.cards, self.rules, self.deck_cards, self.deck_size, self.policies,
                    search)


@dataclass
class Matchups:
    """Which games a call plays: every subject (deck row, pilot row) against every field
    entry (deck row, pilot row, engine table id), deals ``first_deal .. first_deal + deals
    - 1``, both seat orders. Game order: subject, then field entry, deal, seat order."""

    subject_deck: np.ndarray
    subject_policy: np.ndarray
    field_deck: np.ndarray
    field_policy: np.ndarray
    field_table: np.ndarray
    first_deal: int
    deals: int

    def __post_init__(self) -> None:
        self.subject_deck = np.asarray(self.subject_deck, dtype=np.int32)
        self.subject_policy = np.asarray(self.subject_policy, dtype=np.int32)
        self.field_deck = np.asarray(self.field_deck, dtype=np.int32)
        self.field_policy = np.asarray(self.field_policy, dtype=np.int32)
        self.field_table = np.asarray(self.field_table, dtype=np.int64)
        if len(self.subject_deck) != len(self.subject_policy):
            raise ValueError("one pilot row per subject deck")
        if not len(self.field_deck) == len(self.field_policy) == len(self.field_table):
            raise ValueError("one pilot row and one table per field deck")

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return (len(self.subject_deck), len(self.field_deck), self.deals, SEAT_ORDERS)

    @property
    def games(self) -> int:
        return int(np.prod(self.shape))

    def inputs(self) -> GameInputs:
        """The engine's per-game inputs of every game, in the class docstring's order."""
        s, f, d, r = self.shape
        grid = np.meshgrid(np.arange(s), np.arange(f),
                           np.arange(self.first_deal, self.first_deal + d), np.arange(r),
                           indexing="ij")
        subj, pos, deal, order = (a.ravel() for a in grid)
        seat_deck = np.stack([self.subject_deck[subj], self.field_deck[pos]], axis=1)
        seat_policy = np.stack([self.subject_policy[subj], self.field_policy[pos]], axis=1)
        return GameInputs(game_id=np.arange(len(subj), dtype=np.int64),
                          seat_deck=np.ascontiguousarray(seat_deck, dtype=np.int32),
                          seat_policy=np.ascontiguousarray(seat_policy, dtype=np.int32),
                          table_id=np.ascontiguousarray(self.field_table[pos]),
                          deal=deal.astype(np.int64), first_seat=order.astype(np.int32))


@dataclass
class Outcome:
    """Each game of a ``Matchups`` from the subject's side, shaped ``Matchups.shape``
    (subject, field entry, deal, seat order): ``score`` 1 a win, 0.5 a draw, 0 a loss;
    ``path`` the game's ``enums.PATHS`` index; ``turns`` its length in turns (all seats);
    ``seconds`` the wall time of the call that played it (read back from a store: of the
    call that stored it); ``seen`` (an evaluator with ``seen=True``) uint64[..., 2], each
    seat's deck slots seen (opening hand or drawn), the subject's seat first."""

    score: np.ndarray
    path: np.ndarray
    turns: np.ndarray
    seconds: float | None = None
    seen: np.ndarray | None = None

    def per_deal(self) -> np.ndarray:
        """float64[subject, field, deal]: the subject's share of each deal (both seat
        orders averaged): the unit of every interval."""
        return self.score.mean(axis=3)

    def share(self, weights: np.ndarray | None = None) -> np.ndarray:
        """float64[subject]: the win share against the field, each field entry weighted by
        ``weights`` (default equal; a metagame mix)."""
        by_field = self.score.mean(axis=(2, 3))
        if weights is None:
            return by_field.mean(axis=1)
        w = np.asarray(weights, dtype=np.float64)
        return by_field @ (w / w.sum())

    def to_frame(self) -> pl.DataFrame:
        cols = {"score2": (2 * self.score).astype(np.int8).ravel(),
                "path": self.path.astype(np.int8).ravel(),
                "turns": self.turns.astype(np.int16).ravel()}
        if self.seen is not None:
            cols |= {f"seen{s}": self.seen[..., s].ravel() for s in range(SEATS)}
        return pl.DataFrame(cols)

    @classmethod
    def from_frame(cls, frame: pl.DataFrame, shape: tuple[int, ...],
                   seconds: float | None = None) -> Outcome:
        seen = None
        if "seen0" in frame.columns:
            seen = np.stack([frame[f"seen{s}"].to_numpy() for s in range(SEATS)],
                            axis=1).reshape(*shape, SEATS)
        return cls(frame["score2"].to_numpy().astype(np.float64).reshape(shape) / 2.0,
                   frame["path"].to_numpy().reshape(shape),
                   frame["turns"].to_numpy().reshape(shape), seconds, seen)


class BatchStore:
    """Checkpoints of an evaluation: ``root/part-KEY.parquet`` per call played (its
    outcome, the call's wall time in the part's metadata), beside ``root/plan.json``, the
    fingerprint of everything that shapes the calls. ``open`` refuses a fingerprint that
    differs from the stored one, naming the first difference (``first_difference``: name
    a fingerprint's entries in the user's words, e.g. by the option, and the difference
    reads as a sentence)."""

    PLAN = "plan.json"

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def open(self, fingerprint: dict[str, Any], resume: bool) -> None:
        plan = self.root / self.PLAN
        if resume and plan.exists():
            try:
                then = json.loads(plan.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise InputError(f"{plan}: unreadable checkpoint ({e}); delete {self.root} "
                                 "to start over") from None
            differs = first_difference(then, fingerprint)
            if differs is not None:
                raise InputError(f"{plan}: the stopped run had {differs}; --resume with the "
                                 f"inputs it was started with{_give(then, fingerprint)}, or "
                                 f"delete {self.root} to start over")
            for tmp in self.root.glob(".*.tmp"):  # a write cut short (the process killed)
                tmp.unlink(missing_ok=True)
            return
        if self.root.exists():
            for part in self.root.glob("part-*.parquet"):
                part.unlink()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"{self.root}: cannot create ({e.strerror or e})") from None
        write_json(plan, fingerprint)

    def path(self, key: str) -> Path:
        return self.root / f"part-{key}.parquet"

    def has(self, key: str) -> bool:
        return self.path(key).is_file()

    def get(self, key: str, shape: tuple[int, ...], seen: bool = False) -> Outcome | None:
        """The stored outcome of call ``key``; None when there is none, or (``seen``) when
        it was stored without what each seat saw (played again)."""
        path = self.path(key)
        if not path.exists():
            return None
        try:
            frame = pl.read_parquet(path)
            seconds = pl.read_parquet_metadata(path).get("seconds")
        except Exception as e:  # a broken part is bad input, not a crash
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise InputError(f"{path}: cannot read ({first}); delete it and resume to play "
                             "its games again") from None
        if frame.height != int(np.prod(shape)):
            raise InputError(f"{path}: {frame.height} games where the call plays "
                             f"{int(np.prod(shape))}; delete it and resume")
        if seen and "seen0" not in frame.columns:
            return None
        return Outcome.from_frame(frame, shape, None if seconds is None else float(seconds))

    def put(self, key: str, outcome: Outcome) -> None:
        meta = None if outcome.seconds is None else {"seconds": repr(float(outcome.seconds))}
        write_parquet(self.path(key), outcome.to_frame(), meta)

    def remove(self) -> None:
        """Remove the store (once the command's result is written)."""
        shutil.rmtree(self.root, ignore_errors=True)


#: A fingerprint's entries that are one option's value, by the option (a refused resume
#: says what to give).
OPTION_OF = {"seed": "--seed", "budget": "--budget", "batch": "--batch", "margin": "--margin",
             "suggestions": "--suggestions", "cells": "--cells"}


def _give(then: dict, now: dict) -> str:
    """``" (here: --budget 200000)"`` when the first entry that differs is one option's
    value (``OPTION_OF``), else nothing."""
    for key in list(then) + [k for k in now if k not in then]:
        if then.get(key) != now.get(key):
            flag = OPTION_OF.get(key)
            value = then.get(key)
            if flag is None or not isinstance(value, (int, float, str)) \
                    or isinstance(value, bool):
                return ""
            return f" (here: {flag} {value})"
    return ""


def first_difference(then: Any, now: Any, where: str = "") -> str | None:
    """The first place two fingerprints differ, in words (``seed 7, now 8``), or None. A
    SHA-256 is shown by its first 12 digits."""
    if isinstance(then, dict) and isinstance(now, dict):
        for k in list(then) + [k for k in now if k not in then]:
            d = first_difference(then.get(k), now.get(k), f"{where}.{k}" if where else str(k))
            if d is not None:
                return d
        return None
    if isinstance(then, list) and isinstance(now, list):
        for i, (a, b) in enumerate(zip(then, now, strict=False)):
            d = first_difference(a, b, f"{where}[{i}]")
            if d is not None:
                return d
        if len(then) != len(now):  # e.g. --field with another number of decks
            return f"{where}: {len(then)} entries, now {len(now)}"
        return None
    return None if then == now else f"{where} {_shown(then)}, now {_shown(now)}"


#: The longest value a difference shows whole (a message is one line).
SHOWN_MAX = 80


def _shown(value: Any) -> str:
    if (isinstance(value, str) and len(value) == 64
            and all(c in "0123456789abcdef" for c in value)):
        return f"{value[:12]}…"
    text = repr(value)
    return text if len(text) <= SHOWN_MAX else f"{text[:SHOWN_MAX]}… ({len(text):,} characters)"


class _Collect:
    """The sink of an evaluation: each chunk's record fields the outcome needs, by index
    (``seen``: each seat's slots seen too)."""

    def __init__(self, seen: bool = False):
        self.seen = seen
        self.parts: dict[int, tuple[np.ndarray, ...]] = {}

    def write(self, chunk: Chunk, records) -> None:
        part = (np.asarray(records.winner_seat, dtype=np.int8),
                np.asarray(records.path, dtype=np.int8),
                np.asarray(records.turns, dtype=np.int32))
        if self.seen:
            part += (np.asarray(records.opening_mask, dtype=np.uint64)
                     | np.asarray(records.drawn_mask, dtype=np.uint64),)
        self.parts[chunk.index] = part


class Evaluator:
    """Plays ``Matchups`` for ``Outcome`` s (module docstring). ``backend``: an
    ``execution`` backend (default: this process, ``threads`` engine threads); ``seen``:
    each outcome carries what each seat saw (``Outcome.seen``); ``progress``
    counts the games played (opened on the first call), and those read back from the store
    unless ``count_stored`` is False (a caller whose bar starts at them); ``stop``: a
    Ctrl-C guard shared with the caller (default: one of its own while the evaluator is
    open); ``store``: the checkpoints, opened by the caller."""

    def __init__(self, driver, *, backend=None, threads: int | None = None,
                 progress: Progress | None = None, stop: StopOnInterrupt | None = None,
                 store: BatchStore | None = None, log: Callable[[str], None] | None = None,
                 count_stored: bool = True, seen: bool = False):
        self.driver = driver
        self.seen = seen
        self.backend = backend
        self.threads = threads if backend is None else getattr(backend, "threads", threads)
        self.progress = progress if progress is not None else Progress(show=False)
        self._own_stop = stop is None
        note = log if log is not None else self.progress.note
        self.stop = stop if stop is not None else StopOnInterrupt(
            note, "Stopping after the games under way")
        self.store = store
        self.count_stored = count_stored
        self.games_played = 0  # played here, not read from the store
        self.games_stored = 0  # read back from the store
        self._warm = False

    def __enter__(self) -> Evaluator:
        if self._own_stop:
            self.stop.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._own_stop:
            self.stop.__exit__(*exc)

    @property
    def stopped(self) -> bool:
        return self.stop.requested

    def play(self, pool: Pool, games: Matchups, seed: int, key: str | None = None
             ) -> Outcome | None:
        """Every game of ``games`` on ``pool`` under ``seed``; None when Ctrl-C stopped the
        call before its last chunk (nothing of it is stored: a resume plays it again)."""
        shape = games.shape
        if self.store is not None and key is not None:
            kept = self.store.get(key, shape, seen=self.seen)
            if kept is not None:
                self.games_stored += games.games
                if self.count_stored:
                    self.progress.open()
                    self.progress.update(games.games)
                return kept
        if self.stop.requested:
            return None
        t0 = time.perf_counter()
        inputs = games.inputs()
        n = games.games
        remote = getattr(self.backend, "remote", False)
        piece = (max(MIN_REMOTE_CHUNK, -(-n // (2 * self.backend.workers))) if remote
                 else LOCAL_CHUNK)
        chunks = [Chunk(i, inputs[a:a + piece])
                  for i, a in enumerate(range(0, n, piece))]
        play = _engine_call(self.driver, pool, seed, None if remote else self.threads)
        sink = _Collect(self.seen)
        warm_up = None if self._warm else self.driver.needs_compile
        tally = execute(chunks, lambda c: play(c.inputs), sink,
                        backend=self.backend if self.backend is not None else local,
                        stop=self.stop, progress=self.progress, warm_up=warm_up)
        self._warm = True
        self.games_played += tally.games
        if len(sink.parts) < len(chunks):
            return None
        winner, path, turns, *seen = (
            np.concatenate([sink.parts[i][f] for i in range(len(chunks))])
            for f in range(len(sink.parts[0])))
        score = np.where(winner == 0, 1.0, np.where(winner < 0, 0.5, 0.0))
        out = Outcome(score.reshape(shape), path.reshape(shape), turns.reshape(shape),
                      time.perf_counter() - t0,
                      seen[0].reshape(*shape, SEATS) if seen else None)
        if self.store is not None and key is not None:
            self.store.put(key, out)
        return out


def _engine_call(driver, pool: Pool, seed: int, threads: int | None):
    """The engine call of one chunk (only arrays captured: a remote backend ships it)."""
    cards, deck_cards, deck_size = pool.cards, pool.deck_cards, pool.deck_size
    rules, policies, search = pool.rules, pool.policies, pool.search

    def play(inputs: GameInputs):
        kw = {} if search is None else {"search": search}
        return inputs.play(driver, cards, deck_cards, deck_size, rules, seed, threads=threads,
                           policies=policies, **kw)

    return play
