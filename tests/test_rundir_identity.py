"""Run dirs checked by content (issue 32, item 1): every part carries the run's identity,
the manifest seals it and records each file's SHA-256, and ``report``, ``compare`` on
saved runs and ``run --resume`` refuse a part that is not the run's own or a manifest that
disagrees with its parts, in one line naming the file and the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from rundir_tools import stop_after

from rnr_sim import files
from rnr_sim.cli import main
from rnr_sim.compare import compare_runs
from rnr_sim.errors import InputError
from rnr_sim.runs import identity, manifests, planning, rundir, runner

GAMES, CHUNK = 6, 20  # 4 decks: 6 tables x 6 deals x 2 seat orders = 72 games, 4 parts


def _run(out: Path, decks, seed: int) -> Path:
    runner.start_run(planning.RunOptions(decks=decks, games=GAMES, chunk_size=CHUNK, out=out,
                                       seed=seed), progress=False, log=lambda m: None)
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory, decks, module_engine) -> dict[int, Path]:
    """Two runs of the same decks and shape: seed 7 and seed 999."""
    base = tmp_path_factory.mktemp("identity")
    return {seed: _run(base / f"seed{seed}", decks, seed) for seed in (7, 999)}


@pytest.fixture
def run(made, tmp_path) -> Path:
    """A fresh copy of the seed-7 run for a test to break."""
    return Path(shutil.copytree(made[7], tmp_path / "run"))


def report(capsys, run_dir: Path, out: Path) -> tuple[int, str]:
    code = main(["report", str(run_dir), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    return code, err


def edit_manifest(run_dir: Path, change) -> None:
    manifest = manifests.read_manifest(run_dir)
    change(manifest)
    manifests.write_manifest(run_dir, manifest)


def snapshot(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes()
            for p in sorted(run_dir.rglob("*")) if p.is_file()}


def test_every_part_carries_the_run_s_identity_and_its_place(made):
    manifest = manifests.read_manifest(made[7])
    stamp = identity.read_stamp(made[7] / "games" / "part-00001.parquet")
    assert stamp["id"] == manifest["identity"]["id"]
    assert stamp["inputs"]["seed"] == 7
    # chunk 1 holds games 20..39: table 1 deal 4 seat 0 to table 3 deal 1 seat 1
    assert stamp["place"] == {"file": "games", "chunk": 1, "game_id": [20, 39],
                              "first": [1, 4, 0], "last": [3, 1, 1]}
    shas = manifest["files"]
    assert sorted(shas) == sorted([f"{t}/part-0000{c}.parquet" for t in ("games", "seats")
                                   for c in range(4)] + ["cards.parquet", "decks.parquet"])
    assert shas["games/part-00001.parquet"] == files.file_sha256(
        made[7] / "games" / "part-00001.parquet")
    other = manifests.read_manifest(made[999])["identity"]
    assert other["id"] != manifest["identity"]["id"]


def test_report_refuses_a_games_part_from_another_seed(made, run, tmp_path, capsys):
    shutil.copy(made[999] / "games" / "part-00001.parquet", run / "games" / "part-00001.parquet")
    code, err = report(capsys, run, tmp_path / "out")
    assert code == 2 and "\n" not in err and "Traceback" not in err
    assert "games/part-00001.parquet: not this run dir's" in err
    assert "seed 999 (this run dir's: 7)" in err and "--resume" in err
    assert not (tmp_path / "out").exists()


def test_report_refuses_a_manifest_whose_seed_was_edited(run, tmp_path, capsys):
    edit_manifest(run, lambda m: m.update(seed=999))
    code, err = report(capsys, run, tmp_path / "out")
    assert code == 2 and "\n" not in err
    assert err.startswith(f"{run / 'manifest.json'}: seed 999 (as first recorded: 7)")
    assert "edited" in err and "restore manifest.json" in err


def test_report_refuses_a_manifest_whose_seed_and_seal_were_both_edited(run, tmp_path, capsys):
    def forge(m):
        m["seed"] = 999
        m["identity"] = identity.seal(rundir.run_identity(m))

    edit_manifest(run, forge)
    code, err = report(capsys, run, tmp_path / "out")
    assert code == 2 and "seed 999 (its files': 7)" in err
    assert "every file of the run dir was written otherwise" in err


def test_report_refuses_a_manifest_whose_rules_switch_was_edited(run, tmp_path, capsys):
    edit_manifest(run, lambda m: m["rules"]["switches"].update(turn_limit=150))
    code, err = report(capsys, run, tmp_path / "out")
    assert code == 2 and "rules.turn_limit 150 (as first recorded: 200)" in err


def test_report_refuses_a_part_changed_after_it_was_written(run, tmp_path, capsys):
    part = run / "seats" / "part-00002.parquet"
    stamp = {identity.KEY: pl.read_parquet_metadata(part)[identity.KEY]}
    seats = pl.read_parquet(part).with_columns(~pl.col("won"))  # same rows, other results
    seats.write_parquet(part, metadata=stamp)
    code, err = report(capsys, run, tmp_path / "out")
    assert code == 2 and "seats/part-00002.parquet: its bytes are not the ones" in err


def test_report_refuses_a_manifest_stripped_of_its_identity(run, tmp_path, capsys):
    edit_manifest(run, lambda m: m.pop("identity"))
    code, err = report(capsys, run, tmp_path / "out")
    assert code == 2 and "records no identity" in err and "carries one" in err


def test_compare_on_saved_runs_refuses_a_part_from_another_seed(made, run, tmp_path):
    variant = Path(shutil.copytree(made[7], tmp_path / "variant"))
    for table in ("games", "seats"):
        shutil.copy(made[999] / table / "part-00003.parquet", variant / table / "part-00003.parquet")
    assert compare_runs(run, made[7]) is not None  # the same run twice: readable
    with pytest.raises(InputError, match=r"part-00003.parquet: not this run dir's: .*seed 999"):
        compare_runs(run, variant)


def test_resume_refuses_an_edited_seed_and_changes_nothing(run):
    stop_after(run, 2)
    edit_manifest(run, lambda m: m.update(seed=999))
    before = snapshot(run)
    with pytest.raises(InputError, match=r"manifest.json: seed 999 \(as first recorded: 7\)"):
        runner.resume_run(run, progress=False, log=lambda m: None)
    assert snapshot(run) == before


def test_resume_refuses_a_part_from_another_seed(made, run):
    stop_after(run, 2)
    shutil.copy(made[999] / "seats" / "part-00001.parquet", run / "seats" / "part-00001.parquet")
    with pytest.raises(InputError, match=r"seats/part-00001.parquet: not this run dir's"):
        runner.resume_run(run, progress=False, log=lambda m: None)


def test_resume_of_a_stopped_run_gives_the_uninterrupted_bytes(made, run):
    stop_after(run, 1)
    runner.resume_run(run, progress=False, log=lambda m: None)
    mine, whole = snapshot(run), snapshot(made[7])
    assert mine.keys() == whole.keys()  # no lock file left, no stray part
    for name, data in whole.items():
        if name != "manifest.json":
            assert mine[name] == data, name
    assert manifests.read_manifest(run)["files"] == manifests.read_manifest(made[7])["files"]


def test_a_run_dir_from_before_the_checks_is_read_unchecked(run):
    """No seal in the manifest and no stamp in any file: the shape checks only."""
    manifest = manifests.read_manifest(run)
    for rel in rundir.expected_files(manifest):
        frame = pl.read_parquet(run / rel)
        frame.write_parquet(run / rel)  # without metadata
    manifest.pop("identity")
    manifest.pop("files")
    manifests.write_manifest(run, manifest)
    assert rundir.verify_run_dir(run, manifest) is False
    with pytest.raises(InputError, match="did not record its parts' identity"):
        runner.resume_run(run, progress=False, log=lambda m: None)


def test_the_identity_api_serves_another_dir_kind(tmp_path):
    """A dir of another kind (as a discovery dir would be) stamps, seals and verifies its
    own files with the same three calls."""
    from rnr_sim.files import write_parquet

    ours = {"kind": "discovery", "seed": 3, "pool": ["a", "b"]}
    manifest = {"identity": identity.seal(ours), "files": {}}
    for k in range(2):
        rel = f"round-{k}.parquet"
        manifest["files"][rel] = write_parquet(tmp_path / rel, pl.DataFrame({"x": [k]}),
                                               identity.stamp(ours, round=k))
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    expected = {f"round-{k}.parquet": {"round": k} for k in range(2)}
    fixes = identity.Fixes(file="run the search again", record="restore it")

    def verify():
        return identity.verify(tmp_path, ours, expected, manifest["files"],
                               manifest["identity"], fixes=fixes, what="discovery dir")

    assert verify() is True
    shutil.copy(tmp_path / "round-0.parquet", tmp_path / "round-1.parquet")
    with pytest.raises(InputError, match=r"round-1.parquet: holds round 0 of this discovery "
                                         r"dir, not round 1.*run the search again"):
        verify()
