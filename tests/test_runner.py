"""The runner (issue 4): tables of play, seeds, chunks, the run dir, resume, the CLI.

Runs on the real engine when ``rnr_sim.engine.driver`` is importable, else on
``tests/fake_engine.py`` (same interface, deterministic records).
"""

from __future__ import annotations

import errno
import json
import math
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from fake_engine import (
    REAL_ENGINE,
    SAMPLE_CATALOG,
    sample_decks,
)
from typer.testing import CliRunner

from rnr_sim import enums
from rnr_sim.analytics.stats import wilson
from rnr_sim.analytics.summary import format_summary, summarize
from rnr_sim.errors import InputError
from rnr_sim.runs import manifests, planning, runner
from rnr_sim.runs.schema import GAMES_SCHEMA, SEATS_SCHEMA, WIN_PATHS

pytestmark = [pytest.mark.skipif(not SAMPLE_CATALOG.exists(),
                                 reason="the sample catalog is not written yet"),
              pytest.mark.usefixtures("engine")]  # conftest.py


def run(out: Path, decks, **kw) -> runner.RunResult:
    kw.setdefault("games", 6)
    return runner.start_run(planning.RunOptions(decks=decks, out=out, **kw), progress=False,
                            log=lambda m: None)


def tables(run_dir: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    return (manifests.scan_table(run_dir, "games").collect(),
            manifests.scan_table(run_dir, "seats").collect())


def part_bytes(run_dir: Path) -> dict[str, bytes]:
    return {f"{t}/{p.name}": p.read_bytes() for t in ("games", "seats")
            for p in sorted((run_dir / t).glob("part-*.parquet"))}


# ---------------------------------------------------------------------------- tables of play


def test_two_players_play_every_pair_once():
    t = planning.make_tables(4, 2)
    assert t.dtype == np.int32
    assert [tuple(r) for r in t] == list(combinations(range(4), 2))


def test_mirrors_add_each_deck_against_itself():
    t = [tuple(r) for r in planning.make_tables(3, 2, mirrors=True)]
    assert t == [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]
    t4 = [tuple(r) for r in planning.make_tables(4, 3, mirrors=True)]
    assert (2, 2, 2) in t4 and len(t4) == math.comb(4, 3) + 4


def test_more_players_play_every_table_of_distinct_decks():
    assert len(planning.make_tables(6, 3)) == math.comb(6, 3)
    assert len(planning.make_tables(6, 4)) == math.comb(6, 4)
    assert len(planning.make_tables(3, 4)) == 0


def test_vs_keeps_only_the_tables_holding_the_deck():
    t = [tuple(r) for r in planning.make_tables(4, 2, vs=2)]
    assert t == [(0, 2), (1, 2), (2, 3)]
    t = [tuple(r) for r in planning.make_tables(4, 2, mirrors=True, vs=2)]
    assert t == [(0, 2), (1, 2), (2, 2), (2, 3)]


def test_game_id_names_table_deal_and_rotation():
    games, players = 7, 3
    gid = np.arange(5 * games * players)
    table, deal, rotation = planning.game_coordinates(gid, games, players)
    assert np.array_equal((table * games + deal) * players + rotation, gid)
    assert deal.max() == games - 1 and rotation.max() == players - 1


# ---------------------------------------------------------------------------- the run dir


def test_columns_and_dtypes_match_the_contract(tmp_path, decks):
    result = run(tmp_path / "r", decks)
    games, seats = tables(tmp_path / "r")
    assert games.schema == pl.Schema(GAMES_SCHEMA)
    assert seats.schema == pl.Schema(SEATS_SCHEMA)
    deck_slots = pl.read_parquet(tmp_path / "r" / "decks.parquet")
    assert deck_slots.schema == pl.Schema({"deck": pl.String, "slot": pl.Int16,
                                           "card": pl.String})
    assert deck_slots.group_by("deck").len()["len"].to_list() == [60] * 4
    cards = pl.read_parquet(tmp_path / "r" / "cards.parquet")
    assert {"name", "type", "branch"} <= set(cards.columns)
    assert set(deck_slots["card"]) <= set(cards["name"])

    n = math.comb(4, 2) * 6 * 2
    assert games.height == n and seats.height == 2 * n
    assert games["game_id"].to_list() == list(range(n))
    assert set(games["path"]) <= set(enums.PATHS)
    assert (games["winner_seat"] == -1).to_list() == (games["path"] == "draw").to_list()
    won = seats.group_by("game_id").agg(pl.col("won").sum()).sort("game_id")["won"]
    assert won.to_list() == [0 if p == "draw" else 1 for p in games["path"]]
    assert (games["n_players"] == 2).all()
    assert result.complete and not result.interrupted


def test_manifest_records_the_run(tmp_path, decks, engine):
    result = run(tmp_path / "r", decks, seed=7, chunk_size=25, command="rnr-sim run ...")
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert m == result.manifest
    for key in ("tool_version", "created", "command", "seed", "games_requested",
                "games_total", "games_done", "players", "mirrors", "vs", "rules",
                "rules_changed", "catalog", "decks", "tables", "policies", "chunk_size",
                "chunks", "timings"):
        assert key in m, key
    assert m["seed"] == 7 and m["games_requested"] == 6 and m["players"] == 2
    assert m["games_total"] == m["games_done"] == 72
    assert m["chunks"] == {"total": 3, "complete": [0, 1, 2]}
    assert m["status"] == "complete"
    assert m["rules"]["name"] == "constitution" and m["rules_changed"] == {}
    assert m["catalog"]["sha256"] and m["catalog"]["name"]
    assert [d["name"] for d in m["decks"]] == ["Bison Deck", "Eagle Deck",
                                               "Liberty Bell Deck", "Scroll Deck"]
    assert [d["main_branch"] for d in m["decks"]] == list(enums.BRANCHES)
    assert [d["policy"] for d in m["decks"]] == ["aggro", "balanced", "breaker", "petition"]
    assert m["tables"][0] == ["Bison Deck", "Eagle Deck"] and len(m["tables"]) == 6
    assert set(m["policies"]) == {"aggro", "balanced", "breaker", "petition"}
    assert set(m["timings"]) == {"compile_s", "simulate_s", "write_s", "total_s",
                                 "games_per_s"}


def test_policies_come_from_headers_unless_overridden(tmp_path, decks):
    run(tmp_path / "a", decks)
    seats = tables(tmp_path / "a")[1]
    per_deck = dict(seats.select("deck", "policy").unique().iter_rows())
    assert per_deck == {"Bison Deck": "aggro", "Eagle Deck": "balanced",
                        "Liberty Bell Deck": "breaker", "Scroll Deck": "petition"}
    run(tmp_path / "b", decks, policy="random")
    assert set(tables(tmp_path / "b")[1]["policy"]) == {"random"}
    with pytest.raises(InputError, match="valid"):
        run(tmp_path / "c", decks, policy="nonsense")


def test_seat_rotation_gives_every_deck_each_seat_equally_often(tmp_path, decks):
    for players in (2, 3, 4):
        out = tmp_path / f"p{players}"
        run(out, decks, players=players, games=5)
        games, seats = tables(out)
        rows = seats.join(games.select("game_id", "table_id", "deal", "first_seat"),
                          on="game_id")
        rows = rows.with_columns(
            ((pl.col("seat") - pl.col("first_seat")) % players).alias("turn_order"))
        # In each table, each deck takes each place in the turn order once per deal.
        counts = rows.group_by("table_id", "deck", "turn_order").len()
        assert set(counts["len"]) == {5}
        assert counts.height == math.comb(4, players) * players * players
        assert (rows.filter(pl.col("is_first"))["turn_order"] == 0).all()
        # Each deal is played in every rotation: first_seat 0..P-1 once.
        rot = games.group_by("table_id", "deal").agg(pl.col("first_seat").sort())
        assert all(r == list(range(players)) for r in rot["first_seat"].to_list())


def test_mirror_tables_seat_the_deck_against_itself(tmp_path, decks):
    run(tmp_path / "r", decks[:2], mirrors=True)
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert m["tables"] == [["Bison Deck", "Bison Deck"], ["Bison Deck", "Eagle Deck"],
                           ["Eagle Deck", "Eagle Deck"]]
    assert m["games_total"] == 3 * 6 * 2


def test_vs_plays_one_deck_against_the_field(tmp_path, decks):
    run(tmp_path / "r", decks[:3], vs=decks[3])
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert m["vs"] == "Scroll Deck"
    assert all("Scroll Deck" in t for t in m["tables"]) and len(m["tables"]) == 3
    games, seats = tables(tmp_path / "r")
    assert seats.filter(pl.col("deck") == "Scroll Deck").height == games.height


# ---------------------------------------------------------------------------- determinism


def test_same_tables_for_one_or_two_threads(tmp_path, decks):
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one core: numba offers one thread")
    run(tmp_path / "t1", decks, games=40, threads=1, chunk_size=100)
    run(tmp_path / "t2", decks, games=40, threads=2, chunk_size=100)
    assert part_bytes(tmp_path / "t1") == part_bytes(tmp_path / "t2")
    g1, s1 = tables(tmp_path / "t1")
    g2, s2 = tables(tmp_path / "t2")
    assert g1.equals(g2) and s1.equals(s2)


def test_same_tables_for_any_chunk_size(tmp_path, decks):
    run(tmp_path / "a", decks, games=20, chunk_size=7)
    run(tmp_path / "b", decks, games=20, chunk_size=1000)
    assert len(list((tmp_path / "a" / "games").glob("part-*.parquet"))) == 35
    g1, s1 = tables(tmp_path / "a")
    g2, s2 = tables(tmp_path / "b")
    assert g1.equals(g2) and s1.equals(s2)


def test_the_seed_changes_the_games_and_is_a_pure_input(tmp_path, decks):
    run(tmp_path / "a", decks, seed=1)
    run(tmp_path / "b", decks, seed=2)
    run(tmp_path / "c", decks, seed=1)
    assert part_bytes(tmp_path / "a") == part_bytes(tmp_path / "c")
    assert not tables(tmp_path / "a")[1].equals(tables(tmp_path / "b")[1])


def test_a_table_s_games_do_not_depend_on_the_other_decks(tmp_path, decks):
    """A game is a function of (seed, table, deal, rotation): the same table id with the
    same decks plays the same games whatever the rest of the run."""
    run(tmp_path / "all", decks)
    run(tmp_path / "two", decks[:2])  # table 0 is Bison-Eagle in both runs
    g_all, s_all = tables(tmp_path / "all")
    g_two, s_two = tables(tmp_path / "two")
    assert g_all.filter(pl.col("table_id") == 0).equals(g_two)
    assert s_all.head(s_two.height).equals(s_two)


# ---------------------------------------------------------------------------- resume


def test_a_full_disk_keeps_the_chunks_done_and_resume_finishes(tmp_path, decks, monkeypatch):
    real_write = pl.DataFrame.write_parquet
    calls = {"n": 0}

    def flaky_write(self, file, *args, **kw):
        calls["n"] += 1
        if calls["n"] == 6:  # decks, cards, then the second chunk's games part
            Path(file).write_bytes(b"partial")
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, file, *args, **kw)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", flaky_write)
    with pytest.raises(InputError, match="No space left on device.*--resume"):
        run(tmp_path / "r", decks, chunk_size=20)
    monkeypatch.setattr(pl.DataFrame, "write_parquet", real_write)

    left = sorted(p.name for p in (tmp_path / "r").rglob("*") if p.is_file())
    assert not [n for n in left if n.endswith(".tmp")]
    m = manifests.read_manifest(tmp_path / "r")
    assert m["chunks"]["complete"] == [0] and m["games_done"] == 20
    assert m["status"] == "incomplete"

    result = runner.resume_run(tmp_path / "r", progress=False, log=lambda m: None)
    assert result.complete and result.manifest["chunks"]["complete"] == [0, 1, 2, 3]
    assert len(result.manifest["resumed"]) == 1
    run(tmp_path / "whole", decks, chunk_size=20)
    assert part_bytes(tmp_path / "r") == part_bytes(tmp_path / "whole")


