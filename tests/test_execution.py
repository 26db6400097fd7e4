"""The execution loop on its own (``rnr_sim.runs.execution.execute``): chunk order, resume,
Ctrl-C. No engine: a chunk's "records" are a frame of its game ids."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rnr_sim.files import write_parquet
from rnr_sim.progress import COMPILE_MESSAGE
from rnr_sim.runs.execution import Chunk, Progress, execute, part_name
from rnr_sim.runs.inputs import GameInputs

GAMES_PER_CHUNK = 3


def numbered(game_id: np.ndarray) -> GameInputs:
    """Inputs that only number their games (the tests' ``play`` reads nothing else)."""
    zeros = np.zeros(len(game_id), dtype=np.int64)
    seats = np.zeros((len(game_id), 2), dtype=np.int32)
    return GameInputs(game_id, seats, seats, zeros, zeros, zeros.astype(np.int32))


def make_chunks(n: int) -> list[Chunk]:
    return [Chunk(i, numbered(np.arange(i * GAMES_PER_CHUNK, (i + 1) * GAMES_PER_CHUNK)))
            for i in range(n)]


class Recorder:
    """``play`` and a sink that write each chunk's game ids as ``root/part-NNNNN.parquet``,
    noting the order chunks are played and written in."""

    def __init__(self, root: Path):
        self.root = root
        self.played: list[int] = []  # chunk indices (-1: a one-game warm-up)
        self.written: list[int] = []

    def play(self, chunk: Chunk) -> pl.DataFrame:
        self.played.append(chunk.index if chunk.games == GAMES_PER_CHUNK else -1)
        return pl.DataFrame({"game_id": chunk.inputs.game_id})

    def write(self, chunk: Chunk, records: pl.DataFrame) -> None:
        write_parquet(self.root / part_name(chunk.index), records)
        self.written.append(chunk.index)

    def parts(self) -> list[str]:
        return sorted(p.name for p in self.root.iterdir())


def swapped_pairs(play, jobs):
    """A backend that plays every two jobs in reverse order and returns them so."""
    jobs = iter(jobs)
    for a in jobs:
        b = next(jobs, None)
        for job in ([b, a] if b is not None else [a]):
            yield job, play(job)


def test_parts_are_written_in_chunk_order_whatever_order_they_are_played(tmp_path):
    rec = Recorder(tmp_path)
    tally = execute(make_chunks(5), rec.play, rec, backend=swapped_pairs)
    assert rec.played == [1, 0, 3, 2, 4]
    assert rec.written == tally.written == [0, 1, 2, 3, 4]
    assert tally.games == 5 * GAMES_PER_CHUNK and not tally.interrupted
    for i in range(5):
        ids = pl.read_parquet(tmp_path / part_name(i))["game_id"].to_list()
        assert ids == list(range(i * GAMES_PER_CHUNK, (i + 1) * GAMES_PER_CHUNK))


def test_chunks_already_complete_are_neither_played_nor_written(tmp_path):
    rec = Recorder(tmp_path)
    tally = execute(make_chunks(4), rec.play, rec, skip={0, 2})
    assert rec.played == rec.written == tally.written == [1, 3]
    assert tally.games == 2 * GAMES_PER_CHUNK
    assert rec.parts() == [part_name(1), part_name(3)]


def test_the_warm_up_plays_one_game_alone_and_writes_nothing_of_it(tmp_path):
    rec = Recorder(tmp_path)
    tally = execute(make_chunks(2), rec.play, rec, skip={0}, warm_up=lambda: False)
    assert rec.played == [-1, 1] and rec.written == [1]
    assert tally.compile_s >= 0 and tally.games == GAMES_PER_CHUNK


def test_a_chunk_is_recorded_only_once_its_part_is_on_disk(tmp_path):
    rec = Recorder(tmp_path)
    seen = []

    def after(chunk, tally):
        assert (tmp_path / part_name(chunk.index)).exists()
        seen.append((chunk.index, tally.games))

    execute(make_chunks(3), rec.play, rec, after=after)
    assert seen == [(0, 3), (1, 6), (2, 9)]


def test_ctrl_c_finishes_the_chunk_under_way_and_hands_out_no_more(tmp_path):
    rec = Recorder(tmp_path)

    def play(chunk):
        if chunk.index == 1:
            os.kill(os.getpid(), signal.SIGINT)  # the loop's handler: a request to stop
        return rec.play(chunk)

    before = signal.getsignal(signal.SIGINT)
    tally = execute(make_chunks(4), play, rec)
    assert tally.interrupted
    assert rec.played == rec.written == tally.written == [0, 1]
    assert rec.parts() == [part_name(0), part_name(1)]
    assert signal.getsignal(signal.SIGINT) is before  # the handler is put back


def test_a_second_ctrl_c_while_writing_leaves_no_half_written_part(tmp_path, monkeypatch):
    rec = Recorder(tmp_path)
    real_write = pl.DataFrame.write_parquet

    def write_then_ctrl_c(self, file, *args, **kw):
        if Path(file).name == f".{part_name(2)}.tmp":
            Path(file).write_bytes(b"half a part")
            raise KeyboardInterrupt
        return real_write(self, file, *args, **kw)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", write_then_ctrl_c)
    tally = execute(make_chunks(4), rec.play, rec)
    assert tally.interrupted and tally.written == [0, 1]
    assert rec.parts() == [part_name(0), part_name(1)]  # no part 2, no temporary file
    assert pl.read_parquet(tmp_path / part_name(1)).height == GAMES_PER_CHUNK


def test_an_interrupt_never_writes_a_later_chunk_before_an_earlier_one(tmp_path):
    rec = Recorder(tmp_path)

    def later_first_then_ctrl_c(play, jobs):
        jobs = iter(jobs)
        _first, second = next(jobs), next(jobs)
        yield second, play(second)  # chunk 1 is done...
        raise KeyboardInterrupt  # ...and chunk 0 never is

    tally = execute(make_chunks(3), rec.play, rec, backend=later_first_then_ctrl_c)
    assert rec.played == [1]
    assert tally.interrupted and tally.written == [] and rec.parts() == []


@pytest.mark.parametrize("skip", [set(), {0, 1}])
def test_nothing_to_do_plays_nothing(tmp_path, skip):
    rec = Recorder(tmp_path)
    chunks = make_chunks(2) if skip else []
    tally = execute(chunks, rec.play, rec, skip=skip, warm_up=lambda: False)
    assert rec.played == [] and tally.written == [] and not tally.interrupted


def test_a_compiling_engine_shows_the_compile_clock_during_the_warm_up(tmp_path):
    rec = Recorder(tmp_path)
    lines: list[str] = []
    execute(make_chunks(1), rec.play, rec, warm_up=lambda: True,
            progress=Progress(show=False, log=lines.append))
    assert lines[0] == COMPILE_MESSAGE and lines[1].startswith("Compiled in")
    assert rec.played == [-1, 0]
