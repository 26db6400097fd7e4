"""A faster copy of a callee's IR for numba's inliner (``inline="always"``, config.INLINED).

Before it inlines a callee, numba's ``InlineWorker.inline_ir`` copies the callee's IR
twice, one ``copy.deepcopy`` per block; every block refers to the function's scope, which
holds every variable of the function, so each block's copy copies the whole scope again:
the cost grows with blocks times variables (numba issue #8989; numba-cuda issue #688).
Measured on the engine's first compile (2-core machine, empty cache): the 74 inlines took
29.9 s of the 112 s; copied this way, 2.4 s.

Here the blocks of one IR are copied with one memo, so the scope and the variables they
share are copied once per IR, not once per block. The copy is the same IR: blocks of one
function share one scope object in the original too, and numba's inliner sets every
inlined block's scope to the caller's anyway. Kernels compiled either way give the same
results bit for bit (tests/test_engine_golden.py pins 2,000 sample games).

The patch wraps ``InlineWorker.inline_ir`` while numba holds its compile lock, so no two
compiles share a memo. If a numba version moves these names, nothing is patched and the
first compile is only slower.
"""

from __future__ import annotations

import copy

from numba.core import inline_closurecall as _inliner
from numba.core import ir as _ir


class _OneMemoPerIR:
    """``copy`` as the inliner sees it during one ``inline_ir`` call: ``deepcopy`` of a
    block shares one memo with every block of the same scope (the same IR)."""

    def __init__(self):
        self._memos: dict[int, dict] = {}

    def deepcopy(self, x, memo=None):
        if memo is None and isinstance(x, _ir.Block):
            memo = self._memos.setdefault(id(x.scope), {})
        return copy.deepcopy(x, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


def _patched(inline_ir):
    def inline_ir_one_copy(self, *args, **kwargs):
        saved = _inliner.copy
        _inliner.copy = _OneMemoPerIR()
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            _inliner.copy = saved

    inline_ir_one_copy.__wrapped__ = inline_ir
    return inline_ir_one_copy


def install() -> bool:
    """Patch numba's inliner once; True when it is (or already was) patched."""
    worker = getattr(_inliner, "InlineWorker", None)
    inline_ir = getattr(worker, "inline_ir", None)
    if inline_ir is None or getattr(_inliner, "copy", None) is not copy:
        return False
    if not hasattr(inline_ir, "__wrapped__"):
        worker.inline_ir = _patched(inline_ir)
    return True


INSTALLED = install()
