"""A full disk is an answer, and sizes have bounds (issue 32, items 3 and 4).

A full disk (simulated: the writer raises ENOSPC, never by filling the real disk) is one
line with the space the rest of the run needs, exit 2, the run dir left as a Ctrl-C
leaves it, its count the manifest's. Counts beyond what the int64 ``game_id`` holds, a run
whose parquet would not fit the free disk, and ``--resume`` of a finished run are each
answered before anything is written."""

from __future__ import annotations

import errno
from pathlib import Path

import polars as pl
import pytest

from rnr_sim import files
from rnr_sim.cli import main
from rnr_sim.errors import InputError
from rnr_sim.runs import bounds, manifests, planning, runner

pytestmark = pytest.mark.usefixtures("engine")

SHAPE = ["--games", "30", "--chunk-size", "20"]  # 2 decks: 1 table x 30 deals x 2 = 60 games


def cli(capsys, *args) -> tuple[int, str]:
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err.strip()


def part_bytes(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*"))
            if p.is_file() and p.suffix == ".parquet"}


REAL_WRITE = pl.DataFrame.write_parquet


def fail_writing(monkeypatch, folder: str, name: str, error: Exception) -> None:
    """Every parquet write of ``folder/name`` (e.g. seats, part-00001.parquet) fails with
    ``error``, after writing a few bytes (what a full disk leaves)."""

    def write(self, file, *args, **kw):
        target = Path(file)  # the temporary name atomic_write gives the file
        if target.parent.name == folder and target.name == f".{name}.tmp":
            target.write_bytes(b"half")
            raise error
        return REAL_WRITE(self, file, *args, **kw)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", write)


ENOSPC = OSError(errno.ENOSPC, "No space left on device")
POLARS_ENOSPC = pl.exceptions.ComputeError(
    "parquet: File out of specification: underlying IO error: No space left on device "
    "(os error 28)")


@pytest.mark.parametrize("error", [ENOSPC, POLARS_ENOSPC], ids=["oserror", "polars"])
def test_a_full_disk_is_one_line_with_the_space_needed_and_the_manifest_s_count(
        tmp_path, decks, capsys, monkeypatch, error):
    out = tmp_path / "r"
    fail_writing(monkeypatch, "seats", "part-00001.parquet", error)
    code, err = cli(capsys, "run", *decks[:2], *SHAPE, "--out", out, "--quiet")
    assert code == 2 and "\n" not in err and "Traceback" not in err
    assert "part-00001.parquet: no space left on the device" in err
    assert "the rest of the run (40 games) needs about" in err and "are free" in err
    manifest = manifests.read_manifest(out)
    assert manifest["games_done"] == 20 and "keeps the 20 games done" in err
    assert f"rnr-sim run --resume {out}" in err
    # as after a Ctrl-C: only the recorded chunk's parts, nothing half-written
    assert sorted(part_bytes(out)) == ["cards.parquet", "decks.parquet",
                                       "games/part-00000.parquet", "seats/part-00000.parquet"]
    assert not list(out.rglob("*.tmp"))

    monkeypatch.setattr(pl.DataFrame, "write_parquet", REAL_WRITE)  # space freed
    assert main(["run", "--resume", str(out), "--quiet"]) == 0
    assert main(["run", *map(str, decks[:2]), *SHAPE, "--out", str(tmp_path / "whole"),
                 "--quiet"]) == 0
    assert part_bytes(out) == part_bytes(tmp_path / "whole")


def test_resume_on_a_disk_still_full_is_the_same_one_line(tmp_path, decks, capsys,
                                                          monkeypatch):
    out = tmp_path / "r"
    fail_writing(monkeypatch, "games", "part-00001.parquet", ENOSPC)
    assert cli(capsys, "run", *decks[:2], *SHAPE, "--out", out, "--quiet")[0] == 2
    before = (out / "manifest.json").read_bytes()
    code, err = cli(capsys, "run", "--resume", out, "--quiet")
    assert code == 2 and "\n" not in err and "no space left on the device" in err
    assert "keeps the 20 games done" in err
    assert (out / "manifest.json").read_bytes() == before


