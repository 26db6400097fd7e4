"""``rnr-sim balance``'s inputs: the targets file's errors (one line naming the file and the
line, exit 2, nothing written) and the search's changed catalogs, which must be exactly
what ``compare --patch`` plays."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from rnr_sim.balance.targets import (
    FIELDS,
    describe,
    knobs_of,
    parse_targets,
    patch_toml,
    patched_cards,
)
from rnr_sim.cards import load_catalog
from rnr_sim.cli import main
from rnr_sim.errors import InputError
from rnr_sim.patches import apply_patch, parse_patch

ROOT = Path(__file__).resolve().parent.parent
DECKS = [str(ROOT / "decks" / "bison_stampede.txt"), str(ROOT / "decks" / "eagle_blockade.txt")]


@pytest.mark.parametrize("text, line, words", [
    ('[targets]\ndeck_share_max = 0.55\n\n[scope]\ncards = ["Minuteman Voley"]\n', 5,
     "no card 'Minuteman Voley'"),
    ('[targets]\ndeck_share_max = 0.55\n\n[scope]\nfields = ["cost", "damgae"]\n', 5,
     "unknown field 'damgae' (did you mean 'damage'?)"),
    ('[targets]\ndeck_share_max = 0.55\npath_shares = [0.2, 0.3]\n', 3,
     "unknown target 'path_shares'"),
    ('[targets]\nfirst_seat = [0.55, 0.45]\n', 2, "the low end is above the high end"),
    ('[targets]\nfirst_seat = [0.45, 0.55]\n\n[scope]\nswitches = ["aoa", "sideway_reset"]\n',
     5, "unknown switch 'sideway_reset' (did you mean 'sideways_reset'?)"),
    ('[targets]\nfirst_seat = [0.45, 0.55]\n\n[scope]\ncards = []\nswitches = ["min_pillars"]\n',
     6, "'min_pillars' decides which decks are legal"),
])
def test_bad_targets_are_one_line_exit_2_and_nothing_written(tmp_path, capsys, text, line,
                                                            words):
    t = tmp_path / "t.toml"
    t.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    code = main(["balance", "--field", *DECKS, "--targets", str(t), "--out", str(out),
                 "--budget", "20000", "-q"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"{t}:{line}: ") and words in err
    assert not out.exists()


def test_targets_file_reads_bands_by_path_and_defaults():
    tf = parse_targets('[targets]\npath_share = { life = [0.2, 0.3] }\nmin_support = 3\n'
                       '[scope]\ncards = "flagged"\n', "t.toml")
    assert tf.targets.path_share == {"life": (0.2, 0.3)}
    assert tf.targets.names() == ["path_share", "min_support"]
    assert tf.scope.flagged and tf.scope.fields == FIELDS and tf.scope.max_changes == 3
    with pytest.raises(InputError, match="the bands cannot all hold"):
        parse_targets("[targets]\npath_share = [0.3, 0.4]\n", "t.toml")


def test_a_candidate_catalog_is_the_one_its_patch_file_makes():
    """The search plays each candidate's cards array; compare plays its patch file: the
    same rows, for random sets of changes over every number of the sample catalog."""
    cat = load_catalog(None)
    knobs = knobs_of(cat, list(range(len(cat.cards))), FIELDS, None)
    assert {k.field for k in knobs} == set(FIELDS)
    base = np.ascontiguousarray(cat.compile(), dtype=np.int32)
    rng = random.Random(7)
    for _ in range(40):
        picks = sorted(rng.sample(range(len(knobs)), 3))
        changes = tuple((k, v) for k in picks
                        if (v := rng.randint(knobs[k].lo, knobs[k].hi)) != knobs[k].base)
        text = patch_toml(cat, knobs, changes, "t", "n")
        patched = apply_patch(parse_patch(text), cat)
        assert np.array_equal(patched_cards(cat, base, knobs, changes),
                              patched.catalog.compile())
        fields = {(knobs[k].card, "effects" if knobs[k].field == "effect" else knobs[k].field)
                  for k, _ in changes}
        assert {(card, fld) for card, fld, _, _ in patched.changed} == fields
        assert len(describe(knobs, changes)) == len(changes)
    volley = next(k for k in knobs if k.card == "Minuteman Volley" and k.field == "effect")
    assert volley.subject == "lp" and volley.lo == 1  # an effect's N is at least 1
    dp = next(k for k in knobs if k.field == "dp")
    assert dp.lo >= 1  # a card at 0 DP is destroyed (Art. II §3)


def test_a_second_writer_of_a_balance_dir_is_refused(tmp_path, capsys):
    """One writer at a time: a balance dir held by another process's lock (here, this
    one's) is refused in one line naming the holder, exit 2."""
    import os

    from rnr_sim.runs.dirlock import DirLock

    t = tmp_path / "t.toml"
    t.write_text("[targets]\ndeck_share_max = 0.55\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    with DirLock(out, "balance dir"):
        code = main(["balance", "--field", *DECKS, "--targets", str(t), "--out", str(out),
                     "--budget", "20000", "-q"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert str(os.getpid()) in err and "balance dir" in err


def test_a_candidate_rules_array_is_the_one_its_rules_profile_compiles_to(tmp_path):
    """The search plays each candidate's rules array; compare plays its rules profile
    (``--rules-b``): the same array, for every value of every switch the scope may name."""
    from rnr_sim.balance.targets import (
        DECK_SWITCHES,
        MULTIPLAYER_SWITCHES,
        patched_rules,
        rules_toml,
        switch_knobs,
    )
    from rnr_sim.rules import SWITCHES, default_profile, load_profile

    base = default_profile()
    names = tuple(s.name for s in SWITCHES
                  if s.name not in DECK_SWITCHES + MULTIPLAYER_SWITCHES)
    knobs = switch_knobs(base, names, None)
    for k, kn in enumerate(knobs):
        for value in kn.choices():
            changes = ((k, value),)
            f = tmp_path / "r.toml"
            f.write_text(rules_toml(base, knobs, changes, "t", "n"), encoding="utf-8")
            profile = load_profile(f)
            assert np.array_equal(patched_rules(base.compile(), knobs, changes),
                                  profile.compile())
            assert list(profile.changed()) == [kn.card]
            assert describe(knobs, changes)[0].startswith(f"rule {kn.card}: ")


def test_resume_of_a_finished_balance_dir_without_targets_says_nothing_to_resume(tmp_path,
                                                                               capsys):
    """A new user's friction: ``balance --resume DIR`` of a finished run asked for
    --targets; it says, as discover and power do, that there is nothing to resume."""
    out = tmp_path / "done"
    out.mkdir()
    (out / "manifest.json").write_text('{"kind": "balance"}', encoding="utf-8")
    assert main(["balance", "--resume", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"--resume {out}: this balance run is complete; nothing to resume"
