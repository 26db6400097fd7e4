"""Named integer constants shared by the catalog compiler, the rules profile and the engine.

Kernels read these module globals as compile-time constants (numba freezes globals when it
compiles, numba #1833): every constant the engine uses lives here, in one module, so a
change to one is a change to this file, which invalidates the on-disk cache of the
engine modules that import it only if they are recompiled -- ``make clean`` after
editing this file.
"""

from __future__ import annotations

# ---------------------------------------------------------------- card types (Art. IV)
PILLAR = 0
RIGHTS = 1
UA = 2
ATTACK = 3
DEFENSE = 4
FREEDOM = 5
BILL = 6
CARD_TYPES = ("pillar", "rights", "ua", "attack", "defense", "freedom", "bill")

# ---------------------------------------------------------------- branches (Art. V §6)
BISON = 0
EAGLE = 1
LIBERTY_BELL = 2
SCROLL = 3
BRANCHES = ("bison", "eagle", "liberty_bell", "scroll")

# ---------------------------------------------------------------- rarities (Art. V §4)
COMMON = 0
UNCOMMON = 1
RARE = 2
RARITIES = ("common", "uncommon", "rare")

# ---------------------------------------------------------------- keywords (bit mask)
KW_PETITION = 1  # Art. II §4, Art. IV §2
KW_PROTECT = 2  # Amend. III
KW_ONE_SHOT = 4  # R16
KEYWORDS = {"petition": KW_PETITION, "protect": KW_PROTECT, "one_shot": KW_ONE_SHOT}

# ---------------------------------------------------------------- effect triggers
TRIG_ON_RESOLVE = 0  # once, when the card resolves after being played
TRIG_EACH_TURN = 1  # each of its controller's Resolve Phases (ip: Independence Phase)
TRIG_ACTIVATE = 2  # paid in the Play Phase, turns the card sideways (Art. VII §6)
TRIG_ON_DESTROY = 3  # when the card is destroyed
TRIGGERS = ("on_resolve", "each_turn", "activate", "on_destroy")

# ---------------------------------------------------------------- effect verbs
V_NONE = 0
V_LP = 1  # N LP damage to an opponent
V_STRIKE = 2  # N damage as an Attack: a Defense first, else a UA
V_STRIKE_UA = 3  # N damage to a UA, past Defenses
V_HEAL = 4  # gain N LP
V_DRAW = 5  # draw N
V_FORCE_DRAW = 6  # an opponent draws N
V_MILL = 7  # opponent's top N to their Discard Pile (Protect skips)
V_EXILE = 8  # opponent's top N removed from the game
V_DISCARD = 9  # opponent discards N random cards (Protect immune)
V_IP = 10  # gain N non-Pillar IP
V_REPAIR = 11  # restore N DP to one of your Defenses or UAs
V_DESTROY_PETITION = 12  # destroy N of an opponent's Petitions
V_RECOVER = 13  # N cards from your Discard Pile to hand
V_TUTOR_PILLAR = 14  # a Pillar from your Draw Pile to hand, then shuffle
V_IP_PER_PILLAR = 15  # gain N non-Pillar IP for each Pillar you have in play
V_HEAL_PER_PILLAR = 16  # gain N LP for each Pillar you have in play (healing)

# ---------------------------------------------------------------- compiled catalog columns
# The catalog compiles to one int32 table ``cards[n_cards, N_CARD_COLS]``.
C_TYPE = 0
C_BRANCH = 1
C_RARITY = 2
C_COST = 3
C_IP = 4
C_DAMAGE = 5
C_DP = 6
C_DRAIN = 7
C_KEYWORDS = 8
C_N_EFFECTS = 9
C_EFF0 = 10  # first column of effect slot 0; slot e starts at C_EFF0 + e * EFF_STRIDE
EFF_STRIDE = 5
E_TRIGGER = 0
E_VERB = 1
E_AMOUNT = 2
E_COST = 3  # activate cost K, or the kicker's extra IP
E_KICKER = 4  # 1 if this slot is a Freedom card's kicker
MAX_EFFECTS = 2  # Art. VII §7, Amend. V §1
# Derived columns: facts about a card's effects that the engine would otherwise re-read
# from the effect slots in its hottest loops. Filled by ``Catalog.compile``.
C_FLAGS = C_EFF0 + MAX_EFFECTS * EFF_STRIDE  # CF_* bits below
C_RESOLVE_STEPS = C_FLAGS + 1  # bit k: an 'on resolve' effect (a kicker too) fires at step k
C_TURN_STEPS = C_FLAGS + 2  # bit k: an 'each turn' (not ip) or 'activate' effect, step k
N_CARD_COLS = C_FLAGS + 3
CF_ACTIVATE = 1  # holds an 'activate' effect that is not a kicker
CF_LASTING = 2  # holds an 'each turn' or 'activate' effect that is not a kicker (R27)
CF_LASTING_KICKED = 4  # holds one, counting a kicker's (stays in play when kicked, R27)
CF_ON_DESTROY = 8  # holds an 'on destroy' effect
CF_EACH_TURN_IP = 16  # holds an 'each turn: ip' effect (Independence Phase, R12)
CF_VALUE_READS_PILLARS = 32  # a policy's value of it reads its player's Pillars or Petitions
CF_VALUE_READS_QUEUE = 64  # a policy's value of it reads what its Play Phase queued (VERB_QUEUES)
CF_IP_ON_RESOLVE = 128  # holds an on-resolve effect (not a kicker) that gives IP (R32)

