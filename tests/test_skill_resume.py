"""``rnr-sim skill --out DIR``: Ctrl-C keeps the finished engine calls in ``DIR/.skill/``
and ``--resume`` plays the rest, to the games and the table of a run done in one go.

The Ctrl-C is raised in this process (``signal.raise_signal``: the handler runs before the
call returns) from a wrapper around ``Evaluator.play`` (the evaluation service plays each
engine call), after a chosen number of engine calls, so where the run stops is exact. ``DEALS_PER_CALL`` is made small so that 3 sample
decks x 4 deals make 6 engine calls of 24 games each.
"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import polars as pl
import pytest

from rnr_sim import skill
from rnr_sim.cli import main
from rnr_sim.runs.evaluation import Evaluator

REPO = Path(__file__).resolve().parent.parent
DECKS = [REPO / "decks" / f"{n}.txt" for n in ("bison_bell_uprising", "eagle_blockade",
                                              "scroll_assembly")]
GAMES, SEED, PER_CALL = 4, 7, 2
#: 3 decks x 2 calls (deals 0-1, 2-3); each call 3 pilots x 2 opponents x 2 deals x 2 seats.
CALLS, CALL_GAMES = 6, 24
TOTAL = CALLS * CALL_GAMES
_real_play = Evaluator.play
ARGS = ["skill", *map(str, DECKS), "--games", str(GAMES), "--seed", str(SEED)]


@pytest.fixture(scope="module")
def straight() -> pl.DataFrame:
    """The games of the run done in one go, without a checkpoint."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(skill, "DEALS_PER_CALL", PER_CALL)
        return skill.play(DECKS, games=GAMES, seed=SEED)


@pytest.fixture(autouse=True)
def small_calls(monkeypatch):
    monkeypatch.setattr(skill, "DEALS_PER_CALL", PER_CALL)


def ctrl_c_after(monkeypatch, calls: int, twice: bool = False) -> None:
    """Ctrl-C once as engine call number ``calls`` ends (it is kept); or, ``twice``, two
    Ctrl-C as the next call starts (it is abandoned)."""
    real = Evaluator.play
    count = [0]

    def hooked(self, *args, **kw):
        count[0] += 1
        if twice and count[0] == calls + 1:
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)  # the second: KeyboardInterrupt, at once
        outcome = real(self, *args, **kw)
        if not twice and count[0] == calls:
            signal.raise_signal(signal.SIGINT)
        return outcome

    monkeypatch.setattr(Evaluator, "play", hooked)


def parts(out: Path) -> list[str]:
    return sorted(p.name for p in (out / skill.CHECKPOINT).glob("part-*.parquet"))


def part(index: int) -> str:
    return f"part-call-{index:05d}.parquet"


@pytest.mark.parametrize("twice", [False, True])
def test_stopped_then_resumed_plays_the_same_games_as_a_straight_run(
        straight, tmp_path, monkeypatch, twice):
    """Stopped after 2 of 6 engine calls (one Ctrl-C: the call under way is kept; two: it
    is abandoned), the 2 calls' parts stay; the resume plays only the 4 others, its bar
    starting at the 48 games kept, and returns every game, in the straight run's order,
    alike but for the timing column."""
    out = tmp_path / "out"
    ctrl_c_after(monkeypatch, 2, twice)
    with pytest.raises(skill.Stopped) as stopped:
        skill.play(DECKS, games=GAMES, seed=SEED, out=out)
    assert (stopped.value.kept, stopped.value.total) == (2 * CALL_GAMES, TOTAL)
    assert parts(out) == [part(0), part(1)]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored

    monkeypatch.setattr(Evaluator, "play", _real_play)
    played, planned = [], []
    frame = skill.play(DECKS, games=GAMES, seed=SEED, out=out, resume=True,
                       progress=played.append,
                       on_plan=lambda total, kept: planned.append((total, kept)))
    assert planned == [(TOTAL, 2 * CALL_GAMES)]
    assert played == [CALL_GAMES] * (CALLS - 2)
    assert frame.drop("seconds").equals(straight.drop("seconds"))
    assert skill.skill_table(frame, seed=SEED).drop("seconds").equals(
        skill.skill_table(straight, seed=SEED).drop("seconds"))
    for k in range(2):  # a call read back keeps the wall time it was played in
        seconds = frame["seconds"][k * CALL_GAMES:(k + 1) * CALL_GAMES]
        assert seconds.n_unique() == 1 and seconds[0] > 0


