"""``rnr-sim run`` as a user runs it: a real process, a real Ctrl-C, then ``--resume``.

On the real engine when ``rnr_sim.engine.driver`` is importable, else on
``tests/fake_engine.py`` (the subprocess is started with the fake in place).
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from fake_engine import (
    REAL_ENGINE,
    SAMPLE_CATALOG,
    cli_argv,
    sample_decks,
)

from rnr_sim import enums
from rnr_sim.runs import manifests, planning, runner
from rnr_sim.runs.execution import part_name
from rnr_sim.runs.schema import WIN_PATHS

pytestmark = [pytest.mark.skipif(not SAMPLE_CATALOG.exists(),
                                 reason="the sample catalog is not written yet"),
              pytest.mark.usefixtures("engine")]  # conftest.py


def run_in_process(out: Path, decks, **kw) -> runner.RunResult:
    return runner.start_run(planning.RunOptions(decks=decks, out=out, **kw), progress=False,
                            log=lambda m: None)


def part_bytes(run_dir: Path) -> dict[str, bytes]:
    return {f"{t}/{p.name}": p.read_bytes() for t in ("games", "seats")
            for p in sorted((run_dir / t).glob("part-*.parquet"))}


def cli(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cli_argv(*map(str, args)), capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_ctrl_c_stops_after_a_chunk_and_resume_finishes_the_same_run(tmp_path, decks):
    out = tmp_path / "stopped"
    # 4 decks: 6 tables x 1,000 deals x 2 seat orders = 12,000 games in 120 chunks.
    shape = ["--games", "1000", "--chunk-size", "100", "--seed", "99"]
    proc = subprocess.Popen(cli_argv("run", *map(str, decks), *shape, "--out", str(out)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = out / "games" / "part-00000.parquet"
        deadline = time.monotonic() + 240
        while not first.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no chunk written in 240 s"
            time.sleep(0.002)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert f"rnr-sim run --resume {out}" in stderr
    m = manifests.read_manifest(out)
    assert m["status"] == "incomplete"
    assert 0 < m["games_done"] < m["games_total"] == 12_000
    done = m["chunks"]["complete"]
    assert done == list(range(len(done)))
    assert sorted(p.name for p in (out / "games").iterdir()) == [
        part_name(c) for c in done]

    res = cli("run", "--resume", out, "--quiet")
    assert res.returncode == 0, res.stderr
    assert f"rnr-sim report {out}" in res.stdout
    m = manifests.read_manifest(out)
    assert m["status"] == "complete" and m["games_done"] == 12_000
    assert len(m["resumed"]) == 1

    whole = tmp_path / "whole"
    run_in_process(whole, decks, games=1000, chunk_size=100, seed=99)
    assert part_bytes(out) == part_bytes(whole)
    other = tmp_path / "other_chunks"
    run_in_process(other, decks, games=1000, chunk_size=5000, seed=99)
    for table in ("games", "seats"):
        assert manifests.scan_table(out, table).collect().equals(
            manifests.scan_table(other, table).collect())


def test_a_non_empty_out_exits_2_without_a_traceback(tmp_path, decks):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "keep.txt").write_text("do not touch")
    res = cli("run", *decks, "--out", out)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert res.stderr.strip().count("\n") == 0 and "not empty" in res.stderr
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_the_console_script_runs(tmp_path, decks):
    script = Path(sys.executable).with_name("rnr-sim")
    if REAL_ENGINE and script.exists():
        argv = [str(script)]
    else:
        argv = cli_argv()
    res = subprocess.run([*argv, "run", *map(str, decks), "--games", "3", "--json",
                          "--out", str(tmp_path / "r")], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["games_done"] == 6 * 3 * 2


@pytest.mark.parametrize("players", [3, 4])
def test_three_and_four_player_runs_finish(tmp_path, decks, players):
    extra = write_generated_decks_renamed(decks, tmp_path)
    result = run_in_process(tmp_path / "r", [*decks, *extra], players=players, games=8,
                            chunk_size=50)
    n_tables = math.comb(len(decks) + len(extra), players)
    assert result.complete and result.manifest["games_total"] == n_tables * 8 * players
    games = manifests.scan_table(tmp_path / "r", "games").collect()
    seats = manifests.scan_table(tmp_path / "r", "seats").collect()
    assert (games["n_players"] == players).all()
    assert seats.height == games.height * players
    assert games["winner_seat"].is_between(-1, players - 1).all()


def write_generated_decks_renamed(decks, folder: Path) -> list[Path]:
    """Two more decks (copies under new names, other policies): six decks in all."""
    out = []
    for k, src in enumerate(decks[:2]):
        lines = src.read_text().splitlines()
        body = [ln for ln in lines if not ln.lower().startswith(("name:", "policy:"))]
        path = folder / f"extra{k}.txt"
        path.write_text("\n".join([f"Name: Extra {k}", f"Policy: {('mill', 'random')[k]}",
                                   *body]) + "\n")
        out.append(path)
    return out


@pytest.mark.skipif(not REAL_ENGINE, reason="needs the real engine")
def test_every_victory_path_is_reachable(tmp_path, decks):
    """A modest run of the sample decks (2, 3 and 4 players) reaches all four victory
    paths; a tiny turn limit makes draws. Sized to stay well under 30 s."""
    field = sample_decks() or decks
    started = time.monotonic()
    paths: set[str] = set()
    for players, games in ((2, 400), (3, 60), (4, 30)):
        out = tmp_path / f"p{players}"
        run_in_process(out, field, players=players, games=games, mirrors=players == 2)
        paths |= set(manifests.scan_table(out, "games").collect()["path"])
    assert set(WIN_PATHS) <= paths, f"paths seen: {sorted(paths)}"

    rules = tmp_path / "short.toml"
    rules.write_text("turn_limit = 2\n")
    run_in_process(tmp_path / "short", field[:2], games=20, rules=rules)
    games = manifests.scan_table(tmp_path / "short", "games").collect()
    draws = games.filter(pl.col("path") == "draw")
    assert draws.height > 0 and (draws["winner_seat"] == -1).all()
    assert manifests.read_manifest(tmp_path / "short")["rules_changed"] == {"turn_limit": 2}
    assert time.monotonic() - started < 60
    assert enums.PATHS[-1] == "draw"
