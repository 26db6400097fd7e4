"""Compile flags of the engine's kernels, in one place (one place for every flag: docs/engine.md).

``_nrt=False``: the game kernels never allocate, so they run without numba's reference
counting of array arguments; measured with perf, those atomic increments and decrements
took over half the engine's time. The batch kernels allocate nothing either (their
callers pass in the workers' scratch state), so they run without it too.

``no_cfunc_wrapper=True``: no kernel is called through a C function pointer, so numba need
not compile one more wrapper for each (about 0.5 s of the first compile).

Array indices: as they are, not counted from the end when negative, or each checked in the
fuzzer's build, cached in a folder of its own (``indexing.py``).

``pipeline_class=EngineCompiler``: numba's own pipeline without its SSA rebuild, which
gives each assignment of a variable a version and a type of its own. Every variable of the
engine that SSA typed more than one way is an integer typed as a narrower integer or a
literal at some assignment (``n = 0`` then ``n = pl[...]``), or a boolean: typed as one
variable, each takes the wider type, the same values. The same games (records hash
02d05bd9ec491a87), the same speed, the first compile 2-4 s shorter: `take_turn`'s SSA
rebuild alone took 1.8 s (docs/engine.md, "The first compile").

Machine code at LLVM's codegen level 1 (``CODEGEN_LEVEL``: instruction selection,
scheduling and register allocation), the IR still optimized at numba's level 3: numba
builds one target machine per process, at level 3 for both. The same games (records hash
02d05bd9ec491a87), the same speed (59,273-59,822 against 57,898-59,723 games/s on one
thread, alternated), LLVM's part of the first compile 8.9 s against 10.9 s (machine code
2.4 s against 3.4 s). It holds for every numba kernel the process compiles after this
module is imported (the engine's are); one compiled before keeps level 3.

Array arguments that never overlap (``noalias``, set by ``EngineCompiler``): each kernel's
arrays are told apart, so LLVM keeps a count or a rule read from one array in a register
across a write to another (without it, a write to ``acts`` could have changed ``rules``).
No kernel is handed two arrays that share memory and writes through one of them: each
array of the bundles, the scratch and the records is an allocation of its own; the search's
second state shares only the trace, with no rows (``search_batch``). The same games
(records hash 02d05bd9ec491a87, search hash e3c3c2e36f85569b), 63,870-64,376 against
62,909-62,954 games/s on one thread (best of 8, alternated).
"""

import numba
from numba.core import codegen as _codegen
from numba.core import lowering as _lowering
from numba.core.compiler import CompilerBase, DefaultPassBuilder

from rnr_sim.engine import (
    indexing,
    inliner,  # noqa: F401  (numba's inliner, copying no IR it need not copy)
    typing_memo,  # noqa: F401  (numba's flags hashed once, call types remembered)
)
from rnr_sim.engine.linker import (  # noqa: F401  (linker.py)
    called,  # big kernels called, not copied
    copied_not_inlined,  # a kernel's copy never inlined by LLVM
    inlined_by_llvm,  # a kernel's copy always inlined by LLVM
)

CODEGEN_LEVEL = 1  # LLVM's CodeGenOpt::Less


def _machine_code_level(customize_tm_options):
    def customize_at_codegen_level(self, options):
        customize_tm_options(self, options)
        options["opt"] = CODEGEN_LEVEL

    customize_at_codegen_level.__wrapped__ = customize_tm_options
    return customize_at_codegen_level


_CUSTOMIZE = getattr(_codegen.JITCPUCodegen, "_customize_tm_options", None)
if _CUSTOMIZE is not None and not hasattr(_CUSTOMIZE, "__wrapped__"):
    _codegen.JITCPUCodegen._customize_tm_options = _machine_code_level(_CUSTOMIZE)

# The checked build (indexing.py) is cached apart from the default one.
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


_PRE_LOWER = getattr(getattr(_lowering, "Lower", None), "pre_lower", None)
if _PRE_LOWER is not None and not hasattr(_PRE_LOWER, "__wrapped__"):
    _lowering.Lower.pre_lower = _inlinable_with_line_tables(_PRE_LOWER)


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
