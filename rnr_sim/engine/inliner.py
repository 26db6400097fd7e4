"""numba's inliner (``inline="always"``, config.INLINED), copying no more IR than it needs.

Before it inlines a callee, numba's ``InlineWorker.inline_ir`` copies the callee's IR
twice, one ``copy.deepcopy`` per block: a copy to inline (it is mutated) and a copy "to
return", which both of numba's callers throw away. Three costs, all measured on the
engine's first compile (2-core machine, empty cache):

- **Each block's copy copied the whole scope**, which holds every variable of the
  function: the cost grew with blocks times variables (numba issue #8989; numba-cuda
  issue #688). The 74 inlines took 29.9 s of the 112 s; with one memo per IR, so the scope
  and the variables its blocks share are copied once per IR, 2.4 s.
- **The copy to return** is never used: it is not made (its blocks are the inlined copy's).
- **An IR made for this one inline is not copied at all.** ``inline_function`` (what the
  ``inline="always"`` pass calls) builds the callee's IR afresh from its bytecode for each
  inline, and nothing else holds it: it is inlined as it is. An IR numba keeps and
  inlines again (an ``@overload``'s, from the typed pass) is still copied once.

With the last two, the inlining pass of ``take_turn``'s compile took 1.5-1.8 s against
3.7 s, the batch worker's 0.2-0.3 s against 1.0 s (numba's own pass timings, one cold
compile each, docs/engine.md "The first compile"). The IR inlined is the same either way:
blocks of one function share one scope object in the original too, numba's inliner sets
every inlined block's scope to the caller's, and a fresh IR is what its copy would be.
Kernels compiled either way give the same results bit for bit
(tests/test_engine_golden.py pins 2,000 sample games).

The patch wraps ``InlineWorker.inline_ir`` and ``inline_function`` while numba holds its
compile lock, so no two compiles share a copier. If a numba version moves these names,
nothing is patched and the first compile is only slower.
"""

from __future__ import annotations

import copy

from numba.core import inline_closurecall as _inliner
from numba.core import ir as _ir


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


def _patched_inline_ir(inline_ir):
    def inline_ir_copying_less(self, *args, **kwargs):
        fresh = self.__dict__.pop(_FRESH, False)
        saved = _inliner.copy
        _inliner.copy = _Copier(fresh)
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            _inliner.copy = saved

    inline_ir_copying_less.__wrapped__ = inline_ir
    return inline_ir_copying_less


def _patched_inline_function(inline_function):
    def inline_fresh_function(self, caller_ir, block, i, function, arg_typs=None):
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
    inline_ir = getattr(worker, "inline_ir", None)
    inline_function = getattr(worker, "inline_function", None)
    if inline_ir is None or inline_function is None or \
            not hasattr(worker, "run_untyped_passes") or \
            getattr(_inliner, "copy", None) is not copy:
        return False
    if not hasattr(inline_ir, "__wrapped__"):
        worker.inline_ir = _patched_inline_ir(inline_ir)
        worker.inline_function = _patched_inline_function(inline_function)
    return True


INSTALLED = install()
