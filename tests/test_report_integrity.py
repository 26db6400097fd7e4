"""`report` refuses a broken run dir and a folder it does not own (issue 10, item 9): a
missing, extra or unreadable part, or one of the wrong size, is one line naming the file,
exit 2, nothing written; a stopped run gets a banner above the verdict; --out refuses a
non-empty folder that is not an earlier report of the same run; row order is fixed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from rundir_tools import stop_after

from rnr_sim.cli import main
from rnr_sim.errors import InputError
from rnr_sim.report import build_report
from rnr_sim.report.build import MARKER
from rnr_sim.report.tables import card_order
from rnr_sim.runs import manifests, planning, runner

GAMES, CHUNK = 6, 20  # 4 decks: 6 tables x 6 deals x 2 seat orders = 72 games, 4 parts


@pytest.fixture(scope="module")
def made_run(tmp_path_factory, decks_module):
    """A real run dir in four parts (games 0-19, 20-39, 40-59, 60-71)."""
    from fake_engine import engine_driver

    driver = engine_driver()
    out = tmp_path_factory.mktemp("integrity") / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(planning, "engine_driver", lambda: driver)
        runner.start_run(planning.RunOptions(decks=decks_module, games=GAMES, chunk_size=CHUNK,
                                           out=out), progress=False, log=lambda m: None)
    return out


@pytest.fixture(scope="module")
def decks_module(tmp_path_factory):
    from fake_engine import write_generated_decks

    from rnr_sim.cards import FOUNDATION_CATALOG, load_catalog

    return write_generated_decks(load_catalog(FOUNDATION_CATALOG), tmp_path_factory.mktemp("decks"))


@pytest.fixture
def run(made_run, tmp_path) -> Path:
    """A fresh copy of the run dir for a test to break."""
    return Path(shutil.copytree(made_run, tmp_path / "run"))


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def assert_refused(capsys, run: Path, out: Path, needle: str) -> str:
    code, stdout, err = cli(capsys, "report", str(run), "--out", str(out))
    assert code == 2
    line = err.strip()
    assert "\n" not in line and "Traceback" not in line
    assert needle in line, line
    assert not out.exists()  # nothing written
    return line


def test_the_run_reports_as_it_is(run, tmp_path):
    assert manifests.read_manifest(run)["chunks"]["complete"] == [0, 1, 2, 3]
    index = build_report(run, tmp_path / "out")
    assert index.is_file()


def test_a_missing_part_is_an_error_naming_it(run, tmp_path, capsys):
    (run / "seats" / "part-00002.parquet").unlink()
    line = assert_refused(capsys, run, tmp_path / "out", "part-00002.parquet")
    assert "seats" in line and "missing" in line and "--resume" in line


def test_an_extra_part_is_an_error_naming_it(run, tmp_path, capsys):
    shutil.copy(run / "games" / "part-00003.parquet", run / "games" / "part-00004.parquet")
    line = assert_refused(capsys, run, tmp_path / "out", "part-00004.parquet")
    assert "does not record" in line


def test_an_unreadable_part_is_an_error_naming_it(run, tmp_path, capsys):
    path = run / "games" / "part-00001.parquet"
    path.write_bytes(path.read_bytes()[:200])  # truncated
    line = assert_refused(capsys, run, tmp_path / "out", "part-00001.parquet")
    assert "unreadable" in line


def test_a_part_of_the_wrong_games_is_an_error(run, tmp_path, capsys):
    # chunk 1's file replaced by chunk 0's: the right name, the wrong games
    for table in ("games", "seats"):
        shutil.copy(run / table / "part-00000.parquet", run / table / "part-00001.parquet")
    line = assert_refused(capsys, run, tmp_path / "out", "part-00001.parquet")
    assert "game_id 20..39" in line


def test_a_part_with_rows_removed_is_an_error(run, tmp_path, capsys):
    path = run / "games" / "part-00003.parquet"
    pl.read_parquet(path).head(5).write_parquet(path)
    assert_refused(capsys, run, tmp_path / "out", "part-00003.parquet")


def test_a_stopped_run_gets_a_banner_above_the_verdict(run, tmp_path):
    man = stop_after(run, 2)
    index = build_report(run, tmp_path / "out")
    page = index.read_text(encoding="utf-8")
    banner = page.index('class="banner"')
    assert banner < page.index('class="verdict"')
    text = re.sub(r"<[^>]+>", "", page[banner:page.index('class="verdict"')])
    assert f"40 of {man['games_total']} games played" in text
    assert "--resume" in text
    assert "tables were never reached" in text  # the run is cut in game_id (table) order
    md = (index.parent / "summary.md").read_text(encoding="utf-8")
    assert md.index("40 of 72 games played") < md.index("## Verdict")


def test_a_complete_run_has_no_stopped_banner(run, tmp_path):
    page = build_report(run, tmp_path / "out").read_text(encoding="utf-8")
    assert "A stopped run" not in page


def test_out_refuses_a_folder_of_other_files(run, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes")
    code, _, err = cli(capsys, "report", str(run), "--out", str(out))
    assert code == 2 and "not empty" in err and err.strip().count("\n") == 0
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert (out / "notes.txt").read_text() == "my notes"


def test_out_refuses_the_report_of_another_run(run, decks_module, tmp_path, capsys):
    from fake_engine import engine_driver

    out = tmp_path / "out"
    build_report(run, out)
    other = tmp_path / "other"  # the same decks, another seed: another run
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(planning, "engine_driver", engine_driver)
        runner.start_run(planning.RunOptions(decks=decks_module, games=GAMES, chunk_size=CHUNK,
                                           out=other, seed=planning.DEFAULT_SEED + 1),
                         progress=False, log=lambda m: None)
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    code, _, err = cli(capsys, "report", str(other), "--out", str(out))
    assert code == 2 and "another run" in err
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before


def test_out_replaces_an_earlier_report_of_the_same_run(run, tmp_path):
    out = tmp_path / "out"
    build_report(run, out, svg=True)
    assert (out / "plots" / "matchups.svg").is_file()
    (out / "notes.txt").write_text("kept")  # not the report's: left alone
    build_report(run, out)  # PNG this time: the SVGs of the earlier report go
    assert (out / "plots" / "matchups.png").is_file()
    assert not list((out / "plots").glob("*.svg"))
    assert (out / "notes.txt").read_text() == "kept"
    record = json.loads((out / MARKER).read_text(encoding="utf-8"))
    assert record["run"]["name"] == "run" and "index.html" in record["files"]


def test_a_resumed_run_is_the_same_run(run, tmp_path):
    out = tmp_path / "out"
    full = manifests.read_manifest(run)
    stopped = Path(shutil.copytree(run, tmp_path / "stopped"))
    stop_after(stopped, 1)
    build_report(stopped, out)
    assert full["games_done"] == 72
    build_report(run, out)  # the finished run may replace the stopped run's report
    assert "A stopped run" not in (out / "index.html").read_text(encoding="utf-8")


def test_out_that_is_a_file_is_refused(run, tmp_path):
    (tmp_path / "taken").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        build_report(run, tmp_path / "taken")


def shuffle_rows(run: Path, seed: int) -> None:
    """Rewrite every part with its rows in another order (the same games), as the run
    would have written it (``rundir_tools.rewrite_part``)."""
    from rundir_tools import rewrite_part

    rng = np.random.default_rng(seed)
    for table in ("games", "seats"):
        for part in sorted((run / table).glob("*.parquet")):
            df = pl.read_parquet(part)
            rewrite_part(part, df[rng.permutation(df.height).tolist()])


def test_tables_come_out_in_the_same_order_whatever_the_row_order(run, tmp_path):
    first = build_report(run, tmp_path / "a").parent
    shuffle_rows(run, 3)
    second = build_report(run, tmp_path / "b").parent
    csvs = sorted(p.name for p in first.glob("*.csv"))
    assert csvs and csvs == sorted(p.name for p in second.glob("*.csv"))
    for name in csvs:
        a = pl.read_csv(first / name)
        b = pl.read_csv(second / name)
        assert a.columns == b.columns, name
        key = [c for c in a.columns if a[c].dtype == pl.String][:3]
        # the same rows in the same order (names compared exactly, numbers to 1e-9)
        assert a.select(key).equals(b.select(key)), name
        for c in a.columns:
            if a[c].dtype.is_float():
                assert np.allclose(a[c].to_numpy(), b[c].to_numpy(), atol=1e-9,
                                   equal_nan=True), (name, c)


def test_card_ties_are_broken_by_name():
    cards = pl.DataFrame({"card": ["Cc", "Aa", "Bb", "Dd"], "flag": ["", "", "", "under"],
                          "iwd": [0.1, 0.1, None, -0.2]})
    assert card_order(cards)["card"].to_list() == ["Dd", "Aa", "Cc", "Bb"]