def test_cli_stop_prints_how_to_continue_and_resume_writes_the_table(straight, tmp_path,
                                                                     monkeypatch, capsys):
    """The command: Ctrl-C exits 130 with one line naming the games kept and the command
    that continues; that command (--resume) writes the straight run's skill table,
    reports the games resumed in JSON, and removes .skill/."""
    out = tmp_path / "run"
    ctrl_c_after(monkeypatch, 3)
    code = main([*ARGS, "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130
    again = f"rnr-sim skill {' '.join(map(str, DECKS))} --games 4 --seed 7 --out {out} --resume"
    assert err[-1] == (f"Stopped: {3 * CALL_GAMES} of {TOTAL} games kept in {out}; "
                       f"continue with: {again}")
    assert not (out / skill.FILE).exists() and len(parts(out)) == 3

    monkeypatch.setattr(Evaluator, "play", _real_play)
    code = main([*again.split()[1:], "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["games_resumed"] == 3 * CALL_GAMES and data["games"] == TOTAL
    assert not (out / skill.CHECKPOINT).exists()
    table = pl.read_parquet(out / skill.FILE)
    assert table.drop("seconds").equals(
        skill.skill_table(straight, seed=SEED).drop("seconds"))


@pytest.mark.parametrize("change, says", [
    (["--seed", "8"], "the stopped run had --seed 7, now 8"),
    (["--games", "6"], "the stopped run had --games 4, now 6"),
    (["--rollouts", "1"], "the stopped run had --rollouts 0, now 1"),
])
def test_resume_with_other_options_is_refused_in_one_line(tmp_path, monkeypatch, capsys,
                                                          change, says):
    """A resume whose options would play other games names the first that differs, exits
    2 and writes nothing."""
    out = tmp_path / "out"
    ctrl_c_after(monkeypatch, 1)
    assert main([*ARGS, "--out", str(out)]) == 130
    capsys.readouterr()
    before = sorted(p.name for p in (out / skill.CHECKPOINT).iterdir())
    code = main([*ARGS, *change, "--out", str(out), "--resume"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and says in err and "--resume" in err
    assert sorted(p.name for p in (out / skill.CHECKPOINT).iterdir()) == before
    assert not (out / skill.FILE).exists()


def test_resume_after_a_deck_list_changed_is_refused(tmp_path, monkeypatch, capsys):
    """The fingerprint holds each deck file's hash: an edited list is refused."""
    shutil.copytree(REPO / "policies", tmp_path / "policies")  # the decks' Policy: files
    (tmp_path / "decks").mkdir()
    decks = [Path(shutil.copy(d, tmp_path / "decks")) for d in DECKS]
    args = ["skill", *map(str, decks), "--games", "4", "--out", str(tmp_path / "out")]
    ctrl_c_after(monkeypatch, 1)
    assert main(args) == 130
    capsys.readouterr()
    decks[1].write_text(decks[1].read_text(encoding="utf-8") + "\n# edited\n",
                        encoding="utf-8")
    assert main([*args, "--resume"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"the deck list {decks[1].resolve()} " in err


@pytest.mark.parametrize("with_out", [False, True])
def test_resume_without_a_checkpoint_is_exit_2(tmp_path, capsys, with_out):
    out = tmp_path / "empty"
    code = main([*ARGS, "--resume", *(["--out", str(out)] if with_out else [])])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--resume" in err
    assert ("holds no stopped skill run" if with_out else "--out") in err
    assert not out.exists()


def test_a_stopped_run_without_resume_is_exit_2(tmp_path, monkeypatch, capsys):
    """A new run into a folder holding a stopped one says to --resume or delete it, and
    leaves the parts alone."""
    out = tmp_path / "out"
    ctrl_c_after(monkeypatch, 1)
    assert main([*ARGS, "--out", str(out)]) == 130
    capsys.readouterr()
    code = main([*ARGS, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "add --resume" in err and "delete" in err
    assert parts(out) == [part(0)]


def test_a_straight_run_with_out_leaves_no_checkpoint(tmp_path, capsys):
    out = tmp_path / "out"
    assert main([*ARGS, "--out", str(out)]) == 0
    assert (out / skill.FILE).is_file() and not (out / skill.CHECKPOINT).exists()
    assert "Wrote" in capsys.readouterr().out
    # --resume of the finished run: nothing to resume (as discover, balance and power say)
    assert main([*ARGS, "--resume", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"--resume {out}: its skill run is complete (skill.parquet); nothing to resume"


def test_search_pilot_calls_resume_to_the_same_games(tmp_path, monkeypatch):
    """With --rollouts the search pilot's games are engine calls of their own; stopped
    among them and resumed, the games are those of a straight run."""
    kw = dict(games=2, seed=3, rollouts=1, determinizations=1)
    monkeypatch.setattr(skill, "DEALS_PER_CALL", 1)
    straight = skill.play(DECKS, **kw)
    ctrl_c_after(monkeypatch, 3)  # decks' calls: 2 heuristic, then 2 search
    with pytest.raises(skill.Stopped):
        skill.play(DECKS, out=tmp_path / "out", **kw)
    monkeypatch.setattr(Evaluator, "play", _real_play)
    frame = skill.play(DECKS, out=tmp_path / "out", resume=True, **kw)
    assert "search" in set(frame["pilot"])
    assert frame.drop("seconds").equals(straight.drop("seconds"))


def test_resume_of_a_checkpoint_without_its_plan_says_to_delete_it(tmp_path, capsys):
    """A .skill/ cut short before its plan.json was written cannot be resumed: one line
    saying to delete it (a new run is refused while it is there)."""
    (tmp_path / "out" / skill.CHECKPOINT).mkdir(parents=True)
    code = main([*ARGS, "--out", str(tmp_path / "out"), "--resume"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "delete" in err
    assert f"has no {skill.PLAN}" in err


def test_resume_takes_the_dir_as_run_does(straight, tmp_path, monkeypatch, capsys):
    """Issue 41, item 5: ``skill DECK... --resume DIR`` carries on the run stopped in DIR, as
    ``run --resume DIR`` reads (the word after --resume is the dir, not a deck; the same
    decks and options given again). An --out naming another dir is refused in one line,
    exit 2, before anything is played or made."""
    out, other = tmp_path / "run", tmp_path / "other"
    ctrl_c_after(monkeypatch, 3)
    assert main([*ARGS, "--out", str(out)]) == 130
    capsys.readouterr()
    monkeypatch.setattr(Evaluator, "play", _real_play)

    assert main([*ARGS, "--resume", str(other), "--out", str(out)]) == 2
    seen = capsys.readouterr()
    assert seen.out == "" and seen.err == (
        f"--resume {other} and --out {out} name two dirs: give the stopped run's dir once, "
        "--resume DIR (or --resume --out DIR)\n")
    assert len(parts(out)) == 3 and not other.exists()

    first, *rest = map(str, DECKS)
    code = main(["skill", first, "--resume", str(out), *rest, "--games", str(GAMES), "--seed",
                 str(SEED)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert lines[0].startswith(f"Skill: 3 decks, {TOTAL} games ({3 * CALL_GAMES} kept from "
                               "the stopped run);")
    assert lines[-1] == f"Wrote {out / skill.FILE}."
    assert not (out / skill.CHECKPOINT).exists()
    assert pl.read_parquet(out / skill.FILE).drop("seconds").equals(
        skill.skill_table(straight, seed=SEED).drop("seconds"))
