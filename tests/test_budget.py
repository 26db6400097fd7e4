"""One budget ledger for the searches (issue 43): the games each phase may play are the
arithmetic the commands used before it, roundings included."""

import pytest

from rnr_sim.runs.budget import Ledger


def test_a_phase_that_takes_the_rest_leaves_the_later_shares_held():
    budget = 1_000_003
    ledger = Ledger(budget, {"search": 0.75, "tune": 0.1, "heldout": 0.0, "metagame": 0.08},
                    rest=("heldout", "metagame"))
    assert ledger.allowance("search") == int(budget * 0.75)
    assert ledger.allowance("tune") == int(budget * 0.1)
    ledger.spend("search", 749_000)
    ledger.spend("tune", 60_000)
    # discover's held-out re-measure: the budget less what was played and the matrix's share
    assert ledger.allowance("heldout") == budget - 749_000 - 60_000 - int(budget * 0.08)
    ledger.spend("heldout", 100_000)
    assert ledger.allowance("metagame") == budget - 909_000 == ledger.left()


def test_later_shares_are_rounded_once_and_a_held_phase_keeps_its_exact_games():
    ledger = Ledger(999, {"search": 0.55, "verify": 0.0, "re": 0.15, "adapt": 0.15},
                    rest=("verify",))
    ledger.spend("search", 500)
    assert ledger.allowance("verify") == 999 - 500 - int(999 * 0.30)  # not 149 + 149
    power = Ledger(1000, {"worth": 0.1, "race": 0.0, "fresh": 0.2}, rest=("race",))
    power.hold("fresh", 180)  # the fresh deals' games, whole deals
    power.spend("worth", 90)
    assert power.allowance("race") == 1000 - 90 - 180


def test_shares_that_are_not_fractions_of_one_are_refused():
    with pytest.raises(ValueError):
        Ledger(10, {"a": 0.8, "b": 0.3})
    with pytest.raises(ValueError):
        Ledger(10, {"a": 0.5}, rest=("b",))
