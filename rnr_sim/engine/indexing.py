"""How the engine's kernels index arrays: as they are (no Python negative indices), or with
every index checked against its dimension (``RNR_SIM_CHECKED_INDICES=1``, which
``rnr-sim check fuzz`` turns on).

numba reads ``a[i]`` with a signed ``i`` as Python does: a negative ``i`` counts from the
end (``i < 0: i += n``). The engine never indexes from the end: an index is a seat, a deck
slot, a list position or a layout constant, and -1 means "none" and is tested before any
use. So its kernels are compiled without that fix-up: ``a[i]`` reads the ``i``-th element,
one multiply and add from the data pointer. The same games, record for record, 14% faster
(one thread: 45,699 against 40,180 games/s, docs/engine.md "The first compile").

Without the fix-up a stray -1 reads the element before the array, where with it the read
lands on the last element: a fault either way (a wrong answer), and an index past the end
was already unchecked. What finds such faults is the checked build: each index is compared,
unsigned, with its dimension (one compare and a branch that is never taken), and an index
out of range, negative or too large, raises ``IndexError`` naming the engine. It plays the
same games 16% slower (41,127 against 48,864 games/s), so it is what the fuzzer plays (``rnr-sim check
fuzz``: it finds an index fault where the default build would give a wrong record or
none), and it is compiled into a folder of its own in the numba cache (``build_cache_dir``).

Only the kernels of ``rnr_sim.engine`` are compiled this way, told apart by the name of the
function being built (a numba function they call keeps numba's indexing). If a numba
version moves the name patched here, nothing is patched: the engine indexes as numba does,
a little slower, and plays the same games.
"""

from __future__ import annotations

import os

from numba.core import cgutils, types
from numba.np import arrayobj

from rnr_sim.engine.linker import ENGINE_NAME

#: Every engine index checked (the fuzzer's build); read once, when the engine is imported.
CHECKED = os.environ.get("RNR_SIM_CHECKED_INDICES", "") not in ("", "0")

#: The folder of the numba cache that holds the checked build.
CHECKED_FOLDER = "checked-indices"


def build_cache_dir(root: str) -> str:
    """The folder of the numba cache ``root`` this build is kept in: ``root`` itself, or
    its ``CHECKED_FOLDER`` for the checked build (``root`` may already name it)."""
    if not CHECKED or os.path.basename(os.path.normpath(root)) == CHECKED_FOLDER:
        return root
    return os.path.join(root, CHECKED_FOLDER)


def _engine_index(fix_integer_index):
    def fix_engine_index(context, builder, idxty, idx, size):
        if not builder.function.name.startswith(ENGINE_NAME):  # numba's own functions
            return fix_integer_index(context, builder, idxty, idx, size)
        ind = context.cast(builder, idx, idxty, types.intp)
        if CHECKED:
            outside = builder.icmp_unsigned(">=", ind, size)  # negative or too large
            with cgutils.if_unlikely(builder, outside):
                context.call_conv.return_user_exc(
                    builder, IndexError, ("rnr-sim engine: array index out of range",))
        return ind

    fix_engine_index.__wrapped__ = fix_integer_index
    return fix_engine_index


def install() -> bool:
    """Patch numba's index fix-up for engine kernels once; True when it is patched."""
    fix = getattr(arrayobj, "fix_integer_index", None)
    if fix is None or not hasattr(cgutils, "if_unlikely"):
        return False
    if not hasattr(fix, "__wrapped__"):
        arrayobj.fix_integer_index = _engine_index(fix)
    return True


INSTALLED = install()
