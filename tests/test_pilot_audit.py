"""``rnr_sim.checks.pilots``: each finding read off a hand-built trace (rows ``turn, event, seat,
a..e`` as the engine writes them), and ``rnr-sim check pilots`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from engine_harness import Table, card

from rnr_sim.checks.pilots import Audit, audit_trace
from rnr_sim.cli import main
from rnr_sim.engine import trace as ev

REPO = Path(__file__).resolve().parent.parent
T = Table([card("Windfall", "rights", cost=0, effects=["ip 2"]),
           card("Midnight Ride", "rights", "eagle", cost=1, effects=["force draw 3"]),
           card("Reclaim", "rights", cost=0, effects=["recover 1"])])
CARDS = T.cards
FORT, WALL, RIDE, WINDFALL, COSTLY, RECLAIM = (T.card_id(n) for n in (
    "Fort", "Wall", "Midnight Ride", "Windfall", "Costly", "Reclaim"))


def audit_of(*rows) -> Audit:
    a = Audit()
    audit_trace(np.array([list(r) + [0] * (8 - len(r)) for r in rows], dtype=np.int32),
                CARDS, ["A", "B"], a)
    return a


def turn(t: int, seat: int, draw_pile: int = 40) -> tuple:
    return (t, ev.EV_TURN, seat, 100, 5, draw_pile, 3)


def end(t: int, seat: int) -> tuple:
    return (t, ev.EV_TURN_END, seat, 100, 5, 40, 3, 0)


@pytest.mark.parametrize("repaired,faults", [(False, 1), (True, 0)])
def test_a_repair_with_no_repair_event_in_its_turn_is_a_fault(repaired, faults):
    rows = [turn(3, 0), (3, ev.EV_ACTIVATE, 0, FORT, 0, 1)]
    if repaired:
        rows.append((3, ev.EV_REPAIR, 0, WALL, 3, 10, FORT))
    a = audit_of(*rows, end(3, 0))
    assert a.faults["repair restored nothing"] == faults
    assert a.by_deck["A"]["repair restored nothing"] == faults


def test_a_turn_the_game_ends_in_counts_no_missing_repair():
    """Won at step iii: step vi never came, so the repair was not wasted."""
    a = audit_of(turn(3, 0), (3, ev.EV_ACTIVATE, 0, FORT, 0, 1),
                 (3, ev.EV_VICTORY, 0, 1, 0))
    assert a.faults["repair restored nothing"] == 0


def test_a_recover_that_found_nothing_is_a_fault():
    a = audit_of(turn(2, 1), (2, ev.EV_PLAY, 1, RECLAIM, 0, 0, -1), end(2, 1))
    assert a.faults["recover found nothing"] == 1 and a.by_deck["B"]["recover found nothing"] == 1


@pytest.mark.parametrize("pile,forced", [(40, 3), (32, 0), (10, 0)])
def test_cards_forced_into_a_deep_pile_are_counted_for_the_forcing_deck(pile, forced):
    a = audit_of(turn(4, 1, draw_pile=pile), turn(5, 0), (5, ev.EV_PLAY, 0, RIDE, 1, 0, -1),
                 end(5, 0))
    assert a.faults["cards forced into a deep pile"] == forced
    assert a.by_deck["A"]["cards forced into a deep pile"] == forced


def test_ip_gained_in_the_play_phase_and_not_spent_is_lost():
    a = audit_of(turn(6, 0), (6, ev.EV_PLAY, 0, WINDFALL, 0, 0, -1),
                 (6, ev.EV_IP, 0, 2, WINDFALL, 1, 2), (6, ev.EV_PLAY, 0, RIDE, 1, 0, -1),
                 end(6, 0))
    assert a.faults["IP gained and lost"] == 1


def test_aoa_outcomes_are_counted_by_kind():
    a = audit_of(turn(1, 0), *[(1, ev.EV_AOA_RESULT, 0, RIDE, 1, RIDE, m, t)
                               for m, t in ((5, 2), (4, 4), (2, 8))], end(1, 0))
    assert (a.counts["AoA won"], a.counts["AoA even trade"], a.counts["AoA block"]) == (1, 1, 1)


def test_check_pilots_prints_the_findings_with_replay_commands(capsys):
    decks = [str(REPO / "decks" / n) for n in ("eagle_blockade.txt", "bison_stampede.txt")]
    code = main(["check", "pilots", *decks, "--games", "3", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 6 and code == (0 if sum(out["faults"].values()) == 0 else 1)
    for examples in out["examples"].values():
        assert all(e["replay"].startswith("rnr-sim replay ") and " --game " in e["replay"]
                   for e in examples)


def test_check_pilots_needs_two_decks(capsys):
    assert main(["check", "pilots", str(REPO / "decks" / "eagle_blockade.txt")]) == 2
    assert "2 or more deck lists" in capsys.readouterr().err