def test_resume_refuses_changed_inputs(tmp_path, decks):
    copies = []
    for d in decks[:3]:
        copies.append(tmp_path / d.name)
        copies[-1].write_bytes(d.read_bytes())
    run(tmp_path / "r", copies)
    copies[1].write_text(copies[1].read_text() + "# edited\n")
    with pytest.raises(InputError, match="changed since the run started"):
        runner.resume_run(tmp_path / "r", progress=False)


def test_resume_refuses_a_changed_rules_file(tmp_path, decks):
    rules = tmp_path / "variant.toml"
    rules.write_text("turn_limit = 150\n")
    run(tmp_path / "r", decks, rules=rules)
    m = manifests.read_manifest(tmp_path / "r")
    assert m["rules_changed"] == {"turn_limit": 150} and m["rules_sha256"]
    rules.write_text("turn_limit = 120\n")
    with pytest.raises(InputError, match="turn_limit"):
        runner.resume_run(tmp_path / "r", progress=False)


def test_resume_of_a_finished_run_changes_nothing(tmp_path, decks):
    run(tmp_path / "r", decks, chunk_size=30)
    before = part_bytes(tmp_path / "r")
    result = runner.resume_run(tmp_path / "r", progress=False, log=lambda m: None)
    assert result.complete and part_bytes(tmp_path / "r") == before


