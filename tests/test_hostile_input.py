"""The smaller answers of issue 32 (item 5): each hostile input a new user tried is one
line naming the place and the fix, exit 2 (130 for Ctrl-C), no traceback, and nothing
half-written left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import TINY_CATALOG
from fake_engine import cli_argv

from rnr_sim.cli import main
from rnr_sim.decks import MAX_PROBLEMS, load_deck
from rnr_sim.errors import InputError
from rnr_sim.rules import load_profile
from rnr_sim.runs import outdir, planning, runner


def cli(capsys, *args) -> tuple[int, str]:
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err.strip()


def one_line(message: str) -> bool:
    return "\n" not in message.strip() and "Traceback" not in message


def _loading(pid: int) -> bool:
    """The process has started loading the CLI's libraries (numpy or polars is mapped):
    past the interpreter's own start, which no program can answer for."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False
    return "numpy" in maps or "polars" in maps


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
@pytest.mark.parametrize("after", [0.0, 0.1, 0.25])
def test_ctrl_c_in_the_first_half_second_is_one_line_and_leaves_nothing(tmp_path, decks,
                                                                         after):
    """Ctrl-C while the CLI loads its libraries (about the first half second), or as the
    run starts: exit 130, one line, no traceback, and no dir or a run dir to resume."""
    out = tmp_path / "r"
    proc = subprocess.Popen(cli_argv("run", *map(str, decks), "--games", "50", "--out",
                                     str(out), "--quiet"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not _loading(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip(f"the run finished within {after} s of loading")  # nothing to interrupt
    assert proc.returncode == 130, err
    assert one_line(err) and err.strip().startswith("Stop"), err
    # nothing half-written: no dir at all, or a run dir --resume finishes
    assert not out.exists() or (out / "manifest.json").is_file()


def test_a_1_mb_line_is_not_echoed_whole(write, tiny):
    path = write("big.txt", "Name: Big\n4 " + "a" * 1_000_000 + "\n")
    with pytest.raises(InputError) as e:
        load_deck(path, tiny)
    assert one_line(str(e.value)) and len(str(e.value)) < 300
    assert str(e.value).startswith(f"{path}:2: unknown card 'aaa")
    assert str(e.value).endswith("…' (1,000,000 characters)")


def test_a_catalog_given_as_a_deck_list_is_one_line(tiny):
    with pytest.raises(InputError) as e:
        load_deck(TINY_CATALOG, tiny)
    assert one_line(str(e.value))
    assert str(e.value).startswith(f"{TINY_CATALOG}: looks like a TOML file")
    assert "--cards" in str(e.value)


def test_many_bad_lines_are_counted_not_all_listed(write, tiny):
    path = write("bad.txt", "".join(f"{n} No Such Card {n}\n" for n in range(1, 51)))
    with pytest.raises(InputError) as e:
        load_deck(path, tiny)
    lines = str(e.value).splitlines()
    assert lines[0] == f"{path}: 50 problems" and lines[-1] == "(and 40 more)"
    assert len(lines) == MAX_PROBLEMS + 2


def test_a_latin_1_deck_names_its_line(write, tiny):
    path = write("latin.txt", "Name: Mine\n4 Minuteman Volley\n# caf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError) as e:
        load_deck(path, tiny)
    assert str(e.value).startswith(f"{path}:3: not a text file (not UTF-8: byte 0xE9 in "
                                   "column 6; save it as UTF-8)")


@pytest.mark.parametrize("text,line,fragment", [
    ('name = "x"\nturn_limit = 10\nfoo = = 3\n', 3, "broken TOML: Invalid value (column 7)"),
    ('name = "x"\n\nturn_limt = 10\n', 3, "unknown switch 'turn_limt' (did you mean "
                                          "'turn_limit'?)"),
    ('[rules]\naoa = true\nturn_limit = "ten"\n', 3, "switch 'turn_limit' takes a whole "
                                                    "number"),
])
def test_a_bad_rules_file_names_its_line(write, text, line, fragment):
    path = write("rules.toml", text)
    with pytest.raises(InputError) as e:
        load_profile(path)
    assert str(e.value).startswith(f"{path}:{line}: {fragment}")


def test_games_1_5_is_one_line(tmp_path, decks, capsys):
    code, err = cli(capsys, "run", *decks, "--games", "1.5", "--out", tmp_path / "r")
    assert code == 2 and one_line(err)
    assert err.startswith("rnr-sim run: Invalid value for '--games'")
    assert "rnr-sim run --help" in err and not (tmp_path / "r").exists()


def test_an_arabic_indic_digit_is_not_a_count(write, tiny, tmp_path, decks, capsys):
    path = write("arabic.txt", "Name: A\n\u0661 Minuteman Volley\n")
    with pytest.raises(InputError, match=r":2: the count in '\u0661 Minuteman Volley' is "
                                         "not written with the digits 0-9"):
        load_deck(path, tiny)
    code, err = cli(capsys, "run", *decks, "--games", "\u0661", "--out", tmp_path / "r")
    assert code == 2 and one_line(err) and not (tmp_path / "r").exists()


def test_two_runs_without_out_in_the_same_second_get_two_dirs(tmp_path, decks, engine,
                                                              monkeypatch):
    """The second run starts (and finishes) while the first is still planning, in the same
    second: each gets its own dir, and the first is not told to resume the second's."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(outdir, "_out_name",
                        lambda prefix="": Path("runs") / f"{prefix}20261201-120000")
    real_plan = planning.plan_run
    started: list[runner.RunResult] = []

    def plan_while_another_starts(options):
        plan = real_plan(options)
        if options.command == "first":
            started.append(runner.start_run(planning.RunOptions(decks=decks[:2], games=3),
                                            progress=False, log=lambda m: None))
        return plan

    monkeypatch.setattr(runner, "plan_run", plan_while_another_starts)
    first = runner.start_run(planning.RunOptions(decks=decks[:2], games=3, command="first"),
                             progress=False, log=lambda m: None)
    second = started[0]
    assert second.run_dir == Path("runs/20261201-120000")
    assert first.run_dir == Path("runs/20261201-120000-2")
    assert first.complete and second.complete
    assert sorted(os.listdir("runs")) == ["20261201-120000", "20261201-120000-2"]


@pytest.mark.parametrize("kind", ["device", "fifo", "huge"])
@pytest.mark.parametrize("command", ["validate", "discover", "balance"])
def test_a_device_a_pipe_or_a_huge_file_as_input_is_one_line(kind, command, tmp_path, capsys,
                                                             monkeypatch):
    """``/dev/zero`` or a FIFO as a deck or targets file was never answered (memory grew
    without end, or the read hung); a file past the size bound is refused unread."""
    from rnr_sim import errors

    if kind == "device":
        bad = Path("/dev/zero")
    elif kind == "fifo":
        bad = tmp_path / "pipe"
        os.mkfifo(bad)
    else:
        bad = tmp_path / "big.txt"
        bad.write_text("4 Minuteman Volley\n" * 30_000)  # 570 KB
        monkeypatch.setattr(errors, "MAX_INPUT_BYTES", 400_000)  # above every catalog
    sample = sorted((Path(__file__).parent.parent / "decks").glob("*.txt"))
    out = tmp_path / "out"
    args = {"validate": ["validate", bad],
            "discover": ["discover", "--budget", "100000", "--field", bad, sample[0],
                         "--out", out],
            "balance": ["balance", "--field", *sample[:2], "--targets", bad, "--out", out]}
    code, err = cli(capsys, *args[command])
    assert code == 2 and one_line(err) and str(bad) in err
    assert ("not a regular file" if kind != "huge" else "more than") in err
    assert not out.exists()


REPO = Path(__file__).parent.parent
SAMPLE = sorted((REPO / "decks").glob("*.txt"))
TARGETS = str(REPO / "docs" / "balance-targets.toml")
FOUNDATION = str(REPO / "rnr_sim" / "data" / "foundation.toml")


def _dir_with(path: Path, manifest: str | None = None, checkpoint: str | None = None) -> Path:
    path.mkdir()
    if manifest is not None:
        (path / "manifest.json").write_text(manifest)
    if checkpoint is not None:
        (path / checkpoint).mkdir()
        (path / checkpoint / "plan.json").write_text("{}")
    return path


@pytest.mark.parametrize("command", ["discover", "balance", "power"])
def test_messages_name_only_fixes_the_command_takes(command, tmp_path, capsys, write, tiny):
    """An illegal deck is not told "--allow-illegal" (only `run` takes it); a dir holding
    another command's result is not told "rnr-sim run --resume"; a stopped dir of the same
    command is told its own --resume; --resume on a run dir says what it holds."""
    illegal = tmp_path / "illegal.txt"
    illegal.write_text(SAMPLE[0].read_text().replace(  # 62 cards: Art. V §1
        "Policy: ../policies/", f"Policy: {REPO / 'policies'}/") + "\n2 Minuteman Volley\n")
    flags = {"discover": ["--budget", "100000", "--field", illegal, SAMPLE[1]],
             "balance": ["--field", illegal, SAMPLE[1], "--targets", TARGETS],
             "power": ["--field", illegal, SAMPLE[1]]}[command]
    out = tmp_path / "o"
    code, err = cli(capsys, command, *flags, "--cards", FOUNDATION,
                    "--out", out)
    assert code == 2 and one_line(err) and "is illegal" in err
    assert "--allow-illegal" not in err and not out.exists()

    held = _dir_with(tmp_path / "held", '{"kind": "discovery"}')
    code, err = cli(capsys, command, "--field", *SAMPLE[:2], "--out", held,
                    *(["--targets", TARGETS] if command == "balance"
                      else []))
    assert code == 2 and one_line(err) and "already holds a discovery" in err
    assert "run --resume" not in err

    checkpoint = {"discover": ".discover", "balance": ".balance", "power": ".power"}[command]
    stopped = _dir_with(tmp_path / "stopped", checkpoint=checkpoint)
    code, err = cli(capsys, command, "--field", *SAMPLE[:2], "--out", stopped,
                    *(["--targets", TARGETS] if command == "balance"
                      else []))
    assert code == 2 and f"rnr-sim {command} --resume --out" in err

    run_dir = _dir_with(tmp_path / "run", "{}")
    code, err = cli(capsys, command, "--field", *SAMPLE[:2], "--resume", "--out", run_dir,
                    *(["--targets", TARGETS] if command == "balance"
                      else []))
    assert code == 2 and one_line(err) and "holds a run dir, not a stopped" in err


def test_balance_with_one_deck_is_not_told_to_add_mirrors(tmp_path, capsys):
    code, err = cli(capsys, "balance", "--field", SAMPLE[0], "--targets",
                    TARGETS, "--out", tmp_path / "b")
    assert code == 2 and one_line(err) and "--mirrors" not in err


@pytest.mark.parametrize("args,message", [
    ([str(SAMPLE[0])], "drop DECK arguments"),
    (["--patch", "p.toml"], "drop --patch"),
    (["--players", "3"], "drop --players"),
    (["--games", "1"], "needs --games at least 2"),
])
def test_check_coverage_discovery_refuses_what_it_would_not_read(args, message, tmp_path,
                                                                 capsys):
    """``check coverage --discovery`` used to ignore deck arguments, --patch and --players 3,
    and to accept --games 1 (two RuntimeWarnings, coverage 0% and 100%)."""
    code, err = cli(capsys, "check", "coverage", "--discovery", tmp_path, *args)
    assert code == 2 and one_line(err) and message in err


def test_a_deck_of_another_shipped_catalog_is_told_which_cards_file_to_add(capsys, tmp_path):
    """An expansion deck given without its catalog drew a dozen lines of wrong "did you
    mean" guesses (issue 44, item 11); it is now told the shipped file that holds its cards,
    and the deck header that would carry it (issue 41)."""
    shipped = REPO / "decks" / "expansion" / "corps_of_discovery.txt"
    deck = tmp_path / "corps.txt"  # the shipped deck without its 'Cards:' header
    deck.write_text("".join(line for line in shipped.read_text().splitlines(keepends=True)
                            if not line.startswith("Cards:")))
    for args in (["validate", deck], ["discover", "--field", deck, SAMPLE[0], "--out",
                                      REPO / "runs" / "never-written"]):
        code, err = cli(capsys, *args)
        assert code == 2 and one_line(err)
        assert "not in the catalog" in err and "add --cards" in err
        assert err.endswith("expansion_frontier.toml (or the header line "
                            "'Cards: expansion_frontier' to the deck)")
    assert not (REPO / "runs" / "never-written").exists()


def test_the_smaller_answers_of_issue_44(tmp_path, capsys, monkeypatch):
    """Item 12: --resume without --out is told to give it; a report of a stopped discovery
    says how to finish it; min_support above the metagame's decks names its line; balance
    --backend ray without Ray leaves no dir; a changed fingerprint is one short line."""
    from rnr_sim.runs import ray_backend
    from rnr_sim.runs.evaluation import first_difference

    for command in ("discover", "balance", "power"):
        code, err = cli(capsys, command, "--resume", "--field", *SAMPLE[:2],
                        *(["--targets", TARGETS] if command == "balance" else []))
        assert code == 2 and one_line(err) and "give its --out DIR" in err

    stopped = _dir_with(tmp_path / "stopped", checkpoint=".discover")
    code, err = cli(capsys, "report", stopped, "--out", tmp_path / "r")
    assert code == 2 and one_line(err) and "rnr-sim discover --resume --out" in err

    targets = tmp_path / "t.toml"
    targets.write_text("[targets]\ndeck_share_max = 0.6\nmin_support = 99\n")
    code, err = cli(capsys, "balance", "--field", *SAMPLE[:3], "--targets", targets,
                    "--out", tmp_path / "b")
    assert code == 2 and one_line(err) and err.startswith(f"{targets}:3: min_support = 99")
    assert not (tmp_path / "b").exists()

    def no_ray(local: bool = True):
        raise InputError("Ray is not installed: pip install 'rnr-sim[ray]'")

    monkeypatch.setattr(ray_backend, "import_ray", no_ray)
    code, err = cli(capsys, "balance", "--field", *SAMPLE[:3], "--targets", TARGETS,
                    "--backend", "ray", "--out", tmp_path / "ray")
    assert code == 2 and "Ray is not installed" in err and not (tmp_path / "ray").exists()

    then = {"field": [{"name": f"Deck {i}", "sha256": "0" * 64} for i in range(9)]}
    now = {"field": then["field"][:2]}
    assert first_difference(then, now) == "field: 9 entries, now 2"
    assert len(first_difference({"x": "y" * 3000}, {"x": "z"})) < 200
