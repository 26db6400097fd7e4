"""The rules profile: every switch of the rulings, its default, allowed values and source.

The default profile is ``constitution`` (docs/rulings.md). A designer's variant is a small TOML
file setting any subset of the switches, at the top level or under ``[rules]``. The
profile compiles to a small int64 array the engine reads (indices ``R_*`` below), and
serialises in full into every run's manifest.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rnr_sim import enums
from rnr_sim.enums import (  # noqa: F401 (re-exported: the profile's indices and values)
    BILLS_PER_GAME,
    BILLS_PER_PLAYER,
    DRAIN_CONTROLLER,
    DRAIN_EVERY_TURN,
    DRAIN_OPPONENT,
    DRAIN_OWN_TURN,
    LIFETIME_ONE_SHOT,
    LIFETIME_PERSISTENT,
    LP_AT_DAMAGE,
    LP_AT_EFFECTS,
    MP_FIRST_VICTORY,
    MP_LAST_STANDING,
    OD_AT_ONCE,
    OD_BY_STEP,
    P2_ANY,
    P2_OFF,
    P2_ZERO_COST_ONLY,
    R_ABILITIES_ARE_EFFECTS,
    R_AOA,
    R_AOA_FROM_PLAY,
    R_ATTACK_LIFETIME,
    R_ATTACK_TARGETS,
    R_BILL_ESCALATION,
    R_BRANCH_COUNTS_UAS,
    R_DECK_INCLUDES_UAS,
    R_DESTROYED_CARDS_RESOLVE,
    R_FIRST_PLAYER_DRAWS,
    R_IP_EFFECTS_IMMEDIATE,
    R_LP_CAP,
    R_LP_EFFECTS_STEP,
    R_MAX_BILLS,
    R_MAX_COPIES_ATTACK_DEFENSE,
    R_MAX_FREEDOM,
    R_MAX_RARES,
    R_MIN_PILLARS,
    R_MULTIPLAYER,
    R_ON_DESTROY_TIMING,
    R_P2_FREE_PILLAR,
    R_PILLARS_PER_TURN,
    R_PROTECT_STOPS_MILL,
    R_SIDEWAYS_RESET,
    R_TURN_LIMIT,
    R_TURN_LIMIT_SCALES,
    R_UA_DRAIN_TARGET,
    R_UA_DRAIN_WHEN,
    TARGETS_AT_DAMAGE,
    TARGETS_PLAY_PHASE,
    UPRIGHT_EACH_TURN_CARDS,
    UPRIGHT_EVERY_CARD,
)
from rnr_sim.errors import InputError, decode_text, read_input


@dataclass(frozen=True)
class Switch:
    """One switch: its name, default, allowed values (enum) or range (int), and source."""

    name: str
    default: Any
    ruling: str
    cite: str
    summary: str
    choices: tuple[str, ...] = ()  # enum switches: allowed strings, compiled to their index
    minimum: int | None = None  # int switches
    maximum: int | None = None

    @property
    def kind(self) -> str:
        if self.choices:
            return "choice"
        if isinstance(self.default, bool):
            return "bool"
        return "int"

    def compile(self, value: Any) -> int:
        if self.kind == "choice":
            return self.choices.index(value)
        return int(value)


SWITCHES: tuple[Switch, ...] = (
    Switch("deck_includes_uas", True, "R1", "Art. V §1; Art. VI §1; Art. VII §1",
           "the 60 cards include the 3 UAs (57 shuffled)"),
    Switch("min_pillars", 15, "R2", "Art. V §2", "fewest Pillars in a legal deck",
           minimum=0, maximum=60),
    Switch("max_freedom", 4, "R3", "Art. IV §6; Art. V §3",
           "most Freedom cards in a deck, each a single copy", minimum=0, maximum=60),
    Switch("max_bills", 4, "R3", "Art. IV §7; Art. V §3",
           "most Bill cards in a deck, each a single copy", minimum=0, maximum=60),
    Switch("max_copies_attack_defense", 4, "R4", "Art. IV §4-5; Art. V §5",
           "most copies of one named Attack or Defense", minimum=1, maximum=60),
    Switch("max_rares", 6, "R31", "Art. V §4", "most Rare cards, UAs not counted",
           minimum=0, maximum=60),
    Switch("p2_free_pillar", "any", "R7", "Art. VII §4; Amend. VIII",
           "the second seat's free pre-game Pillar", choices=("any", "zero_cost_only", "off")),
    Switch("first_player_draws", True, "R8", "Art. VII §5", "the first player draws on turn 1"),
    Switch("pillars_per_turn", 0, "R10", "Art. IV §1", "Pillars a player may play each turn "
           "(0 = unlimited)", minimum=0, maximum=60),
    Switch("lp_cap", 0, "R14", "Art. II §1", "highest LP (0 = no cap)", minimum=0,
           maximum=1_000_000),
    Switch("turn_limit", 200, "R15", "Art. III", "turns (all seats) before a game is a draw",
           minimum=1, maximum=100_000),
    Switch("attack_lifetime", "persistent", "R16", "Art. VI §6; Amend. I §3",
           "Attacks stay and strike each turn, or are discarded after one damage step",
           choices=("persistent", "one_shot")),
    Switch("aoa", True, "R17", "Amend. I", "Attack-on-Attack combat may be declared"),
    Switch("ua_drain_target", "controller", "R20", "Amend. IV §1 (vs Art. VII §5 vii)",
           "whose LP a UA drains", choices=("controller", "opponent")),
    Switch("ua_drain_when", "own_turn", "R21", "Amend. IV §2",
           "UAs drain in their controller's Resolve Phase only, or in every one",
           choices=("own_turn", "every_turn")),
    Switch("multiplayer", "first_victory", "R26", "Art. III",
           "3-4 players: the first victory ends the game, or the last player standing wins",
           choices=("first_victory", "last_standing")),
    Switch("ip_effects_immediate", True, "R32", "Art. II §2; Art. VII §5",
           "an `ip` effect of a card played in the Play Phase gives its IP at once"),
    Switch("turn_limit_scales", True, "R45", "Art. III; R15",
           "the turn limit counts rounds: turn_limit x players / 2 turns at 3-4 players"),
    Switch("on_destroy_timing", "at_once", "R47", "Art. VII §5 steps iii-vi; R36",
           "'on destroy' effects fire at once, or wait for their verb's Resolve step",
           choices=("at_once", "by_step")),
    Switch("attack_targets", "at_damage", "R48", "Amend. II §4; R33",
           "an Attack picks its target as its damage lands, or declares it in the Play Phase",
           choices=("at_damage", "play_phase")),
    Switch("destroyed_cards_resolve", True, "R50", "Art. VII §5 phase four",
           "a card played this turn and destroyed before the Resolve step of its effects "
           "still resolves them, and an activation paid for still resolves (R52)"),
    Switch("sideways_reset", "every_card", "R29", "Art. VII §5 phase five, §6; Amend. V §2-3",
           "sideways cards return upright at their controller's next turn: every card an "
           "activation turned, or only cards bearing an 'each turn' effect (the literal "
           "reading: the others stay sideways)", choices=("every_card", "each_turn_cards")),
    Switch("bill_escalation", "per_player", "R53", "Art. IV §7.3-4; R28",
           "a Bill's cost doubles with each earlier play of its name by the same player, or "
           "by any player (the name's count shared by the table, all game)",
           choices=("per_player", "per_game")),
    Switch("branch_counts_uas", True, "R54", "Art. V §1, §6; R5",
           "the 3 UAs count toward the Branch requirement (off: Art. V §1 puts them outside "
           "the deck, so only the other cards count)"),
    Switch("aoa_from_play", False, "R55", "Art. VII §5 phase three; Amend. I §1; R17",
           "an Attack already in play may declare Attack-on-Attack in its controller's Play "
           "Phase, paying its cost + 1, besides an Attack played from hand to fight"),
    Switch("protect_stops_mill", True, "R56", "Amend. III; R19, R38",
           "a milled Protect card stays on the Draw Pile (off: Amend. III stops only "
           "discards, and a mill moves cards from the pile, not from the hand)"),
    Switch("abilities_are_effects", False, "R57", "Art. VII §7; Amend. IV §3, V §1; R30",
           "a card's built-in ability (an Attack's damage, a Pillar's IP, a UA's drain) "
           "counts as one of its two effects: the validator warns of a deck card that holds "
           "one beside two written effects"),
    Switch("lp_effects_step", "damage", "R58", "Art. VII §5 steps iii, vi; R13",
           "an `lp` effect (LP damage by card text, not an Attack's) resolves at step iii "
           "with the Attacks' damage, or at step vi with 'all remaining' effects",
           choices=("damage", "effects")),
)

SWITCH_BY_NAME = {s.name: s for s in SWITCHES}
# Indices into the compiled profile array and the compiled values of the choice switches
# live in ``enums`` (the kernels read them without importing this module); checked here.
N_RULES = len(SWITCHES)
assert all(getattr(enums, "R_" + s.name.upper()) == i for i, s in enumerate(SWITCHES))
assert N_RULES == enums.N_RULES


@dataclass(frozen=True)
class RulesProfile:
    """A full assignment of every switch. ``name`` is ``constitution`` for the defaults."""

    name: str
    values: dict[str, Any]
    source: str | None = None

    def changed(self) -> dict[str, Any]:
        """The switches whose value is not the default."""
        return {k: v for k, v in self.values.items() if v != SWITCH_BY_NAME[k].default}

    def compile(self) -> np.ndarray:
        """The profile as the engine reads it: int64[N_RULES], indexed by ``R_*``."""
        return np.array([s.compile(self.values[s.name]) for s in SWITCHES], dtype=np.int64)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "switches": dict(self.values)}

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


def default_profile() -> RulesProfile:
    return RulesProfile("constitution", {s.name: s.default for s in SWITCHES})


def _check_value(sw: Switch, value: Any, where: str) -> Any:
    if sw.kind == "bool":
        if not isinstance(value, bool):
            raise InputError(f"{where}: switch '{sw.name}' takes true or false, not {value!r}")
        return value
    if sw.kind == "choice":
        if value not in sw.choices:
            valid = ", ".join(f'"{c}"' for c in sw.choices)
            raise InputError(f"{where}: switch '{sw.name}' = {value!r} is not one of {valid}")
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}: switch '{sw.name}' takes a whole number, not {value!r}")
    if (sw.minimum is not None and value < sw.minimum) or (
        sw.maximum is not None and value > sw.maximum
    ):
        raise InputError(
            f"{where}: switch '{sw.name}' = {value} is outside {sw.minimum}..{sw.maximum}"
        )
    return value


#: Art. V §1 (R1): a deck's cards; Art. IV §3.1: its UAs.
DECK_SIZE = 60
N_UAS = 3


def most_pillars(deck_includes_uas: bool) -> int:
    """The most Pillars a legal deck can hold: its 60 cards, less the 3 UAs when they are
    among the 60 (Art. V §1-2, R1). Pillars have no copy limit (R4), so any ``min_pillars``
    up to this number leaves legal decks; above it, none."""
    return DECK_SIZE - (N_UAS if deck_includes_uas else 0)


def profile_problem(values: dict[str, Any]) -> tuple[str, str] | None:
    """(switch, why) when the switches together leave no legal deck, else None.

    Art. V fixes a deck as 60 cards (R1) holding 3 UAs, at least ``min_pillars`` Pillars,
    at least one card of each Branch (UAs count, R5, unless R54 says not) and at most ``max_freedom`` Freedom
    cards, ``max_bills`` Bills, ``max_rares`` Rares and ``max_copies_attack_defense``
    copies of each Attack and Defense. Every limit but the Pillar minimum is a cap that a
    deck meets by holding fewer of something, and Pillars and Rights cards (no copy
    limit, R4) fill any remainder, so the Pillar minimum is the only switch that can leave
    no legal deck: when it exceeds the room the 60 cards leave beside the UAs.
    """
    room = most_pillars(values["deck_includes_uas"])
    if values["min_pillars"] > room:
        uas = ("with deck_includes_uas = true a deck holds 60 cards, 3 of them UAs"
               if values["deck_includes_uas"] else "a deck holds 60 cards besides its 3 UAs")
        return "min_pillars", (
            f"min_pillars = {values['min_pillars']} leaves no legal deck: {uas}, so at most "
            f"{room} Pillars (Art. V §1-2, R1-R2); set min_pillars to {room} or less")
    return None


def _line_of(text: str | None, key: str) -> str:
    """':LINE' of the first line setting ``key`` in a rules file's text, or ''."""
    if text:
        for n, line in enumerate(text.splitlines(), start=1):
            if re.match(rf"\s*{re.escape(key)}\s*=", line):
                return f":{n}"
    return ""


