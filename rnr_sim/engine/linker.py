"""How numba links the engine's kernels: big kernels called by their callers, not copied
into them (``@called``); the copies a kernel holds made its own (internal); and two kernels'
copies told how to inline (``@inlined_by_llvm``, ``@copied_not_inlined``).

numba links the LLVM module of every kernel a kernel calls into the caller's own module,
then optimizes the whole and generates its machine code again: ``take_turn``'s code would
be optimized and generated once for ``take_turn`` and once more inside the batch worker.
That copy pays when LLVM inlines the callee; for a big kernel called rarely it buys little
but compile time.

**Called, not copied** (``@called``). The module a caller links of such a kernel holds
declarations only: the caller calls it by name, and numba's JIT engine (one per process,
which every compiled or cached kernel is loaded into) resolves the name to the callee's
code, compiled once. A callee must load before its callers, so its signature is declared
(``sig.py``) and it compiles or loads when its module is imported.

A cached caller names a callee by the name it had when the caller was compiled, and
numba's names carry a number that depends on the order a process compiled things in: two
processes compiling into one cache at once (the tests' warm-up, two commands, Ray workers
on one node) could leave a cached caller naming a callee that another compile replaced.
So before a cached kernel is loaded, each ``@called`` kernel it names is looked up; one
not loaded under that name makes the entry a cache miss (``StaleCallee``) and numba
compiles the kernel again, where without the check the process would stop in LLVM's
linker.

**Copies made internal.** The copies numba links into a kernel's module are
``linkonce_odr``: another module may replace them, so LLVM must keep each one's signature.
Once the module is linked nothing outside it calls them (a caller of this kernel links its
own copies), so they become ``internal`` before LLVM optimizes the module: a helper called
once is inlined, the array fields a helper never reads (numba passes each array as 7 to 11
words) are no longer passed, constants reach into the callee.

**Always inlined** (``@inlined_by_llvm``): ``take_turn`` runs once a turn inside the batch
worker's loop; inlined in numba's IR it made numba's passes over the loop much slower, so
numba compiles it on its own and its copy in the worker is marked ``alwaysinline``: LLVM
inlines it into the loop and carries values across turns. **Never inlined**
(``@copied_not_inlined``): ``apply_effect`` and ``note_threats`` are called from several
places; a copy a module, internal and ``noinline``, is called with only the words it reads,
where LLVM would otherwise inline its body at every call.

Every change here is to kernels of the engine only: a module is touched when it defines or
links an engine kernel, which no other code in the process does (a ``@called`` kernel is
marked by the engine, and only its copies are declarations). What each one buys (compile
time, games per second): docs/benchmarks.md. Applied on the numba release it was written
for only (``patching.py``); without it the games are the same, compiled and played more
slowly.
"""

from __future__ import annotations

import llvmlite.binding as ll
from numba.core import caching as _caching
from numba.core import codegen as _codegen

from rnr_sim.engine import patching

#: The ``@called`` kernels: how their mangled names begin -> their qualified name
#: (``_ZN7rnr_sim6engine4game14fire_on_destroy`` -> ``fire_on_destroy``, numba's name of
#: its library).
_CALLED: dict[str, str] = {}


def mangled_prefix(module: str, qualname: str) -> str:
    """How numba's (Itanium) mangled names of ``module.qualname`` begin."""
    return "_ZN" + "".join(f"{len(part)}{part}" for part in f"{module}.{qualname}".split("."))


#: How the names of the engine's kernels begin (numba names a function after its module),
#: and those of their CPython wrappers.
ENGINE_NAME = mangled_prefix("rnr_sim", "engine")
_ENGINE_NAMES = (ENGINE_NAME, mangled_prefix("cpython.rnr_sim", "engine"))


#: The kernels whose copies LLVM is told how to inline: how their mangled names begin ->
#: the attribute their copies get (``@inlined_by_llvm``, ``@copied_not_inlined``).
_COPY_ATTRIBUTE: dict[str, str] = {}


def inlined_by_llvm(func):
    """Mark a kernel whose copy in a caller's module LLVM always inlines (``alwaysinline``):
    numba compiles it on its own, its caller holds it whole. Put it under ``@njit``."""
    _COPY_ATTRIBUTE[mangled_prefix(func.__module__, func.__qualname__)] = "alwaysinline"
    return func


def copied_not_inlined(func):
    """Mark a kernel whose copy in a caller's module LLVM never inlines (``noinline``): one
    body a module, called where it was, but internal, so its unused argument words are
    dropped and the constants its callers pass reach into it. Put it under ``@njit``."""
    _COPY_ATTRIBUTE[mangled_prefix(func.__module__, func.__qualname__)] = "noinline"
    return func


def copy_attribute(name: str) -> str | None:
    """The attribute a copy of the function ``name`` (a mangled name) gets, if any."""
    for prefix, attribute in _COPY_ATTRIBUTE.items():
        if name.startswith(prefix) and name[len(prefix):len(prefix) + 1] in ("B", "E"):
            return attribute
    return None


def called(func):
    """Mark a kernel as called by its callers, not copied into them. Put it under ``@njit``
    (it must see the function before numba compiles it)."""
    if func.__qualname__ in _CALLED.values():
        raise ValueError(f"two @called kernels named {func.__qualname__}")
    _CALLED[mangled_prefix(func.__module__, func.__qualname__)] = func.__qualname__
    return func


