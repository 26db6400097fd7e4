"""One game, turn by turn: play a game with the event trace on and decode it into plain words.

``decode`` is pure: it turns the engine's trace (``rnr_sim.engine.trace``: rows of
``turn, event, seat, a..e``), the final game fields ``gm`` and player fields ``pl`` into
lines a person who knows the rules can read, naming cards by their catalog names and
Resolve steps by Art. VII §5. ``replay_game`` loads the inputs, plays the game
(``driver.trace_game``) and decodes it; ``rnr-sim replay`` prints its lines.

A replayed game is the same game a run plays for (seed, table 0, deal, first seat): the
engine seeds every game from those alone, with the trace on or off.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rnr_sim import enums
from rnr_sim.engine import layout
from rnr_sim.engine import trace as ev
from rnr_sim.errors import InputError
from rnr_sim.progress import compile_clock

STARTING_LP = 100  # Art. II §1 (the engine's starting LP)
MIN_PLAYERS = 2

#: Resolve Phase steps by number (Art. VII §5, phase four).
STEP_NAMES = {
    1: "i. Locks and blocks",
    2: "ii. Attack-on-Attack combat",
    3: "iii. Apply damage",
    4: "iv. LP gain and healing",
    5: "v. Petition check",
    6: "vi. Card effects",
    7: "vii. UA drain",
    8: "viii. Victory check",
    9: "ix. Discard to hand limit",
}
#: Victory paths as Art. III names them, by ``enums.PATHS`` index.
PATH_TITLES = {
    enums.PATH_LIFE: "Life Victory",
    enums.PATH_ATTACK: "Attack Victory",
    enums.PATH_PETITION: "Petition Victory",
    enums.PATH_DECK_OUT: "Deck-Out Victory",
    enums.PATH_DRAW: "a draw",
}
TYPE_TITLES = {
    "pillar": "Pillar",
    "rights": "Rights",
    "ua": "UA",
    "attack": "Attack",
    "defense": "Defense",
    "freedom": "Freedom",
    "bill": "Bill",
}


@dataclass
class GameSetup:
    """What a game was played with, for the log's header (all optional but ``decks``)."""

    decks: Sequence[str]  # deck name per seat
    policies: Sequence[str] | None = None  # policy name per seat
    seed: int | None = None
    deal: int | None = None
    table_id: int = 0
    first_seat: int | None = None  # read from ``gm`` when None
    rules_name: str = "constitution"
    rules_changed: dict[str, Any] = field(default_factory=dict)
    rules_values: dict[str, Any] = field(default_factory=dict)
    deck_cards: Sequence[Sequence[int]] | None = None  # catalog id per deck slot, per seat
    catalog_name: str | None = None
    # catalog ids of each seat's final opening hand (after any mulligan); None: no hands shown
    opening: Sequence[Sequence[int]] | None = None


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


