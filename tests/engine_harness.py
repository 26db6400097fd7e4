"""A builder for precise game positions, and the one place the engine tests learn the
state layout (``rnr_sim.engine.layout``): an engine refactor touches this file only.

A test builds a tiny catalog in Python (``card(...)`` rows, checked by
``rnr_sim.cards.parse_catalog`` like any catalog), places cards with ``Table`` helpers,
calls one kernel (``resolve_phase``, ``drain_step``, ``play_card``, ``take_turn`` ...)
under a rules profile and policy weights, and reads the result back by name::

    t = Table([card("Cannon", "attack", cost=2, damage=7)])  # each seat holds 3 "UA"s
    t.play_area(0, "Cannon")
    t.attack_damage_step()
    assert sorted(t.dp(1, s) for s in t.slots(1, "UA")) == [13, 20, 20]

Arrays are the ones ``batch.new_state()`` gives (C-contiguous, the dtypes the batch
kernel's arrays have), passed in the bundles a batch passes (``Table.bundles``), so a call
from here runs the very kernels a batch runs, from the same cache.
Player, slot and game scalars are read through methods, never raw indices.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

# (tests/conftest.py has already dropped stale numba cache entries: driver.prepare_cache)
from rnr_sim import enums
from rnr_sim.cards import Catalog, parse_catalog
from rnr_sim.engine import batch, game, trace
from rnr_sim.engine import decisions as D
from rnr_sim.engine import layout as L
from rnr_sim.engine import policies as P
from rnr_sim.engine.records import game_records, new_records
from rnr_sim.engine.rng import stream_seed
from rnr_sim.rules import profile_from_mapping

MAX_SLOTS = enums.MAX_SLOTS
TRACE_CAPACITY = 8192

# Resolve steps, by the Roman numerals of Art. VII §5 phase four.
STEP_DAMAGE = enums.STEP_DAMAGE
STEP_HEAL = enums.STEP_HEAL
STEP_EFFECTS = enums.STEP_EFFECTS
HAND_LIMIT = game.HAND_LIMIT
OPENING_HAND = game.OPENING_HAND
STARTING_LP = game.STARTING_LP

#: Event codes of the trace, by short name: ``EV["draw"] == trace.EV_DRAW``.
EV = {name[3:].lower(): value for name, value in vars(trace).items() if name.startswith("EV_")}
EV_NAME = {v: k for k, v in EV.items()}
#: The rule that decided a game, by short name.
RULE = {name[5:].lower(): value for name, value in vars(L).items()
        if name.startswith("RULE_") and isinstance(value, int)}
ZONE = {"draw": L.Z_DRAW, "hand": L.Z_HAND, "pillar": L.Z_PILLAR, "petition": L.Z_PETITION,
        "ua": L.Z_UA, "play": L.Z_PLAY, "discard": L.Z_DISCARD, "exile": L.Z_EXILE,
        "none": L.Z_NONE}
ZONE_NAME = {v: k for k, v in ZONE.items()}
VERB = {name: i for i, name in enumerate(enums.VERBS)}
PATH = {name: i for i, name in enumerate(enums.PATHS)}


# ============================================================================= catalogs
def card(name: str, type: str = "rights", branch: str = "bison", rarity: str = "common",
         **fields) -> dict:
    """One ``[[cards]]`` table: ``card("Volley", "attack", cost=2, damage=5)``. ``effects``
    and ``keywords`` take lists; ``kicker`` a dict ``{"cost": 2, "effect": "draw 2"}``."""
    row = {"name": name, "type": type, "branch": branch, "rarity": rarity}
    if type == "ua":
        fields.setdefault("dp", 20)
        fields.setdefault("drain", 0)
    if type == "pillar":
        fields.setdefault("ip", 1)
    if type == "attack":
        fields.setdefault("damage", 5)
    if type == "defense":
        fields.setdefault("dp", 10)
    row.update(fields)
    return row


#: Cards most scenarios need; a test adds its own with ``Table(extra)``.
BASE_CARDS: tuple[dict, ...] = (
    card("Pillar", "pillar", ip=1),
    card("Big Pillar", "pillar", ip=3),
    card("Dear Pillar", "pillar", cost=1, ip=2),
    card("Scroll Pillar", "pillar", "scroll", ip=1),
    card("UA", "ua", "liberty_bell", dp=20, drain=0),
    card("Drain UA", "ua", "liberty_bell", dp=20, drain=2),
    card("Filler", "rights", cost=0),
    card("Guarded Filler", "rights", cost=0, keywords=["protect"]),
    card("Petition", "rights", "scroll", cost=0, keywords=["petition"]),
    card("Jab", "rights", cost=0, effects=["lp 3"]),
    card("Knockout", "rights", cost=0, effects=["lp 5"]),
    card("Salve", "rights", cost=0, effects=["heal 4"]),
    card("Study", "rights", "eagle", cost=0, effects=["draw 1"]),
    card("Costly", "rights", cost=3, effects=["lp 10"]),
    card("Treaty", "rights", "scroll", cost=1, effects=["each turn: ip 1"]),
    card("Wall", "defense", "eagle", cost=1, dp=10),
    card("Fort", "defense", "eagle", cost=1, dp=10, effects=["activate 1: repair 3"]),
    card("Volley", "attack", "liberty_bell", cost=1, damage=5),
    card("Raider", "attack", "liberty_bell", cost=1, damage=2),
    card("Lancer", "attack", "liberty_bell", cost=1, damage=4),
    card("Hero", "freedom", cost=2, rarity="rare", effects=["lp 5"],
         kicker={"cost": 2, "effect": "draw 2"}),
    card("Act", "bill", "scroll", cost=1, effects=["draw 1"]),
    card("Decree", "bill", "scroll", cost=1, effects=["heal 1"]),
)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML for {v!r}")


def catalog_of(cards: Iterable[dict], base: bool = True) -> Catalog:
    """A checked catalog of ``BASE_CARDS`` (unless ``base=False``) and ``cards``; a card of
    ``cards`` replaces a base card of the same name."""
    rows = {}
    for row in (BASE_CARDS if base else ()):
        rows[row["name"]] = row
    for row in cards:
        rows[row["name"]] = row
    text = ['[set]\nname = "Scenario"\nversion = "1"\n']
    for row in rows.values():
        text.append("[[cards]]")
        text += [f"{k} = {_toml_value(v)}" for k, v in row.items()]
        text.append("")
    return parse_catalog("\n".join(text), where="<scenario>")


def rules_array(rules: Mapping | None = None) -> np.ndarray:
    """A compiled rules profile: the defaults with ``rules`` switched."""
    return profile_from_mapping(dict(rules or {}), "test", "test").compile()


def weight_index(name: str) -> int:
    """The index of a policy weight by its ``W_`` name, e.g. ``stop`` or ``mulligan_max``;
    a verb's value is ``verb:lp``."""
    if name.startswith("verb:"):
        return P.W_VERB + VERB[name[5:]]
    return getattr(P, "W_" + name.upper())


