"""The fuzzer (rnr_sim/checks/fuzz): its generators draw inputs the tool's own readers accept, a
small fixed run of it is clean, and its record checks catch planted faults.

The run at scale is ``rnr-sim check fuzz`` (docs/fuzzing.md); here a few thousand games.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from rnr_sim import enums
from rnr_sim.cards import parse_catalog, parse_effect
from rnr_sim.checks.fuzz import strategies as S
from rnr_sim.checks.fuzz.check import Batch, DeckFacts, check_records, compare_records
from rnr_sim.checks.fuzz.play import (
    build_case,
    case_source,
    game_plan,
    play,
    play_case,
    run_fuzz,
)
from rnr_sim.cli import main
from rnr_sim.decks import is_legal, validate_deck
from rnr_sim.engine.driver import GameRecords
from rnr_sim.patches import catalog_toml
from rnr_sim.rules import SWITCHES, load_profile


def fixed(examples: int) -> settings:
    """Deterministic: the same examples on every run of `make test`, no example database."""
    return settings(derandomize=True, database=None, deadline=None, max_examples=examples,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ----------------------------------------------------------------------- generators


@fixed(60)
@given(S.catalogs(max_cards=40))
def test_generated_catalogs_load_through_the_catalog_reader(tables):
    catalog = parse_catalog(catalog_toml(tables["set"], tables["cards"]), where="<fuzz>")
    assert len(catalog) == len(tables["cards"])
    for raw, card in zip(tables["cards"], catalog.cards, strict=True):
        assert card.name == raw["name"]
        assert card.type == raw["type"].lower()
        for stat in ("cost", "ip", "damage", "dp", "drain"):
            assert getattr(card, stat) == raw.get(stat, 0)
        assert len(card.effects) == len(raw.get("effects", []))
        assert (card.kicker is not None) == ("kicker" in raw)


@fixed(60)
@given(S.profiles())
def test_generated_rules_profiles_load_through_the_rules_reader(switches):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rules.toml"
        path.write_text(S.profile_toml(switches, table=len(switches) % 2 == 1),
                        encoding="utf-8")
        profile = load_profile(path)
    for name, value in switches.items():
        assert profile[name] == value


@fixed(25)
@given(S.cases(max_cards=30, max_decks=3))
def test_generated_decks_are_legal_under_the_generated_rules(case):
    # build_case read every file back and raised Rejected on any refusal; check again here.
    for deck in case.decks:
        assert is_legal(validate_deck(deck, case.catalog, case.profile))
        assert len(deck) - 3 * (not case.profile["deck_includes_uas"]) == 60


def test_generators_reach_every_order_trigger_verb_and_switch():
    types, keywords, pairs, kickers, switches = set(), set(), set(), set(), set()
    for seed in range(200):
        src = case_source(seed)
        tables = S.gen_catalog(src)
        switches.update(S.gen_profile(src))
        for card in tables["cards"]:
            types.add(card["type"].lower())
            keywords.update(kw.lower() for kw in card.get("keywords", ()))
            pairs.update((e.trigger, e.verb) for e in map(parse_effect, card.get("effects", ())))
            if "kicker" in card:
                kickers.add(parse_effect(card["kicker"]["effect"]).verb)
    assert types == set(enums.CARD_TYPES)
    assert keywords == set(enums.KEYWORDS)
    assert pairs == {(t, v) for t in enums.TRIGGERS for v in enums.VERBS[1:]}
    assert kickers == set(enums.VERBS[1:])
    assert switches == {s.name for s in SWITCHES}


def test_a_case_is_named_by_its_seed():
    a = build_case(case_source(7), 7)
    b = build_case(case_source(7), 7)
    c = build_case(case_source(8), 8)
    assert a.files == b.files
    assert a.files != c.files
    assert np.array_equal(game_plan(7, 4, 3, 64)[0], game_plan(7, 4, 3, 64)[0])


def test_game_plan_matches_replay_numbering():
    # rnr-sim replay --game K plays deal K of table 0 with first seat K mod P.
    _seats, deal, first = game_plan(3, 5, 4, 50)
    assert np.array_equal(deal, np.arange(50))
    assert np.array_equal(first, np.arange(50) % 4)


# ----------------------------------------------------------------------- playing


def test_small_fixed_fuzz_run_is_clean():
    # 12 cases x 128 games x 3 player counts = 4,608 games, invariants on, each record
    # checked and one game in eight replayed alone.
    report = run_fuzz(4608, seed=20251130, players=(2, 3, 4), case_games=128)
    summary = report.to_dict()
    assert summary["games"] == 4608
    assert summary["catalogs"] == 12
    assert summary["failures"] == [], summary["failures"]
    assert report.clean


@fixed(8)
@given(S.cases(max_cards=30, max_decks=4))
def test_hypothesis_cases_play_clean_at_two_to_four_players(case):
    from rnr_sim.checks.fuzz.check import check_records as check

    for players in (2, 3, 4):
        seat_deck, deal, first = game_plan(0, len(case.decks), players, 48)
        rec = play(case, seat_deck, deal, first, threads=None)
        failures, _ = check(rec, Batch(0, seat_deck, first, case.facts, case.profile.values))
        assert failures == []


# ----------------------------------------------------------------------- the checks


def _facts() -> DeckFacts:
    """One 60-slot deck: UAs in slots 0-2, Petitions in 3-5, Scroll Pillars in 6-8."""
    full = (1 << 60) - 1
    return DeckFacts(non_ua=np.array([full & ~0b111], dtype=np.uint64),
                     petitions=np.array([0b111 << 3], dtype=np.uint64),
                     scroll_pillars=np.array([0b111 << 6], dtype=np.uint64))


def _clean_record() -> dict:
    """A two-player game seat 0 won by Life: a record every check accepts."""
    opening = sum(1 << s for s in range(10, 17))
    drawn = sum(1 << s for s in range(20, 40)) | (1 << 3) | (1 << 6)
    return {
        "winner_seat": [0], "path": [enums.PATH_LIFE], "turns": [41],
        "final_lp": [[57, -4]], "uas_lost": [[1, 2]], "petitions": [[1, 0]],
        "scroll_pillars": [[0, 1]], "mulligan": [[False, True]],
        "p2_right": [[False, True]],
        "opening_mask": [[opening, opening]], "drawn_mask": [[drawn, drawn]],
        "played_mask": [[(1 << 10) | (1 << 21) | (1 << 3), (1 << 11) | (1 << 6)]],
        "violations": [0],
    }


def _records(fields: dict) -> GameRecords:
    dtypes = {"winner_seat": np.int8, "path": np.int8, "turns": np.int32,
              "final_lp": np.int32, "uas_lost": np.int8, "petitions": np.int8,
              "scroll_pillars": np.int8, "mulligan": bool, "p2_right": bool,
              "opening_mask": np.uint64, "drawn_mask": np.uint64, "played_mask": np.uint64,
              "violations": np.int32}
    return GameRecords(**{k: np.array(v, dtype=dtypes[k]) for k, v in fields.items()})


def _batch(**rules) -> Batch:
    profile = {"turn_limit": 200, "lp_cap": 0, "p2_free_pillar": "any", **rules}
    return Batch(seed=5, seat_deck=np.zeros((1, 2), dtype=np.int32),
                 first_seat=np.zeros(1, dtype=np.int32), facts=_facts(), profile=profile)


def _failing(fields: dict, **rules) -> set[str]:
    failures, counts = check_records(_records(fields), _batch(**rules))
    assert sum(counts.values()) == len(failures)
    return {f.check for f in failures}


def test_the_clean_planted_record_passes_every_check():
    assert _failing(_clean_record()) == set()


PLANTED = [
    ("invariants", {"violations": [3]}, {}),
    ("winner", {"winner_seat": [2]}, {}),
    ("winner", {"winner_seat": [-1]}, {}),
    ("turns", {"turns": [0]}, {}),
    ("turns", {"winner_seat": [-1], "path": [enums.PATH_DRAW], "turns": [150],
               "final_lp": [[5, 6]]}, {}),
    ("turns", {"turns": [201]}, {}),
    ("turns", {"winner_seat": [-1], "path": [enums.PATH_DRAW], "turns": [201],
               "final_lp": [[5, 6]]}, {}),
    ("life", {"final_lp": [[57, 3]]}, {}),
    ("life", {"final_lp": [[57, -(2**31) + 10]]}, {}),
    ("life", {"path": [enums.PATH_ATTACK], "uas_lost": [[1, 3]], "final_lp": [[-1, 5]]}, {}),
    ("life", {"final_lp": [[120, -4]]}, {"lp_cap": 110}),
    ("life", {"path": [enums.PATH_DECK_OUT]}, {}),
    ("attack", {"uas_lost": [[0, 4]]}, {}),
    ("attack", {"path": [enums.PATH_ATTACK], "final_lp": [[57, 4]]}, {}),
    ("attack", {"uas_lost": [[3, 2]]}, {}),
    ("petition", {"path": [enums.PATH_PETITION], "final_lp": [[57, 4]]}, {}),
    ("petition", {"petitions": [[2, 0]]}, {}),
    ("petition", {"scroll_pillars": [[0, 2]]}, {}),
    ("masks", {"opening_mask": [[(1 << 7) - (1 << 1), sum(1 << s for s in range(10, 17))]]},
     {}),
    ("masks", {"drawn_mask": [[1 << 1, 0]]}, {}),
    ("played_unseen", {"played_mask": [[1 << 50, 1 << 11]]}, {}),
    ("p2_right", {"p2_right": [[True, False]]}, {}),
    ("p2_right", {}, {"p2_free_pillar": "off"}),
]


@pytest.mark.parametrize("check, change, rules", PLANTED,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(PLANTED)])
def test_a_planted_broken_record_is_caught_by_its_check(check, change, rules):
    fields = {**_clean_record(), **change}
    assert check in _failing(fields, **rules)


def test_the_checks_catch_a_broken_record_of_a_real_game():
    case = build_case(case_source(11), 11)
    seat_deck, deal, first = game_plan(11, len(case.decks), 3, 32)
    rec = play(case, seat_deck, deal, first, threads=1)
    batch = Batch(11, seat_deck, first, case.facts, case.profile.values)
    assert check_records(rec, batch)[0] == []
    rec.played_mask[4, 1] |= ~(rec.opening_mask[4, 1] | rec.drawn_mask[4, 1]) \
        & case.facts.non_ua[seat_deck[4, 1]]
    rec.winner_seat[9] = 3
    failures, _ = check_records(rec, batch)
    assert {(f.check, f.game) for f in failures} >= {("played_unseen", 4), ("winner", 9)}


def test_a_changed_replay_is_reported_as_nondeterminism():
    case = build_case(case_source(12), 12)
    seat_deck, deal, first = game_plan(12, len(case.decks), 2, 40)
    rec = play(case, seat_deck, deal, first, threads=2)
    idx = np.array([31, 2, 17])
    again = play(case, seat_deck[idx], deal[idx], first[idx], threads=1)
    batch = Batch(12, seat_deck, first, case.facts, case.profile.values)
    assert compare_records(rec, again, batch, idx)[0] == []
    again.turns[1] += 1
    failures, counts = compare_records(rec, again, batch, idx)
    assert [(f.category, f.game) for f in failures] == [("nondeterminism", 2)]
    assert "turns" in failures[0].detail


def test_play_case_reports_a_refused_input_as_rejected(monkeypatch):
    from rnr_sim.checks.fuzz import play as fuzz_play

    real = S.gen_catalog

    def nameless(*args, **kwargs):
        tables = real(*args, **kwargs)
        tables["cards"][0]["name"] = "# not nameable"
        return tables

    monkeypatch.setattr(fuzz_play.S, "gen_catalog", nameless)
    result = play_case(3, players=(2,), games=8)
    assert [(f.category, f.check, f.seed) for f in result.failures] == [
        ("rejected", "catalog", 3)]


# ----------------------------------------------------------------------- the command


def test_check_fuzz_command_prints_counts_and_exits_0_when_clean(capsys):
    code = main(["check", "fuzz", "--games", "96", "--case-games", "16", "--seed", "40",
                 "--no-progress", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["games"] == 96 and out["cases"] == 2 and out["clean"] is True
    assert out["games_by_players"] == {"2": 32, "3": 32, "4": 32}


def test_check_fuzz_command_exits_1_and_names_the_seed_on_a_failure(monkeypatch, capsys,
                                                                    tmp_path):
    from rnr_sim.checks.fuzz import check as fuzz_check

    real = fuzz_check.check_records

    def strict(rec, batch, limit=5):
        rec.violations[0] = 1  # a planted invariant break in every batch's first game
        return real(rec, batch, limit)

    monkeypatch.setattr("rnr_sim.checks.fuzz.play.check_records", strict)
    code = main(["check", "fuzz", "--games", "16", "--case-games", "16", "--players", "2",
                 "--seed", "77", "--no-progress", "--dump", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "invariant/invariants: 1 failing, seeds 77" in out
    replay = (tmp_path / "case-77" / "REPLAY.txt").read_text()
    assert "--seed 77 --game 0" in replay
    assert (tmp_path / "case-77" / "catalog.toml").exists()


@pytest.mark.parametrize("args", [["--players", "5"], ["--games", "0"], ["--seed", "-1"],
                                  ["--case-games", "0"]])
def test_check_fuzz_command_refuses_bad_options_with_exit_2(args, capsys):
    assert main(["check", "fuzz", "--no-progress", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1


def test_turn_limit_counts_rounds_at_three_and_four_players_under_r45():
    from rnr_sim.checks.fuzz.check import turn_limit

    scaled = {"turn_limit": 200, "turn_limit_scales": True}
    assert [turn_limit(scaled, p) for p in (2, 3, 4)] == [200, 300, 400]
    assert [turn_limit({"turn_limit": 200, "turn_limit_scales": False}, p)
            for p in (2, 3, 4)] == [200, 200, 200]


def test_a_traced_replay_that_differs_or_draws_a_ua_is_caught():
    from rnr_sim.checks.fuzz.check import trace_problems
    from rnr_sim.engine import driver
    from rnr_sim.engine import layout as L
    from rnr_sim.engine import trace as T

    case = build_case(case_source(13), 13)
    seat_deck, deal, first = game_plan(13, len(case.decks), 2, 8)
    rec = play(case, seat_deck, deal, first, threads=1)
    seats = seat_deck[5]
    trace, gm, pl = driver.trace_game(case.cards, case.deck_cards[seats],
                                      case.deck_size[seats], case.deck_policy[seats],
                                      case.rules, 13, deal=5, first_seat=int(first[5]))
    is_ua = np.array([c.type == "ua" for c in case.catalog.cards])
    assert trace_problems(rec, 5, trace, gm, pl, is_ua) == []
    gm = gm.copy()
    gm[L.G_TURN] += 1
    assert [c for c, what in trace_problems(rec, 5, trace, gm, pl, is_ua)
            if what.startswith("turns")] == ["trace"]
    drew = trace.copy()
    row = np.flatnonzero(drew[:, 1] == T.EV_DRAW)[0]
    drew[row, 3] = int(np.flatnonzero(is_ua)[0])
    problems = trace_problems(rec, 5, drew, gm, pl, is_ua)
    assert ("trace_ua" in {c for c, what in problems if "draws card" in what})
