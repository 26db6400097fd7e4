"""The CLI contract (docs/design.md, "CLI"): cards, validate, rules; exit codes 0/1/2; bad input
is a message on stderr, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LEGAL_DECK, TINY_CATALOG
from typer.testing import CliRunner

from rnr_sim import cli
from rnr_sim.cli import app, main

runner = CliRunner()
CARDS = ["--cards", str(TINY_CATALOG)]


def invoke(*args: str):
    result = runner.invoke(app, list(args))
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit), result.exception
    return result


def illegal_deck(write):
    text = LEGAL_DECK.read_text().replace("4 Minuteman Volley", "5 Minuteman Volley").replace(
        "6 Town Hall", "5 Town Hall")
    return write("illegal.txt", text)


# ---------------------------------------------------------------------------- help


def test_cli_help_lists_commands_with_an_example():
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("cards", "validate", "rules"):
        assert command in result.output
    assert "Example: rnr-sim" in result.output


@pytest.mark.parametrize("command", ["cards", "validate", "rules"])
def test_cli_every_subcommand_help_has_an_example(command):
    result = invoke(command, "--help")
    assert result.exit_code == 0
    assert f"Example: rnr-sim {command}" in result.output


def test_cli_command_modules_registered_in_order():
    assert cli.COMMAND_MODULES[0] == "rnr_sim.commands.catalog"
    names = [c.name for c in app.registered_commands]
    assert names[:3] == ["cards", "validate", "rules"]


# ---------------------------------------------------------------------------- validate


def test_cli_validate_legal_exit_0():
    result = invoke("validate", *CARDS, str(LEGAL_DECK))
    assert result.exit_code == 0
    assert result.stdout.strip() == f"OK Tiny Legal ({LEGAL_DECK})"


def test_cli_validate_art5_s5_illegal_exit_1(write):
    path = illegal_deck(write)
    result = invoke("validate", *CARDS, str(LEGAL_DECK), str(path))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f"OK Tiny Legal ({LEGAL_DECK})"
    assert lines[1] == f"ILLEGAL Tiny Legal ({path}): 1 violation"
    assert lines[2] == ("  illegal (Art. V §5, R4): 5 copies of the Attack 'Minuteman Volley'; "
                        "at most 4")
    assert lines[-1] == "1 legal, 1 illegal"


def test_cli_validate_rules_switch_makes_legal_deck_illegal(write):
    variant = write("one_freedom.toml", "max_freedom = 1\n")
    result = invoke("validate", *CARDS, "--rules", str(variant), str(LEGAL_DECK))
    assert result.exit_code == 1
    assert "max_freedom = 1" in result.stdout
    assert "Art. V §3" in result.stdout


def test_cli_validate_unreadable_deck_exit_2(write, tmp_path):
    path = write("typo.txt", "4 Minutman Volley\n")
    result = invoke("validate", *CARDS, str(LEGAL_DECK), str(path), str(tmp_path / "nope.txt"))
    assert result.exit_code == 2
    assert f"OK Tiny Legal ({LEGAL_DECK})" in result.stdout
    assert (f"{path}:1: unknown card 'Minutman Volley'; did you mean 'Minuteman Volley'?"
            in result.stderr)
    assert "no such deck list" in result.stderr


def test_cli_validate_broken_catalog_exit_2_lists_problems(write):
    bad = write("bad.toml", '[set]\nname = "B"\n[[cards]]\nname = "X"\ntype = "atack"\n'
                'branch = "bison"\nrarity = "common"\n[[cards]]\nname = "Y"\n')
    result = invoke("validate", "--cards", str(bad), str(LEGAL_DECK))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == f"{bad}: 4 problems"
    assert all(line.startswith(str(bad)) for line in lines)


def test_cli_validate_bad_rules_exit_2(write):
    variant = write("v.toml", "max_freedoms = 1\n")
    result = invoke("validate", *CARDS, "--rules", str(variant), str(LEGAL_DECK))
    assert result.exit_code == 2
    assert "unknown switch 'max_freedoms'" in result.stderr


def test_cli_validate_needs_a_deck():
    result = invoke("validate")
    assert result.exit_code == 2


# ---------------------------------------------------------------------------- cards


def test_cli_cards_table_shows_parsed_effects():
    result = invoke("cards", *CARDS)
    assert result.exit_code == 0
    out = result.stdout
    shown = TINY_CATALOG.resolve().relative_to(Path.cwd()) \
        if TINY_CATALOG.resolve().is_relative_to(Path.cwd()) else TINY_CATALOG
    assert out.splitlines()[0] == f"Tiny Test Set v1 ({shown}): 27 of 27 cards"
    assert "kicker +2 IP: force draw 2" in out
    assert "activate 1: heal 2" in out
    assert "dp 20, drain 2" in out


def test_cli_cards_filters():
    result = invoke("cards", *CARDS, "--type", "freedom", "--branch", "Liberty Bell")
    assert result.exit_code == 0
    assert "1 of 27 cards" in result.stdout
    assert "Molly Pitcher" in result.stdout
    assert "Paul Revere" not in result.stdout


@pytest.mark.parametrize("option,value,valid", [
    ("--type", "atack", "pillar, rights, ua, attack, defense, freedom, bill"),
    ("--branch", "owl", "bison, eagle, liberty_bell, scroll"),
])
def test_cli_cards_bad_filter_is_one_line_exit_2(option, value, valid):
    result = invoke("cards", *CARDS, option, value)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"{option}: unknown {'card type' if option == '--type' else 'branch'} '{value}'; valid: {valid}"  # noqa: E501


def test_cli_cards_missing_catalog_exit_2(tmp_path):
    result = invoke("cards", "--cards", str(tmp_path / "none.toml"))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"{tmp_path / 'none.toml'}: no such card catalog file"


# ---------------------------------------------------------------------------- rules


def test_cli_rules_lists_every_switch_with_ruling_and_citation():
    from rnr_sim.rules import SWITCHES

    result = invoke("rules")
    assert result.exit_code == 0
    for s in SWITCHES:
        line = next(ln for ln in result.stdout.splitlines() if f" {s.name} " in ln)
        assert s.ruling in line and s.cite in line
        assert not line.startswith("*")


def test_cli_rules_marks_switches_off_their_default(write):
    variant = write("v.toml", '[rules]\nua_drain_target = "opponent"\n')
    result = invoke("rules", "--rules", str(variant))
    assert result.exit_code == 0
    line = next(ln for ln in result.stdout.splitlines() if "ua_drain_target" in ln)
    assert line.startswith("*")
    assert '"opponent"' in line and '"controller"' in line
    assert "1 of" in result.stdout.splitlines()[0]


# ---------------------------------------------------------------------------- main()


def test_cli_main_returns_exit_codes(capsys, write):
    assert main(["validate", *CARDS, str(LEGAL_DECK)]) == 0
    assert main(["validate", *CARDS, str(illegal_deck(write))]) == 1
    assert main(["validate", *CARDS, "missing.txt"]) == 2
    captured = capsys.readouterr()
    assert "missing.txt: no such deck list" in captured.err
    assert "Traceback" not in captured.err


def test_cli_console_script_no_traceback_on_broken_toml(write):
    bad = write("bad.toml", "[set\n")
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from rnr_sim.cli import main; sys.exit(main())",
         "cards", "--cards", str(bad)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "broken TOML" in proc.stderr