def policy_row(name: str = "balanced", **weights: float) -> np.ndarray:
    """A policy's weight vector with some weights changed."""
    w = P.POLICIES[name].copy()
    for k, v in weights.items():
        w[weight_index(k.replace("__", ":"))] = v
    return w


def _c(a, dtype):
    return np.require(a, dtype=dtype, requirements=["C", "W"])


# ============================================================================= positions
class Table:
    """One game's state arrays, built card by card.

    ``players`` seats (2-4), all alive with 100 LP, seat 0 active, turn 1 (not the first
    turn, so R8 does not apply unless a test sets ``turn=0``), each seat holding three
    ``uas`` in its UA Area (None: no UAs). ``rules``: switches over the default profile.
    ``policy``: a name of ``POLICIES`` for every seat.
    """

    def __init__(self, extra: Iterable[dict] = (), players: int = 2, rules: Mapping | None = None,
                 policy: str = "balanced", seed: int = 1, base: bool = True,
                 catalog: Catalog | None = None, uas: str | None = "UA"):
        self.catalog = catalog if catalog is not None else catalog_of(extra, base=base)
        self.cards = _c(self.catalog.compile(), np.int32)
        self.rules = rules_array(rules)
        self.w = np.zeros((enums.MAX_PLAYERS, P.N_WEIGHTS), dtype=np.float64)
        self.memo = np.full((enums.MAX_PLAYERS, D.MEMO_WIDTH), np.nan, dtype=np.float64)
        self.acts = np.zeros((L.MAX_ACTIONS, L.ACT_WIDTH), dtype=np.int64)
        self._n_acts = 0  # rows of ``acts`` listed by ``legal_actions`` (then kept)
        for q in range(enums.MAX_PLAYERS):
            self.w[q, :P.N_WEIGHTS] = P.POLICIES[policy]
        self.pl, self.sl, self.ls, self.gm, self.masks, self.rng = batch.new_state()
        self.tr = np.zeros((TRACE_CAPACITY, L.TRACE_WIDTH), dtype=np.int32)
        self.n_players = players
        self.gm[L.G_N_PLAYERS] = players
        self.gm[L.G_N_ALIVE] = players
        self.gm[L.G_WINNER] = -1
        self.gm[L.G_PATH] = enums.PATH_NONE
        self.gm[L.G_TURN] = 1
        self.gm[L.G_ACTIVE] = 0
        self.gm[L.G_FIRST] = 0
        for q in range(players):
            self.pl[q, L.P_LP] = STARTING_LP
            self.pl[q, L.P_ALIVE] = 1
            self.pl[q, L.P_DRAWS_NEXT] = 1
        self.reseed(seed)
        if uas is not None:
            for q in range(players):
                self.uas(q, uas)

    # ------------------------------------------------------------------ settings
    def reseed(self, seed: int) -> None:
        for k in range(enums.MAX_PLAYERS + 1):
            self.rng[k] = stream_seed(np.uint64(seed), 7, 7, k, 0)

    def set_rules(self, **switches) -> Table:
        self.rules = rules_array(switches)
        return self

    def set_policy(self, p: int, name: str = "balanced", **weights: float) -> Table:
        """Seat ``p`` plays ``name`` with some weights changed (``stop=1e9`` never plays)."""
        self.w[p, :P.N_WEIGHTS] = policy_row(name, **weights)
        return self

    def set_lp(self, p: int, lp: int) -> Table:
        self.pl[p, L.P_LP] = lp
        return self

    def set_ip(self, p: int, pillar: int = 0, other: int = 0) -> Table:
        """IP in hand this turn: ``pillar`` from Pillars, ``other`` from other cards (Amend. VI)."""
        self.pl[p, L.P_IP_PILLAR] = pillar
        self.pl[p, L.P_IP_OTHER] = other
        return self

    def set_active(self, p: int, turn: int | None = None, first: int | None = None) -> Table:
        self.gm[L.G_ACTIVE] = p
        if turn is not None:
            self.gm[L.G_TURN] = turn
        if first is not None:
            self.gm[L.G_FIRST] = first
        return self

    def set_draws_next(self, p: int, n: int) -> Table:
        self.pl[p, L.P_DRAWS_NEXT] = n
        return self

    def set_bill_plays(self, p: int, s: int, n: int) -> Table:
        """The Bill in slot ``s`` has been played ``n`` times before (R28)."""
        self.sl[p, self.sl[p, s, L.S_NAME_SLOT], L.S_BILL_PLAYS] = n
        return self

    # ------------------------------------------------------------------ placing cards
    def card_id(self, name: str) -> int:
        return self.catalog.by_name[name]

    def name_of(self, card_id: int) -> str:
        return self.catalog.cards[card_id].name

    def _slot(self, p: int, name: str, zone: int) -> int:
        s = int(self.pl[p, L.P_DECK_SIZE])
        if s >= MAX_SLOTS:
            raise ValueError("no free slot")
        c = self.card_id(name)
        self.pl[p, L.P_DECK_SIZE] = s + 1
        self.sl[p, s, :] = 0
        self.sl[p, s, L.S_CARD] = c
        self.sl[p, s, L.S_ZONE] = zone
        self.sl[p, s, L.S_NAME_SLOT] = s
        if self.cards[c, enums.C_TYPE] == enums.BILL:  # Art. IV §7.4: escalation per name
            for s0 in range(s):
                if self.sl[p, s0, L.S_CARD] == c:
                    self.sl[p, s, L.S_NAME_SLOT] = s0
                    break
        return s

    def _push(self, p: int, lst: int, count: int, s: int) -> None:
        n = int(self.pl[p, count])
        self.ls[p, lst, n] = s
        self.pl[p, count] = n + 1

    def hand(self, p: int, *names: str) -> list[int]:
        """Cards into ``p``'s hand; their slots."""
        out = []
        for name in names:
            s = self._slot(p, name, L.Z_HAND)
            self._push(p, L.L_HAND, L.P_N_HAND, s)
            out.append(s)
        return out

    def draw_pile(self, p: int, *names: str) -> list[int]:
        """Cards onto ``p``'s Draw Pile in the order given: the last one is the top."""
        out = []
        for name in names:
            s = self._slot(p, name, L.Z_DRAW)
            self._push(p, L.L_DRAW, L.P_N_DRAW, s)
            out.append(s)
        return out

    def discard_pile(self, p: int, *names: str) -> list[int]:
        return [self._slot(p, name, L.Z_DISCARD) for name in names]

    def _in_play(self, p: int, name: str, zone: int, dp: int | None) -> int:
        s = self._slot(p, name, zone)
        game.put_in_play(self.cards, self.pl, self.sl, self.ls, p, s, zone)
        t = self.cards[self.sl[p, s, L.S_CARD], enums.C_TYPE]
        if dp is not None and t in (enums.DEFENSE, enums.UA, enums.ATTACK):
            self.sl[p, s, L.S_DP] = dp
        if zone == L.Z_UA:
            self.pl[p, L.P_N_UAS] += 1
        return s

    def pillar(self, p: int, *names: str) -> list[int]:
        return [self._in_play(p, n, L.Z_PILLAR, None) for n in names]

    def petition(self, p: int, *names: str) -> list[int]:
        return [self._in_play(p, n, L.Z_PETITION, None) for n in names]

    def ua(self, p: int, name: str = "UA", dp: int | None = None) -> int:
        """One UA into the UA Area, with ``dp`` left (default: printed)."""
        return self._in_play(p, name, L.Z_UA, dp)

    def uas(self, p: int, *names: str, dp: int | None = None) -> list[int]:
        """Three UAs (``names`` cycled; default ``UA``); a player holds three (Art. IV §3)."""
        names = names or ("UA",)
        return [self.ua(p, names[k % len(names)], dp) for k in range(3)]

    def set_uas_lost(self, p: int, n: int) -> Table:
        """``p`` has lost ``n`` UAs before (destroyed, out of play) besides those in its UA
        Area: the next one destroyed beyond them counts toward Art. III §2."""
        self.pl[p, L.P_N_UAS] += n
        self.pl[p, L.P_UAS_LOST] += n
        return self

    def play_area(self, p: int, name: str, dp: int | None = None) -> int:
        """A card in the Play Area (already resolved): a Defense with ``dp`` DP left, an
        Attack dealing ``dp`` damage (default: printed), a lasting Rights card..."""
        return self._in_play(p, name, L.Z_PLAY, dp)

    def set_dp(self, p: int, s: int, dp: int) -> Table:
        """DP left of a Defense or UA in play; the damage of an Attack."""
        self.sl[p, s, L.S_DP] = dp
        return self

    def sideways(self, p: int, s: int, e: int = 0) -> bool:
        return bool(self.sl[p, s, L.S_FLAGS] & (L.F_SIDEWAYS0 << e))

    def set_sideways(self, p: int, s: int, e: int = 0) -> Table:
        self.sl[p, s, L.S_FLAGS] |= L.F_SIDEWAYS0 << e
        self.pl[p, L.P_SIDEWAYS] = 1
        return self

    # ------------------------------------------------------------------ reading
    def lp(self, p: int) -> int:
        return int(self.pl[p, L.P_LP])

    def ip(self, p: int) -> tuple[int, int]:
        """(Pillar IP, other IP) in hand now."""
        return int(self.pl[p, L.P_IP_PILLAR]), int(self.pl[p, L.P_IP_OTHER])

    def alive(self, p: int) -> bool:
        return bool(self.pl[p, L.P_ALIVE])

    def n_hand(self, p: int) -> int:
        return int(self.pl[p, L.P_N_HAND])

    def n_draw(self, p: int) -> int:
        return int(self.pl[p, L.P_N_DRAW])

    def n_petitions(self, p: int) -> int:
        return int(self.pl[p, L.P_N_PETITIONS])

    def n_pillars(self, p: int) -> int:
        return int(self.pl[p, L.P_N_PILLARS])

    def n_scroll_pillars(self, p: int) -> int:
        return int(self.pl[p, L.P_N_SCROLL_PILLARS])

    def uas_lost(self, p: int) -> int:
        return int(self.pl[p, L.P_UAS_LOST])

    def mulliganed(self, p: int) -> bool:
        return bool(self.pl[p, L.P_MULLIGAN])

    def took_p2_right(self, p: int) -> bool:
        return bool(self.pl[p, L.P_P2_RIGHT])

    def draws_next(self, p: int) -> int:
        return int(self.pl[p, L.P_DRAWS_NEXT])

    def n_pending(self, p: int) -> int:
        return int(self.pl[p, L.P_N_PENDING])

    def zone(self, p: int, s: int) -> str:
        return ZONE_NAME[int(self.sl[p, s, L.S_ZONE])]

    def dp(self, p: int, s: int) -> int:
        """DP left of a Defense or UA; damage of an Attack."""
        return int(self.sl[p, s, L.S_DP])

    def bill_plays(self, p: int, s: int) -> int:
        return int(self.sl[p, self.sl[p, s, L.S_NAME_SLOT], L.S_BILL_PLAYS])

    def _names(self, p: int, lst: int, count: int) -> list[str]:
        return [self.name_of(int(self.sl[p, self.ls[p, lst, i], L.S_CARD]))
                for i in range(int(self.pl[p, count]))]

    def hand_cards(self, p: int) -> list[str]:
        return self._names(p, L.L_HAND, L.P_N_HAND)

    def hand_slots(self, p: int) -> list[int]:
        return [int(self.ls[p, L.L_HAND, i]) for i in range(self.n_hand(p))]

    def draw_cards(self, p: int) -> list[str]:
        """The Draw Pile, bottom first (the last one is the top)."""
        return self._names(p, L.L_DRAW, L.P_N_DRAW)

    def draw_slots(self, p: int) -> list[int]:
        return [int(self.ls[p, L.L_DRAW, i]) for i in range(self.n_draw(p))]

    def board_cards(self, p: int) -> list[str]:
        return self._names(p, L.L_BOARD, L.P_N_BOARD)

    def cards_in(self, p: int, zone: str) -> list[str]:
        """Names of ``p``'s cards in a zone, in slot order."""
        z = ZONE[zone]
        return [self.name_of(int(self.sl[p, s, L.S_CARD]))
                for s in range(int(self.pl[p, L.P_DECK_SIZE])) if self.sl[p, s, L.S_ZONE] == z]

    def slots(self, p: int, name: str) -> list[int]:
        c = self.card_id(name)
        return [s for s in range(int(self.pl[p, L.P_DECK_SIZE])) if self.sl[p, s, L.S_CARD] == c]

    @property
    def over(self) -> bool:
        return bool(self.gm[L.G_OVER])

    @property
    def winner(self) -> int:
        return int(self.gm[L.G_WINNER])

    @property
    def path(self) -> str | None:
        k = int(self.gm[L.G_PATH])
        return None if k < 0 else enums.PATHS[k]

    @property
    def rule(self) -> str:
        k = int(self.gm[L.G_RULE])
        return next(n for n, v in RULE.items() if v == k)

    @property
    def turn(self) -> int:
        return int(self.gm[L.G_TURN])

    @property
    def active(self) -> int:
        return int(self.gm[L.G_ACTIVE])

    @property
    def first(self) -> int:
        return int(self.gm[L.G_FIRST])

    def opening_mask(self, p: int) -> int:
        return int(self.masks[p, L.M_OPENING])

    def events(self, *kinds: str) -> list[tuple]:
        """Trace rows as (event name, seat, a, b, c, d, e), oldest first; only ``kinds``
        when given."""
        out = []
        for row in self.tr[: int(self.gm[L.G_N_TRACE])]:
            name = EV_NAME[int(row[1])]
            if not kinds or name in kinds:
                out.append((name, *(int(x) for x in row[2:])))
        return out

    def plays(self, p: int, name: str) -> list[int]:
        """The IP paid for each play of ``name`` by ``p`` in the trace, in order."""
        c = self.card_id(name)
        return [e[3] for e in self.events("play") if e[1] == p and e[2] == c]

    def clear_events(self) -> None:
        self.gm[L.G_N_TRACE] = 0

    def invariant_violations(self) -> int:
        return int(game.check_invariants(self.cards, self.pl, self.sl, self.ls, self.gm))

    # ------------------------------------------------------------------ kernels
    def bundles(self) -> tuple:
        """The two bundles every game kernel takes first (``layout.Table``, ``layout.Game``),
        built over this table's arrays: a kernel's writes land in them."""
        return (L.Table(self.cards, self.rules, self.w),
                L.Game(self.pl, self.sl, self.ls, self.gm, self.masks, self.rng, self.tr))

    def _p(self, p: int | None) -> int:
        return self.active if p is None else int(p)

    def take_turn(self, p: int | None = None) -> None:
        p = self._p(p)
        self.gm[L.G_ACTIVE] = p
        game.take_turn(*self.bundles(), self.memo, self.acts, p)

    def next_seat(self, p: int) -> int:
        """The next player in turn order who is still in the game (-1: none)."""
        return int(game.next_opponent(self.pl, self.gm, p))

    def play_turns(self, n: int) -> list[int]:
        """Up to ``n`` turns from the active seat on, as ``play_game`` runs them (the turn
        counter advances, the next living seat goes next); the seats that took them."""
        seats = []
        p = self.active
        for _ in range(n):
            if self.over or p < 0:
                break
            self.take_turn(p)
            seats.append(p)
            self.gm[L.G_TURN] += 1
            if self.over:
                break
            p = self.next_seat(p)
            if p >= 0:
                self.gm[L.G_ACTIVE] = p
        return seats

    def play_phase(self, p: int | None = None) -> None:
        game.play_phase(*self.bundles(), self.memo, self.acts, self._p(p))

    def independence_phase(self, p: int | None = None) -> None:
        game.independence_phase(*self.bundles(), self._p(p))

    def resolve_phase(self, p: int | None = None) -> None:
        game.resolve_phase(*self.bundles(), self.memo, self._p(p))

    def end_phase(self, p: int | None = None) -> None:
        game.end_phase(self.pl, self.sl, self.ls, self._p(p))

    def resolve_aoa(self, p: int | None = None) -> None:
        game.resolve_aoa(*self.bundles(), self._p(p))

    def attack_damage_step(self, p: int | None = None) -> None:
        game.attack_damage_step(*self.bundles(), self._p(p))

    def fire_effects(self, step: int, p: int | None = None) -> None:
        game.note_effects(self.cards, self.pl, self.sl, self.ls, self._p(p))
        game.fire_effects(*self.bundles(), self._p(p), step)

    def petition_check(self) -> None:
        game.petition_check(self.cards, self.rules, self.pl, self.gm, self.tr)

    def drain_step(self, p: int | None = None) -> None:
        game.drain_step(*self.bundles(), self._p(p))

    def finish_pending(self, p: int | None = None) -> None:
        game.finish_pending(self.cards, self.pl, self.sl, self.ls, self.gm, self.tr, self._p(p))

    def hand_limit_step(self, p: int | None = None) -> None:
        game.hand_limit_step(*self.bundles(), self.memo, self._p(p))

    def play_card(self, p: int, s: int, kicked: bool = False, aoa: tuple[int, int] | None = None,
                  pay: bool = True) -> None:
        """Play the card in slot ``s`` from hand (Play Phase); ``aoa=(seat, slot)`` declares
        Attack-on-Attack on that Attack. ``pay``: first add the IP it costs as other IP."""
        if pay:
            cost = self.cost(p, s) + (1 if aoa else 0)
            if kicked:
                c = int(self.sl[p, s, L.S_CARD])
                for e in range(enums.MAX_EFFECTS):
                    if game.eff(self.cards, c, e, enums.E_KICKER):
                        cost += int(game.eff(self.cards, c, e, enums.E_COST))
            self.pl[p, L.P_IP_OTHER] += cost
        q, s2 = aoa if aoa else (-1, -1)
        game.play_card(*self.bundles(), p, s, bool(kicked), q, s2)

    def activate(self, p: int, s: int, e: int = 0, pay: bool = True) -> None:
        if pay:
            c = int(self.sl[p, s, L.S_CARD])
            self.pl[p, L.P_IP_OTHER] += int(game.eff(self.cards, c, e, enums.E_COST))
        game.activate(*self.bundles(), p, s, e)

    def legal_actions(self, p: int | None = None) -> list[tuple[int, ...]]:
        """The rows ``(kind, a, b, c, cost)`` the rules list for ``p``'s Play Phase now,
        the Attack-on-Attack targets noted first (``note_threats``), as a Play Phase does."""
        p = self._p(p)
        n_targets = D.note_threats(self.cards, self.w, self.memo, self.pl, self.sl, self.ls,
                                   self.gm, p)
        if not self.rules[enums.R_AOA]:
            n_targets = 0
        n = game.legal_actions(self.cards, self.rules, self.pl, self.sl, self.ls, self.gm, p,
                               n_targets, self.acts)
        self._n_acts = n
        return [tuple(int(x) for x in row) for row in self.acts[:n]]

    def take_action(self, p: int, k: int) -> list[tuple[int, ...]]:
        """Take row ``k`` of the list ``legal_actions`` made last (``acts``), as a Play Phase
        does (``do_action``), and return the list kept after it (``still_legal``)."""
        n = int(self._n_acts)
        row = [int(x) for x in self.acts[k]]
        game.do_action(*self.bundles(), self.memo, p, row[L.A_KIND], row[L.A_SLOT],
                       row[L.A_EFFECT], row[L.A_TARGET])
        m = game.still_legal(self.cards, self.rules, self.pl, self.sl, p, self.acts, n, k)
        self._n_acts = m
        return [tuple(int(x) for x in r) for r in self.acts[:m]]

    def cost(self, p: int, s: int) -> int:
        """What playing slot ``s`` costs now (a Bill's escalation included)."""
        return int(game.play_cost(self.cards, self.sl, p, s))

    def pay(self, p: int, cost: int) -> None:
        game.pay(self.pl, p, cost)

    def apply_effect(self, p: int, verb: str, amount: int, target: int = -1,
                     src_card: int = -1) -> None:
        """One effect controlled by ``p``, e.g. ``apply_effect(0, "mill", 3)``."""
        game.apply_effect(*self.bundles(), p, VERB[verb], amount, src_card, target)

    def fire_on_destroy(self) -> None:
        game.fire_on_destroy(*self.bundles())

    def destroy(self, q: int, s: int, by: int = 0) -> None:
        game.destroy(*self.bundles(), q, s, by)

    def deal_damage(self, q: int, s: int, amount: int, by: int = 0, src_card: int = -1) -> None:
        game.deal_damage(*self.bundles(), q, s, amount, by, src_card)

    def draw_one(self, p: int, in_draw_phase: bool = False) -> bool:
        return bool(game.draw_one(self.rules, self.pl, self.sl, self.ls, self.gm, self.masks,
                                  self.tr, p, in_draw_phase))

    def lose(self, p: int, path: str, rule: str) -> None:
        game.lose(self.rules, self.pl, self.gm, self.tr, p, PATH[path], RULE[rule])

    def pick_opponent(self, p: int, verb: str) -> int:
        return int(D.pick_opponent(self.pl, self.w, self.gm, p, enums.VERB_AIM[VERB[verb]]))

    def setup(self, decks: list[list[str]], first: int = 0, seed: int = 1, table: int = 0,
              deal: int = 0) -> None:
        """Art. VII §1-4: ``setup_game`` with one deck (card names in slot order) per seat;
        the state is reset, so cards placed before are gone."""
        deck_cards, deck_size = deck_arrays([[self.card_id(n) for n in d] for d in decks])
        self.n_players = len(decks)
        game.setup_game(*self.bundles(), deck_cards, deck_size, np.int64(len(decks)),
                        np.int32(first), np.uint64(seed), np.int64(table), np.int64(deal))


