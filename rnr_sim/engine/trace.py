"""Event codes of the game trace. Each trace row is int32[8]:
``turn, event, seat, a, b, c, d, e``; the meaning of a..e per event is in ``EVENT_FIELDS``.
``rnr_sim.replay`` decodes a trace into a readable log.
"""

EV_TURN = 1
EV_DRAW = 2
EV_IP = 3
EV_PLAY = 4
EV_ACTIVATE = 5
EV_AOA = 6
EV_AOA_RESULT = 7
EV_DAMAGE = 8
EV_DESTROY = 9
EV_LP = 10
EV_DRAIN = 11
EV_MILL = 12
EV_EXILE = 13
EV_DISCARD = 14
EV_REPAIR = 15
EV_RECOVER = 16
EV_TUTOR = 17
EV_PETITION_LOST = 18
EV_RETURN = 19
EV_HAND_LIMIT = 20
EV_MULLIGAN = 21
EV_P2_RIGHT = 22
EV_RESOLVE_STEP = 23
EV_TURN_END = 24
EV_ELIMINATED = 25
EV_VICTORY = 26
EV_SEARCH = 27  # a search pilot's option and its value (engine/search.py)

EVENT_FIELDS = {
    EV_TURN: ("lp", "hand", "draw_pile", "in_play"),
    EV_DRAW: ("card", "draw_pile_left"),
    EV_IP: ("amount", "source_card (-1: Independence Phase)", "pillar_ip", "other_ip"),
    EV_PLAY: ("card", "cost_paid", "kicked", "aoa_target_seat (0 or more: an AoA)"),
    EV_ACTIVATE: ("card", "effect_slot", "cost"),
    EV_AOA: ("card", "target_seat", "target_card"),
    EV_AOA_RESULT: ("card", "target_seat", "target_card", "damage", "target_damage"),
    EV_DAMAGE: ("source_card", "target_seat", "target_card", "amount", "dp_left"),
    EV_DESTROY: ("card", "by_seat (-1: one-shot Attack spent)"),
    EV_LP: ("delta", "lp_after", "cause_verb", "source_card"),
    EV_DRAIN: ("ua_card", "victim_seat", "amount", "victim_lp_after"),
    EV_MILL: ("cards_moved", "draw_pile_left", "protect_kept", "source_card", "by_seat"),
    EV_EXILE: ("cards_moved", "draw_pile_left", "kept", "source_card", "by_seat"),
    EV_DISCARD: ("card", "source_card", "by_seat"),
    EV_REPAIR: ("card", "amount", "dp_after", "source_card"),
    EV_RECOVER: ("card", "source_card"),
    EV_TUTOR: ("card", "source_card"),
    EV_PETITION_LOST: ("card", "by_seat"),
    EV_RETURN: ("card",),
    EV_HAND_LIMIT: ("card",),
    EV_MULLIGAN: ("pillars_before", "pillars_after"),
    EV_P2_RIGHT: ("card",),
    EV_RESOLVE_STEP: ("step",),
    EV_TURN_END: ("lp", "hand", "draw_pile", "in_play", "petitions"),
    EV_ELIMINATED: ("path", "rule"),
    EV_VICTORY: ("path", "rule"),
    EV_SEARCH: ("card (-1: stop)", "action_kind (layout.ACT_*; 0: stop)",
                "mean_score_permille", "chosen", "rollouts"),
}