def called_kernel(name: str) -> str | None:
    """The ``@called`` kernel that the function ``name`` (a mangled name, or numba's
    ``cpython`` or ``cfunc`` wrapper of one) belongs to, or None."""
    core = name.removeprefix("cfunc.")
    if core.startswith("_ZN7cpython"):
        core = "_ZN" + core[len("_ZN7cpython"):]
    for prefix, qualname in _CALLED.items():
        # the name goes on with its ABI tags ("B...") or the end of the nested name ("E")
        if core.startswith(prefix) and core[len(prefix):len(prefix) + 1] in ("B", "E"):
            return qualname
    return None


def _exports(module):
    return [fn for fn in module.functions
            if not fn.is_declaration and fn.linkage == ll.Linkage.external]


def _declarations(module):
    """What a caller links of a ``@called`` kernel's ``module``: declarations of the
    functions it exports, and of the ``@called`` kernels it calls (no bodies)."""
    exports = {fn.name for fn in _exports(module)}
    lines = []
    for fn in module.functions:
        if fn.name in exports or (fn.is_declaration and called_kernel(fn.name)):
            ret, args = str(fn.global_value_type).split(" (", 1)  # "i32 (ptr, i64, ...)"
            lines.append(f'declare {ret} @"{fn.name}"({args}')
    mod = ll.parse_assembly("\n".join(lines))
    mod.triple = module.triple
    mod.data_layout = module.data_layout
    return mod


def _patched_linking(get_module_for_linking):
    def module_for_linking(self):
        self._ensure_finalized()
        if self._shared_module is None and any(called_kernel(fn.name)
                                               for fn in _exports(self._final_module)):
            self._shared_module = _declarations(self._final_module)
        return get_module_for_linking(self)

    module_for_linking.__wrapped__ = get_module_for_linking
    return module_for_linking


def _engine_module(module) -> bool:
    """Whether ``module`` defines a kernel of the engine's (or its CPython wrapper)."""
    return any(not fn.is_declaration and fn.name.startswith(_ENGINE_NAMES)
               for fn in module.functions)


def _patched_optimize(optimize_final_module):
    def optimize_with_copies_internal(self):
        if not _engine_module(self._final_module):
            return optimize_final_module(self)  # another's kernel: as numba links it
        for fn in self._final_module.functions:
            if not fn.is_declaration and fn.linkage == ll.Linkage.linkonce_odr:
                fn.linkage = "internal"  # a copy of a kernel this one calls: no one else calls it
                attribute = copy_attribute(fn.name)
                if attribute is not None:
                    fn.add_function_attribute(attribute)
        return optimize_final_module(self)

    optimize_with_copies_internal.__wrapped__ = optimize_final_module
    return optimize_with_copies_internal


class StaleCallee(Exception):
    """A cached kernel calls a ``@called`` kernel by a name that is not loaded."""


def _patched_unserialize(unserialize):
    """A cached kernel's library, rebuilt. First, every ``@called`` kernel it calls must be
    loaded under the name it calls (else ``StaleCallee``). Then, for a ``@called`` kernel
    itself: numba registers the functions its linking module defines as the library's own
    (what a call from Python looks up); that module only declares them here, so register
    the declarations of its own functions."""

    def unserialize_called(cls, codegen, state):
        own, kind, data = state  # a library is named after its kernel's qualified name
        engine = codegen._engine
        # a module's names are plain bytes in its bitcode: parse only a module naming one
        if kind == "object" and any(prefix.encode() in data[1] for prefix in _CALLED):
            for fn in ll.parse_bitcode(data[1]).functions:
                kernel = called_kernel(fn.name) if fn.is_declaration else None
                if kernel not in (None, own) and not engine.is_symbol_defined(fn.name):
                    raise StaleCallee(fn.name)
        library = unserialize(cls, codegen, state)
        if library._shared_module is not None:
            engine._defined_symbols.update(
                fn.name for fn in library._shared_module.functions
                if fn.is_declaration and called_kernel(fn.name) == own)
        return library

    unserialize_called.__wrapped__ = unserialize
    return unserialize_called  # installed as a classmethod, as numba's is


def _patched_load(load_overload):
    def load_overload_or_miss(self, sig, target_context):
        try:
            return load_overload(self, sig, target_context)
        except StaleCallee:
            return None  # a miss: numba compiles the kernel again and writes the entry anew

    load_overload_or_miss.__wrapped__ = load_overload
    return load_overload_or_miss


def install() -> bool:
    """Patch numba's linking once; True when it is (or already was) patched."""
    library = getattr(_codegen, "CPUCodeLibrary", None)
    return patching.wrap("linker", [
        (library, "_get_module_for_linking", _patched_linking),
        (library, "_optimize_final_module", _patched_optimize),
        (library, "_unserialize", _patched_unserialize),
        (getattr(_caching, "Cache", None), "_load_overload", _patched_load),
    ], found=hasattr(library, "_ensure_finalized")
        and hasattr(getattr(_codegen, "JitEngine", None), "is_symbol_defined"))


INSTALLED = install()