# ============================================================================= batches
def deck_arrays(decks: list) -> tuple[np.ndarray, np.ndarray]:
    """(deck_cards int32[n_decks, MAX_SLOTS] -1 padded, deck_size int32[n_decks]); each deck a
    sequence of card ids in slot order (at least MAX_PLAYERS rows, as ``setup_game`` reads)."""
    n = max(len(decks), enums.MAX_PLAYERS)
    dc = np.full((n, MAX_SLOTS), -1, dtype=np.int32)
    ds = np.zeros(n, dtype=np.int32)
    for i, d in enumerate(decks):
        ids = np.asarray(d, dtype=np.int32)
        dc[i, : len(ids)] = ids
        ds[i] = len(ids)
    return dc, ds


def play_batch(cards, decks: list, seat_deck, seat_policy=None, policies=None, first_seat=None,
               table_id=None, deal=None, rules=None, seed: int = 1, debug: bool = False):
    """``batch.play_games_nb`` with a custom policy table (float64[n_policies, N_WEIGHTS],
    default the shipped ``POLICIES``). Returns a dict of arrays: winner, path, turns,
    violations int32[n]; lp, uas_lost, petitions, scroll_pillars, mulligan, p2_right
    int32[n, P]; opening, drawn, played uint64[n, P]."""
    seat_deck = _c(seat_deck, np.int32)
    n, n_players = seat_deck.shape
    if policies is None:
        policies = P.policy_table()
    if seat_policy is None:
        seat_policy = np.zeros((n, n_players), dtype=np.int32)
    if first_seat is None:
        first_seat = np.zeros(n, dtype=np.int32)
    if table_id is None:
        table_id = np.zeros(n, dtype=np.int64)
    if deal is None:
        deal = np.arange(n, dtype=np.int64)
    rules = rules_array(rules) if rules is None or isinstance(rules, Mapping) else rules
    dc, ds = deck_arrays(decks)
    games, seats = new_records(n, n_players)
    batch.play_games_nb(_c(cards, np.int32), dc, ds, seat_deck,
                        _c(seat_policy, np.int32), _c(policies, np.float64),
                        _c(table_id, np.int64), _c(deal, np.int64), _c(first_seat, np.int32),
                        _c(rules, np.int64), np.uint64(seed), np.int64(1 if debug else 0),
                        games, seats)
    short = {"winner_seat": "winner", "final_lp": "lp", "opening_mask": "opening",
             "drawn_mask": "drawn", "played_mask": "played"}
    return {short.get(k, k): v for k, v in game_records(games, seats)._asdict().items()}