class _Decoder:
    """Walks a trace once, keeping just enough state to say things plainly."""

    def __init__(self, catalog, setup: GameSetup, n_players: int, first_seat: int):
        self.cards = catalog.cards
        self.setup = setup
        self.n = n_players
        self.first = first_seat
        self.lines: list[str] = []
        self.lp = [STARTING_LP] * n_players
        self.uas_lost = [0] * n_players
        self.n_uas = [3] * n_players
        # DP of each Defense and UA in play, per (seat, card id): a list, one per copy.
        self.dp: dict[tuple[int, int], list[int]] = {}
        if setup.deck_cards is not None:
            for q, slots in enumerate(setup.deck_cards[:n_players]):
                uas = [int(c) for c in slots if int(c) >= 0 and self.cards[int(c)].type == "ua"]
                self.n_uas[q] = len(uas)
                for c in uas:
                    self.dp.setdefault((q, c), []).append(self.cards[c].dp)
        self.active = -1
        self.turn_header: list[Any] | None = None  # EV_TURN row waiting for its IP
        self.pending_step: int | None = None  # a step heading waiting for an event
        self.step = 0
        self.draws: list[int] = []  # consecutive draws of one seat, waiting to be joined
        self.draw_seat = -1
        self.draw_left = 0
        # Cards destroyed this turn whose 'on destroy' effects may follow: card -> owner.
        self.fallen: dict[int, int] = {}
        # Each seat's hand, kept from the opening hand and every event that moves a card
        # into or out of a hand (draw, play, discard, recover, tutor, return, the P2 right).
        self.hands: list[Counter] | None = None
        if setup.opening is not None:
            self.hands = [Counter(int(c) for c in cards) for cards in setup.opening]
        self.hand_shown: Counter | None = None  # the hand last shown this turn
        self.in_search = False  # inside a block of EV_SEARCH rows (one decision)
        self.hand_mismatches = 0  # turns whose traced hand size differs from the kept hand

    # ------------------------------------------------------------------ words
    def name(self, card: int) -> str:
        if 0 <= card < len(self.cards):
            return self.cards[card].name
        return "an unknown card"

    def kind(self, card: int) -> str:
        if not 0 <= card < len(self.cards):
            return ""
        c = self.cards[card]
        title = TYPE_TITLES.get(c.type, c.type)
        if c.type == "rights" and c.is_petition:
            title += ", Petition"
        return title

    def seat(self, q: int) -> str:
        return f"Seat {q}"

    def seat_deck(self, q: int) -> str:
        decks = self.setup.decks
        return f"Seat {q} ({decks[q]})" if 0 <= q < len(decks) else f"Seat {q}"

    def whose(self, q: int, card: int) -> str:
        """``Seat 1's Stamp Act``, or just the name for the active player's own card."""
        if q == self.active:
            return self.name(card)
        return f"{self.seat(q)}'s {self.name(card)}"

    def subject(self, q: int) -> str:
        """The subject of a sentence about seat ``q``: implied for the active player."""
        return "" if q == self.active else f"{self.seat(q)} "

    def say(self, text: str, sub: bool = False) -> None:
        """One event line: indented under the turn, deeper under a Resolve step heading."""
        self.flush_header()
        if not sub:
            self.flush_draws()
        if self.pending_step is not None:
            self.lines.append(f"  Resolve step {STEP_NAMES[self.pending_step]}:")
            self.pending_step = None
        indent = "    " if self.step else "  "
        if self.active < 0:
            indent = "  "
        sentence = text[0].upper() + text[1:]
        self.lines.append(indent + sentence)

    # ------------------------------------------------------------------ buffering
    def flush_header(self, ip: tuple[int, int, int] | None = None) -> None:
        if self.turn_header is None:
            return
        turn, q, lp, hand, draw_pile, in_play = self.turn_header
        self.turn_header = None
        ip_text = ""
        if ip is not None:
            total, pillar, other = ip
            ip_text = f"IP {total} ({pillar} Pillar + {other} other), "
        self.lines.append("")
        self.lines.append(
            f"Turn {turn + 1} — {self.seat_deck(q)}: LP {lp}, {ip_text}hand {hand}, "
            f"draw pile {draw_pile}, in play {in_play}"
        )
        if self.draws:
            self.flush_draws()

    def flush_draws(self) -> None:
        if not self.draws:
            return
        names = ", ".join(self.name(c) for c in self.draws)
        q = self.draw_seat
        self.draws = []
        self.say(f"{self.subject(q)}draws {names} (draw pile {self.draw_left}).", sub=True)

    def start_step(self, step: int) -> None:
        self.flush_draws()
        self.step = step
        self.pending_step = step

    # ------------------------------------------------------------------ DP book-keeping
    def dp_before(self, q: int, card: int, amount: int, left: int) -> int | None:
        """DP of the damaged copy before the hit (exact unless an overkill is ambiguous)."""
        copies = self.dp.get((q, card))
        if left > 0:
            before = left + amount
            if copies and before in copies:
                copies[copies.index(before)] = left
            return before
        if not copies:
            return None
        fits = sorted({d for d in copies if 0 < d <= amount})
        if not fits:
            return None
        before = fits[-1] if len(fits) == 1 else None
        copies[copies.index(fits[-1])] = 0
        return before

    def dp_leave(self, q: int, card: int) -> None:
        copies = self.dp.get((q, card))
        if copies:
            copies.remove(min(copies))

    # ------------------------------------------------------------------ events
    def event(self, row: Sequence[int]) -> None:
        turn, code, q, a, b, c, d, e = (int(x) for x in row)
        handler = getattr(self, f"on_{code}", None)
        if handler is None:
            self.say(f"an engine event this log does not know yet (code {code}; see "
                     "rnr_sim/engine/trace.py).")
            return
        handler(turn, q, a, b, c, d, e)
        if code != ev.EV_SEARCH:
            self.in_search = False

    # ------------------------------------------------------------------ hands
    def hand_words(self, q: int) -> str:
        """Seat ``q``'s hand by Order, in the rulebook's order of the Orders:
        ``Hand (5) — Pillar: Boston Light, 2 Hidden Cellar; Freedom: ...``."""
        hand = self.hands[q]
        groups: dict[str, list[str]] = {}
        for card, n in sorted(hand.items(), key=lambda kv: (self._order(kv[0]),
                                                            self.name(kv[0]))):
            if n > 0:
                label = TYPE_TITLES.get(self.cards[card].type, "?") if 0 <= card < len(
                    self.cards) else "?"
                groups.setdefault(label, []).append(self.name(card) if n == 1 else
                                                    f"{n} {self.name(card)}")
        total = sum(hand.values())
        if not total:
            return "Hand (0): empty"
        return f"Hand ({total}) — " + "; ".join(f"{k}: {', '.join(v)}" for k, v in groups.items())

    def _order(self, card: int) -> int:
        kinds = list(TYPE_TITLES)
        kind = self.cards[card].type if 0 <= card < len(self.cards) else ""
        return kinds.index(kind) if kind in kinds else len(kinds)

    def show_hand(self, q: int, suffix: str = "") -> None:
        """The deciding seat's hand, once a decision (when it changed since last shown)."""
        if self.hands is None or q != self.active:
            return
        if self.hand_shown == self.hands[q]:
            return
        self.hand_shown = Counter(self.hands[q])
        self.say(self.hand_words(q) + suffix + ".")

    def hand_add(self, q: int, card: int) -> None:
        if self.hands is not None and 0 <= q < len(self.hands):
            self.hands[q][card] += 1

    def hand_take(self, q: int, card: int) -> None:
        if self.hands is not None and 0 <= q < len(self.hands):
            self.hands[q][card] -= 1
            if self.hands[q][card] <= 0:
                del self.hands[q][card]

    def hand_check(self, q: int, size: int) -> None:
        """Count a turn whose traced hand size is not the kept hand's (none expected)."""
        if self.hands is not None and 0 <= q < len(self.hands) \
                and sum(self.hands[q].values()) != size:
            self.hand_mismatches += 1

    def on_turn(self, turn, q, lp, hand, draw_pile, in_play, _e):
        self.flush_header()
        self.flush_draws()
        self.hand_check(q, hand)
        self.hand_shown = None
        self.active = q
        self.step = 0
        self.pending_step = None
        self.lp[q] = lp
        self.fallen.clear()
        self.turn_header = [turn, q, lp, hand, draw_pile, in_play]

    def on_draw(self, turn, q, card, left, *_):
        self.hand_add(q, card)
        if self.draws and q != self.draw_seat:
            self.flush_draws()
        self.draws.append(card)
        self.draw_seat = q
        self.draw_left = left

    def on_ip(self, turn, q, amount, source, pillar, other, _e):
        if source < 0:
            self.flush_header(ip=(amount, pillar, other))
            return
        self.say(f"{self.subject(q)}gains {amount} IP from {self.name(source)} "
                 "(non-Pillar IP, spent first).")

    def on_play(self, turn, q, card, cost, kicked, aoa_seat, _e):
        if self.hand_shown is None:
            self.show_hand(q)
        self.hand_take(q, card)
        c = self.cards[card] if 0 <= card < len(self.cards) else None
        text = f"{self.subject(q)}plays {self.name(card)} [{self.kind(card)}] for {cost} IP"
        if kicked and c is not None and c.kicker is not None:
            text += f", kicker paid (+{c.kicker.cost} IP: {c.kicker.canonical()})"
        if aoa_seat >= 0:
            text += ", including +1 IP for Attack-on-Attack"
        if c is not None and c.type == "defense":
            self.dp.setdefault((q, card), []).append(c.dp)
        self.say(text + ".")

    def on_search(self, turn, q, card, kind, permille, chosen, playouts):
        """One option a search pilot weighed (``EV_SEARCH``): its mean score over the
        playouts (a win 1, a draw 1/2), before the action it chose."""
        if not self.in_search:  # the first option of a decision: the hand it decides from
            self.show_hand(q)
            self.in_search = True
        what = {layout.ACT_PLAY: f"play {self.name(card)}",
                layout.ACT_PLAY_KICKED: f"play {self.name(card)} with its kicker",
                layout.ACT_AOA: f"{self.name(card)} Attack-on-Attack",
                layout.ACT_AOA_IN_PLAY: f"{self.name(card)} in play, Attack-on-Attack",
                layout.ACT_ACTIVATE: f"activate {self.name(card)}"}.get(kind, "stop")
        mark = "  <- chosen" if chosen else ""
        self.say(f"{self.subject(q)}search weighs: {what}: {permille / 10:.1f}% over "
                 f"{playouts} playouts{mark}")

    def on_activate(self, turn, q, card, slot, cost, *_):
        if self.hand_shown is None:
            self.show_hand(q)
        effects = self.cards[card].all_effects() if 0 <= card < len(self.cards) else ()
        what = f" ({effects[slot].canonical()})" if 0 <= slot < len(effects) else ""
        sideways = "" if self.kind(card) == "Pillar" else "; the card turns sideways"
        self.say(f"{self.subject(q)}activates {self.name(card)}{what}, paying {cost} IP"
                 f"{sideways}.")

    def on_aoa(self, turn, q, card, target_seat, target_card, *_):
        if self.hand_shown is None:  # an Attack in play declares it (R55): a decision too
            self.show_hand(q)
        self.say(f"{self.name(card)} declares Attack-on-Attack on "
                 f"{self.whose(target_seat, target_card)}.")

    def on_aoa_result(self, turn, q, card, target_seat, target_card, mine, theirs):
        text = (f"{self.name(card)} ({mine} damage) fights {self.whose(target_seat, target_card)} "
                f"({theirs} damage): ")
        if mine > theirs:
            text += f"{self.name(card)} survives with {mine - theirs} damage left."
        elif theirs > mine:
            text += f"{self.name(target_card)} survives with {theirs - mine} damage left."
        else:
            text += "equal damage, both are destroyed."
        self.say(text)

    def on_damage(self, turn, by, source, q, target, amount, left):
        before = self.dp_before(q, target, amount, left)
        dp = f"DP {before} → {left}" if before is not None else f"DP → {left}"
        src = self.name(source) if by == self.active else self.whose(by, source)
        self.say(f"{src} hits {self.whose(q, target)} [{self.kind(target)}] for {amount} "
                 f"({dp}).")

    def on_destroy(self, turn, q, card, by, *_):
        c = self.cards[card] if 0 <= card < len(self.cards) else None
        if by < 0:
            self.say(f"{self.whose(q, card)} has struck once and is discarded (one-shot).")
            return
        if c is not None and c.type in ("defense", "ua"):
            self.dp_leave(q, card)
        if c is not None and any(e.trigger == "on_destroy" for e in c.all_effects()):
            self.fallen[card] = q
        text = f"{self.whose(q, card)} [{self.kind(card)}] is destroyed"
        if c is not None and c.type == "ua":
            self.uas_lost[q] += 1
            text += (f" — {self.seat(q)} has lost {self.uas_lost[q]} of its "
                     f"{self.n_uas[q]} UAs")
        self.say(text + ".")

    def on_lp(self, turn, q, delta, after, cause, source, _e):
        before = self.lp[q]
        self.lp[q] = after
        who = self.seat(q)
        src = self.name(source) if source >= 0 else "an effect"
        if source in self.fallen:
            src = f"{self.whose(self.fallen[source], source)} (on destroy)"
        if cause == enums.V_HEAL:
            text = f"{who} gains {delta} LP from {src}"
        elif delta < 0:
            text = f"{who} loses {-delta} LP to {src}"
        else:
            text = f"{who}'s LP changes by {delta:+d} ({src})"
        self.say(f"{text} (LP {before} → {after}).")

    def on_drain(self, turn, q, ua, victim, amount, after, _e):
        before = self.lp[victim]
        self.lp[victim] = after
        whom = "its controller" if victim == q else "the opponent"
        self.say(f"{self.whose(q, ua)} drains {amount} LP from {self.seat(victim)}, {whom} "
                 f"(LP {before} → {after}).")

    def source(self, by: int, card: int) -> str:
        """The card an effect came from: ``Stamp Act``, ``Seat 1's Stamp Act``, or
        ``Seat 1's Stamp Act (on destroy)`` for a card destroyed this step."""
        if card in self.fallen:
            return f"{self.whose(self.fallen[card], card)} (on destroy)"
        return self.whose(by, card)

    def on_mill(self, turn, q, moved, left, kept, source, by):
        text = f"{self.source(by, source)}: {_top(moved, self.seat(q))} milled to the Discard Pile"
        if kept:
            text += (f"; {_plural(kept, 'Protect card')} {'stays' if kept == 1 else 'stay'} "
                     "on top (Amend. III)")
        self.say(f"{text} (draw pile {left}).")

    def on_exile(self, turn, q, moved, left, _kept, source, by):
        self.say(f"{self.source(by, source)}: {_top(moved, self.seat(q))} exiled, out of the "
                 f"game (draw pile {left}).")

    def on_discard(self, turn, q, card, source, by, *_):
        self.hand_take(q, card)
        self.say(f"{self.source(by, source)}: {self.seat(q)} discards {self.name(card)} from "
                 "hand, at random.")

    def on_repair(self, turn, q, card, amount, after, source, _e):
        copies = self.dp.get((q, card))
        if copies and after - amount in copies:
            copies[copies.index(after - amount)] = after
        self.say(f"{self.source(q, source)}: {self.subject(q)}repairs {self.name(card)} by "
                 f"{amount} (DP {after - amount} → {after}).")

    def on_recover(self, turn, q, card, source, *_):
        self.hand_add(q, card)
        self.say(f"{self.source(q, source)}: {self.subject(q)}returns {self.name(card)} from "
                 "the Discard Pile to hand.")

    def on_tutor(self, turn, q, card, source, *_):
        self.hand_add(q, card)
        self.say(f"{self.source(q, source)}: {self.subject(q)}takes {self.name(card)} [Pillar] "
                 "from the Draw Pile into hand, then shuffles.")

    def on_petition_lost(self, turn, q, card, by, *_):
        self.say(f"{self.whose(q, card)} [Petition] is destroyed by {self.seat(by)}.")

    def on_return(self, turn, q, card, *_):
        self.hand_add(q, card)
        self.say(f"{self.name(card)} [Bill] returns to {self.seat(q)}'s hand (Art. IV §7).")

    def on_hand_limit(self, turn, q, card, *_):
        self.hand_take(q, card)
        if self.step != 9:
            self.start_step(9)
        self.say(f"{self.subject(q)}discards {self.name(card)} to the hand limit of 7.")

    def on_mulligan(self, turn, q, before, after, *_):
        self.say(f"{self.seat(q)} mulligans a hand with {_plural(before, 'Pillar')}; the new "
                 f"hand has {_plural(after, 'Pillar')} (Amend. VII).")

    def on_p2_right(self, turn, q, card, *_):
        self.hand_take(q, card)
        self.say(f"{self.seat(q)} uses the Player 2 right: plays {self.name(card)} [Pillar] "
                 "free before the first turn and will draw 2 in its first Draw Phase "
                 "(Art. VII §4).")

    def on_resolve_step(self, turn, q, step, *_):
        self.flush_header()
        if self.hand_shown is None:  # no play this turn: the hand it chose to keep
            self.show_hand(self.active, ", none played")
        self.start_step(step)

    def on_turn_end(self, turn, q, lp, hand, draw_pile, in_play, petitions):
        self.hand_check(q, hand)
        self.flush_header()
        self.flush_draws()
        self.pending_step = None
        self.step = 0
        self.lines.append(f"  End of turn: LP {lp}, hand {hand}, draw pile {draw_pile}, "
                          f"in play {in_play}, Petitions {petitions}.")

    def on_eliminated(self, turn, q, path, rule, *_):
        self.say(f"{self.seat(q)} is out of the game: {_rule(rule)}.")

    def on_victory(self, turn, q, path, rule, *_):
        if rule == layout.RULE_PETITION and self.step != 5:
            self.start_step(5)
        if rule == layout.RULE_TURN_LIMIT:
            return  # between turns: the outcome line says it
        if q < 0:
            self.say(f"The game ends in a draw — {_rule(rule)}.")
        else:
            self.say(f"{self.seat(q)} wins by {PATH_TITLES.get(path, 'victory')} — "
                     f"{_rule(rule)}.")