def test_resume_of_a_dir_without_a_run_is_refused(tmp_path):
    with pytest.raises(InputError, match="not a run dir"):
        runner.resume_run(tmp_path, progress=False)


# ---------------------------------------------------------------------------- bad input


def test_illegal_decks_are_refused_unless_allowed(tmp_path, decks):
    lines = decks[0].read_text().splitlines()
    short = tmp_path / "short.txt"
    short.write_text("\n".join(["Name: Short Deck", *lines[1:-1]]) + "\n")  # one line less
    with pytest.raises(InputError, match=r"deck 'Short Deck' .* is illegal: .*Art\. V"):
        run(tmp_path / "r", [short, *decks[1:]])
    assert not (tmp_path / "r").exists()
    result = run(tmp_path / "r", [short, *decks[1:]], allow_illegal=True)
    assert result.complete


def test_shape_errors_are_input_errors(tmp_path, decks):
    with pytest.raises(InputError, match="--players"):
        run(tmp_path / "a", decks, players=5)
    with pytest.raises(InputError, match="no 4-player table"):
        run(tmp_path / "b", decks[:3], players=4)
    with pytest.raises(InputError, match="--seed"):
        run(tmp_path / "c", decks, seed=2**64)
    with pytest.raises(InputError, match="--games"):
        run(tmp_path / "d", decks, games=0)
    with pytest.raises(InputError, match="two decks are named"):
        run(tmp_path / "e", [decks[0], decks[0]])


