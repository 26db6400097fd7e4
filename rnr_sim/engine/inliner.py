"""numba's inliner (``inline="always"``, config.INLINED), copying no more IR than it needs:
a fix for numba issue #8989 (also numba-cuda issue #688). When numba fixes it, this module
goes.

Before it inlines a callee, numba's ``InlineWorker.inline_ir`` copies the callee's IR twice,
one ``copy.deepcopy`` per block: a copy to inline (it is mutated) and a copy "to return",
which both of numba's callers throw away. Each block's copy also copies the block's scope,
which holds every variable of the function, so the cost grows with blocks times variables
(#8989): on the engine, whose kernels inline dozens of helpers with hundreds of variables,
most of numba's inlining time. This wrapper

- copies one scope once per IR (one ``deepcopy`` memo for all the blocks of one IR);
- does not make the copy to return (its blocks are the inlined copy's);
- does not copy an IR made for this one inline: ``inline_function`` (what the
  ``inline="always"`` pass calls) builds the callee's IR afresh from its bytecode for each
  inline and nothing else holds it. An IR numba keeps and inlines again (an ``@overload``'s,
  from the typed pass) is still copied once.

The IR inlined is the same either way: blocks of one function share one scope object in the
original too, numba's inliner sets every inlined block's scope to the caller's, and a fresh
IR is what its copy would be. Only the copy to return differs (it is the inlined blocks
themselves): numba's callers throw it away, another caller of ``inline_ir`` might not, so
the wrappers act only when the IR inlined into is an engine kernel's (``_ENGINE``) and
leave numba's inliner as it is for every other function in the process. What it saves:
docs/benchmarks.md.

The wrappers run while numba holds its compile lock, so no two compiles share a copier.
Applied on the numba release it was written for only (``patching.py``).
"""

from __future__ import annotations

import copy

from numba.core import inline_closurecall as _inliner
from numba.core import ir as _ir

from rnr_sim.engine import patching


class _Copier:
    """``copy`` as the inliner sees it during one ``inline_ir`` call. A block's
    ``deepcopy`` shares one memo with every block of the same scope (the same IR); a block
    this copier made (the copy to return is a copy of the copy) or of an IR made for this
    inline alone (``fresh``) is returned as it is."""

    def __init__(self, fresh: bool):
        self._fresh = fresh
        self._memos: dict[int, dict] = {}
        self._made: set[int] = set()

    def deepcopy(self, x, memo=None):
        if memo is not None or not isinstance(x, _ir.Block):
            return copy.deepcopy(x, memo)
        if self._fresh or id(x) in self._made:
            return x
        block = copy.deepcopy(x, self._memos.setdefault(id(x.scope), {}))
        self._made.add(id(block))
        return block

    def __getattr__(self, name):
        return getattr(copy, name)


_FRESH = "_rnr_sim_fresh_ir"  # set on the worker by inline_function for its inline_ir call
_ENGINE = "rnr_sim.engine"  # the modules whose kernels the wrappers inline into


def _engine_ir(caller_ir) -> bool:
    """Whether ``caller_ir`` is the IR of one of the engine's kernels."""
    modname = getattr(getattr(caller_ir, "func_id", None), "modname", "") or ""
    return modname == _ENGINE or modname.startswith(_ENGINE + ".")


def _patched_inline_ir(inline_ir):
    def inline_ir_copying_less(self, caller_ir, *args, **kwargs):
        fresh = self.__dict__.pop(_FRESH, False)
        if not _engine_ir(caller_ir):
            return inline_ir(self, caller_ir, *args, **kwargs)
        saved = _inliner.copy
        _inliner.copy = _Copier(fresh)
        try:
            return inline_ir(self, caller_ir, *args, **kwargs)
        finally:
            _inliner.copy = saved

    inline_ir_copying_less.__wrapped__ = inline_ir
    return inline_ir_copying_less


def _patched_inline_function(inline_function):
    def inline_fresh_function(self, caller_ir, block, i, function, arg_typs=None):
        if not _engine_ir(caller_ir):
            return inline_function(self, caller_ir, block, i, function, arg_typs=arg_typs)
        # numba's inline_function, its IR marked as made for this inline alone
        callee_ir = self.run_untyped_passes(function)
        self.__dict__[_FRESH] = True
        try:
            return self.inline_ir(caller_ir, block, i, callee_ir,
                                  function.__code__.co_freevars, arg_typs=arg_typs)
        finally:
            self.__dict__.pop(_FRESH, None)

    inline_fresh_function.__wrapped__ = inline_function
    return inline_fresh_function


def install() -> bool:
    """Patch numba's inliner once; True when it is (or already was) patched."""
    worker = getattr(_inliner, "InlineWorker", None)
    return patching.wrap("inliner", [(worker, "inline_ir", _patched_inline_ir),
                                     (worker, "inline_function", _patched_inline_function)],
                         found=hasattr(worker, "run_untyped_passes")
                         and getattr(_inliner, "copy", None) is copy)


INSTALLED = install()