_HANDLERS = {
    ev.EV_TURN: "turn", ev.EV_DRAW: "draw", ev.EV_IP: "ip", ev.EV_PLAY: "play",
    ev.EV_ACTIVATE: "activate", ev.EV_AOA: "aoa", ev.EV_AOA_RESULT: "aoa_result",
    ev.EV_DAMAGE: "damage", ev.EV_DESTROY: "destroy", ev.EV_LP: "lp", ev.EV_DRAIN: "drain",
    ev.EV_MILL: "mill", ev.EV_EXILE: "exile", ev.EV_DISCARD: "discard",
    ev.EV_REPAIR: "repair", ev.EV_RECOVER: "recover", ev.EV_TUTOR: "tutor",
    ev.EV_PETITION_LOST: "petition_lost", ev.EV_RETURN: "return",
    ev.EV_HAND_LIMIT: "hand_limit", ev.EV_MULLIGAN: "mulligan", ev.EV_P2_RIGHT: "p2_right",
    ev.EV_RESOLVE_STEP: "resolve_step", ev.EV_TURN_END: "turn_end",
    ev.EV_ELIMINATED: "eliminated", ev.EV_VICTORY: "victory", ev.EV_SEARCH: "search",
}
for _code, _name in _HANDLERS.items():  # ``on_<code>`` dispatches to ``on_<name>``
    setattr(_Decoder, f"on_{_code}", getattr(_Decoder, f"on_{_name}"))


