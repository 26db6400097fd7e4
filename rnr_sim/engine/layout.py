"""State layout of one game: the two bundles the game's main kernels take, and the integer
field indices into their arrays.

The kernels that act on the whole game (setup, the phases, effects, combat, the pilot's
next action) take ``(t, g, ...)``: ``t``, a ``Table``, is what the game is played with;
``g``, a ``Game``, is one game's state. Both are named tuples of preallocated arrays (one
set per worker, reset per game); a field is read through the bundle and a layout constant
of this module, e.g. ``g.players[p, L.P_LP]`` (player ``p``'s LP). A kernel names the
arrays it uses once at its top (``pl = g.players``) and reads ``pl[p, L.P_LP]`` below.

``Table`` (``t``):

- ``cards``   int32[n_cards, N_CARD_COLS]: the catalog, one row per card (``enums.C_*``).
- ``rules``   int64[N_RULES]: the rules profile (``enums.R_*``).
- ``weights`` (``w``) float64[MAX_PLAYERS, N_WEIGHTS]: each seat's policy weights
  (``policies.W_*``), only read.

``Game`` (``g``):

- ``players`` (``pl``) int32[MAX_PLAYERS, N_PLAYER_FIELDS]: each player's scalars (``P_*``).
- ``slots``   (``sl``) int32[MAX_PLAYERS, MAX_SLOTS, N_SLOT_FIELDS]: each deck slot's card
  and state (``S_*``).
- ``lists``   (``ls``) int16[MAX_PLAYERS, N_LISTS, MAX_SLOTS]: ordered slot lists (``L_*``);
  their lengths are the ``P_N_*`` player fields.
- ``game``    (``gm``) int64[N_GAME_FIELDS]: the game's scalars (``G_*``).
- ``masks``   uint64[MAX_PLAYERS, 3]: opening / drawn / played slot bit masks (``M_*``).
- ``rng``     uint64[MAX_PLAYERS + 1]: one stream per seat's shuffles, one for the game's
  other draws.
- ``trace``   (``tr``) int32[capacity, TRACE_WIDTH]: the event trace (capacity 0 = off).

The pilot's scratch travels beside them, to the few kernels that use it: ``memo``
float64[MAX_PLAYERS, MEMO_WIDTH] (each pilot's memory, ``decisions``) and ``acts``
int64[MAX_ACTIONS, ACT_WIDTH] (the Play Phase's legal actions, ``ACT_*``). Helpers that
read a few arrays (``emit``, ``list_push``, ``lose``, ``put_in_play``, ``card_value`` ...)
take those arrays themselves: numba passes a bundle as all of its arrays (pointer, shape
and strides each), so a small kernel called often pays for every array it is handed
(docs/engine.md). All arrays C-contiguous.
"""

from collections import namedtuple

Table = namedtuple("Table", "cards rules weights")
Game = namedtuple("Game", "players slots lists game masks rng trace")

# ---------------------------------------------------------------- player fields
P_LP = 0
P_IP_PILLAR = 1  # Amend. VI: Pillar IP, spent last
P_IP_OTHER = 2  # Amend. VI: non-Pillar IP, spent first
P_N_DRAW = 3
P_N_HAND = 4
P_N_BOARD = 5
P_UAS_LOST = 6
P_ALIVE = 7
P_MULLIGAN = 8
P_P2_RIGHT = 9
P_DRAWS_NEXT = 10  # cards to draw in the next Draw Phase (Amend. VIII: 2 after the right)
P_PILLARS_TURN = 11
P_N_PETITIONS = 12
P_N_SCROLL_PILLARS = 13
P_POLICY = 14
P_DECK_SIZE = 15
P_N_UAS = 16
P_N_PENDING = 17
P_N_PILLARS = 18
P_TURNS = 19
P_SIDEWAYS = 20  # 1 once a card of the player's was turned sideways since the last reset (R29)
P_N_ON_DESTROY = 21
P_N_FIRE = 22
P_N_AOA_TARGETS = 23  # the player's Attacks in play listed in its scratch list by
#                       ``note_threats`` during an opponent's phase (Attack-on-Attack targets)
P_N_AOA = 24  # Attack-on-Attack declared this turn (Amend. I), fought at step ii
P_N_DEFENSES = 25  # Defenses in the Play Area
P_LIST_OVERFLOW = 26  # list writes refused because the list was full (an invariant break)
P_N_OD_WAIT = 27  # destroyed cards whose 'on destroy' effects wait for their step (R47)
# Summaries of the player's cards in play, kept with the zone counters above by
# ``game.count_in_play`` (called by ``put_in_play`` and ``leave_play``, the only ways onto
# and off the board), so a phase that looks for a few kinds of card skips the board when
# it holds none and stops its walk once it has seen them all:
P_N_ATTACKS = 28  # Attacks in the Play Area
P_N_ACTIVATABLE = 29  # cards in play with an 'activate' effect (``enums.CF_ACTIVATE``)
P_PILLAR_IP = 30  # the printed IP of the Pillars in the Pillar Area
P_N_EACH_TURN_IP = 31  # cards in play with an 'each turn: ip' effect (``enums.CF_EACH_TURN_IP``)
P_N_TURN_STEPS = 32  # cards in play with effects that fire at a Resolve step each turn
#                      (``enums.C_TURN_STEPS`` not 0)
N_PLAYER_FIELDS = 33

