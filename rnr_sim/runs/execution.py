"""The one execution loop: chunks of games -> engine -> sink -> parts of a run dir.

``rnr-sim run`` and ``rnr-sim compare`` (and whatever plays games later) drive their games
through ``execute``::

    tally = execute(chunks, play, sink, skip=done, progress=bar, warm_up=driver.needs_compile)

- ``chunks``: ``Chunk`` s (a part index, the engine's per-game inputs, a ``tag`` naming
  which engine setup plays it), in the order their parts are to be written;
- ``play(chunk) -> records``: the engine call (``engine_play`` makes it from a plan);
- ``sink.write(chunk, records)``: turns the records into frames and writes them, each part
  atomically (``PartSink``: ``games/`` and ``seats/`` parts of a run dir);
- ``backend(play, jobs)``: how chunks are played. ``local`` plays them one after the
  other; a backend may play them anywhere and return them in any order: the loop hands
  them to the sink in chunk order all the same, so the parts written are always the first
  chunks of the sequence, never a later one before an earlier. ``open_backend`` makes the
  one ``--backend`` names: ``LocalBackend``, or ``ray_backend.RayBackend`` (Ray tasks; a
  ``remote`` backend warms the engine up in its workers, not here).

Ctrl-C (``StopOnInterrupt``): the first stops handing out chunks and lets the one under
way finish and be written; a second abandons it at once (its part is never half-written:
``atomic_write``). Either way ``tally.interrupted`` is set and what was written stays, so a
caller that records chunks as they are written (``after``) leaves a dir that can be resumed:
the chunks in ``skip`` are not played again.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim import enums
from rnr_sim.errors import InputError
from rnr_sim.files import write_parquet
from rnr_sim.progress import compile_clock
from rnr_sim.runs.inputs import GameInputs


def log_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def part_name(chunk: int) -> str:
    """The file name of chunk ``chunk`` 's part, in ``games/`` and in ``seats/``."""
    return f"part-{chunk:05d}.parquet"


# ---------------------------------------------------------------------------- chunks, engine


@dataclass
class Chunk:
    """One piece of work: the engine's per-game inputs of some games (``game_id``,
    ``seat_deck``, ``seat_policy``, ``table_id``, ``deal``, ``first_seat``), the index of
    the part it becomes, and the ``tag`` of the engine setup that plays it (``compare``:
    "baseline" or "variant")."""

    index: int
    inputs: GameInputs
    tag: str = ""

    @property
    def games(self) -> int:
        return len(self.inputs)

    def first_game(self) -> Chunk:
        return Chunk(self.index, self.inputs[:1], self.tag)


def engine_play(driver, plan, threads: int | None) -> Callable[[GameInputs], Any]:
    """The engine call for games of ``plan`` (a compiled ``planning.RunPlan``): per-game
    inputs -> the engine's records."""

    # Only the arrays are captured (not the plan, with its catalog and decks): a remote
    # backend ships this function to its workers once.
    cards, deck_cards, deck_size = plan.cards, plan.deck_cards, plan.deck_size
    rules, seed, policies = plan.rules, plan.seed, plan.policy_table

    def play(inputs: GameInputs):
        return inputs.play(driver, cards, deck_cards, deck_size, rules, seed, threads=threads,
                           policies=policies)

    return play


# ---------------------------------------------------------------------------- records -> parts