def test_a_full_disk_while_writing_the_manifest_counts_the_manifest_on_disk(
        tmp_path, decks, capsys, monkeypatch):
    out = tmp_path / "r"
    real = manifests.write_manifest
    calls = {"n": 0}

    def write_manifest(run_dir, manifest):
        calls["n"] += 1
        if calls["n"] == 4:  # 2 at the start, chunk 0's; chunk 1's fails
            raise files.DiskFull(run_dir / "manifest.json", "No space left on device")
        real(run_dir, manifest)

    monkeypatch.setattr(runner, "write_manifest", write_manifest)
    code, err = cli(capsys, "run", *decks[:2], *SHAPE, "--out", out, "--quiet")
    assert code == 2 and manifests.read_manifest(out)["games_done"] == 20
    assert "keeps the 20 games done" in err  # not the 40 the manifest in memory held
    assert not (out / "games" / "part-00001.parquet").exists()  # unrecorded: removed


def test_a_full_disk_before_the_first_chunk_leaves_nothing(tmp_path, decks, capsys,
                                                           monkeypatch):
    out = tmp_path / "r"
    fail_writing(monkeypatch, "r", "decks.parquet", ENOSPC)
    code, err = cli(capsys, "run", *decks[:2], *SHAPE, "--out", out, "--quiet")
    assert code == 2 and "\n" not in err and "nothing was written" in err
    assert not out.exists()


def test_games_beyond_what_game_id_can_hold_are_refused_and_nothing_written(
        tmp_path, decks, capsys):
    out = tmp_path / "r"
    code, err = cli(capsys, "run", *decks[:2], "--games", str(10**19), "--out", out)
    assert code == 2 and "\n" not in err and "64-bit" in err
    assert f"at most {(2**63 - 1) // 2:,} deals per table" in err
    assert not out.exists()
    bounds.check_shape(1, (2**63 - 1) // 2, 2)  # the most that fits is accepted


def test_a_run_larger_than_the_free_disk_is_refused_with_the_estimate(
        tmp_path, decks, capsys, monkeypatch):
    out = tmp_path / "r"
    monkeypatch.setattr(bounds, "free_bytes", lambda path: 900)
    code, err = cli(capsys, "run", *decks[:2], *SHAPE, "--out", out)
    assert code == 2 and "60 games would take about 2.4 kB (40 bytes a game)" in err
    assert "900 B are free" in err and "--no-space-check" in err and not out.exists()
    assert cli(capsys, "run", *decks[:2], *SHAPE, "--out", out, "--quiet",
               "--no-space-check")[0] == 0


def test_more_chunks_than_a_run_dir_keeps_are_refused(tmp_path, decks):
    with pytest.raises(InputError, match="--chunk-size 1: 200,002 games make 200,002 chunks"):
        runner.start_run(planning.RunOptions(decks=decks[:2], games=100_001, chunk_size=1,
                                           out=tmp_path / "r"), progress=False)
    assert not (tmp_path / "r").exists()


def test_replay_game_beyond_int64_is_one_line(capsys):
    sample = sorted((Path(__file__).parent.parent / "decks").glob("*.txt"))[:2]
    code, err = cli(capsys, "replay", *sample, "--game", str(2**63))
    assert code == 2 and "\n" not in err and "--game must be a whole number 0.." in err


def test_resume_of_a_finished_run_says_so_and_changes_nothing(tmp_path, decks, capsys):
    out = tmp_path / "r"
    assert cli(capsys, "run", *decks[:2], *SHAPE, "--out", out, "--quiet")[0] == 0
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.rglob("*") if p.is_file()}
    code, err = cli(capsys, "run", "--resume", out)
    assert code == 0 and "already complete (60 games); nothing to do" in err
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.rglob("*") if p.is_file()}
    assert after == before