def _top(n: int, seat: str) -> str:
    """``the top 3 cards of Seat 1's Draw Pile are``."""
    if n == 1:
        return f"the top card of {seat}'s Draw Pile is"
    return f"the top {n} cards of {seat}'s Draw Pile are"


def _rule(rule: int) -> str:
    if 0 < rule < len(layout.RULE_TEXT):
        return layout.RULE_TEXT[rule]
    return "the game ended"


def _format_switches(changed: dict[str, Any]) -> str:
    def show(v: Any) -> str:
        return str(v).lower() if isinstance(v, bool) else str(v)

    return ", ".join(f"{k} = {show(v)}" for k, v in changed.items())


def outcome_line(gm, decks: Sequence[str]) -> str:
    """``Winner: Seat 0 (Deck) by Attack Victory on turn 17 — Art. III §2: ...``, or a draw."""
    winner = int(gm[layout.G_WINNER])
    path = int(gm[layout.G_PATH])
    turns = int(gm[layout.G_TURN])
    rule = _rule(int(gm[layout.G_RULE]))
    if winner < 0 or path == enums.PATH_DRAW:
        return f"Draw: no winner after {_plural(turns, 'turn')} — {rule}"
    deck = f" ({decks[winner]})" if 0 <= winner < len(decks) else ""
    return (f"Winner: Seat {winner}{deck} by {PATH_TITLES.get(path, 'victory')} on turn "
            f"{turns} — {rule}")