def chunk_frames(plan, inputs: GameInputs, rec,
                 policy_names: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The ``games`` and ``seats`` frames of one chunk from the engine's records
    (``plan``: a ``planning.RunPlan``; its ``players`` and ``deck_names`` are read)."""
    game_id = inputs.game_id
    n, p = len(game_id), plan.players
    path = np.asarray(rec.path)
    if n and (path.min() < 0 or path.max() >= len(enums.PATHS)):
        raise RuntimeError(f"engine returned a path outside 0..{len(enums.PATHS) - 1}")
    winner = np.asarray(rec.winner_seat, dtype=np.int8)
    first = inputs.first_seat.astype(np.int8)
    games = pl.DataFrame({
        "game_id": game_id,
        "table_id": inputs.table_id.astype(np.int32),
        "deal": inputs.deal,
        "n_players": np.full(n, p, dtype=np.int8),
        "first_seat": first,
        "winner_seat": winner,
        "path": pl.Series(enums.PATHS, dtype=pl.String).gather(path),
        "turns": np.asarray(rec.turns, dtype=np.int32),
    })
    seat = np.arange(p, dtype=np.int8)

    def flat(a, dtype) -> np.ndarray:
        a = np.asarray(a)
        if a.shape != (n, p):
            raise RuntimeError(f"engine returned shape {a.shape}, expected {(n, p)}")
        return a.astype(dtype, copy=False).ravel()

    seats = pl.DataFrame({
        "game_id": np.repeat(game_id, p),
        "seat": np.tile(seat, n),
        "deck": pl.Series(plan.deck_names, dtype=pl.String).gather(inputs.seat_deck.ravel()),
        "policy": pl.Series(list(policy_names), dtype=pl.String).gather(
            inputs.seat_policy.ravel()),
        "won": (winner[:, None] == seat[None, :]).ravel(),
        "is_first": (first[:, None] == seat[None, :]).ravel(),
        "final_lp": flat(rec.final_lp, np.int32),
        "uas_lost": flat(rec.uas_lost, np.int8),
        "petitions": flat(rec.petitions, np.int8),
        "scroll_pillars": flat(rec.scroll_pillars, np.int8),
        "mulligan": flat(rec.mulligan, np.bool_),
        "p2_right": flat(rec.p2_right, np.bool_),
        "opening_mask": flat(rec.opening_mask, np.uint64),
        "drawn_mask": flat(rec.drawn_mask, np.uint64),
        "played_mask": flat(rec.played_mask, np.uint64),
    })
    return games, seats


class PartSink:
    """Writes each chunk as ``root/games/part-NNNNN.parquet`` then
    ``root/seats/part-NNNNN.parquet`` (NNNNN: ``chunk.index``), each atomically, and keeps
    the SHA-256 of each part written (``sha``: path relative to ``root`` -> hex).
    ``metadata(table, chunk_index)``: the Parquet metadata of a part (``rundir.part_stamp``).
    If the seats part cannot be written, the chunk's games part is removed: a chunk is on
    disk whole or not at all."""

    def __init__(self, root: Path, plan, policy_names: Sequence[str],
                 metadata: Callable[[str, int], dict[str, str]] | None = None):
        self.root = Path(root)
        self.plan = plan
        self.policy_names = policy_names
        self.metadata = metadata
        self.sha: dict[str, str] = {}

    def paths(self, chunk: Chunk) -> tuple[Path, Path]:
        return (self.root / "games" / part_name(chunk.index),
                self.root / "seats" / part_name(chunk.index))

    def _meta(self, table: str, chunk: Chunk) -> dict[str, str] | None:
        return None if self.metadata is None else self.metadata(table, chunk.index)

    def write(self, chunk: Chunk, records) -> None:
        games, seats = chunk_frames(self.plan, chunk.inputs, records, self.policy_names)
        games_path, seats_path = self.paths(chunk)
        sha_games = write_parquet(games_path, games, self._meta("games", chunk))
        try:
            sha_seats = write_parquet(seats_path, seats, self._meta("seats", chunk))
        except BaseException:
            games_path.unlink(missing_ok=True)
            raise
        self.sha[f"games/{games_path.name}"] = sha_games
        self.sha[f"seats/{seats_path.name}"] = sha_seats


# ---------------------------------------------------------------------------- Ctrl-C, progress


class StopOnInterrupt:
    """While active (main thread only), the first SIGINT asks to stop after the current
    piece of work (``message`` tells the user which); a second one interrupts at once
    (``KeyboardInterrupt``)."""

    def __init__(self, log: Callable[[str], None],
                 message: str = "Stopping after the current chunk"):
        self.requested = False
        self._log = log
        self._message = message
        self._old = None

    def _handler(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self._log(f"\n{self._message} (Ctrl-C again to stop at once)…")

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


class Progress:
    """A tqdm bar on stderr counting games (opened by ``execute`` once the engine is
    ready; never when ``show`` is False), and where messages go meanwhile (``note``).
    ``leave``: keep the finished bar on screen."""

    def __init__(self, desc: str = "", total: int = 0, initial: int = 0, *,
                 show: bool = True, log: Callable[[str], None] = log_to_stderr,
                 leave: bool = True):
        self.desc, self.total, self.initial, self.show, self.log = desc, total, initial, show, log
        self.leave = leave
        self.bar = None

    def open(self) -> None:
        if self.show and self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, initial=self.initial, unit=" games",
                            unit_scale=True, file=sys.stderr, dynamic_ncols=True,
                            smoothing=0.1, desc=self.desc, leave=self.leave)

    def update(self, games: int) -> None:
        if self.bar is not None:
            self.bar.update(games)

    def set_total(self, total: int) -> None:
        self.total = total
        if self.bar is not None:
            self.bar.total = total
            self.bar.refresh()

    def set_postfix(self, text: str) -> None:
        """What the work has found so far, shown after the count (a search's best)."""
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)

    def note(self, message: str) -> None:
        if self.bar is None:
            self.log(message)
        else:
            self.bar.write(message, file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------- the loop


Backend = Callable[[Callable[[Any], Any], Iterable[Any]], Iterator[tuple[Any, Any]]]


def local(play: Callable[[Any], Any], jobs: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    """The default backend: each job played here, in turn; yields (job, result). A job is
    only taken from ``jobs`` once the previous result has been handled."""
    for job in jobs:
        yield job, play(job)


BACKENDS = ("local", "ray")


class LocalBackend:
    """``--backend local``: the chunks played in this process (the engine's threads:
    ``--threads``, default all cores)."""

    name = "local"
    remote = False  # the engine is warmed up (compiled or loaded) in this process

    def __init__(self, threads: int | None = None):
        self.threads = threads  # engine threads per chunk
        self.address = None
        self.startup_s = 0.0

    @property
    def workers(self) -> int:
        return 1

    def __call__(self, play, jobs):
        return local(play, jobs)

    def describe(self) -> dict[str, Any]:
        """What the manifest records of the backend."""
        return {"backend": self.name, "address": self.address, "workers": self.workers,
                "threads_per_chunk": self.threads, "startup_s": round(self.startup_s, 3)}

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_backend(name: str = "local", address: str | None = None,
                 threads: int | None = None):
    """The backend ``--backend NAME [--address A]`` asks for, as a context manager (Ray:
    joined or started on entry, a Ray it started stopped on exit). Raises ``InputError``
    for an unknown name, an address without Ray, or Ray not installed."""
    if name not in BACKENDS:
        raise InputError(f"--backend {name}: unknown backend; choose one of "
                         f"{', '.join(BACKENDS)}")
    if name == "local":
        if address is not None:
            raise InputError("--address joins a Ray cluster: give it with --backend ray")
        return LocalBackend(threads)
    from rnr_sim.runs.ray_backend import RayBackend, import_ray

    import_ray(local=address is None)  # not installed: say so before anything is written
    return RayBackend(address=address, threads=threads)


@dataclass
class Tally:
    """What an ``execute`` call did. Seconds are by chunk tag."""

    written: list[int] = field(default_factory=list)  # chunk indices, in the order written
    games: int = 0
    compile_s: float = 0.0
    simulate_s: dict[str, float] = field(default_factory=dict)
    write_s: dict[str, float] = field(default_factory=dict)
    interrupted: bool = False
    chunk_s: dict[int, float] = field(default_factory=dict)  # chunk index -> play seconds


def execute(chunks: Iterable[Chunk], play: Callable[[Chunk], Any], sink, *,
            skip: Collection[int] = (), backend: Backend = local,
            stop: StopOnInterrupt | None = None, progress: Progress | None = None,
            warm_up: Callable[[], bool] | None = None,
            after: Callable[[Chunk, Tally], None] | None = None) -> Tally:
    """Play every chunk whose index is not in ``skip`` and hand its records to
    ``sink.write(chunk, records)``, in the order of ``chunks`` whatever order ``backend``
    plays them in; then ``after(chunk, tally)`` (e.g. record it in a manifest) and count
    its games on ``progress``.

    ``warm_up``: when given, the first chunk's first game is played alone first, its
    records discarded: the engine's compile (or cache load) timed apart as
    ``tally.compile_s``, under the compile clock if ``warm_up()`` says it compiles.
    ``stop``: an active ``StopOnInterrupt`` shared with the caller (e.g. over several
    calls); without it the loop installs its own while it runs. After a Ctrl-C the chunks
    not written are left to a later call (``tally.interrupted``); an error of the sink
    (``InputError``: a full disk) propagates, the parts written so far kept.
    """
    tally = Tally()
    progress = progress if progress is not None else Progress(show=False)
    guard = StopOnInterrupt(progress.note) if stop is None else nullcontext(stop)
    with guard as stop:
        try:
            todo = (c for c in chunks if c.index not in skip)
            first = next(todo, None)
            if first is None:
                return tally
            if warm_up is not None and not getattr(backend, "remote", False):
                t0 = time.perf_counter()
                with compile_clock(warm_up(), log=progress.note):
                    play(first.first_game())
                tally.compile_s = time.perf_counter() - t0
            progress.open()

            def handed_out() -> Iterator[tuple[int, Chunk]]:
                for job in enumerate(_chain(first, todo)):
                    if stop.requested:
                        tally.interrupted = True
                        return
                    yield job

            def timed_play(job: tuple[int, Chunk]):
                t0 = time.perf_counter()
                records = play(job[1])
                return records, time.perf_counter() - t0

            results = backend(timed_play, handed_out())
            try:
                _write_in_order(results, sink, tally, after, progress)
            finally:
                close = getattr(results, "close", None)
                if close is not None:
                    close()  # a remote backend cancels what is still under way
        except KeyboardInterrupt:
            # A second Ctrl-C: the chunks under way are lost; each part is written whole
            # or not at all, so the sink holds only complete chunks.
            tally.interrupted = True
    return tally


def _write_in_order(results, sink, tally: Tally, after, progress: Progress) -> None:
    """Hand each (job, (records, seconds)) of ``results`` to the sink in chunk order."""
    finished: dict[int, tuple[Chunk, Any, float]] = {}
    next_seq = 0
    for (seq, chunk), (records, play_s) in results:
        finished[seq] = (chunk, records, play_s)
        del records
        while next_seq in finished:
            chunk, records, play_s = finished.pop(next_seq)
            next_seq += 1
            t0 = time.perf_counter()
            sink.write(chunk, records)
            del records
            tag = chunk.tag
            tally.simulate_s[tag] = tally.simulate_s.get(tag, 0.0) + play_s
            tally.write_s[tag] = (tally.write_s.get(tag, 0.0)
                                  + time.perf_counter() - t0)
            tally.chunk_s[chunk.index] = play_s
            tally.written.append(chunk.index)
            tally.games += chunk.games
            if after is not None:
                after(chunk, tally)
            progress.update(chunk.games)


def _chain(first: Chunk, rest: Iterator[Chunk]) -> Iterator[Chunk]:
    yield first
    yield from rest