# ---------------------------------------------------------------- number limits
LP_MAX = 2_147_483_647  # LP is int32: gains stop here (R46), so no catalog can wrap it
LP_MIN = -2_147_483_647
COST_MAX = 1 << 62  # a Bill's escalated cost saturates here: more IP than any turn can hold

# ---------------------------------------------------------------- slot fields
S_CARD = 0
S_ZONE = 1
S_DP = 2  # Defense/UA: DP left; Attack: damage it deals (Amend. I §3 survivor keeps the rest)
S_FLAGS = 3
S_BILL_PLAYS = 4  # on a Bill's name slot: times played this game (R28)
S_NAME_SLOT = 5  # first slot holding the same card: Bill escalation is per name (Art. IV §7.4)
S_TARGET_SEAT = 6  # an Attack's declared target: its Attack-on-Attack target (Amend. I), or
S_TARGET_SLOT = 7  # with R48 (`attack_targets = "play_phase"`) the card its damage will strike
N_SLOT_FIELDS = 8

# ---------------------------------------------------------------- slot flags
F_SIDEWAYS0 = 1  # Art. VII §6: effect slot 0 used this turn
F_SIDEWAYS1 = 2
F_PENDING = 4  # played this turn; its effects wait for the Resolve Phase (R13)
F_KICKED = 8  # a Freedom card's kicker was paid
F_AOA = 16  # declared Attack-on-Attack this turn
F_ACT0 = 32  # activated effect 0 waits for the Resolve Phase
F_ACT1 = 64
F_AOA_TARGETED = 128  # an opposing AoA is already aimed at this Attack
F_BILL_TURN = 256  # on a Bill's name slot: played this turn (Art. IV §7.1)
F_FOUGHT = 512  # fought Attack-on-Attack this turn: no damage at step iii (R17)
F_DESTROYED = 1024  # played this turn and destroyed before its effects resolved (R50)
F_OD_WAIT0 = 2048  # 'on destroy' effect 0 waits for its Resolve step (R47 by step)
F_OD_WAIT1 = 4096
F_SPENT = 8192  # a one-shot Attack discarded after step iii, an activation still waiting (R52)

# ---------------------------------------------------------------- zones (Art. VI)
Z_NONE = 0
Z_DRAW = 1
Z_HAND = 2
Z_PILLAR = 3
Z_PETITION = 4
Z_UA = 5
Z_PLAY = 6
Z_DISCARD = 7
Z_EXILE = 8
ZONES = ("none", "draw pile", "hand", "pillar area", "petition area", "UA area", "play area",
         "discard pile", "exile")

# ---------------------------------------------------------------- lists
L_DRAW = 0  # top of the Draw Pile is the last entry
L_HAND = 1
L_BOARD = 2  # every card in play: Pillars, Petitions, UAs, Play Area
L_PENDING = 3  # cards the active player played this turn, in play order
L_ON_DESTROY = 4  # destroyed cards whose 'on destroy' effects wait to fire
L_FIRE = 5  # the active player's cards in play holding effects, noted at Resolve step iii
L_SCRATCH = 6  # a step's snapshot of slots to walk while the board changes; during an
#               opponent's Play Phase, the player's Attacks in play (``note_threats``)
L_OD_WAIT = 7  # destroyed cards with 'on destroy' effects waiting for their step (R47)
N_LISTS = 8

