"""``rnr-sim bench`` (issue 3 item 4, issue 4 item 6): the fields exist and are positive.

No speed assertions: the bench reports, the targets live in docs/design.md.
"""

from __future__ import annotations

import json

import pytest
from fake_engine import REAL_ENGINE, SAMPLE_CATALOG, sample_decks
from typer.testing import CliRunner

from rnr_sim.cli import app

pytestmark = [
    pytest.mark.skipif(not SAMPLE_CATALOG.exists() or len(sample_decks()) < 2,
                       reason="the sample catalog and decks are not written yet"),
    pytest.mark.skipif(not REAL_ENGINE, reason="benchmarks the real engine"),
]


def invoke(*args):
    result = CliRunner().invoke(app, [str(a) for a in args], prog_name="rnr-sim")
    assert "Traceback" not in result.output
    return result


def positive(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and x > 0


@pytest.fixture(scope="module")
def quick():
    result = invoke("bench", "--quick", "--json")
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)


def test_bench_quick_reports_the_engine_on_one_and_all_threads(quick):
    import numba

    threads = [row["threads"] for row in quick["engine"]]
    assert threads == sorted({1, numba.config.NUMBA_NUM_THREADS})
    for row in quick["engine"]:
        for key in ("games", "wall_s", "cpu_s", "games_per_s", "games_per_cpu_s",
                    "mean_turns"):
            assert positive(row[key]), (key, row)
    assert quick["same_results_every_thread_count"] is True
    assert quick["decks"] == len(sample_decks())
    assert quick["tables"] == quick["decks"] * (quick["decks"] - 1) // 2
    assert quick["warmup"]["seconds"] >= 0


def test_bench_quick_reports_plain_python_and_the_speed_up(quick):
    pure = quick["pure_python"]
    assert "error" not in pure, pure
    assert pure["jit_disabled"] is True
    for key in ("games", "wall_s", "games_per_s", "games_per_cpu_s", "speedup_1_thread",
                "speedup_all_threads", "speedup_per_cpu_s"):
        assert positive(pure[key]), (key, pure)


def test_bench_quick_reports_the_end_to_end_run(quick):
    e2e = quick["end_to_end"]
    for key in ("games", "threads", "games_per_s", "games_per_cpu_s", "share_of_engine",
                "share_of_engine_per_cpu_s"):
        assert positive(e2e[key]), (key, e2e)
    assert set(quick["targets"]) >= {"engine_games_per_s", "engine_met", "speedup",
                                     "speedup_met"}
    assert positive(quick["machine"]["numba_threads"])


def test_bench_table_names_each_measurement():
    result = invoke("bench", "--games", "300", "--threads", "1", "--pure-games", "0",
                    "--run-games", "0")
    assert result.exit_code == 0, result.output + result.stderr
    out = result.stdout
    assert "engine (warm)" in out and "games/CPU-s" in out
    assert "plain Python: skipped" in out
    assert "results identical on every thread count: yes" in out
    assert "design targets (docs/design.md)" in out


@pytest.mark.parametrize("args, message", [
    (["--threads", "0"], "--threads must be whole numbers 1.."),
    (["--threads", "two"], "--threads takes whole numbers"),
    (["--games", "0"], "--games must be a whole number at least 1"),
    (["--pure-games", "-1"], "--pure-games must be a whole number at least 0"),
    (["--repeat", "0"], "--repeat must be a whole number at least 1"),
])
def test_bench_bad_options_are_one_line_errors(args, message):
    result = invoke("bench", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bench_repeat_keeps_every_run_and_reports_the_fastest():
    result = invoke("bench", "--games", "300", "--threads", "1", "--pure-games", "4",
                    "--run-games", "0", "--repeat", "2", "--json")
    assert result.exit_code == 0, result.output + result.stderr
    r = json.loads(result.stdout)
    assert r["repeat"] == 2
    for row in (r["engine"][0], r["pure_python"]):
        runs = row["runs_games_per_s"]
        assert len(runs) == 2 and all(positive(x) for x in runs), row
        assert row["games_per_s"] == max(runs), row