# ---------------------------------------------------------------- verb properties
# The Resolve step (Art. VII §5 phase four, by its Roman numeral) at which an effect of
# each verb fires (R13): damage and LP damage at iii, healing at iv, everything else at vi.
STEP_DAMAGE = 3
STEP_HEAL = 4
STEP_EFFECTS = 6
# Which opponent an effect aims at, with 3-4 players (R37): the one it hurts most.
AIM_SELF = 0  # acts on its controller
AIM_LOWEST_LP = 1
AIM_THINNEST_PILE = 2
AIM_BIGGEST_HAND = 3
AIM_MOST_PETITIONS = 4
AIM_MOST_UAS_LOST = 5
IP_NONE = 0  # ``VERB_GIVES_IP`` of a verb that gives no IP
#: The opponent an Attack's damage aims at with 3-4 players (R37): as a strike's.
ATTACK_AIM = AIM_MOST_UAS_LOST
#: One row per verb, in ``V_*`` order: the engine and the catalog ask a verb's properties,
#: never its identity (only a verb's own arm in ``game.apply_effect``, what it does, and in
#: ``decisions.effect_value``, what a pilot thinks it worth, name it). Columns:
#:
#: - its name in the grammar;
#: - the Resolve step it fires at (R13);
#: - whether it gives IP (non-Pillar IP, spent first: Amend. VI; the Independence Phase
#:   fires it for 'each turn', R32 at once when played);
#: - whether it heals (LP gained at step iv; a heal is worth only the LP still missing after
#:   the heals this Play Phase queued, ``decisions.lp_missing``);
#: - whether its amount counts once for each Pillar its controller has in play;
#: - whom it aims at with 3-4 players (R37);
#: - whether its value to a policy reads its player's Pillars (a heal's does: it is capped
#:   by the healing queued, and a queued per-Pillar heal grows with them);
#: - whether that value is capped by what this Play Phase already queued of the verb for
#:   the Resolve Phase (``decisions.note_queued``);
#: - a policy's default value per unit.
#:
#: A verb that behaves like an existing kind is one row here plus its arm in
#: ``game.apply_effect`` and in ``decisions.effect_value`` (docs/engine.md).
VERB_TABLE: tuple[tuple[str, int, int, int, int, int, int, int, float], ...] = (
    # name, step, gives IP, heals, per Pillar, aim, value reads Pillars, queues, value
    ("none", STEP_EFFECTS, 0, 0, 0, AIM_SELF, 0, 0, 0.0),
    ("lp", STEP_DAMAGE, 0, 0, 0, AIM_LOWEST_LP, 0, 0, 1.0),
    ("strike", STEP_DAMAGE, 0, 0, 0, AIM_MOST_UAS_LOST, 0, 0, 0.6),
    ("strike ua", STEP_DAMAGE, 0, 0, 0, AIM_MOST_UAS_LOST, 0, 0, 0.6),
    ("heal", STEP_HEAL, 0, 1, 0, AIM_SELF, 1, 1, 0.5),
    ("draw", STEP_EFFECTS, 0, 0, 0, AIM_SELF, 0, 0, 2.0),
    ("force draw", STEP_EFFECTS, 0, 0, 0, AIM_THINNEST_PILE, 0, 0, 0.8),
    ("mill", STEP_EFFECTS, 0, 0, 0, AIM_THINNEST_PILE, 0, 0, 0.6),
    ("exile", STEP_EFFECTS, 0, 0, 0, AIM_THINNEST_PILE, 0, 0, 0.6),
    ("discard", STEP_EFFECTS, 0, 0, 0, AIM_BIGGEST_HAND, 0, 0, 1.0),
    ("ip", STEP_EFFECTS, 1, 0, 0, AIM_SELF, 0, 0, 1.5),
    ("repair", STEP_EFFECTS, 0, 0, 0, AIM_SELF, 0, 1, 0.3),
    ("destroy petition", STEP_EFFECTS, 0, 0, 0, AIM_MOST_PETITIONS, 0, 1, 3.0),
    ("recover", STEP_EFFECTS, 0, 0, 0, AIM_SELF, 0, 1, 1.5),
    ("tutor pillar", STEP_EFFECTS, 0, 0, 0, AIM_SELF, 1, 0, 3.0),
    ("ip per pillar", STEP_EFFECTS, 1, 0, 1, AIM_SELF, 1, 0, 1.5),
    ("heal per pillar", STEP_HEAL, 0, 1, 1, AIM_SELF, 1, 1, 0.5),
)
N_VERBS = len(VERB_TABLE)
VERBS = tuple(row[0] for row in VERB_TABLE)
RESOLVE_STEP = tuple(row[1] for row in VERB_TABLE)
VERB_GIVES_IP = tuple(row[2] for row in VERB_TABLE)
VERB_HEALS = tuple(row[3] for row in VERB_TABLE)
VERB_PER_PILLAR = tuple(row[4] for row in VERB_TABLE)
VERB_AIM = tuple(row[5] for row in VERB_TABLE)
VERB_READS_PILLARS = tuple(row[6] for row in VERB_TABLE)
VERB_QUEUES = tuple(row[7] for row in VERB_TABLE)
VERB_VALUE = tuple(row[8] for row in VERB_TABLE)
assert all(globals()["V_" + name.upper().replace(" ", "_")] == v for v, name in enumerate(VERBS))

