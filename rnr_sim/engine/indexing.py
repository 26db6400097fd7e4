"""How the engine's kernels index arrays: as they are (no Python negative indices), or with
every index checked against its dimension (``RNR_SIM_CHECKED_INDICES=1``, which
``rnr-sim check fuzz`` turns on).

numba reads ``a[i]`` with a signed ``i`` as Python does: a negative ``i`` counts from the
end (``i < 0: i += n``), a test and a branch at every index. The engine never indexes from
the end: an index is a seat, a deck slot, a list position or a layout constant, and -1
means "none" and is tested before any use. So its kernels are compiled without that
fix-up: ``a[i]`` reads the ``i``-th element, one multiply and add from the data pointer.

Without the fix-up a stray -1 reads the element before the array, where with it the read
lands on the last element: a fault either way (a wrong answer), and an index past the end
was already unchecked. What finds such faults is the checked build: each index is compared,
unsigned, with its dimension (one compare and a branch that is never taken), and an index
out of range, negative or too large, raises ``IndexError`` naming the engine. The fuzzer
plays it (``rnr-sim check fuzz``), compiled into a folder of its own in the numba cache
(``build_cache_dir``). What each build costs or saves: docs/benchmarks.md.

Only the kernels of ``rnr_sim.engine`` are compiled this way, told apart by the name of the
function being built (a numba function they call, or any other code in the process, keeps
numba's indexing). Applied on the numba release it was written for only (``patching.py``);
without it the engine indexes as numba does and plays the same games, a little slower, and
there is no checked build.
"""

from __future__ import annotations

import os

from numba.core import cgutils, types
from numba.np import arrayobj

from rnr_sim.engine import patching
from rnr_sim.engine.linker import ENGINE_NAME

#: The checked build asked for (the fuzzer's); read once, when the engine is imported.
#: ``CHECKED`` (below) says whether it is the build this process compiles.
_CHECKED_ASKED = os.environ.get("RNR_SIM_CHECKED_INDICES", "") not in ("", "0")

#: The folder of the numba cache that holds the checked build.
CHECKED_FOLDER = "checked-indices"


def build_folders() -> list[str]:
    """The folders, one in the other, that this build is kept in below the numba cache's
    root: none for the default build; a build with numba patches off (``patching.py``),
    then the checked build, each in its own."""
    folders = [] if patching.cache_folder() is None else [patching.cache_folder()]
    return folders + ([CHECKED_FOLDER] if CHECKED else [])


def is_build_folder(name: str) -> bool:
    """Whether ``name`` is a folder that holds another build than the default one."""
    return name == CHECKED_FOLDER or name == patching.PLAIN_FOLDER or \
        name.startswith(patching.PLAIN_FOLDER + "-")


def build_cache_dir(root: str) -> str:
    """The folder of the numba cache ``root`` this build is kept in: ``root`` itself, or
    the folders of ``build_folders`` below it (``root`` may already name them)."""
    folders = build_folders()
    path = os.path.normpath(root)
    if folders and path.split(os.sep)[-len(folders):] == folders:
        return root
    return os.path.join(root, *folders)


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
    return patching.wrap("indexing", [(arrayobj, "fix_integer_index", _engine_index)],
                         found=hasattr(cgutils, "if_unlikely"))


INSTALLED = install()

#: Every engine index checked (the fuzzer's build): asked for, and the patch applied.
CHECKED = _CHECKED_ASKED and INSTALLED