def decode(trace, gm, pl, catalog, decks: Sequence[str] | GameSetup,
           policies: Sequence[str] | None = None) -> list[str]:
    """The game as lines of plain text: header, setup, every turn, the outcome.

    ``trace`` int32[k, 8] and ``gm``, ``pl`` as ``driver.trace_game`` returns them;
    ``catalog`` names the cards (card id = catalog index). ``decks`` is the deck name of
    each seat, or a ``GameSetup`` with the rest of the header (seed, deal, rules, ...).
    """
    setup = decks if isinstance(decks, GameSetup) else GameSetup(decks=list(decks))
    if policies is not None:
        setup.policies = list(policies)
    n_players = int(gm[layout.G_N_PLAYERS]) or len(setup.decks)
    first = setup.first_seat if setup.first_seat is not None else int(gm[layout.G_FIRST])
    d = _Decoder(catalog, setup, n_players, first)
    out = d.lines

    # ---- header
    out.append("Revolt N Reign — one game, turn by turn")
    for q in range(n_players):
        policy = f", policy {setup.policies[q]}" if setup.policies else ""
        order = " — goes first" if q == first else (
            " — Player 2" if q == (first + 1) % n_players else "")
        out.append(f"  Seat {q}: {setup.decks[q]}{policy}{order}")
    where = []
    if setup.seed is not None:
        where.append(f"seed {setup.seed}")
    if setup.deal is not None:
        where.append(f"deal {setup.deal}")
    if setup.table_id:
        where.append(f"table {setup.table_id}")
    if where:
        out.append("  Game: " + ", ".join(where))
    if setup.rules_changed:
        out.append(f"  Rules: {setup.rules_name} (changed: "
                   f"{_format_switches(setup.rules_changed)})")
    else:
        out.append(f"  Rules: {setup.rules_name} (every switch at its default)")
    if setup.catalog_name:
        out.append(f"  Cards: {setup.catalog_name}")

    # ---- setup
    out.append("")
    out.append("Setup (Art. VII §1-4): each seat puts its UAs in play, shuffles, draws 7, "
               "100 LP")
    for q in range(n_players):
        uas = [(c, cards) for (s, c), cards in sorted(d.dp.items()) if s == q]
        if uas:
            shown = ", ".join(
                f"{catalog.cards[c].name} (DP {catalog.cards[c].dp}, drain "
                f"{catalog.cards[c].drain})" for c, copies in uas for _ in copies)
            out.append(f"  Seat {q}'s UAs: {shown}")
    rows = [list(map(int, r)) for r in (trace.tolist() if hasattr(trace, "tolist") else trace)]
    k = 0
    while k < len(rows) and rows[k][0] < 0:  # setup events (turn -1)
        k += 1
    setup_rows = rows[:k]
    for q in range(n_players):
        mulligan = [r for r in setup_rows if r[1] == ev.EV_MULLIGAN and r[2] == q]
        if mulligan:
            d.event(mulligan[0])
        else:
            out.append(f"  Seat {q} keeps its opening hand.")
        if d.hands is not None:
            out.append(f"    {d.hand_words(q).replace('Hand', 'Opening hand', 1)}.")
    p2 = (first + 1) % n_players
    right = [r for r in setup_rows if r[1] == ev.EV_P2_RIGHT]
    if right:
        d.event(right[0])
    elif setup.rules_values.get("p2_free_pillar") == "off":
        out.append("  The Player 2 right is switched off (p2_free_pillar = off).")
    else:
        out.append(f"  Seat {p2} (Player 2) places no free Pillar and draws 1 as usual.")
    for r in setup_rows:
        if r[1] not in (ev.EV_MULLIGAN, ev.EV_P2_RIGHT):
            d.event(r)

    # ---- turns
    for row in rows[k:]:
        d.event(row)
    d.flush_header()
    d.flush_draws()
    if not rows or rows[-1][1] != ev.EV_VICTORY:
        out.append("  (the trace ends here: the rest of the game was not recorded)")

    # ---- outcome
    out.append("")
    out.append(outcome_line(gm, setup.decks))
    final = []
    for q in range(n_players):
        final.append(
            f"  Seat {q}: LP {int(pl[q, layout.P_LP])}, UAs lost {int(pl[q, layout.P_UAS_LOST])} "
            f"of {int(pl[q, layout.P_N_UAS])}, Petitions {int(pl[q, layout.P_N_PETITIONS])}, "
            f"Scroll Pillars {int(pl[q, layout.P_N_SCROLL_PILLARS])}, "
            f"Pillars {int(pl[q, layout.P_N_PILLARS])}, turns taken {int(pl[q, layout.P_TURNS])}"
        )
    out.append("Final state:")
    out.extend(final)
    if d.hand_mismatches:  # never expected: every move into or out of a hand is traced
        out.append(f"Note: on {_plural(d.hand_mismatches, 'turn')} the hands shown disagree "
                   "with the engine's hand count; they may be off.")
    return out


