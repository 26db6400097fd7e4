"""The command line's conventions (commands/options.py): the shared options are one
definition each, options that take decks take several after one flag, ``--version``, and
``--json`` on the catalog and the rules."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.main import get_command

from rnr_sim.cli import app, main
from rnr_sim.commands import options
from rnr_sim.errors import InputError

DECKS = Path(__file__).resolve().parent.parent / "decks"


def commands() -> dict:
    """Every command of the app by its full name (``check fuzz``)."""
    found = {}

    def walk(group, prefix: str) -> None:
        for name, command in group.commands.items():
            if hasattr(command, "commands"):  # a group (typer's own copy of click)
                walk(command, f"{prefix}{name} ")
            else:
                found[prefix + name] = command

    walk(get_command(app), "")
    return found


#: Options that mean another thing in one command, on purpose: bench times a list of thread
#: counts; the fuzzer's seed numbers its cases (0 to 2**63-1) and it plays a list of player
#: counts; tune's policy is where its search starts.
OWN = {("bench", "--threads"), ("check fuzz", "--seed"), ("check fuzz", "--players"),
       ("tune", "--policy")}


@pytest.mark.parametrize("flag", ["--cards", "--rules", "--seed", "--threads", "--backend",
                                  "--address", "--json", "--policy", "--players"])
def test_a_shared_option_reads_the_same_in_every_command(flag):
    helps = {name: (p.help, p.metavar, tuple(p.opts))
             for name, command in commands().items() for p in command.params
             if flag in getattr(p, "opts", ()) and (name, flag) not in OWN}
    assert len(helps) >= 2, helps
    assert len(set(helps.values())) == 1, helps


def test_the_check_group_is_walked_too():
    assert {"check fuzz", "check coverage", "check pilots", "tune", "cards"} <= set(commands())


def test_every_out_option_is_out_or_o():
    outs = [tuple(p.opts) for c in commands().values() for p in c.params
            if "--out" in getattr(p, "opts", ())]
    assert len(outs) >= 6 and set(outs) == {("--out", "-o")}


def test_several_decks_after_one_flag_are_the_flag_repeated():
    tune = commands()["tune"]
    assert options.several_values(tune, ["a", "--vs", "b", "c", "--budget", "9", "d"]) == \
        ["a", "--vs", "b", "--vs", "c", "--budget", "9", "d"]
    assert options.several_values(tune, ["a", "--vs=b", "c"]) == ["a", "--vs=b", "--vs", "c"]
    assert options.several_values(tune, ["--vs", "b", "--", "a"]) == ["--vs", "b", "--", "a"]
    assert options.several_values(tune, ["a", "--vs", "b", "--vs", "c"]) == \
        ["a", "--vs", "b", "--vs", "c"]
    assert options.several_values(tune, ["a", "--vs"]) == ["a", "--vs"]
    run = commands()["run"]  # run's --vs names one deck: its values are left alone
    assert options.several_values(run, ["--vs", "b", "c"]) == ["--vs", "b", "c"]


def field_of(monkeypatch, module: str, function: str, keyword: str | int):
    """Make ``module.function`` refuse with the decks it was handed, as an InputError."""
    import importlib

    def refuse(*args, **kwargs):
        decks = args[keyword] if isinstance(keyword, int) else kwargs[keyword]
        raise InputError("handed " + " ".join(Path(d).name for d in decks))

    monkeypatch.setattr(importlib.import_module(module), function, refuse)


@pytest.mark.parametrize("spelt", [["--field", "b.txt", "c.txt"], ["--vs", "b.txt", "c.txt"],
                                   ["--vs", "b.txt", "--vs", "c.txt"], ["--vs=b.txt", "c.txt"]])
def test_tune_takes_its_field_after_one_flag(monkeypatch, capsys, spelt):
    field_of(monkeypatch, "rnr_sim.tune", "tune", 1)
    assert main(["tune", "a.txt", *spelt, "--budget", "2000", "--json"]) == 2
    assert capsys.readouterr().err.strip() == "handed b.txt c.txt"


def test_tune_takes_a_glob_of_decks(monkeypatch, capsys):
    field_of(monkeypatch, "rnr_sim.tune", "tune", 1)
    decks = sorted(str(p) for p in DECKS.glob("*.txt"))  # what the shell makes of decks/*.txt
    assert main(["tune", decks[0], "--vs", *decks[1:], "--seed", "3", "--json"]) == 2
    assert capsys.readouterr().err.strip() == "handed " + " ".join(Path(d).name
                                                                   for d in decks[1:])


def test_expansion_takes_its_decks_after_one_flag(monkeypatch, capsys):
    def refuse(options, **kwargs):
        raise InputError("handed " + " ".join(p.name for p in options.new_decks))

    monkeypatch.setattr("rnr_sim.expansion.run_expansion", refuse)
    assert main(["expansion", "base.txt", "--with", "x.toml", "--decks", "e1.txt", "e2.txt",
                 "--games", "10"]) == 2
    assert capsys.readouterr().err.strip() == "handed e1.txt e2.txt"


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rnr-sim {version('rnr-sim')}"


def test_cards_and_rules_print_json(capsys):
    assert main(["cards", "--json", "--type", "pillar"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cards"] and {c["type"] for c in data["cards"]} == {"pillar"}
    assert data["cards_total"] > len(data["cards"])
    assert main(["rules", "--json"]) == 0
    rules = json.loads(capsys.readouterr().out)
    assert rules["profile"] == "constitution" and rules["changed"] == []
    assert all(s["value"] == s["default"] for s in rules["switches"])


def test_names_and_defaults_a_new_user_meets_are_the_same_across_commands(capsys):
    """Issue 41, item 5: tune names its field --field, as discover and balance do (--vs
    still works, hidden); discover takes -q like run and compare; replay's help gives the
    defaults of --game and --rollouts."""
    for command, present, absent in (("tune", ["--field", "--quiet", "-q",
                                               "[default: 400000]"], ["--vs"]),
                                     ("discover", ["--quiet", "-q"], []),
                                     ("skill", ["--quiet", "-q"], []),
                                     ("replay", ["[default: 0]", "[default: 32]",
                                                 "[default: 2]"], [])):
        assert main([command, "--help"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        for word in present:
            assert word in text, (command, word)
        for word in absent:
            assert word not in text, (command, word)


def test_resume_takes_the_dir_as_run_does():
    """Issue 41, item 5: ``discover --resume DIR`` reads as ``run --resume DIR`` does (and as
    ``discover --resume --out DIR``, still)."""
    discover, run = commands()["discover"], commands()["run"]
    assert options.resume_dir(discover, ["--resume", "d", "--budget", "9"]) == \
        ["--resume", "--out", "d", "--budget", "9"]
    assert options.resume_dir(discover, ["--resume", "--out", "d"]) == ["--resume", "--out", "d"]
    assert options.resume_dir(discover, ["--", "--resume", "d"]) == ["--", "--resume", "d"]
    assert options.resume_dir(commands()["balance"], ["--resume", "d"]) == \
        ["--resume", "--out", "d"]
    assert options.resume_dir(run, ["--resume", "d"]) == ["--resume", "d"]  # takes DIR itself


def test_skill_resume_takes_the_dir_though_skill_takes_decks():
    """Issue 41, item 5: ``skill a b --resume DIR`` is ``--resume --out DIR`` (the word after
    --resume is the dir, not a deck), ``--resume=DIR`` too; the flag before an option is
    the flag; a resume dir and an --out that name two dirs are refused."""
    skill = commands()["skill"]
    assert options.resume_dir(skill, ["a", "--resume", "d", "b"]) == \
        ["a", "--resume", "--out", "d", "b"]
    assert options.resume_dir(skill, ["a", "--resume=d"]) == ["a", "--resume", "--out", "d"]
    assert options.resume_dir(skill, ["a", "--resume", "-o", "d"]) == ["a", "--resume", "-o", "d"]
    assert options.resume_dir(skill, ["a", "--resume", "d/", "--out", "d"]) == \
        ["a", "--resume", "--out", "d/", "--out", "d"]  # the same dir
    for other in (["--out", "e"], ["-o", "e"], ["--out=e"]):
        with pytest.raises(InputError, match="^--resume d and -(-out|o) e name two dirs"):
            options.resume_dir(skill, ["a", *other, "--resume", "d"])


def test_the_searches_budget_opens_alike_and_shows_its_default(capsys):
    """Issue 41, item 5: --budget says "Every game the command plays" in discover, balance
    and power, each with its default; discover's is balance's, power's larger one is said
    why."""
    from rnr_sim.balance import DEFAULT_BUDGET as BALANCE
    from rnr_sim.discover import DEFAULT_BUDGET as DISCOVER

    assert DISCOVER == BALANCE == 2_000_000
    for command, default in (("discover", DISCOVER), ("balance", BALANCE),
                             ("power", 20_000_000)):
        budget = next(p for p in commands()[command].params if p.name == "budget")
        assert budget.help.startswith("Every game the command plays: ")
        assert budget.default == default and budget.show_default
        assert main([command, "--help"]) == 0
        assert f"[default: {default}]" in " ".join(capsys.readouterr().out.split())
    assert "it measures every card" in budget.help


def test_a_flag_of_another_command_is_answered_with_this_ones_words(capsys):
    """A new user's friction (issue 41): ``run --field`` says how run takes its field."""
    assert main(["run", "decks/bison_stampede.txt", "--field", "decks/scroll_assembly.txt"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rnr-sim run has no --field: run plays every table of the decks "
                          "given as arguments")