# ---------------------------------------------------------------- legal actions
# The Play Phase's list of legal actions (``game.legal_actions``), one row an action:
# every card of a 64-slot deck in hand, each with its plain play, two kickers and an
# Attack-on-Attack against every opposing Attack (3 x 64), then two activations a card
# (an Attack in play declaring Attack-on-Attack, R55, takes at most the 3 x 64 rows it
# would take in hand: a slot is in hand or in play).
MAX_ACTIONS = 64 * (1 + 2 + 3 * 64) + 64 * 2
# A row's columns (``A_*``): what kind of action, the card's slot, the effect or the
# opposing seat, the opposing Attack's slot, and the IP the action takes.
A_KIND = 0  # ACT_* below
A_SLOT = 1  # the card's slot: in hand (a play) or in play (an activation)
A_EFFECT = 2  # ACT_PLAY_KICKED: the kicker's effect slot; ACT_ACTIVATE: the effect's
A_SEAT = 2  # ACT_AOA, ACT_AOA_IN_PLAY: the opposing seat (the same column: no row has both)
A_TARGET = 3  # ACT_AOA, ACT_AOA_IN_PLAY: the opposing Attack's slot
A_COST = 4  # the IP the action takes
ACT_WIDTH = 5
ACT_PLAY = 1  # (ACT_PLAY, hand slot, -1, -1)
ACT_PLAY_KICKED = 2  # (ACT_PLAY_KICKED, hand slot, kicker effect, -1)
ACT_AOA = 3  # (ACT_AOA, hand slot, opposing seat, its Attack's slot): Amend. I
ACT_ACTIVATE = 4  # (ACT_ACTIVATE, slot in play, effect, -1): Art. VII §6
ACT_AOA_IN_PLAY = 5  # (ACT_AOA_IN_PLAY, slot in play, opposing seat, its Attack's slot): R55

# ---------------------------------------------------------------- a search pilot's budget
# One row per policy row (``driver.play_games(search=...)``, ``search.py``): its columns.
B_ROLLOUTS = 0  # K: rollouts per option and determinization (0: not a search pilot)
B_DETS = 1  # N: determinizations per decision
B_GATE = 2  # z x 100: leave the rollout pilot's pick only for an option better by z standard
#             errors of the paired difference (0: the best mean, as issue 12's search did)
B_OPEN = 3  # 1: the opponents' true lists are known (open deck lists); 0: hidden (R59)
SEARCH_WIDTH = 4
DEFAULT_GATE = 100

# ---------------------------------------------------------------- game fields
G_ACTIVE = 0
G_TURN = 1  # turns taken, all seats counted (R15)
G_OVER = 2
G_WINNER = 3
G_PATH = 4
G_N_PLAYERS = 5
G_FIRST = 6
G_RULE = 7  # the rule that decided the game (RULE_*)
G_N_TRACE = 8
G_DEBUG = 9
G_VIOLATIONS = 10
G_N_ALIVE = 11
G_STEP = 12  # the Resolve step in progress (Art. VII §5, by its numeral); 0 outside it
N_GAME_FIELDS = 13

# ---------------------------------------------------------------- masks
M_OPENING = 0  # the final opening hand (after any mulligan)
M_DRAWN = 1  # reached the hand during the game by any route: drawn, recovered, tutored
M_PLAYED = 2
N_MASKS = 3

# ---------------------------------------------------------------- rules that decide a game
RULE_NONE = 0
RULE_LP_ZERO = 1  # Art. II §1, Art. III §1
RULE_THIRD_UA = 2  # Art. III §2
RULE_PETITION = 3  # Art. III §3
RULE_DECK_OUT_DRAW_PHASE = 4  # Art. III §4, Art. VII §5 phase one
RULE_DECK_OUT_EFFECT = 5  # Art. III §4, forced by a card effect
RULE_TURN_LIMIT = 6  # R15
RULE_LAST_STANDING = 7  # R26
RULE_TEXT = (
    "",
    "Art. II §1 / Art. III §1: Liberty Points reached 0",
    "Art. III §2: the third Unconstitutional Act was destroyed",
    "Art. III §3: three Petitions, three Scroll Pillars and 20+ LP at step v",
    "Art. III §4 / Art. VII §5: had to draw from an empty Draw Pile in the Draw Phase",
    "Art. III §4: a card effect forced a draw from an empty Draw Pile",
    "R15: the turn limit was reached",
    "R26: the last player standing",
)

# ---------------------------------------------------------------- trace
TRACE_WIDTH = 8  # turn, event, seat, a, b, c, d, e