def count_slots(masks: np.ndarray, slots: Iterable[int]) -> np.ndarray:
    """How many of ``slots`` each uint64 slot mask holds (bit k is deck slot k)."""
    bits = np.uint64(sum(1 << int(s) for s in slots))
    return np.bitwise_count(np.asarray(masks, dtype=np.uint64) & bits).astype(np.int64)


# ============================================================================= statistics
def _gamma_q(a: float, x: float) -> float:
    """The regularised upper incomplete gamma Q(a, x) (Numerical Recipes 6.2)."""
    if x <= 0:
        return 1.0
    gln = math.lgamma(a)
    if x < a + 1.0:  # series for P
        ap, total, delta = a, 1.0 / a, 1.0 / a
        for _ in range(10_000):
            ap += 1.0
            delta *= x / ap
            total += delta
            if abs(delta) < abs(total) * 1e-15:
                break
        return 1.0 - total * math.exp(-x + a * math.log(x) - gln)
    b = x + 1.0 - a  # continued fraction for Q (Lentz)
    c, d = 1.0 / 1e-300, 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - gln) * h


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square with ``df`` degrees of freedom."""
    return _gamma_q(df / 2.0, x / 2.0)


def chi_square(observed: list[int], expected: list[float], min_expected: float = 5.0):
    """(statistic, degrees of freedom, p-value) of a goodness-of-fit test; neighbouring
    cells are pooled from both tails until each expects at least ``min_expected``."""
    obs, exp = list(observed), list(expected)
    for rev in (False, True):
        if rev:
            obs.reverse()
            exp.reverse()
        while len(exp) > 1 and exp[0] < min_expected:
            exp[1] += exp.pop(0)
            obs[1] += obs.pop(0)
    stat = sum((o - e) ** 2 / e for o, e in zip(obs, exp, strict=True))
    df = len(exp) - 1
    return stat, df, chi2_sf(stat, df)


def hypergeometric(population: int, successes: int, draws: int) -> list[float]:
    """P(k successes) for k = 0..draws, drawing without replacement (exact, math.comb)."""
    total = math.comb(population, draws)
    return [math.comb(successes, k) * math.comb(population - successes, draws - k) / total
            for k in range(draws + 1)]
