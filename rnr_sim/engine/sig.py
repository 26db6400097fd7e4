"""The kernels' signatures, in the state's own names: ``void(TABLE, GAME, i8, i8)``.

Every kernel the engine compiles on its own (all but the ``INLINED`` ones, config.py)
declares its signature: numba then compiles it once, for these types, and converts the
arguments of each call (an ``int32`` read from a slot field becomes an ``i8``). Without
one, numba compiled a kernel anew for each combination of argument types its callers
happened to pass: 33 kernels twice or more (``destroy`` seven times, ``take_turn`` twice),
each copy optimized and turned into machine code again with everything it calls.

A declared signature compiles when its module is imported (loaded from the cache when it
is there). The arrays are C-contiguous; the bundles are ``layout.Table`` and
``layout.Game`` with these arrays (docs/engine.md, "One game's state").
"""

from numba import types as nt
from numba.core.types import NamedTuple

from rnr_sim.engine import layout as L

# Scalars: counts, seats, slots, cards, amounts are i8; flags b1; values f8; seeds u8.
i8, b1, f8, u8 = nt.int64, nt.boolean, nt.float64, nt.uint64
i8x2 = nt.UniTuple(i8, 2)
f8b1 = nt.Tuple((f8, b1))
void = nt.void

# The Table: what the game is played with.
CARDS = nt.int32[:, ::1]  # the catalog, one row per card (enums.C_*)
RULES = nt.int64[::1]  # the rules profile (enums.R_*)
WEIGHTS = nt.float64[:, ::1]  # each seat's policy weights (policies.W_*)
TABLE = NamedTuple((CARDS, RULES, WEIGHTS), L.Table)

# The Game: one game's state.
PLAYERS = nt.int32[:, ::1]  # layout.P_*
SLOTS = nt.int32[:, :, ::1]  # layout.S_*
LISTS = nt.int16[:, :, ::1]  # layout.L_*
FIELDS = nt.int64[::1]  # the game's own fields, layout.G_*
MASKS = nt.uint64[:, ::1]  # layout.M_*
RNG = nt.uint64[::1]  # the streams (rng.py)
TRACE = nt.int32[:, ::1]  # trace.EV_* rows
GAME = NamedTuple((PLAYERS, SLOTS, LISTS, FIELDS, MASKS, RNG, TRACE), L.Game)

# A game's seats, as setup_game deals them.
DECK_CARDS = nt.int32[:, ::1]  # each seat's deck, card by slot (-1: no card)
DECK_SIZES = nt.int32[::1]  # each seat's deck size
BUDGETS = nt.int64[:, ::1]  # each seat's search budget row (search.B_*; all 0: no search)

# The pilots' scratch.
MEMO = nt.float64[:, ::1]  # decisions.PM_*
ACTS = nt.int64[:, ::1]  # the Play Phase's legal actions (columns layout.A_*)
VALUES = nt.float64[::1]  # the search's options' values
BUDGET = nt.int64[::1]  # one search seat's budget row (search.B_*)
KNOW = nt.int64[:, :, ::1]  # what a search seat knows of each opponent's list (state_api)
POSTERIOR = nt.float64[:, ::1]  # each opponent's deck list, as a search seat believes it
