"""Heuristic players as data: a policy is a float64 weight vector the kernels read.

Each decision (mulligan, the Player 2 right, which card to play next and whether to stop,
Attack targets, Attack-on-Attack, effect targets, discards to the hand limit) scores its
legal actions with these weights; the ``random`` policy scores them with uniform noise,
so it picks uniformly among the legal actions (a floor for comparison).
"""

import numpy as np

from rnr_sim.enums import (
    N_VERBS,
    V_DESTROY_PETITION,
    V_DISCARD,
    V_EXILE,
    V_FORCE_DRAW,
    V_HEAL,
    V_LP,
    V_MILL,
    V_NONE,
    V_STRIKE,
    V_STRIKE_UA,
    VERB_VALUE,
    VERBS,
)

# Weight indices. W_VERB + verb: value of one unit of that verb's amount.
W_VERB = 0
W_PILLAR = N_VERBS + 0  # value of a Pillar's IP while below the Pillar target
W_SCROLL_PILLAR = N_VERBS + 1  # extra for a Scroll Pillar while fewer than 3 (Art. III §3)
W_ATTACK = N_VERBS + 2  # per point of Attack damage
W_DEFENSE = N_VERBS + 3  # per DP of a Defense, scaled up by the threat of opposing Attacks
W_PETITION = N_VERBS + 4  # a Petition while fewer than 3 in the Petition Area
W_AOA = N_VERBS + 5  # per point of opposing Attack damage removed by Attack-on-Attack
W_EACH_TURN = N_VERBS + 6  # an 'each turn' effect is worth this many one-off uses
W_STOP = N_VERBS + 7  # play only actions scoring above this
W_MULLIGAN_MIN = N_VERBS + 8  # keep a hand with at least this many Pillars ...
W_MULLIGAN_MAX = N_VERBS + 9  # ... and at most this many
W_RANDOM = N_VERBS + 10  # 1: uniformly random among legal actions
W_P2_RIGHT = N_VERBS + 11  # 1: take the Player 2 Pillar right when a Pillar is in hand
W_COST = N_VERBS + 12  # penalty per IP spent
W_PILLAR_TARGET = N_VERBS + 13  # Pillars wanted in play
W_KICKER = N_VERBS + 14  # multiplier on a Freedom kicker's value
W_UA_ATTACK = N_VERBS + 15  # multiplier on Attack value while the opponent has no Defense
W_GIFT = N_VERBS + 16  # value to an opponent of each card an effect makes them draw
W_HORIZON = N_VERBS + 17  # Draw Pile size (+5) at which a milled card counts its full value
W_PILLAR_EXTRA = N_VERBS + 18  # value of a Pillar's IP once the Pillar target is met
N_WEIGHTS = N_VERBS + 19


#: Every weight a policy file may set: name -> (index, lowest, highest, meaning). Verb
#: values are ``verb:NAME`` (per unit of the verb's amount). Ranges are what the decision
#: code reads sensibly; a file outside them is refused.
WEIGHT_SPECS: dict[str, tuple[int, float, float, str]] = {
    "pillar": (W_PILLAR, 0.0, 100.0, "value of a Pillar's IP while below the Pillar target"),
    "scroll_pillar": (W_SCROLL_PILLAR, 0.0, 100.0,
                      "extra for a Scroll Pillar while fewer than 3 are in play (Art. III §3)"),
    "attack": (W_ATTACK, 0.0, 100.0, "value per point of Attack damage"),
    "defense": (W_DEFENSE, 0.0, 100.0,
                "value per DP of a Defense, scaled up by the threat of opposing Attacks"),
    "petition": (W_PETITION, 0.0, 100.0, "value of a Petition while fewer than 3 are in play"),
    "aoa": (W_AOA, 0.0, 100.0, "value per point of opposing Attack damage removed by "
            "Attack-on-Attack"),
    "each_turn": (W_EACH_TURN, 0.0, 100.0,
                  "an 'each turn' effect is worth this many one-off uses"),
    "stop": (W_STOP, -1e9, 1e9, "play only actions scoring above this (1e9: never play)"),
    "mulligan_min": (W_MULLIGAN_MIN, 0.0, 7.0, "keep an opening hand with at least this many "
                     "Pillars ..."),
    "mulligan_max": (W_MULLIGAN_MAX, 0.0, 7.0, "... and at most this many"),
    "random": (W_RANDOM, 0.0, 1.0, "1: choose uniformly among legal actions (0 or 1)"),
    "p2_right": (W_P2_RIGHT, 0.0, 1.0, "1: take the Player 2 free Pillar when one is in hand "
                 "(0 or 1)"),
    "cost": (W_COST, 0.0, 100.0, "penalty per IP spent"),
    "pillar_target": (W_PILLAR_TARGET, 0.0, 60.0, "Pillars wanted in play"),
    "kicker": (W_KICKER, 0.0, 100.0, "multiplier on a Freedom kicker's value"),
    "ua_attack": (W_UA_ATTACK, 0.0, 100.0,
                  "multiplier on Attack value while the opponent has no Defense"),
    "gift": (W_GIFT, 0.0, 100.0, "value to an opponent of each card a 'force draw' hands "
             "them (subtracted, unless it empties their Draw Pile)"),
    "horizon": (W_HORIZON, 0.0, 1000.0, "a card milled, exiled or forced from a Draw Pile of "
                "n counts horizon / (n + 5) times its verb value"),
    "pillar_extra": (W_PILLAR_EXTRA, 0.0, 100.0,
                     "value per IP of a Pillar once the Pillar target is met"),
}
for _v, _name in enumerate(VERBS):
    if _v != V_NONE:
        WEIGHT_SPECS[f"verb:{_name}"] = (W_VERB + _v, -100.0, 100.0,
                                         f"value per unit of '{_name}'")
