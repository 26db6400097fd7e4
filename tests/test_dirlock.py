"""One writer at a time (issue 32, item 2): a run dir (and a compare folder) is locked by
the command writing it; a second writer gets one line naming the first one's pid, exit 2,
and the dir is left as it was. The lock dies with its holder, however it dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from rundir_tools import stop_after

from rnr_sim.cli import main
from rnr_sim.compare import CompareOptions, run_compare
from rnr_sim.errors import InputError
from rnr_sim.runs import manifests, planning, runner
from rnr_sim.runs.dirlock import LOCK_NAME, DirLock, holder

HOLD = ("import sys, time; from rnr_sim.runs.dirlock import DirLock; "
        "DirLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(120)")


def hold_in_another_process(folder: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture
def held(tmp_path):
    """A process of our own holding the lock of a folder: (folder, process)."""
    folder = tmp_path / "locked"
    folder.mkdir()
    proc = hold_in_another_process(folder)
    yield folder, proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.fixture
def stopped(tmp_path, decks, engine) -> Path:
    """A run stopped after its first chunk of three."""
    out = tmp_path / "run"
    runner.start_run(planning.RunOptions(decks=decks[:2], games=30, chunk_size=20, out=out),
                     progress=False, log=lambda m: None)
    stop_after(out, 1)
    return out


def test_a_second_resume_is_one_line_naming_the_first_s_pid(stopped, capsys):
    proc = hold_in_another_process(stopped)
    try:
        before = manifests.read_manifest(stopped)
        code = main(["run", "--resume", str(stopped), "--quiet"])
        err = capsys.readouterr().err.strip()
        assert code == 2 and "\n" not in err and "Traceback" not in err
        assert f"another rnr-sim (pid {proc.pid}" in err and "is writing this run dir" in err
        assert manifests.read_manifest(stopped) == before  # nothing played, nothing written
        assert holder(stopped)["pid"] == proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_the_lock_dies_with_its_holder_killed_with_sigkill(stopped):
    proc = hold_in_another_process(stopped)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    result = runner.resume_run(stopped, progress=False, log=lambda m: None)
    assert result.complete and not (stopped / LOCK_NAME).exists()


def test_two_writers_in_one_process_exclude_each_other_too(stopped):
    with DirLock(stopped):
        with pytest.raises(InputError, match=f"pid {os.getpid()}"):
            runner.resume_run(stopped, progress=False, log=lambda m: None)
    assert runner.resume_run(stopped, progress=False, log=lambda m: None).complete


def test_a_run_into_a_locked_out_is_refused_and_leaves_it_empty(held, decks, engine):
    folder, proc = held
    with pytest.raises(InputError, match=f"pid {proc.pid}"):
        runner.start_run(planning.RunOptions(decks=decks[:2], games=3, out=folder),
                         progress=False, log=lambda m: None)
    assert [p.name for p in folder.iterdir()] == [LOCK_NAME]


def test_compare_locks_its_folder(held, decks, engine, tmp_path):
    folder, proc = held
    rules = tmp_path / "b.toml"
    rules.write_text("turn_limit = 150\n")
    with pytest.raises(InputError, match=f"pid {proc.pid}.*compare folder"):
        run_compare(CompareOptions(decks=decks[:2], rules_b=rules, games=4, out=folder),
                    progress=False, log=lambda m: None)