# ---------------------------------------------------------------------------- playing one game


@dataclass
class Replay:
    """A traced game and everything needed to read it."""

    lines: list[str]
    trace: Any
    gm: Any
    pl: Any
    setup: GameSetup

    @property
    def winner(self) -> int:
        return int(self.gm[layout.G_WINNER])

    @property
    def path(self) -> str:
        return enums.PATHS[int(self.gm[layout.G_PATH])]

    @property
    def turns(self) -> int:
        return int(self.gm[layout.G_TURN])


def load_inputs(decks: Sequence[str | Path],
                cards: str | Path | Sequence[str | Path] | None = None,
                rules: str | Path | None = None, policy: str | None = None,
                allow_illegal: bool = False):
    """(catalog, decks, profile, policies) for a replay, checked (raises ``InputError``)."""
    from rnr_sim.cards import load_catalog
    from rnr_sim.decks import load_deck, validate_deck
    from rnr_sim.pilots import resolve_policies
    from rnr_sim.rules import load_profile

    if len(decks) < MIN_PLAYERS:
        raise InputError(f"replay needs {MIN_PLAYERS} to {enums.MAX_PLAYERS} deck lists, one "
                         f"per seat; got {len(decks)} (e.g. rnr-sim replay decks/a.txt "
                         "decks/b.txt)")
    if len(decks) > enums.MAX_PLAYERS:
        raise InputError(f"replay plays {MIN_PLAYERS} to {enums.MAX_PLAYERS} seats; got "
                         f"{len(decks)} deck lists")
    from rnr_sim.decks import catalog_paths

    catalog = load_catalog(catalog_paths(cards, decks))  # several files layer in order
    profile = load_profile(None if rules is None else Path(rules))
    loaded = [load_deck(p, catalog) for p in decks]
    for deck in loaded:
        if len(deck.card_ids) > enums.MAX_SLOTS:
            raise InputError(f"{deck.path}: {len(deck.card_ids)} cards; the engine plays decks "
                             f"of at most {enums.MAX_SLOTS}")
        if not allow_illegal:
            errors = [v for v in validate_deck(deck, catalog, profile) if not v.warning]
            if errors:
                raise InputError(f"deck '{deck.name}' ({deck.path}) is illegal: {errors[0]}; "
                                 "see `rnr-sim validate`, or pass --allow-illegal")
    policies = resolve_policies(loaded, policy)  # built-in names or policy files
    return catalog, loaded, profile, policies


