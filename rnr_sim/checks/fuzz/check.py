"""Checks of game records: what every game's record must satisfy, whatever the cards.

``check_records`` reads the engine's ``GameRecords`` of a batch (``engine/driver.py``)
with what the fuzzer knows of each game (its seats' decks, the rules profile) and returns
one ``Failure`` per broken check and game. ``compare_records`` checks determinism: the
same games played in another batch must give byte-identical records.

The checks (their names are the ``check`` field of a failure):

- ``invariants``: the engine's own debug checks (``check_invariants``, the policy's noted
  values) counted no violation.
- ``winner``: the winner is a seat, or -1 exactly when the path is ``draw``; the path is
  one of ``enums.PATHS``.
- ``turns``: at least one turn, at most the turn limit; a draw comes exactly at the limit
  (R15: turns of all seats; under R45 ``turn_limit x players / 2``).
- ``life``: the path is ``life`` when, and only when, a player's LP reached 0: at 2
  players the loser's LP is <= 0 after a ``life`` win and every LP is > 0 after any other
  end; at 3-4 a ``life`` win leaves a loser at <= 0 LP; a winner by another path has LP
  > 0. LP never falls further than one blow below 0 (one effect or one drain step, at
  most 12 x ``MAX_NUMBER``: a wrap-around of int32 LP fails here) and never rises above
  the cap (R14) when there is one.
- ``attack``: UAs lost are 0..3; an ``attack`` win leaves a loser with 3 UAs lost, and a
  winner never lost 3; at 2 players no other end leaves 3 lost.
- ``petition``: a ``petition`` winner holds 3 Petitions, 3 Scroll Pillars and 20+ LP
  (Art. III §3); no seat holds more Petitions or Scroll Pillars than it played.
- ``masks``: the opening hand is 7 cards of the deck (Art. VII §1.4); the masks name
  only the seat's own non-UA slots.
- ``played_unseen``: every card played was seen, in the opening hand or drawn (any
  route into the hand counts as drawn: draw, recover, tutor).
- ``p2_right``: only the second seat takes the Player 2 Pillar right, never when the
  switch is ``off``, and its Pillar is recorded as played.
- ``replay`` (``compare_records``): the same games replayed in another batch give
  byte-identical records.
- ``trace`` and ``trace_ua`` (``trace_problems``): a game played alone with its event
  trace on (as ``rnr-sim replay`` plays it) ends as in the batch, and its trace never
  draws or plays a UA.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rnr_sim import enums
from rnr_sim.cards.grammar import MAX_NUMBER

#: How far below 0 one blow can take LP: one ``lp N`` effect, or one drain step of at
#: most 4 players x 3 UAs of ``MAX_NUMBER`` drain each.
MAX_BLOW = 12 * MAX_NUMBER
STARTING_LP = 100  # Art. II §1
OPENING_HAND = 7  # Art. VII §1.4
N_UAS = 3
PETITION_MIN_LP = 20  # Art. III §3
CATEGORIES = ("crash", "rejected", "invariant", "record", "nondeterminism")


@dataclass(frozen=True)
class Failure:
    """One broken check. ``category``: ``crash`` (an exception), ``rejected`` (a reader
    refused a generated input the contracts allow), ``invariant``, ``record``,
    ``nondeterminism``; ``check`` names the check; ``seed`` the case that reproduces it;
    ``players`` and ``game`` the game (-1: not a game's failure)."""

    category: str
    check: str
    seed: int
    players: int = 0
    game: int = -1
    detail: str = ""

    def to_dict(self) -> dict:
        return {"category": self.category, "check": self.check, "seed": self.seed,
                "players": self.players, "game": self.game, "detail": self.detail}


@dataclass
class DeckFacts:
    """Per deck, bit masks of its slots (bit k: deck slot k) that the checks read."""

    non_ua: np.ndarray  # uint64[n_decks]: slots that are not UAs
    petitions: np.ndarray  # uint64[n_decks]: Petition (Rights) slots
    scroll_pillars: np.ndarray  # uint64[n_decks]: Scroll Pillar slots

    @classmethod
    def of(cls, catalog, decks) -> DeckFacts:
        masks = np.zeros((3, len(decks)), dtype=np.uint64)
        for d, deck in enumerate(decks):
            for s, card_id in enumerate(deck.card_ids):
                card = catalog.cards[int(card_id)]
                bit = np.uint64(1) << np.uint64(s)
                if card.type != "ua":
                    masks[0, d] |= bit
                if card.type == "rights" and card.is_petition:
                    masks[1, d] |= bit
                if card.type == "pillar" and card.branch == "scroll":
                    masks[2, d] |= bit
        return cls(*masks)


@dataclass
class Batch:
    """What the checks know of a batch of games: seats' decks and the rules in force."""

    seed: int
    seat_deck: np.ndarray  # int32[n, P]
    first_seat: np.ndarray  # int32[n]
    facts: DeckFacts
    profile: dict  # the rules profile's values, by switch name
    games: np.ndarray = field(default=None)  # int64[n]: each game's index, for reports

    def __post_init__(self):
        if self.games is None:
            self.games = np.arange(len(self.seat_deck), dtype=np.int64)


def _popcount(a: np.ndarray) -> np.ndarray:
    return np.bitwise_count(a.astype(np.uint64))


class _Collector:
    def __init__(self, batch: Batch, players: int, limit: int):
        self.batch = batch
        self.players = players
        self.out: list[Failure] = []
        self.limit = limit  # failures kept per check (the count is always complete)
        self.counts: dict[tuple[str, str], int] = {}

    def flag(self, category: str, check: str, bad: np.ndarray, detail) -> None:
        """Record a failure for each game where ``bad`` is True; ``detail(i)`` says what."""
        idx = np.flatnonzero(bad)
        if not len(idx):
            return
        key = (category, check)
        self.counts[key] = self.counts.get(key, 0) + len(idx)
        for i in idx[: self.limit]:
            self.out.append(Failure(category, check, self.batch.seed, self.players,
                                    int(self.batch.games[i]), detail(int(i))))


def check_records(rec, batch: Batch, limit: int = 5) -> tuple[list[Failure], dict]:
    """Every check of the module docstring over a batch's records.

    Returns (failures, counts): at most ``limit`` failures per check are spelled out;
    ``counts`` maps (category, check) to the number of games failing it.
    """
    n, P = rec.final_lp.shape
    c = _Collector(batch, P, limit)
    winner = rec.winner_seat.astype(np.int64)
    path = rec.path.astype(np.int64)
    turns = rec.turns.astype(np.int64)
    lp = rec.final_lp.astype(np.int64)
    uas = rec.uas_lost.astype(np.int64)
    seats = np.arange(P)
    is_winner = winner[:, None] == seats[None, :]
    decided = winner >= 0
    rules = batch.profile

    c.flag("invariant", "invariants", rec.violations != 0,
           lambda i: f"{int(rec.violations[i])} invariant violations")

    # winner and path
    bad_path = (path < 0) | (path >= len(enums.PATHS))
    draw = path == enums.PATH_DRAW
    bad = bad_path | (winner < -1) | (winner >= P) | (draw != (winner == -1))
    c.flag("record", "winner", bad, lambda i: f"winner {winner[i]}, path {path[i]}")

    # turns (R15, R45)
    limit_ = turn_limit(rules, P)
    bad = (turns < 1) | (turns > limit_) | (draw & (turns != limit_))
    c.flag("record", "turns", bad,
           lambda i: f"{turns[i]} turns, path {_path(path[i])}, limit {limit_}")

    # life
    life = path == enums.PATH_LIFE
    loser_low = ((lp <= 0) & ~is_winner).any(axis=1)
    bad = life & ~loser_low
    bad |= decided & ~life & ((lp <= 0) & is_winner).any(axis=1)
    if P == 2:
        bad |= ~life & (lp <= 0).any(axis=1)
    bad |= (lp < -MAX_BLOW).any(axis=1)
    cap = int(rules["lp_cap"])
    if cap > 0:
        bad |= (lp > max(cap, STARTING_LP)).any(axis=1)
    c.flag("record", "life", bad,
           lambda i: f"path {_path(path[i])}, winner {winner[i]}, final LP {lp[i].tolist()}")

    # attack
    three = uas >= N_UAS
    bad = (uas < 0).any(axis=1) | (uas > N_UAS).any(axis=1)
    bad |= (path == enums.PATH_ATTACK) & ~(three & ~is_winner).any(axis=1)
    bad |= (three & is_winner).any(axis=1)
    if P == 2:
        bad |= (path != enums.PATH_ATTACK) & three.any(axis=1)
    c.flag("record", "attack", bad,
           lambda i: f"path {_path(path[i])}, winner {winner[i]}, UAs lost {uas[i].tolist()}")

    # petition
    facts = batch.facts
    sd = batch.seat_deck
    played = rec.played_mask.astype(np.uint64)
    pets = rec.petitions.astype(np.int64)
    scrolls = rec.scroll_pillars.astype(np.int64)
    won_by_petition = (path == enums.PATH_PETITION) & decided
    w = np.clip(winner, 0, P - 1)
    rows = np.arange(n)
    bad = won_by_petition & ((pets[rows, w] < 3) | (scrolls[rows, w] < 3)
                             | (lp[rows, w] < PETITION_MIN_LP))
    bad |= (pets < 0).any(axis=1) | (scrolls < 0).any(axis=1)
    bad |= (pets > _popcount(played & facts.petitions[sd])).any(axis=1)
    bad |= (scrolls > _popcount(played & facts.scroll_pillars[sd])).any(axis=1)
    c.flag("record", "petition", bad,
           lambda i: f"path {_path(path[i])}, winner {winner[i]}, Petitions "
           f"{pets[i].tolist()}, Scroll Pillars {scrolls[i].tolist()}, LP {lp[i].tolist()}")

    # masks
    opening = rec.opening_mask.astype(np.uint64)
    drawn = rec.drawn_mask.astype(np.uint64)
    own = facts.non_ua[sd]
    bad_open = (_popcount(opening) != OPENING_HAND).any(axis=1)
    bad_own = (((opening | drawn | played) & ~own) != 0).any(axis=1)
    unseen = played & ~(opening | drawn)
    c.flag("record", "masks", bad_open | bad_own,
           lambda i: f"opening {_bits(opening[i])}, drawn {_bits(drawn[i])}, "
           f"played {_bits(played[i])}, deck's non-UA slots {_bits(own[i])}")
    c.flag("record", "played_unseen", (unseen != 0).any(axis=1),
           lambda i: "played without being seen (neither opening hand nor drawn): slots "
           + "; ".join(f"seat {q}: {_bits([unseen[i, q]])[0]}" for q in range(P)
                       if unseen[i, q]))

    # the Player 2 right
    p2 = rec.p2_right.astype(bool)
    second = (batch.first_seat.astype(np.int64)[:, None] + 1) % P == seats[None, :]
    bad = (p2 & ~second).any(axis=1) | (p2.sum(axis=1) > 1)
    if rules["p2_free_pillar"] == "off":
        bad |= p2.any(axis=1)
    bad |= (p2 & (played == 0)).any(axis=1)
    c.flag("record", "p2_right", bad,
           lambda i: f"P2 right {p2[i].tolist()}, first seat {int(batch.first_seat[i])}")
    return c.out, c.counts


def turn_limit(rules: dict, players: int) -> int:
    """Turns (all seats counted) before a game is a draw: ``turn_limit`` (R15), scaled to
    the same number of rounds at 3-4 players when ``turn_limit_scales`` is on (R45)."""
    limit = int(rules["turn_limit"])
    if rules.get("turn_limit_scales", False):
        limit = limit * players // 2
    return limit


def compare_records(a, b, batch: Batch, index: np.ndarray, limit: int = 5
                    ) -> tuple[list[Failure], dict]:
    """Determinism: the games ``index`` of records ``a`` (one batch) against records ``b``
    (the same games replayed alone, in ``index`` order). Every field must be identical."""
    differs = np.zeros(len(index), dtype=bool)
    fields: list[list[str]] = [[] for _ in index]
    for name in a._fields:
        x = np.asarray(getattr(a, name))[index]
        y = np.asarray(getattr(b, name))
        d = (x != y).reshape(len(index), -1).any(axis=1)
        for k in np.flatnonzero(d):
            fields[k].append(name)
        differs |= d
    mapped = _Collector(Batch(batch.seed, batch.seat_deck[index], batch.first_seat[index],
                              batch.facts, batch.profile, batch.games[index]),
                        a.final_lp.shape[1], limit)
    mapped.flag("nondeterminism", "replay", differs,
                lambda i: "replayed alone, the game's " + ", ".join(fields[i]) + " changed")
    return mapped.out, mapped.counts


def trace_problems(rec, i: int, trace: np.ndarray, gm: np.ndarray, pl: np.ndarray,
                   is_ua: np.ndarray) -> list[tuple[str, str]]:
    """(check, what) for each difference between game ``i`` of a batch's records and the
    same game played alone with its event trace on (``driver.trace_game``, what ``rnr-sim
    replay`` prints): ``trace`` when winner, path, turns, invariant violations, a seat's
    final LP or UAs lost differ; ``trace_ua`` when an event draws or plays a UA
    (``is_ua``: bool per card id)."""
    from rnr_sim.engine import layout as L
    from rnr_sim.engine import trace as T

    out = []
    P = rec.final_lp.shape[1]
    pairs = [("winner", int(rec.winner_seat[i]), int(gm[L.G_WINNER])),
             ("path", int(rec.path[i]), int(gm[L.G_PATH])),
             ("turns", int(rec.turns[i]), int(gm[L.G_TURN])),
             ("violations", int(rec.violations[i]), int(gm[L.G_VIOLATIONS])),
             ("final LP", rec.final_lp[i].tolist(), pl[:P, L.P_LP].tolist()),
             ("UAs lost", rec.uas_lost[i].tolist(), pl[:P, L.P_UAS_LOST].tolist())]
    for what, batch_value, alone in pairs:
        if batch_value != alone:
            out.append(("trace",
                        f"{what} {batch_value} in the batch, {alone} replayed with its trace"))
    for event, verb in ((T.EV_DRAW, "draws"), (T.EV_PLAY, "plays")):
        rows = trace[trace[:, 1] == event]
        cards = rows[:, 3]
        bad = (cards < 0) | (cards >= len(is_ua))
        bad[~bad] = is_ua[cards[~bad]]
        if bad.any():
            r = rows[np.flatnonzero(bad)[0]]
            out.append(("trace_ua", f"the trace {verb} card {int(r[3])} (a UA or no card) "
                                    f"for seat {int(r[2])} on turn {int(r[0])}"))
    return out


def _path(p: int) -> str:
    return enums.PATHS[p] if 0 <= p < len(enums.PATHS) else str(p)


def _bits(masks) -> list[str]:
    return [f"{int(m):#x}" for m in masks]
