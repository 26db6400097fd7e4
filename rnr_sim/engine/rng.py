"""A counter-based generator (splitmix64) whose streams are derived from (seed, table, deal, ...).

Kernels never touch numpy's global generator (numba #4452, #8957): each game seeds its own
streams, so a game's result is the same on any thread, in any chunk, on any machine.
"""

import numpy as np
from numba import njit

from rnr_sim.engine.config import KERNEL
from rnr_sim.engine.sig import RNG, f8, i8, u8

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
SH30 = np.uint64(30)
SH27 = np.uint64(27)
SH31 = np.uint64(31)
SH11 = np.uint64(11)
TWO53 = 1.0 / 9007199254740992.0


@njit(u8(u8), **KERNEL)
def mix64(z):
    """The splitmix64 finaliser: a bijective avalanche of a uint64."""
    z = (z ^ (z >> SH30)) * MIX1
    z = (z ^ (z >> SH27)) * MIX2
    return z ^ (z >> SH31)


@njit(u8(u8, i8, i8, i8, i8), **KERNEL)
def stream_seed(seed, a, b, c, d):
    """The state of the stream named by (seed, a, b, c, d): all uint64-convertible ints."""
    x = mix64(np.uint64(seed) + GOLDEN)
    x = mix64(x ^ (np.uint64(a) + GOLDEN))
    x = mix64(x ^ (np.uint64(b) * GOLDEN + MIX1))
    x = mix64(x ^ (np.uint64(c) * MIX1 + MIX2))
    x = mix64(x ^ (np.uint64(d) * MIX2 + GOLDEN))
    return x


@njit(u8(RNG, i8), **KERNEL)
def next_u64(rng, k):
    """The next uint64 of stream k (state in ``rng[k]``)."""
    rng[k] += GOLDEN
    return mix64(rng[k])


@njit(i8(RNG, i8, i8), **KERNEL)
def rand_below(rng, k, n):
    """A uniform int in [0, n) from stream k (n >= 1; bias below 2**-40 for n < 2**13)."""
    return np.int64((next_u64(rng, k) >> SH11) % np.uint64(n))


@njit(f8(RNG, i8), **KERNEL)
def rand_unit(rng, k):
    """A uniform float in [0, 1) from stream k."""
    return np.float64(next_u64(rng, k) >> SH11) * TWO53