def opening_hand(card_ids: Sequence[int], mask: int) -> list[int]:
    """The catalog ids of a seat's final opening hand from its slot mask (bit k: deck slot
    k, ``records.SEAT_RECORD.opening_mask``)."""
    return [int(c) for k, c in enumerate(card_ids) if k < 64 and (mask >> k) & 1]


def replay_game(decks: Sequence[str | Path], seed: int | None = None, game: int = 0,
                cards: str | Path | Sequence[str | Path] | None = None,
                rules: str | Path | None = None,
                policy: str | None = None, allow_illegal: bool = False,
                log: Callable[[str], None] | None = None,
                search_seat: int | None = None, rollouts: int = 32,
                determinizations: int = 2, open_lists: bool = False) -> Replay:
    """Play deal ``game`` of table 0 with the trace on, seat q holding ``decks[q]``, the
    first seat ``game % P`` (so consecutive games alternate seats, as in a run).
    ``search_seat``: that seat plays the search pilot (``rollouts`` K, ``determinizations``
    N; its own pilot plays the rollouts and is kept unless an option beats it clearly;
    ``open_lists``: it knows the other decks' lists, else it believes them one of the
    decks given, R59), and the log shows each option it weighed.
    ``log`` hears a notice when the engine must compile first. Raises ``InputError``."""
    import numpy as np

    from rnr_sim.runs.planning import DEFAULT_SEED, SEED_LIMIT

    seed = DEFAULT_SEED if seed is None else seed
    if isinstance(seed, bool) or not 0 <= seed < SEED_LIMIT:
        raise InputError(f"--seed must be a whole number 0..{SEED_LIMIT - 1}, not {seed}")
    if isinstance(game, bool) or game < 0:
        raise InputError(f"--game must be a whole number at least 0, not {game}")
    catalog, loaded, profile, policies = load_inputs(decks, cards, rules, policy,
                                                     allow_illegal)
    from rnr_sim.engine import driver

    compiling = log is not None and driver.needs_compile()
    n = len(loaded)
    deck_cards = np.full((n, enums.MAX_SLOTS), -1, dtype=np.int32)
    deck_size = np.zeros(n, dtype=np.int32)
    for q, deck in enumerate(loaded):
        deck_cards[q, : len(deck.card_ids)] = deck.card_ids
        deck_size[q] = len(deck.card_ids)
    from rnr_sim.pilots import policy_rows

    names, table, index = policy_rows(policies)
    seat_policy = np.array([index[p] for p in policies], dtype=np.int32)
    search = None
    if search_seat is not None:
        if isinstance(search_seat, bool) or not 0 <= search_seat < n:
            raise InputError(f"--search-seat must be a seat 0..{n - 1}, not {search_seat}")
        for flag, value in (("--rollouts", rollouts), ("--determinizations", determinizations)):
            if isinstance(value, bool) or not 1 <= value <= 4096:
                raise InputError(f"{flag} must be a whole number 1..4096, not {value}")
        # The search seat gets its own row (a copy of its pilot, which plays its rollouts).
        table = np.vstack([table, table[seat_policy[search_seat]][None, :]])
        from rnr_sim.skill import search_budget

        lists = "open lists" if open_lists else "hidden lists"
        names = [*names, f"search (K={rollouts}, N={determinizations}, {lists}; rollouts: "
                         f"{names[seat_policy[search_seat]]})"]
        seat_policy[search_seat] = len(table) - 1
        search = np.zeros((len(table), 4), dtype=np.int64)
        search[-1] = search_budget(rollouts, determinizations, None, open_lists)
    first = game % n
    with compile_clock(compiling, log=log):
        trace, gm, pl, seats = driver.trace_game(
            catalog.compile(), deck_cards, deck_size, seat_policy, profile.compile(), seed,
            table_id=0, deal=game, first_seat=first, policies=table, search=search,
            with_seats=True)
    setup = GameSetup(
        decks=[deck.name for deck in loaded], policies=[names[i] for i in seat_policy],
        seed=seed, deal=game,
        first_seat=first, rules_name=profile.name, rules_changed=profile.changed(),
        rules_values=dict(profile.values),
        deck_cards=[list(map(int, deck.card_ids)) for deck in loaded],
        catalog_name=f"{catalog.name} v{catalog.version}",
        opening=[opening_hand(deck.card_ids, int(mask))
                 for deck, mask in zip(loaded, seats["opening_mask"], strict=True)],
    )
    lines = decode(trace, gm, pl, catalog, setup)
    return Replay(lines=lines, trace=trace, gm=gm, pl=pl, setup=setup)
