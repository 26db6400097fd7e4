"""``rnr-sim replay`` (issue 3 item 3): one game decoded turn by turn.

The decoder is tested on a hand-made trace holding every event (no engine needed) and on
real traced games of the sample decks (the real engine only: the fake has no trace).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from fake_engine import REAL_ENGINE, SAMPLE_CATALOG, sample_decks
from typer.testing import CliRunner

from rnr_sim import enums
from rnr_sim.cards import load_catalog
from rnr_sim.cli import app
from rnr_sim.engine import layout
from rnr_sim.engine import trace as ev
from rnr_sim.replay import PATH_TITLES, STEP_NAMES, GameSetup, decode, outcome_line

pytestmark = pytest.mark.skipif(not SAMPLE_CATALOG.exists(),
                                reason="the sample catalog is not written yet")
needs_engine = pytest.mark.skipif(not REAL_ENGINE, reason="needs the real engine (the trace)")

DECKS = ["scroll_assembly.txt", "bison_stampede.txt"]
SEED = 4242
RAW_NUMBERS = re.compile(r"\b(event|code|card|id|slot|step|verb|path|rule) ?#?-?\d+\b", re.I)


def deck_paths(names=DECKS):
    by_name = {p.name: p for p in sample_decks()}
    if not all(n in by_name for n in names):
        pytest.skip("the sample decks are not written yet")
    return [by_name[n] for n in names]


def invoke(*args):
    result = CliRunner().invoke(app, [str(a) for a in args], prog_name="rnr-sim")
    assert "Traceback" not in result.output
    return result


def turn_headers(lines):
    """(turn number, seat) of every ``Turn N — Seat S (...)`` header, in order."""
    out = []
    for line in lines:
        m = re.match(r"Turn (\d+) — Seat (\d+) \(", line)
        if m:
            out.append((int(m.group(1)), int(m.group(2))))
    return out


# ---------------------------------------------------------------------------- pure decoding


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(None)


def card(catalog, name):
    return catalog.lookup(name)


def handmade(catalog):
    """A short two-player game touching every event code, with its gm and pl."""
    c = {n: card(catalog, n) for n in (
        "Gag Rule", "Stamp Act", "Minuteman Volley", "Town Meeting Hall",
        "Pitchfork Uprising", "Writ of Habeas Corpus", "Voting Rights Act", "Magna Carta",
        "Sojourner Truth", "Meetinghouse Sanctuary")}
    assert all(v is not None for v in c.values()), c
    rows = [
        [-1, ev.EV_MULLIGAN, 0, 1, 3, 0, 0, 0],
        [-1, ev.EV_P2_RIGHT, 1, c["Town Meeting Hall"], 0, 0, 0, 0],
        [0, ev.EV_TURN, 0, 100, 7, 50, 3, 0],
        [0, ev.EV_DRAW, 0, c["Minuteman Volley"], 49, 0, 0, 0],
        [0, ev.EV_IP, 0, 5, -1, 4, 1, 0],
        [0, ev.EV_PLAY, 0, c["Minuteman Volley"], 3, 0, 1, 0],
        [0, ev.EV_AOA, 0, c["Minuteman Volley"], 1, c["Pitchfork Uprising"], 0, 0],
        [0, ev.EV_PLAY, 0, c["Sojourner Truth"], 4, 1, -1, 0],
        [0, ev.EV_ACTIVATE, 0, c["Writ of Habeas Corpus"], 0, 1, 0, 0],
        [0, ev.EV_IP, 0, 2, c["Sojourner Truth"], 0, 0, 0],
        [0, ev.EV_RESOLVE_STEP, 0, 2, 0, 0, 0, 0],
        [0, ev.EV_AOA_RESULT, 0, c["Minuteman Volley"], 1, c["Pitchfork Uprising"], 10, 3],
        [0, ev.EV_DESTROY, 1, c["Pitchfork Uprising"], 0, 0, 0, 0],
        [0, ev.EV_RESOLVE_STEP, 0, 3, 0, 0, 0, 0],
        [0, ev.EV_DAMAGE, 0, c["Minuteman Volley"], 1, c["Stamp Act"], 7, 19],
        [0, ev.EV_LP, 1, -3, 97, enums.V_LP, c["Minuteman Volley"], 0],
        [0, ev.EV_RESOLVE_STEP, 0, 4, 0, 0, 0, 0],
        [0, ev.EV_LP, 0, 5, 105, enums.V_HEAL, c["Sojourner Truth"], 0],
        [0, ev.EV_RESOLVE_STEP, 0, 6, 0, 0, 0, 0],
        [0, ev.EV_MILL, 1, 2, 46, 1, c["Sojourner Truth"], 0],
        [0, ev.EV_EXILE, 1, 1, 45, 0, c["Sojourner Truth"], 0],
        [0, ev.EV_DISCARD, 1, c["Magna Carta"], c["Sojourner Truth"], 0, 0, 0],
        [0, ev.EV_REPAIR, 0, c["Writ of Habeas Corpus"], 2, 18, c["Sojourner Truth"], 0],
        [0, ev.EV_RECOVER, 0, c["Pitchfork Uprising"], c["Sojourner Truth"], 0, 0, 0],
        [0, ev.EV_TUTOR, 0, c["Town Meeting Hall"], c["Sojourner Truth"], 0, 0, 0],
        [0, ev.EV_DRAW, 0, c["Magna Carta"], 47, 0, 0, 0],
        [0, ev.EV_PETITION_LOST, 1, c["Magna Carta"], 0, 0, 0, 0],
        [0, ev.EV_RETURN, 0, c["Voting Rights Act"], 0, 0, 0, 0],
        [0, ev.EV_RESOLVE_STEP, 0, 7, 0, 0, 0, 0],
        [0, ev.EV_DRAIN, 0, c["Gag Rule"], 0, 1, 104, 0],
        [0, ev.EV_HAND_LIMIT, 0, c["Magna Carta"], 0, 0, 0, 0],
        [0, ev.EV_TURN_END, 0, 104, 7, 47, 6, 0],
        [1, ev.EV_TURN, 1, 97, 7, 45, 4, 0],
        [1, ev.EV_DRAW, 1, c["Stamp Act"], 44, 0, 0, 0],
        [1, ev.EV_IP, 1, 1, -1, 1, 0, 0],
        [1, ev.EV_RESOLVE_STEP, 1, 2, 0, 0, 0, 0],
        [1, ev.EV_RESOLVE_STEP, 1, 3, 0, 0, 0, 0],
        [1, ev.EV_DESTROY, 0, c["Meetinghouse Sanctuary"], 1, 0, 0, 0],
        [1, ev.EV_LP, 0, 3, 107, enums.V_HEAL, c["Meetinghouse Sanctuary"], 0],
        [1, ev.EV_DAMAGE, 1, c["Pitchfork Uprising"], 0, c["Gag Rule"], 30, 0],
        [1, ev.EV_DESTROY, 0, c["Gag Rule"], 1, 0, 0, 0],
        [1, ev.EV_DESTROY, 1, c["Pitchfork Uprising"], -1, 0, 0, 0],
        [1, ev.EV_ELIMINATED, 0, enums.PATH_ATTACK, layout.RULE_THIRD_UA, 0, 0, 0],
        [1, ev.EV_VICTORY, 1, enums.PATH_ATTACK, layout.RULE_THIRD_UA, 0, 0, 0],
    ]
    trace = np.array(rows, dtype=np.int32)
    gm = np.zeros(layout.N_GAME_FIELDS, dtype=np.int64)
    gm[layout.G_N_PLAYERS] = 2
    gm[layout.G_FIRST] = 0
    gm[layout.G_OVER] = 1
    gm[layout.G_WINNER] = 1
    gm[layout.G_PATH] = enums.PATH_ATTACK
    gm[layout.G_RULE] = layout.RULE_THIRD_UA
    gm[layout.G_TURN] = 2
    gm[layout.G_N_TRACE] = len(rows)
    pl = np.zeros((enums.MAX_PLAYERS, layout.N_PLAYER_FIELDS), dtype=np.int32)
    pl[:2, layout.P_LP] = (104, 97)
    pl[:2, layout.P_N_UAS] = 3
    pl[0, layout.P_UAS_LOST] = 3
    return trace, gm, pl


def test_decode_names_every_event_in_plain_words(catalog):
    trace, gm, pl = handmade(catalog)
    uas = [[card(catalog, "Gag Rule"), card(catalog, "Town Meeting Hall")],
           [card(catalog, "Stamp Act")]]
    setup = GameSetup(decks=["Alpha", "Beta"], policies=["balanced", "aggro"], seed=7,
                      deal=3, rules_name="variant", rules_changed={"aoa": True,
                                                                    "turn_limit": 50},
                      deck_cards=uas)
    lines = decode(trace, gm, pl, catalog, setup)
    text = "\n".join(lines)
    assert "does not know" not in text and "unknown card" not in text
    assert not RAW_NUMBERS.search(text), RAW_NUMBERS.search(text)
    assert "Seat 0: Alpha, policy balanced — goes first" in text
    assert "Rules: variant (changed: aoa = true, turn_limit = 50)" in text
    assert "Seat 0 mulligans a hand with 1 Pillar; the new hand has 3 Pillars" in text
    assert "Seat 1 uses the Player 2 right: plays Town Meeting Hall" in text
    assert turn_headers(lines) == [(1, 0), (2, 1)]
    assert ("Turn 1 — Seat 0 (Alpha): LP 100, IP 5 (4 Pillar + 1 other), hand 7, "
            "draw pile 50, in play 3") in lines
    assert "  Draws Minuteman Volley (draw pile 49)." in lines
    assert "  Plays Minuteman Volley [Attack] for 3 IP, including +1 IP for " \
           "Attack-on-Attack." in lines
    assert "Minuteman Volley declares Attack-on-Attack on Seat 1's Pitchfork Uprising" in text
    assert "kicker paid (+1 IP: recover 1)" in text
    for step in (2, 3, 4, 6, 7, 9):
        assert f"  Resolve step {STEP_NAMES[step]}:" in lines
    assert "Minuteman Volley (10 damage) fights Seat 1's Pitchfork Uprising (3 damage): " \
           "Minuteman Volley survives with 7 damage left." in text
    assert "Minuteman Volley hits Seat 1's Stamp Act [UA] for 7 (DP 26 → 19)." in text
    assert "Seat 1 loses 3 LP to Minuteman Volley (LP 100 → 97)." in text
    assert "Seat 0 gains 5 LP from Sojourner Truth (LP 100 → 105)." in text
    assert "Sojourner Truth: the top 2 cards of Seat 1's Draw Pile are milled to the Discard " \
           "Pile; 1 Protect card stays on top (Amend. III) (draw pile 46)." in text
    assert "Sojourner Truth: the top card of Seat 1's Draw Pile is exiled, out of the game " \
           "(draw pile 45)." in text
    assert "Sojourner Truth: Seat 1 discards Magna Carta from hand, at random." in text
    assert "Sojourner Truth: repairs Writ of Habeas Corpus by 2 (DP 16 → 18)." in text
    assert "Sojourner Truth: returns Pitchfork Uprising from the Discard Pile to hand." in text
    assert "Sojourner Truth: takes Town Meeting Hall [Pillar] from the Draw Pile" in text
    assert "Seat 1's Magna Carta [Petition] is destroyed by Seat 0." in text
    assert "Voting Rights Act [Bill] returns to Seat 0's hand" in text
    assert "Gag Rule drains 1 LP from Seat 0, its controller (LP 105 → 104)." in text
    assert "Discards Magna Carta to the hand limit of 7." in text
    assert "Seat 0's UAs: Gag Rule (DP 18, drain 1)" in text
    assert "Seat 0 gains 3 LP from Seat 0's Meetinghouse Sanctuary (on destroy) " \
           "(LP 104 → 107)." in text
    # An overkill: the event says 0 DP left; the log knows Gag Rule had 18.
    assert "Pitchfork Uprising hits Seat 0's Gag Rule [UA] for 30 (DP 18 → 0)." in text
    assert "Seat 0's Gag Rule [UA] is destroyed — Seat 0 has lost 1 of its 1 UAs." in text
    assert "Pitchfork Uprising has struck once and is discarded (one-shot)." in text
    assert "Seat 0 is out of the game: Art. III §2" in text
    assert lines[lines.index("Final state:") - 1] == (
        "Winner: Seat 1 (Beta) by Attack Victory on turn 2 — Art. III §2: the third "
        "Unconstitutional Act was destroyed")


def test_decode_an_unknown_event_says_so_without_failing(catalog):
    trace, gm, pl = handmade(catalog)
    odd = np.vstack([trace[:3], np.array([[0, 99, 0, 0, 0, 0, 0, 0]], dtype=np.int32),
                     trace[3:]])
    text = "\n".join(decode(odd, gm, pl, catalog, ["A", "B"]))
    assert "An engine event this log does not know yet (code 99" in text


def test_outcome_line_of_a_draw():
    gm = np.zeros(layout.N_GAME_FIELDS, dtype=np.int64)
    gm[layout.G_WINNER] = -1
    gm[layout.G_PATH] = enums.PATH_DRAW
    gm[layout.G_RULE] = layout.RULE_TURN_LIMIT
    gm[layout.G_TURN] = 200
    assert outcome_line(gm, ["A", "B"]) == (
        "Draw: no winner after 200 turns — R15: the turn limit was reached")


# ---------------------------------------------------------------------------- real games


@pytest.fixture(scope="module")
def replayed():
    if not REAL_ENGINE:
        pytest.skip("needs the real engine (the trace)")
    from rnr_sim.replay import replay_game

    return replay_game(deck_paths(), seed=SEED, game=3)


@needs_engine
def test_a_real_game_reads_turn_by_turn(replayed, catalog):
    lines = replayed.lines
    text = "\n".join(lines)
    gm = replayed.gm
    turns = int(gm[layout.G_TURN])
    first = 3 % 2
    assert replayed.setup.first_seat == first
    assert f"Seat {first}: " in text and "goes first" in text
    # Every turn header, in order, the seats taking turns.
    headers = turn_headers(lines)
    assert [t for t, _ in headers] == list(range(1, turns + 1))
    assert [s for _, s in headers] == [(first + t - 1) % 2 for t, _ in headers]
    # The outcome names the winner and the path.
    winner, path = int(gm[layout.G_WINNER]), int(gm[layout.G_PATH])
    if winner >= 0:
        deck = replayed.setup.decks[winner]
        assert f"Winner: Seat {winner} ({deck}) by {PATH_TITLES[path]} on turn {turns} — " \
               f"{layout.RULE_TEXT[int(gm[layout.G_RULE])]}" in lines
    else:
        assert any(line.startswith("Draw: no winner") for line in lines)
    # Card names, never raw ids or event codes.
    played_cards = {int(r[3]) for r in replayed.trace if r[1] == ev.EV_PLAY}
    assert played_cards
    for c in played_cards:
        assert catalog.cards[c].name in text
    assert not RAW_NUMBERS.search(text), RAW_NUMBERS.search(text)
    assert "does not know" not in text and "unknown card" not in text
    assert "Resolve step" in text and "Draws " in text and "Plays " in text


@needs_engine
def test_replay_is_deterministic(replayed):
    from rnr_sim.replay import replay_game

    again = replay_game(deck_paths(), seed=SEED, game=3)
    assert again.lines == replayed.lines
    other = replay_game(deck_paths(), seed=SEED + 1, game=3)
    assert other.lines != replayed.lines


@needs_engine
def test_the_traced_game_is_the_game_a_run_plays():
    """Bulk records (trace off) and traced games agree for the same (seed, table 0, deal,
    first seat)."""
    from rnr_sim.decks import load_deck
    from rnr_sim.engine import driver
    from rnr_sim.replay import replay_game
    from rnr_sim.rules import default_profile

    paths = deck_paths()
    games = list(range(6))
    traced = [replay_game(paths, seed=SEED, game=k) for k in games]
    catalog = load_catalog(None)
    decks = [load_deck(p, catalog) for p in paths]
    deck_cards = np.full((2, enums.MAX_SLOTS), -1, dtype=np.int32)
    for q, d in enumerate(decks):
        deck_cards[q, : len(d.card_ids)] = d.card_ids
    deck_size = np.array([len(d.card_ids) for d in decks], dtype=np.int32)
    from rnr_sim.pilots import policy_rows, resolve_policies

    _names, table, index = policy_rows(resolve_policies(decks, None))  # the decks' pilots
    policy = [index[r] for r in resolve_policies(decks, None)]
    n = len(games)
    rec = driver.play_games(
        catalog.compile(), deck_cards, deck_size, np.tile([0, 1], (n, 1)).astype(np.int32),
        np.tile(policy, (n, 1)).astype(np.int32), np.zeros(n, dtype=np.int64),
        np.array(games, dtype=np.int64), np.array([k % 2 for k in games], dtype=np.int32),
        default_profile().compile(), SEED, policies=table)
    for i, t in enumerate(traced):
        assert int(rec.winner_seat[i]) == t.winner
        assert enums.PATHS[int(rec.path[i])] == t.path
        assert int(rec.turns[i]) == t.turns
        assert sum(1 for _ in turn_headers(t.lines)) == t.turns


@needs_engine
def test_replay_command_prints_the_game(tmp_path):
    paths = deck_paths()
    result = invoke("replay", *paths, "--seed", SEED, "--game", 1)
    assert result.exit_code == 0, result.output
    assert "Turn 1 — Seat 1 (" in result.output
    assert re.search(r"^(Winner: Seat \d|Draw: no winner)", result.output, re.M)


@needs_engine
def test_replay_of_three_players(tmp_path):
    from rnr_sim.replay import replay_game

    paths = sample_decks()[:3]
    if len(paths) < 3:
        pytest.skip("needs three sample decks")
    r = replay_game(paths, seed=SEED, game=2)
    headers = turn_headers(r.lines)
    assert headers[0][1] == 2
    assert [t for t, _ in headers] == list(range(1, r.turns + 1))


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("count, message", [(1, "replay needs 2 to 4 deck lists"),
                                            (5, "replay plays 2 to 4 seats; got 5")])
def test_replay_needs_two_to_four_decks(count, message):
    paths = (sample_decks() * 5)[:count]
    if not paths:
        pytest.skip("no sample decks")
    result = invoke("replay", *paths)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_replay_bad_deck_and_policy_are_one_line_errors(tmp_path, write):
    paths = deck_paths()
    result = invoke("replay", paths[0], tmp_path / "missing.txt")
    assert result.exit_code == 2
    assert "no such deck list" in result.stderr
    bad = write("bad.txt", "Name: Bad\n4 Minuteman Voley\n")
    result = invoke("replay", paths[0], bad)
    assert result.exit_code == 2 and "Minuteman Volley" in result.stderr
    result = invoke("replay", *paths, "--policy", "greedy")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("--policy: unknown policy 'greedy'; valid policies: "
                                     "balanced, aggro, mill, breaker, petition, random, "
                                     "or a policy file ending in .toml")
    result = invoke("replay", *paths, "--game", "-1")
    assert result.exit_code == 2 and "--game" in result.stderr


@needs_engine
def test_replay_with_a_rules_variant_names_it_and_ends_in_a_draw(write):
    from rnr_sim.replay import replay_game

    rules = write("short.toml", 'turn_limit = 4\np2_free_pillar = "off"\n')
    r = replay_game(deck_paths(), seed=SEED, game=0, rules=rules)
    assert "  Rules: short (changed: p2_free_pillar = off, turn_limit = 4)" in r.lines
    assert "  The Player 2 right is switched off (p2_free_pillar = off)." in r.lines
    assert [t for t, _ in turn_headers(r.lines)] == [1, 2, 3, 4]
    assert "Draw: no winner after 4 turns — R15: the turn limit was reached" in r.lines
    assert r.winner == -1 and r.path == "draw"


@needs_engine
def test_replay_shows_the_options_a_search_seat_weighed(search_trace_compiled):
    """Issue: ``replay`` shows a search pilot's choices with the value of each option it
    weighed: one line an option, the chosen one marked, and its header names the seat's
    search pilot."""
    paths = deck_paths()
    result = invoke("replay", *paths, "--seed", SEED, "--game", 1, "--search-seat", 0,
                    "--rollouts", 2, "--determinizations", 1)
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stdout.splitlines() if "search weighs:" in ln.lower()]
    assert lines and any("<- chosen" in ln for ln in lines)
    assert all("playouts" in ln for ln in lines)
    assert "policy search (K=2, N=1" in result.stdout
    bad = invoke("replay", *paths, "--search-seat", 5)
    assert bad.exit_code == 2 and "--search-seat must be a seat 0..1" in bad.output


# ---------------------------------------------------------------------------- hands (issue 40)
def test_decode_keeps_each_hand_from_the_opening_and_every_move(catalog):
    """The hand a seat decides from: its opening hand, plus what it draws, recovers, tutors
    and gets back (a Bill), less what it plays, discards and gives to the P2 right; shown
    once at its first decision of a turn, by Order, in card names."""
    c = {n: card(catalog, n) for n in ("Town Meeting Hall", "Minuteman Volley", "Magna Carta",
                                       "Voting Rights Act", "Stamp Act")}
    def row(turn, event, seat, *fields):  # a trace row, its unused fields 0
        return [turn, event, seat, *fields, *[0] * (5 - len(fields))]

    rows = [row(-1, ev.EV_P2_RIGHT, 1, c["Town Meeting Hall"]),
            row(0, ev.EV_TURN, 0, 100, 2, 50, 3), row(0, ev.EV_DRAW, 0, c["Magna Carta"], 49),
            row(0, ev.EV_IP, 0, 3, -1, 3, 0), row(0, ev.EV_PLAY, 0, c["Minuteman Volley"], 3,
                                                  0, -1),
            row(0, ev.EV_RESOLVE_STEP, 0, 6), row(0, ev.EV_RETURN, 0, c["Voting Rights Act"]),
            row(0, ev.EV_TURN_END, 0, 100, 3, 49, 4),
            row(1, ev.EV_TURN, 1, 100, 1, 50, 4), row(1, ev.EV_DRAW, 1, c["Stamp Act"], 49),
            row(1, ev.EV_IP, 1, 1, -1, 1, 0), row(1, ev.EV_RESOLVE_STEP, 1, 7),
            row(1, ev.EV_TURN_END, 1, 100, 2, 49, 4)]
    gm = np.zeros(layout.N_GAME_FIELDS, dtype=np.int64)
    gm[layout.G_N_PLAYERS], gm[layout.G_WINNER], gm[layout.G_PATH] = 2, -1, enums.PATH_DRAW
    pl = np.zeros((enums.MAX_PLAYERS, layout.N_PLAYER_FIELDS), dtype=np.int32)
    setup = GameSetup(decks=["A", "B"], first_seat=0,
                      opening=[[c["Minuteman Volley"], c["Voting Rights Act"]],
                               [c["Town Meeting Hall"], c["Magna Carta"]]])
    lines = decode(np.array(rows, dtype=np.int32), gm, pl, catalog, setup)
    text = "\n".join(lines)
    assert ("    Opening hand (2) — Attack: Minuteman Volley; Bill: Voting Rights Act."
            in lines)
    assert "    Opening hand (2) — Pillar: Town Meeting Hall; Rights: Magna Carta." in lines
    # seat 0 decides from its opening hand and its draw, before its play
    hand0 = "  Hand (3) — Rights: Magna Carta; Attack: Minuteman Volley; Bill: Voting Rights Act."
    assert hand0 in lines
    assert lines.index(hand0) < next(i for i, ln in enumerate(lines) if "Plays Minuteman" in ln)
    # seat 1 gave Town Meeting Hall to the P2 right and plays nothing: its kept hand
    assert "  Hand (2) — Rights: Magna Carta; UA: Stamp Act, none played." in lines
    assert "disagree" not in text  # the turn-end hand sizes are the ones kept


PLAYS = r"  (?:Seat \d+ )?[Pp]lays (.+?) \["
WEIGHS = r"  Search weighs: play (.+?)(?: with its kicker)?: "


def _hands_before_plays(lines: list[str], card: str = PLAYS) -> list[tuple[str, str]]:
    """(card, the hand shown last before it in its turn) of every line ``card`` matches
    (group 1: the card's name): a play, or an option a search weighs."""
    out, shown = [], ""
    for line in lines:
        if line.startswith("Turn "):
            shown = ""
        elif line.startswith("  Hand ("):
            shown = line
        m = re.match(card, line)
        if m:
            out.append((m.group(1), shown))
    return out


@needs_engine
def test_every_play_comes_from_the_hand_shown(tmp_path):
    """Real games, every seat by its pilot: each seat's opening hand is shown, each card
    played is in the hand shown before it that turn, and the hands kept always agree with
    the engine's hand count (no 'disagree' note)."""
    from rnr_sim.replay import replay_game

    pairs = [DECKS, ["eagle_blockade.txt", "abolitionist_front.txt"]]
    for names in pairs:
        for game in range(3):
            r = replay_game(deck_paths(names), seed=SEED, game=game)
            text = "\n".join(r.lines)
            assert text.count("    Opening hand (") == 2
            assert "disagree" not in text
            plays = _hands_before_plays(r.lines)
            assert plays
            for played, hand in plays:
                assert played in hand, (played, hand)


@needs_engine
def test_a_search_seat_shows_the_hand_of_each_decision(search_trace_compiled):
    """With a search seat, the hand shown last before each decision (again whenever it
    changed) holds every card the search weighs playing, and the hands still agree with
    the engine's count."""
    paths = deck_paths()
    result = invoke("replay", *paths, "--seed", SEED, "--game", 1, "--search-seat", 0,
                    "--rollouts", 2, "--determinizations", 1)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "disagree" not in result.stdout
    weighed = _hands_before_plays(lines, WEIGHS)
    assert weighed
    for played, hand in weighed + _hands_before_plays(lines):
        assert played in hand, (played, hand)
