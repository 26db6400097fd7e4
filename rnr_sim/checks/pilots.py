"""A pilot's choices checked on replays, as a good player would check them.

``audit_games`` plays traced games (the same games ``rnr-sim replay`` shows) of every
pairing of the given decks and reads each trace for the plays a good player would not
make, and for the trades and holds the pilots make now. Each finding is a pure function
of the trace and the card table, counted per seat-game:

- ``repair restored nothing``: a played or activated ``repair`` effect with no repair event
  from that card in that turn (nothing of its controller's was damaged);
- ``recover found nothing``: the same for ``recover`` (an empty Discard Pile, or only UAs,
  R44);
- ``IP gained and lost``: IP a card gave in the Play Phase (R32) beyond what its
  controller spent in the rest of that turn (Art. II §2: unspent IP is lost);
- ``cards forced into a deep pile``: cards a played ``force draw`` hands an opponent whose
  Draw Pile (the thinnest, R37) still holds ``DEEP_PILE`` or more after it (a gift of
  cards for a pile nowhere near empty);

and, as counts of what the pilots do rather than faults: Attack-on-Attack fights won,
even and blocking (our Attack the smaller); Player 2 free Pillars that had an on-resolve
effect (lost, R41: a fault only if a plain Pillar was in hand, which the trace does not
show; the scenario tests check that choice); the most Pillars a seat had in play.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import permutations
from pathlib import Path

import numpy as np

from rnr_sim import enums
from rnr_sim.engine import trace as ev

#: A Draw Pile this deep after a forced draw is nowhere near a deck-out.
DEEP_PILE = 30

FAULTS = ("repair restored nothing", "recover found nothing", "IP gained and lost",
          "cards forced into a deep pile")
COUNTS = ("AoA won", "AoA even trade", "AoA block", "P2 right placed an effect Pillar",
          "most Pillars in play")


@dataclass
class Audit:
    """Counts over ``games`` games (``seat_games`` seat-games) of each finding, by deck
    (a forced draw is charged to the deck that forced it); ``most Pillars in play`` is a
    sum over seat-games (divide by ``seat_games``)."""

    games: int = 0
    seat_games: int = 0
    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAULTS, 0))
    counts: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    by_deck: dict[str, dict[str, int]] = field(default_factory=dict)
    #: fault -> (deck files, deal, turn, card) of the first few seen, to replay
    examples: dict[str, list[tuple]] = field(default_factory=dict)

    def to_json(self) -> dict:
        per100 = {k: round(100 * v / max(self.games, 1), 2) for k, v in self.faults.items()}
        return {"games": self.games, "faults": self.faults, "faults_per_100_games": per100,
                "counts": self.counts, "by_deck": self.by_deck,
                "examples": {k: [{"replay": f"rnr-sim replay {a} {b} --game {g}",
                                  "turn": t, "card": c} for a, b, g, t, c in v]
                             for k, v in self.examples.items()}}


def _effects(cards: np.ndarray, c: int) -> list[tuple[int, int, int, int]]:
    """(trigger, verb, amount, kicker) of card ``c``'s effects."""
    out = []
    for e in range(enums.MAX_EFFECTS):
        base = enums.C_EFF0 + e * enums.EFF_STRIDE
        verb = int(cards[c, base + enums.E_VERB])
        if verb != enums.V_NONE:
            out.append((int(cards[c, base + enums.E_TRIGGER]), verb,
                        int(cards[c, base + enums.E_AMOUNT]),
                        int(cards[c, base + enums.E_KICKER])))
    return out


