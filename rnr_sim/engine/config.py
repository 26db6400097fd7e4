"""Compile flags of the engine's kernels, in one place (one place for every flag: docs/engine.md).

``_nrt=False``: the game kernels never allocate, so they run without numba's reference
counting of array arguments, whose atomic increments and decrements took over half the
engine's time (perf). The batch kernels allocate nothing either (their callers pass in the
workers' scratch state), so they run without it too.

``no_cfunc_wrapper=True``: no kernel is called through a C function pointer, so numba need
not compile one more wrapper for each.

Array indices: as they are, not counted from the end when negative, or each checked in the
fuzzer's build, cached in a folder of its own (``indexing.py``).

``pipeline_class=EngineCompiler``: numba's own nopython pipeline, through its public
``pipeline_class`` option, with two of numba's own flags set:

- no SSA rebuild (``enable_ssa=False``), which gives each assignment of a variable a
  version and a type of its own. Every variable of the engine that SSA typed more than one
  way is an integer typed as a narrower integer or a literal at some assignment (``n = 0``
  then ``n = pl[...]``), or a boolean: typed as one variable, each takes the wider type,
  the same values. The same games (tests/test_engine_golden.py), a shorter first compile.
- array arguments that never overlap (``noalias``): each kernel's arrays are told apart,
  so LLVM keeps a count or a rule read from one array in a register across a write to
  another (without it, a write to ``acts`` could have changed ``rules``). No kernel is
  handed two arrays that share memory and writes through one of them: each array of the
  bundles, the scratch and the records is an allocation of its own; the search's second
  state shares only the trace, with no rows (``search_batch``).

Both are set only for the kernels compiled with ``KERNEL`` or its variants, the engine's:
other numba code in the process keeps numba's defaults. What they buy: docs/benchmarks.md.
"""

import numba
from numba.core import lowering as _lowering
from numba.core.compiler import CompilerBase, DefaultPassBuilder

from rnr_sim.engine import (
    indexing,
    inliner,  # noqa: F401  (numba's inliner, copying no IR it need not copy: numba #8989)
    patching,
)
from rnr_sim.engine.linker import (  # noqa: F401  (linker.py)
    called,  # big kernels called, not copied
    copied_not_inlined,  # a kernel's copy never inlined by LLVM
    inlined_by_llvm,  # a kernel's copy always inlined by LLVM
)

# The checked build (indexing.py) and a build with numba patches off (patching.py) are
# cached apart from the default one.
if numba.config.CACHE_DIR:
    numba.config.CACHE_DIR = indexing.build_cache_dir(numba.config.CACHE_DIR)


class EngineCompiler(CompilerBase):
    """numba's nopython pipeline, without rebuilding SSA form, array arguments that never
    overlap (see above). Compiled with line tables (``NUMBA_DEBUGINFO=1``, ``rnr-sim bench
    --profile --lines``), the kernels get the tables only: numba would also keep every
    function from being inlined, check every index and keep every variable alive, and the
    profile would be of another program."""

    def __init__(self, typingctx, targetctx, library, args, return_type, flags, locals):
        if flags.debuginfo:
            flags.boundscheck = False
            flags.dbg_extend_lifetimes = False
        super().__init__(typingctx, targetctx, library, args, return_type, flags, locals)

    def define_pipelines(self):
        self.state.flags.enable_ssa = False
        self.state.flags.noalias = True
        return [DefaultPassBuilder.define_nopython_pipeline(self.state)]


def _inlinable_with_line_tables(pre_lower):
    def pre_lower_inlinable(self):
        pre_lower(self)
        if self.flags.debuginfo and self.fndesc.modname.startswith("rnr_sim.engine"):
            self.builder.function.attributes.discard("noinline")  # EngineCompiler

    pre_lower_inlinable.__wrapped__ = pre_lower
    return pre_lower_inlinable


def _install_line_tables() -> bool:
    """Let the engine's kernels be inlined when compiled with line tables; True when it is
    (or already was) patched. Only ``rnr-sim bench --profile --lines`` compiles so."""
    return patching.wrap("line-tables", [(getattr(_lowering, "Lower", None), "pre_lower",
                                          _inlinable_with_line_tables)])


LINE_TABLES_INLINABLE = _install_line_tables()


KERNEL = {"cache": True, "_nrt": False, "no_cfunc_wrapper": True,
          "pipeline_class": EngineCompiler}
BATCH = dict(KERNEL)

# Kernels called from one place in the engine are inlined there in numba's IR
# (``inline="always"``): each separately compiled kernel re-optimizes and re-generates the
# machine code of everything it calls, so every level of the call tree added seconds to
# the first compile. They still compile on their own when called from Python (tests).
# The rest declare their signatures (sig.py), so each compiles once. A few large kernels
# stay boundaries (``take_turn``, ``apply_effect``): numba's own passes slow down more
# than linearly on one huge function (docs/engine.md, "The first compile"); LLVM inlines
# ``take_turn``'s copy into the worker's loop (``inlined_by_llvm``) and keeps one copy of
# ``apply_effect`` a module (``copied_not_inlined``).
INLINED = {**KERNEL, "inline": "always"}
