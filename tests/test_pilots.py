"""Pilots as files (``rnr_sim.pilots``): a policy TOML over a built-in base, every weight
named and range-checked, one-line errors naming the file and line; ``rnr-sim policies``."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from rnr_sim.cli import main
from rnr_sim.engine.policies import POLICIES, POLICY_NAMES, WEIGHT_SPECS
from rnr_sim.errors import InputError
from rnr_sim.pilots import builtin, load_policy, parse_policy


def test_every_builtin_weight_is_inside_its_documented_range():
    for name, row in POLICIES.items():
        for key, (i, lo, hi, meaning) in WEIGHT_SPECS.items():
            assert lo <= row[i] <= hi, (name, key)
            assert meaning


def test_a_policy_file_sets_weights_over_its_base():
    pilot = parse_policy('[policy]\nname = "Tempo"\nbase = "aggro"\n[weights]\nstop = 0.3\n'
                         '"verb:lp" = 4\n', "tempo.toml")
    expected = POLICIES["aggro"].copy()
    expected[WEIGHT_SPECS["stop"][0]] = 0.3
    expected[WEIGHT_SPECS["verb:lp"][0]] = 4.0
    assert pilot.name == "Tempo" and np.array_equal(pilot.weights, expected)
    assert not pilot.builtin and builtin("aggro").builtin


def test_a_policy_file_defaults_to_the_balanced_base_and_its_file_name(tmp_path):
    path = tmp_path / "slow.toml"
    path.write_text("[weights]\ncost = 1.5\n")
    pilot = load_policy(str(path))
    assert pilot.name == "slow"
    assert pilot.weights[WEIGHT_SPECS["cost"][0]] == 1.5
    assert pilot.weights[WEIGHT_SPECS["stop"][0]] == POLICIES["balanced"][WEIGHT_SPECS["stop"][0]]


def test_a_relative_policy_path_is_read_beside_the_deck(tmp_path):
    (tmp_path / "pilots").mkdir()
    (tmp_path / "pilots" / "mine.toml").write_text("[weights]\nkicker = 2\n")
    assert load_policy("pilots/mine.toml", relative_to=tmp_path).name == "mine"


@pytest.mark.parametrize("text,message", [
    ("[weights]\nstopp = 1\n", r"x\.toml:2: unknown weight 'stopp' \(did you mean 'stop'\?\)"),
    ("[weights]\nrandom = 0.5\n", r"x\.toml:2: weight 'random' is 0 or 1"),
    ("[weights]\npillar_target = 7.5\n", r"x\.toml:2: .*whole number"),
    ("[weights]\ncost = -1\n", r"x\.toml:2: weight 'cost' = -1 is out of its range 0 to 100"),
    ("[weights]\nattack = \"high\"\n", r"x\.toml:2: weight 'attack' must be a number"),
    ("[policy]\nbase = \"aggressive\"\n", r"x\.toml:2: base: unknown policy 'aggressive'"),
    ("[policy]\ncolour = 1\n", r"x\.toml:2: unknown key 'colour' in \[policy\]"),
    ("[pilot]\nname = 1\n", r"x\.toml:1: unknown table or key 'pilot'"),
    ("[weights\n", r"x\.toml: not valid TOML"),
    ("[weights]\nmulligan_min = 6\nmulligan_max = 2\n", r"mulligan_min is above mulligan_max"),
])
def test_a_bad_policy_file_is_one_line_naming_the_file_and_line(text, message):
    with pytest.raises(InputError, match=message) as e:
        parse_policy(text, "x.toml")
    assert "\n" not in str(e.value)


def test_an_unknown_builtin_lists_the_valid_ones():
    with pytest.raises(InputError, match="valid policies: balanced, aggro"):
        builtin("yolo")


def test_policies_command_lists_every_builtin_and_weight(capsys):
    assert main(["policies", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == list(POLICY_NAMES)
    assert set(data["balanced"]["weights"]) == set(WEIGHT_SPECS)


def test_policies_command_rejects_a_bad_file_with_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[weights]\nstop = 1e12\n")
    assert main(["policies", "--show", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.toml:2" in err


def test_policies_help_explains_every_weight(capsys):
    assert main(["policies", "--help"]) == 0
    out = capsys.readouterr().out
    assert all(k in out for k in ("pillar_target", "verb:lp", "mulligan_min"))


# ---------------------------------------------------------------- policy files in runs
REPO = __import__("pathlib").Path(__file__).resolve().parent.parent


def _two_decks(tmp_path, policy_line: str):
    """Copies of Bison Stampede (its header set to ``policy_line``) and Scroll Assembly
    (its header set to the built-in ``petition``) in ``tmp_path``."""
    paths = []
    for name, line in (("bison_stampede.txt", policy_line),
                       ("scroll_assembly.txt", "Policy: petition")):
        text = (REPO / "decks" / name).read_text()
        tmp_path.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(re.sub(r"^Policy:.*$", line, text, count=1, flags=re.M))
        paths.append(tmp_path / name)
    return paths


def test_a_policy_file_equal_to_its_base_plays_the_same_games(tmp_path):
    """The file's weights reach the engine: a file that only names its base plays exactly
    the built-in's games, under the file's own name."""
    import polars as pl

    from rnr_sim.runs import planning, runner

    (tmp_path / "pilots").mkdir()
    (tmp_path / "pilots" / "copy.toml").write_text(
        '[policy]\nname = "Stampede copy"\nbase = "aggro"\n')
    mine = _two_decks(tmp_path, "Policy: pilots/copy.toml")
    base = _two_decks(tmp_path / "builtin", "Policy: aggro")
    for decks, out in ((mine, "mine"), (base, "base")):
        runner.start_run(planning.RunOptions(decks=decks, out=tmp_path / out, games=40),
                         progress=False, log=lambda m: None)
    a = pl.read_parquet(tmp_path / "mine" / "seats")
    b = pl.read_parquet(tmp_path / "base" / "seats")
    assert sorted(a["policy"].unique()) == ["Stampede copy", "petition"]
    assert a.drop("policy").equals(b.drop("policy"))
    assert pl.read_parquet(tmp_path / "mine" / "games").equals(
        pl.read_parquet(tmp_path / "base" / "games"))


def test_a_changed_policy_file_changes_the_games(tmp_path):
    import polars as pl

    from rnr_sim.runs import planning, runner

    (tmp_path / "timid.toml").write_text('[policy]\nbase = "aggro"\n[weights]\nstop = 1e9\n')
    mine = _two_decks(tmp_path, "Policy: timid.toml")
    runner.start_run(planning.RunOptions(decks=mine, out=tmp_path / "run", games=20),
                     progress=False, log=lambda m: None)
    seats = pl.read_parquet(tmp_path / "run" / "seats")
    timid = seats.filter(pl.col("policy") == "timid")
    # stop = 1e9: it never plays a card; only the P2 right puts a Pillar in play (R41).
    assert timid.height == 40
    assert ((timid["played_mask"] != 0) == timid["p2_right"]).all()


def test_validate_checks_the_policy_header(tmp_path, capsys):
    bad = _two_decks(tmp_path, "Policy: yolo")[0]
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"{bad}:2: Policy: unknown policy 'yolo'; valid policies: balanced, "
                   "aggro, mill, breaker, petition, random, or a policy file ending in .toml")


def test_run_refuses_a_deck_whose_policy_file_is_broken(tmp_path, capsys):
    (tmp_path / "bad.toml").write_text("[weights]\ncost = 500\n")
    decks = _two_decks(tmp_path, "Policy: bad.toml")
    assert main(["run", *map(str, decks), "--games", "2", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.toml:2: weight 'cost' = 500 is out of its range 0 to 100" in err
    assert err.count("\n") == 0 and not (tmp_path / "r").exists()
