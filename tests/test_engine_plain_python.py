"""The compiled engine and the same code run as plain Python (``NUMBA_DISABLE_JIT=1``) play
identical games: the kernels carry no numba-only behaviour (wrapping integer casts, record
writes) that the readable twin would not reproduce."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl

REPO = Path(__file__).resolve().parent.parent
DECKS = [str(REPO / "decks" / name) for name in ("bison_stampede.txt", "scroll_assembly.txt",
                                                 "eagle_blockade.txt")]


def run(out: Path, plain: bool, players: int) -> None:
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if plain else "0")
    subprocess.run([sys.executable, "-m", "rnr_sim.cli", "run", *DECKS, "--games", "4",
                    "--players", str(players), "--seed", "11", "--out", str(out)],
                   env=env, check=True, capture_output=True, cwd=REPO)


def test_plain_python_plays_the_same_games_as_the_compiled_engine(tmp_path):
    for players in (2, 3):
        run(tmp_path / f"jit{players}", False, players)
        run(tmp_path / f"py{players}", True, players)
        for table in ("games", "seats"):
            jit = pl.read_parquet(tmp_path / f"jit{players}" / table)
            py = pl.read_parquet(tmp_path / f"py{players}" / table)
            assert jit.height > 0 and jit.equals(py), (players, table)