def profile_from_mapping(data: dict[str, Any], name: str, where: str,
                         text: str | None = None) -> RulesProfile:
    """Apply a mapping of switches over the defaults; unknown or ill-typed ones are errors,
    and so are switches that together leave no legal deck (``profile_problem``). ``text``,
    the file's text, lets that error name the line of the switch."""
    values = default_profile().values.copy()
    for key, value in data.items():
        sw = SWITCH_BY_NAME.get(key)
        at = f"{where}{_line_of(text, key)}"
        if sw is None:
            from difflib import get_close_matches

            near = get_close_matches(key, SWITCH_BY_NAME, n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            valid = ", ".join(SWITCH_BY_NAME)
            raise InputError(f"{at}: unknown switch {key!r}{hint}; valid switches: {valid}")
        values[key] = _check_value(sw, value, at)
    problem = profile_problem(values)
    if problem is not None:
        switch, why = problem
        raise InputError(f"{where}{_line_of(text, switch)}: {why}")
    return RulesProfile(name, values, source=where)


def load_profile(path: str | Path | None) -> RulesProfile:
    """The profile of a rules TOML file, or the default profile when ``path`` is None."""
    if path is None:
        return default_profile()
    p = Path(path)
    raw = read_input(p, "rules file", "a rules profile (a TOML file)")
    text = decode_text(raw, str(p), "a rules profile is TOML")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        at = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        if at is None:
            raise InputError(f"{p}: broken TOML: {e}") from None
        what = str(e)[:at.start()].strip()
        raise InputError(f"{p}:{at.group(1)}: broken TOML: {what} (column {at.group(2)})"
                         ) from None
    if "rules" in data and isinstance(data["rules"], dict):
        extra = [k for k in data if k not in ("rules", "name")]
        if extra:
            raise InputError(f"{p}{_line_of(text, extra[0])}: unexpected key "
                             f"'{extra[0]}' beside [rules]")
        switches = data["rules"]
    else:
        switches = {k: v for k, v in data.items() if k != "name"}
    name = data.get("name", p.stem)
    return profile_from_mapping(switches, str(name), str(p), text)
