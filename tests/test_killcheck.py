"""``rnr-sim check kill`` (issue 32): runs killed with SIGKILL at random moments and then
finished hold the bytes of a run never stopped. Here on the engine stand-in (fast to start:
the check starts some 20 processes), with fewer kills than the command's 20; the command
itself plays the real engine (docs/benchmarks.md has a run of it)."""

from __future__ import annotations

import sys

import fake_engine

from rnr_sim.checks.kill import KillOptions, kill_check

FAKE = (sys.executable, "-c", fake_engine._BOOTSTRAP)


def test_runs_killed_at_random_moments_resume_to_the_same_bytes(tmp_path, decks):
    # 4 decks: 6 tables x 300 deals x 2 seat orders = 3,600 games in 72 chunks
    report = kill_check(KillOptions(decks=decks, games=300, chunk_size=50, kills=8,
                                    moments_seed=1, work=tmp_path, command=FAKE))
    assert report.chunks == 72 and len(report.kills) == 8
    assert report.ok, [k for k in report.kills if not k.same]
    # the moments reached the middle of the run: some kills left chunks to resume
    assert any(k.finished_with == "resume" and 0 < k.chunks_at_kill < 72
               for k in report.kills), report.kills


def test_a_dir_that_differs_is_reported_and_kept(tmp_path, decks, monkeypatch):
    from rnr_sim.checks import kill as killcheck

    real = killcheck.differences
    monkeypatch.setattr(killcheck, "differences",
                        lambda run_dir, ref: ["games/part-00000.parquet"] if run_dir.name ==
                        "kill-01" else real(run_dir, ref))
    report = kill_check(KillOptions(decks=decks[:2], games=20, chunk_size=10, kills=2,
                                    work=tmp_path, command=FAKE))
    assert not report.ok and [k.same for k in report.kills] == [True, False]
    assert report.kills[1].kept == str(tmp_path / "kill-01")
    assert (tmp_path / "kill-01").is_dir() and not (tmp_path / "kill-00").exists()