def test_an_unwritable_out_is_one_input_error(tmp_path, decks):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cannot create the run dir"):
        run(blocker / "run", decks)


def test_a_non_empty_out_is_never_overwritten(tmp_path, decks):
    out = tmp_path / "r"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty"):
        run(out, decks)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    run(tmp_path / "done", decks)
    with pytest.raises(InputError, match="--resume"):
        run(tmp_path / "done", decks)


# ---------------------------------------------------------------------------- the summary


def test_summary_is_computed_from_the_written_tables(tmp_path, decks):
    run(tmp_path / "r", decks, games=30)
    summary = summarize(tmp_path / "r")
    games, seats = tables(tmp_path / "r")
    assert summary["games"].sum() == seats.height
    assert summary["wins"].sum() == (games["winner_seat"] >= 0).sum()
    for r in summary.iter_rows(named=True):
        n, w = r["games"], r["wins"]
        # The deal is the unit: a Wilson interval on the effective sample n / deff.
        n_eff = n / r["deff"]
        assert (r["ci_low"], r["ci_high"]) == pytest.approx(wilson(w / n * n_eff, n_eff))
        assert r["ci_low"] <= r["win_rate"] <= r["ci_high"]
        if w:
            assert sum(r[p] for p in WIN_PATHS) == pytest.approx(1.0)
    text = format_summary(summary)
    assert "95% CI" in text and "Bison Deck" in text