def audit_trace(trace: np.ndarray, cards: np.ndarray, deck_of_seat: Sequence[str],
                audit: Audit, where: tuple = ()) -> None:
    """Add one game's findings (``trace``: rows ``turn, event, seat, a..e``) to ``audit``;
    a fault is charged to the deck of the seat that made the play."""
    n = len(deck_of_seat)
    faults_seat = [dict.fromkeys(FAULTS, 0) for _ in range(n)]
    pile = [0] * n  # each seat's Draw Pile, as the trace reports it
    pillars = [0] * n
    most = [0] * n
    active = -1
    waiting: dict[tuple[int, int], int] = {}  # (seat, source card) -> repair/recover verb
    gained = 0  # IP from cards this turn, and what was spent after the first of it
    spent_after = 0

    turn = 0

    def fault(q: int, key: str, n: int, card: int) -> None:
        faults_seat[q][key] += n
        seen = audit.examples.setdefault(key, [])
        if len(seen) < 3:
            seen.append((*where, turn + 1, card))

    def close_turn(finished: bool) -> None:
        """End of a turn: what waited and never came counts only if the turn was played
        out (a game won at step iii never reaches step vi)."""
        nonlocal gained, spent_after
        for (q, c), verb in (waiting.items() if finished else ()):
            fault(q, "repair restored nothing" if verb == enums.V_REPAIR
                  else "recover found nothing", 1, c)
        waiting.clear()
        if finished and active >= 0 and gained > spent_after:
            fault(active, "IP gained and lost", gained - spent_after, -1)
        gained = spent_after = 0

    for row in trace:
        kind, q = int(row[1]), int(row[2])
        a, b, c, d = (int(x) for x in row[3:7])
        if kind == ev.EV_TURN:
            close_turn(False)
            active = q
            turn = int(row[0])
            pile[q] = c
        elif kind == ev.EV_TURN_END:
            close_turn(True)
        elif kind in (ev.EV_DRAW, ev.EV_MILL, ev.EV_EXILE):
            pile[q] = b
        elif kind == ev.EV_PLAY:
            if gained:
                spent_after += b
            forced = sum(amt for trig, verb, amt, kicker in _effects(cards, a)
                         if verb == enums.V_FORCE_DRAW and trig == enums.TRIG_ON_RESOLVE
                         and (kicker == 0 or c != 0))
            thinnest = min((pile[o] for o in range(n) if o != q), default=0)  # R37
            if forced and thinnest - forced >= DEEP_PILE:
                fault(q, "cards forced into a deep pile", forced, a)
            if cards[a, enums.C_TYPE] == enums.PILLAR:
                pillars[q] += 1
                most[q] = max(most[q], pillars[q])
            for trig, verb, _amt, kicker in _effects(cards, a):
                if trig == enums.TRIG_ON_RESOLVE and (kicker == 0 or c != 0) and \
                        verb in (enums.V_REPAIR, enums.V_RECOVER):
                    waiting[(q, a)] = verb
        elif kind == ev.EV_ACTIVATE:
            if gained:
                spent_after += c
            effects = _effects(cards, a)
            slot_verb = int(cards[a, enums.C_EFF0 + b * enums.EFF_STRIDE + enums.E_VERB])
            if slot_verb in (enums.V_REPAIR, enums.V_RECOVER) and effects:
                waiting[(q, a)] = slot_verb
        elif kind in (ev.EV_REPAIR, ev.EV_RECOVER):
            src = d if kind == ev.EV_REPAIR else b
            waiting.pop((q, src), None)
        elif kind == ev.EV_IP and b >= 0 and q == active:
            gained += a
        elif kind == ev.EV_P2_RIGHT:
            pillars[q] += 1
            most[q] = max(most[q], pillars[q])
            if any(t == enums.TRIG_ON_RESOLVE for t, *_ in _effects(cards, a)):
                audit.counts["P2 right placed an effect Pillar"] += 1
        elif kind == ev.EV_DESTROY and a >= 0 and cards[a, enums.C_TYPE] == enums.PILLAR:
            pillars[q] -= 1
        elif kind == ev.EV_AOA_RESULT:  # (card, target seat, target card, ours, theirs)
            ours, theirs = d, int(row[7])
            key = "AoA won" if ours > theirs else "AoA even trade" if ours == theirs else \
                "AoA block"
            audit.counts[key] += 1
    close_turn(False)
    audit.games += 1
    audit.seat_games += n
    for q in range(n):
        deck = audit.by_deck.setdefault(deck_of_seat[q], dict.fromkeys(FAULTS, 0))
        for key, v in faults_seat[q].items():
            audit.faults[key] += v
            deck[key] += v
        audit.counts["most Pillars in play"] += most[q]


def audit_games(decks: Sequence[str | Path], games: int = 20, seed: int | None = None,
                cards: str | Path | None = None, rules: str | Path | None = None,
                policy: str | None = None) -> Audit:
    """Play ``games`` traced games of every ordered pairing of ``decks`` (deal k, first
    seat k mod 2, as ``rnr-sim replay --game k``) and audit them."""
    from rnr_sim.engine import driver
    from rnr_sim.pilots import policy_rows
    from rnr_sim.replay import load_inputs
    from rnr_sim.runs.planning import DEFAULT_SEED

    seed = DEFAULT_SEED if seed is None else seed
    audit = Audit()
    for i, j in permutations(range(len(decks)), 2):
        catalog, pair, profile, policies = load_inputs([decks[i], decks[j]], cards, rules,
                                                       policy)
        table_cards = catalog.compile()
        prof = profile.compile()
        _names, table, index = policy_rows(policies)
        deck_cards = np.full((2, enums.MAX_SLOTS), -1, dtype=np.int32)
        deck_size = np.zeros(2, dtype=np.int32)
        for q, deck in enumerate(pair):
            deck_cards[q, : len(deck.card_ids)] = deck.card_ids
            deck_size[q] = len(deck.card_ids)
        seat_policy = np.array([index[p] for p in policies], dtype=np.int32)
        for k in range(games):
            trace, _gm, _pl = driver.trace_game(table_cards, deck_cards, deck_size,
                                                seat_policy, prof, seed, table_id=0,
                                                deal=k, first_seat=k % 2, policies=table)
            audit_trace(trace, table_cards, [d.name for d in pair], audit,
                        where=(str(decks[i]), str(decks[j]), k))
    return audit
