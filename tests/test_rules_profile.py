"""The rules profile (docs/rulings.md): switches, defaults, variant files."""

from __future__ import annotations

import numpy as np
import pytest

from rnr_sim import rules
from rnr_sim.errors import InputError
from rnr_sim.rules import SWITCHES, default_profile, load_profile


def test_rules_default_profile_is_constitution():
    profile = load_profile(None)
    assert profile.name == "constitution"
    assert profile.values == {s.name: s.default for s in SWITCHES}
    assert profile.changed() == {}
    assert profile["deck_includes_uas"] is True  # R1
    assert profile["min_pillars"] == 15  # R2, Art. V §2
    assert profile["max_freedom"] == 4 and profile["max_bills"] == 4  # R3
    assert profile["max_copies_attack_defense"] == 4  # R4, Art. V §5
    assert profile["max_rares"] == 6  # Art. V §4


def test_rules_every_switch_has_ruling_and_citation():
    for s in SWITCHES:
        assert s.ruling.startswith("R") and s.ruling[1:].isdigit()
        assert s.cite.startswith(("Art.", "Amend."))
        assert s.summary


def test_rules_compile_indices():
    array = default_profile().compile()
    assert array.dtype == np.int64 and array.shape == (rules.N_RULES,)
    assert array[rules.R_MIN_PILLARS] == 15
    assert array[rules.R_P2_FREE_PILLAR] == rules.P2_ANY


def test_rules_subset_file_changes_only_its_switches(write):
    path = write("variant.toml", 'max_freedom = 1\np2_free_pillar = "off"\n')
    profile = load_profile(path)
    assert profile.name == "variant"
    assert profile.source == str(path)
    assert profile.changed() == {"max_freedom": 1, "p2_free_pillar": "off"}
    assert profile.compile()[rules.R_P2_FREE_PILLAR] == rules.P2_OFF
    assert profile["min_pillars"] == 15


def test_rules_table_form_and_name(write):
    path = write("v.toml", 'name = "one freedom"\n[rules]\nmax_freedom = 1\n')
    profile = load_profile(path)
    assert profile.name == "one freedom"
    assert profile.changed() == {"max_freedom": 1}


def test_rules_unknown_switch_named_with_valid_list(write):
    path = write("v.toml", "max_freedoms = 1\n")
    with pytest.raises(InputError) as e:
        load_profile(path)
    message = str(e.value)
    assert "unknown switch 'max_freedoms'" in message
    assert "did you mean 'max_freedom'?" in message
    for s in SWITCHES:
        assert s.name in message
    assert "\n" not in message


@pytest.mark.parametrize("line,fragment", [
    ("deck_includes_uas = 1", "takes true or false"),
    ("min_pillars = true", "takes a whole number"),
    ('min_pillars = "15"', "takes a whole number"),
    ("min_pillars = 61", "outside 0..60"),
    ('p2_free_pillar = "sometimes"', "is not one of \"any\", \"zero_cost_only\", \"off\""),
])
def test_rules_wrong_value(write, line, fragment):
    with pytest.raises(InputError, match=fragment):
        load_profile(write("v.toml", line + "\n"))


def test_rules_unreadable_files(tmp_path, write):
    with pytest.raises(InputError, match="no such rules file"):
        load_profile(tmp_path / "nope.toml")
    with pytest.raises(InputError, match="broken TOML"):
        load_profile(write("v.toml", "max_freedom = \n"))
    with pytest.raises(InputError, match="not a text file"):
        load_profile(write("v.bin", b"\xff\xfe\x00"))
    with pytest.raises(InputError, match="unexpected key 'max_freedom' beside"):
        load_profile(write("w.toml", "max_freedom = 1\n[rules]\nmin_pillars = 10\n"))