# ---------------------------------------------------------------------------- the CLI


@pytest.fixture
def cli():
    from rnr_sim.cli import app

    def invoke(*args: str):
        return CliRunner().invoke(app, [str(a) for a in args], prog_name="rnr-sim")

    return invoke


def test_cli_run_prints_the_table_and_what_to_do_next(tmp_path, decks, cli):
    res = cli("run", *decks, "--games", "5", "--out", tmp_path / "r", "--quiet")
    assert res.exit_code == 0, res.output
    assert "Next: rnr-sim report" in res.output and "95% CI" not in res.output
    res = cli("run", *decks, "--games", "5", "--out", tmp_path / "s", "--chunk-size", "13")
    assert res.exit_code == 0, res.output
    assert "95% CI" in res.output and "Bison Deck" in res.output
    assert str(tmp_path / "s") in res.output


def test_cli_json_is_the_only_thing_on_stdout(tmp_path, decks):
    from rnr_sim.cli import app

    res = CliRunner().invoke(app, ["run", *map(str, decks), "--games", "5", "--json",
                                   "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["status"] == "complete" and data["games_done"] == 60
    assert {d["deck"] for d in data["decks"]} == {"Bison Deck", "Eagle Deck",
                                                  "Liberty Bell Deck", "Scroll Deck"}


def test_cli_bad_input_exits_2_with_one_line(tmp_path, decks, cli):
    out = tmp_path / "full"
    out.mkdir()
    (out / "x").write_text("")
    res = cli("run", *decks, "--out", out)
    assert res.exit_code == 2 and "not empty" in res.output
    assert "Traceback" not in res.output
    res = cli("run", "--resume", out)
    assert res.exit_code == 2 and "not a run dir" in res.output
    res = cli("run", "--resume", out, "--games", "3")
    assert res.exit_code == 2 and "--games" in res.output
    res = cli("run", *decks, "--players", "9", "--out", tmp_path / "p")
    assert res.exit_code == 2 and "--players" in res.output


# ---------------------------------------------------------------------------- bench


def test_bench_run_reports_games_per_second(monkeypatch, decks):
    monkeypatch.setattr(runner, "sample_decks", lambda: sample_decks() or decks)
    rate = runner.bench_run(games=200, threads=1)
    assert rate > 0


@pytest.mark.skipif(not REAL_ENGINE, reason="the real engine is not written yet")
def test_the_real_engine_is_the_one_under_test(engine):
    assert engine.__name__ == "rnr_sim.engine.driver"


def test_the_sample_decks_are_found_from_any_folder(tmp_path, monkeypatch):
    """The shipped decks beside the package, not only ``decks/`` of the current folder."""
    monkeypatch.chdir(tmp_path)
    found = planning.sample_decks()
    assert len(found) == 9 and all(p.is_absolute() and p.exists() for p in found)