#: Weights that take whole numbers, or only 0 and 1.
WHOLE_WEIGHTS = frozenset({"mulligan_min", "mulligan_max", "pillar_target"})
FLAG_WEIGHTS = frozenset({"random", "p2_right"})
assert sorted(i for i, *_ in WEIGHT_SPECS.values()) == list(range(1, N_WEIGHTS))  # 0: no verb


def _policy(**kw) -> np.ndarray:
    w = np.zeros(N_WEIGHTS, dtype=np.float64)
    base = dict(enumerate(VERB_VALUE))  # each verb's default value per unit
    verbs = kw.pop("verbs", {})
    base.update(verbs)
    for v, x in base.items():
        w[W_VERB + v] = x
    fields = dict(pillar=4.0, scroll_pillar=0.0, attack=1.0, defense=0.5, petition=1.0,
                  aoa=1.0, each_turn=3.0, stop=0.1, mulligan_min=2, mulligan_max=5,
                  random=0, p2_right=1, cost=0.2, pillar_target=8, kicker=1.0, ua_attack=1.0,
                  gift=2.0, horizon=25.0, pillar_extra=0.5)
    fields.update(kw)
    for k, v in fields.items():
        w[globals()["W_" + k.upper()]] = v
    return w


POLICIES: dict[str, np.ndarray] = {
    "balanced": _policy(),
    "aggro": _policy(verbs={V_LP: 3.0, V_HEAL: 0.3, V_STRIKE: 0.2, V_STRIKE_UA: 0.0},
                     attack=0.3, defense=0.4, ua_attack=0.2, petition=0.2),
    "mill": _policy(verbs={V_MILL: 2.5, V_EXILE: 2.5, V_FORCE_DRAW: 3.0, V_DISCARD: 1.5,
                           V_STRIKE_UA: 0.0, V_LP: 0.5},
                    attack=0.4, defense=0.9, ua_attack=0.2, petition=0.2),
    "breaker": _policy(verbs={V_STRIKE: 2.0, V_STRIKE_UA: 3.0, V_LP: 0.3},
                       attack=3.0, aoa=2.0, defense=0.4, ua_attack=1.5, petition=0.2),
    "petition": _policy(verbs={V_HEAL: 1.5, V_DESTROY_PETITION: 4.0, V_STRIKE_UA: 0.1},
                        petition=12.0, scroll_pillar=8.0, attack=0.4, defense=0.9,
                        ua_attack=0.3),
    "random": _policy(random=1),
}
POLICY_NAMES: tuple[str, ...] = tuple(POLICIES)


def policy_table() -> np.ndarray:
    """float64[n_policies, N_WEIGHTS], rows in ``POLICY_NAMES`` order."""
    return np.stack([POLICIES[n] for n in POLICY_NAMES])
