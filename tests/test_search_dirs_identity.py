"""Discovery dirs and balance dirs checked by content, as run dirs are: every Parquet file
carries the dir's identity and its name, the manifest seals the identity and records the
SHA-256 of each file (the elites' lists and pilots, the suggestions' patches too), and
``report``, ``check coverage --discovery`` and ``balance --discovery`` refuse a file that
is not the dir's own, or an edited manifest, in one line naming the file and the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from test_balance import _run as balance_run
from test_discover import TOY, TOY_FIELD

from rnr_sim import files
from rnr_sim.cli import main
from rnr_sim.discover import DiscoverOptions, discover
from rnr_sim.runs import identity, searchdirs

INFEASIBLE = ('[targets]\nfirst_seat = [0.70, 0.80]\n\n[scope]\ncards = ["Stamp Act"]\n'
              "max_changes = 1\n")


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """Two toy discoveries (seeds 3 and 4, 60,000 games each) and the smallest balance run
    of tests/test_balance.py that writes a suggestion (40,000 games)."""
    base = tmp_path_factory.mktemp("search-dirs")
    out = {}
    for seed in (3, 4):
        out[f"d{seed}"] = base / f"discovery{seed}"
        discover(DiscoverOptions(field=[TOY_FIELD], cards=[TOY], budget=60_000, seed=seed,
                                 out=out[f"d{seed}"]), progress=False, log=lambda m: None)
    out["b"] = balance_run(base, "balance", INFEASIBLE, budget=40_000, rediscover=False).out
    return out


@pytest.fixture
def disc(made, tmp_path) -> Path:
    """A fresh copy of the seed-3 discovery for a test to break."""
    return Path(shutil.copytree(made["d3"], tmp_path / "disc"))


@pytest.fixture
def bal(made, tmp_path) -> Path:
    return Path(shutil.copytree(made["b"], tmp_path / "bal"))


def manifest(d: Path) -> dict:
    return json.loads((d / "manifest.json").read_text(encoding="utf-8"))


def edit_manifest(d: Path, change) -> None:
    m = manifest(d)
    change(m)
    (d / "manifest.json").write_text(json.dumps(m, indent=2), encoding="utf-8")


def snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def refused(capsys, tmp_path, d: Path, args: list[str]) -> str:
    """Run ``args`` on ``d``: exit 2, one line, no traceback, nothing written (``d`` as it
    was, no ``tmp_path/out``); the line."""
    before = snapshot(d)
    code = main(args)
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "Traceback" not in err, err
    assert snapshot(d) == before and not (tmp_path / "out").exists()
    return err


def report(capsys, tmp_path, d: Path) -> str:
    return refused(capsys, tmp_path, d, ["report", str(d), "--out", str(tmp_path / "out")])


def test_both_kinds_carry_their_identity_and_verify_clean(made, tmp_path, capsys):
    for key, tables, texts in (("d3", searchdirs.DISCOVERY_TABLES, "elites/"),
                               ("b", searchdirs.BALANCE_TABLES, "suggestions/")):
        d = made[key]
        m = manifest(d)
        for name in tables:
            stamp = identity.read_stamp(d / f"{name}.parquet")
            assert stamp["id"] == m["identity"]["id"] and stamp["place"] == {"file": name}
            assert m["files"][f"{name}.parquet"] == files.file_sha256(d / f"{name}.parquet")
        written = sorted(str(p.relative_to(d)) for p in (d / texts).iterdir())
        assert written and sorted(f for f in m["files"] if f.startswith(texts)) == written
        assert all(m["files"][f] == files.file_sha256(d / f) for f in written)
        out = tmp_path / f"report-{key}"
        assert main(["report", str(d), "--out", str(out)]) == 0
        assert (out / "index.html").is_file()
    assert searchdirs.verify_discovery_dir(made["d3"], manifest(made["d3"])) is True
    assert searchdirs.verify_balance_dir(made["b"], manifest(made["b"])) is True
    assert manifest(made["d3"])["identity"]["inputs"]["seed"] == 3
    assert manifest(made["d4"])["identity"]["id"] != manifest(made["d3"])["identity"]["id"]
    capsys.readouterr()


def test_every_reader_refuses_an_archive_from_another_seed(made, disc, tmp_path, capsys):
    shutil.copy(made["d4"] / "archive.parquet", disc / "archive.parquet")
    targets = tmp_path / "targets.toml"
    targets.write_text(INFEASIBLE, encoding="utf-8")
    out = str(tmp_path / "out")
    for args in (["report", str(disc), "--out", out],
                 ["check", "coverage", "--discovery", str(disc), "--seeds", "3", "--games", "2"],
                 ["balance", "--discovery", str(disc), "--targets", str(targets), "--out", out]):
        err = refused(capsys, tmp_path, disc, args)
        assert err.startswith(f"{disc / 'archive.parquet'}: not this discovery dir's"), err
        assert "seed 4 (this discovery dir's: 3)" in err and "rnr-sim discover" in err


def test_an_elite_list_edited_in_the_dir_is_refused_with_copy_it_out(disc, tmp_path, capsys):
    elite = disc / "elites" / "01.txt"
    elite.write_text(elite.read_text(encoding="utf-8") + "# my notes\n", encoding="utf-8")
    err = report(capsys, tmp_path, disc)
    assert err.startswith(f"{elite}: its bytes are not the ones manifest.json records")
    assert "copy its file out of the discovery dir and edit the copy" in err


def test_an_elite_list_dropped_from_the_manifest_is_refused(disc, tmp_path, capsys):
    edit_manifest(disc, lambda m: m["files"].pop("elites/02.txt"))
    err = report(capsys, tmp_path, disc)
    assert err.startswith(f"{disc / 'manifest.json'}: records no SHA-256 for elites/02.txt")


@pytest.mark.parametrize("kind", ["discovery", "balance"])
def test_a_file_the_manifest_lists_deleted_is_refused(kind, disc, bal, tmp_path, capsys):
    """``rm DISC/elites/03.txt`` or ``rm BAL/suggestions/01.toml`` then ``report``: the page
    would link to, or give a compare command for, a file that is gone (issue 44, item 7)."""
    root = disc if kind == "discovery" else bal
    gone = root / ("elites/01.txt" if kind == "discovery" else "suggestions/01.toml")
    assert gone.is_file()
    gone.unlink()
    err = report(capsys, tmp_path, root)
    assert err.startswith(f"{gone}: manifest.json lists it, but it is gone")
    assert "put back the file as it was written" in err


def test_a_manifest_whose_seed_was_edited_is_refused_naming_it(disc, tmp_path, capsys):
    edit_manifest(disc, lambda m: m.update(seed=4))
    err = report(capsys, tmp_path, disc)
    assert err.startswith(f"{disc / 'manifest.json'}: seed 4 (as first recorded: 3)")
    assert "restore manifest.json" in err


def test_a_balance_dir_refuses_an_edited_patch_and_an_unstamped_table(bal, tmp_path, capsys):
    patch = bal / "suggestions" / "01.toml"
    original = patch.read_bytes()
    patch.write_bytes(original.replace(b"Balance suggestion 01", b"My suggestion 01"))
    err = report(capsys, tmp_path, bal)
    assert err.startswith(f"{patch}: its bytes are not the ones manifest.json records")
    assert "copy its patch out of the balance dir" in err
    patch.write_bytes(original)
    figures = bal / "figures.parquet"
    pl.read_parquet(figures).write_parquet(figures)  # the same rows, no stamp
    err = report(capsys, tmp_path, bal)
    assert err.startswith(f"{figures}: carries no balance dir identity")


def _strip(d: Path, tables) -> None:
    """``d`` as written before these checks: no seal, no SHA-256s, no stamps."""
    edit_manifest(d, lambda m: [m.pop("identity"), m.pop("files")])
    for name in tables:
        pl.read_parquet(d / f"{name}.parquet").write_parquet(d / f"{name}.parquet")


def test_dirs_from_before_the_checks_still_report(disc, bal, tmp_path):
    _strip(disc, searchdirs.DISCOVERY_TABLES)
    _strip(bal, searchdirs.BALANCE_TABLES)
    assert searchdirs.verify_discovery_dir(disc, manifest(disc)) is False
    assert searchdirs.verify_balance_dir(bal, manifest(bal)) is False
    for d in (disc, bal):
        assert main(["report", str(d), "--out", str(tmp_path / f"r-{d.name}")]) == 0


def test_report_out_of_a_search_dir_refuses_what_a_run_report_refuses(disc, bal, tmp_path,
                                                                       capsys):
    """``report DISC --out R`` wrote into a folder holding a run report, another dir's page,
    a discovery dir, or a file (issue 44, item 4): each refused in one line, nothing
    written; the same page again into its own folder is fine."""
    page = tmp_path / "page"
    assert main(["report", str(disc), "--out", str(page)]) == 0
    assert main(["report", str(disc), "--out", str(page)]) == 0  # its own page: replaced
    capsys.readouterr()
    a_file = tmp_path / "f.txt"
    a_file.write_text("x")
    for target, why in ((page, "not the page of this balance dir"),
                        (disc, "not the page of this balance dir"),
                        (a_file, "not a folder")):
        before = snapshot(target) if target.is_dir() else None
        assert main(["report", str(bal), "--out", str(target)]) == 2
        err = capsys.readouterr().err.strip()
        assert why in err and "\n" not in err, err
        if before is not None:
            assert snapshot(target) == before


@pytest.mark.parametrize("kind,edit", [
    ("discovery", lambda m: m["games"].update(total=1)),
    ("discovery", lambda m: m.update(seconds=99999)),
    ("balance", lambda m: m.update(status="suggestions", message="All targets met. Ship it.")),
])
def test_a_manifest_whose_figures_were_edited_is_refused(kind, edit, disc, bal, tmp_path,
                                                         capsys):
    """Figures in a manifest were not sealed (issue 44, item 6): a discovery's games or
    seconds, a balance run's status and message edited were reported as they were."""
    root = disc if kind == "discovery" else bal
    edit_manifest(root, edit)
    err = report(capsys, tmp_path, root)
    assert err.startswith(f"{root / 'manifest.json'}: its figures are not the ones written")