# ---------------------------------------------------------------- victory paths
PATH_NONE = -1
PATH_LIFE = 0
PATH_ATTACK = 1
PATH_PETITION = 2
PATH_DECK_OUT = 3
PATH_DRAW = 4
PATHS = ("life", "attack", "petition", "deck_out", "draw")

# ---------------------------------------------------------------- sizes
MAX_PLAYERS = 4
MAX_SLOTS = 64  # deck slots per player; uint64 masks hold one bit per slot

# ---------------------------------------------------------------- rules profile
# Indices into the compiled profile array the kernels read (``rules.SWITCHES`` order, which
# ``rules.py`` checks), and the compiled values of its choice switches.
R_DECK_INCLUDES_UAS = 0
R_MIN_PILLARS = 1
R_MAX_FREEDOM = 2
R_MAX_BILLS = 3
R_MAX_COPIES_ATTACK_DEFENSE = 4
R_MAX_RARES = 5
R_P2_FREE_PILLAR = 6
R_FIRST_PLAYER_DRAWS = 7
R_PILLARS_PER_TURN = 8
R_LP_CAP = 9
R_TURN_LIMIT = 10
R_ATTACK_LIFETIME = 11
R_AOA = 12
R_UA_DRAIN_TARGET = 13
R_UA_DRAIN_WHEN = 14
R_MULTIPLAYER = 15
R_IP_EFFECTS_IMMEDIATE = 16
R_TURN_LIMIT_SCALES = 17
R_ON_DESTROY_TIMING = 18
R_ATTACK_TARGETS = 19
R_DESTROYED_CARDS_RESOLVE = 20
R_SIDEWAYS_RESET = 21
R_BILL_ESCALATION = 22
R_BRANCH_COUNTS_UAS = 23
R_AOA_FROM_PLAY = 24
R_PROTECT_STOPS_MILL = 25
R_ABILITIES_ARE_EFFECTS = 26
R_LP_EFFECTS_STEP = 27
P2_ANY, P2_ZERO_COST_ONLY, P2_OFF = 0, 1, 2
LIFETIME_PERSISTENT, LIFETIME_ONE_SHOT = 0, 1
DRAIN_CONTROLLER, DRAIN_OPPONENT = 0, 1
DRAIN_OWN_TURN, DRAIN_EVERY_TURN = 0, 1
MP_FIRST_VICTORY, MP_LAST_STANDING = 0, 1
OD_AT_ONCE, OD_BY_STEP = 0, 1
TARGETS_AT_DAMAGE, TARGETS_PLAY_PHASE = 0, 1
UPRIGHT_EVERY_CARD, UPRIGHT_EACH_TURN_CARDS = 0, 1
BILLS_PER_PLAYER, BILLS_PER_GAME = 0, 1
LP_AT_DAMAGE, LP_AT_EFFECTS = 0, 1
N_RULES = R_LP_EFFECTS_STEP + 1
