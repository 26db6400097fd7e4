"""How the engine compiles (docs/engine.md, "The first compile"): every kernel it compiles
on its own declares its signature, so it compiles once whatever its callers pass, and the
faster copy of numba's inliner is in place. Either lost, the games stay the same but the
first compile grows again (33 kernels compiled two to seven times; 30 s more inlining)."""

from __future__ import annotations

import inspect

import numpy as np
from numba.core.registry import CPUDispatcher

from rnr_sim import enums
from rnr_sim.engine import decisions, game, inliner, rng, search, state

# Kernels called from Python only (the batch workers are in batch.py and search_batch.py,
# not listed here): numba compiles them for the arrays they are handed.
LAZY = {"search.search_decision", "search.play_search_game"}


def kernels():
    for module in (game, decisions, state, rng, search):
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                yield f"{module.__name__.rsplit('.', 1)[-1]}.{name}", obj


def test_every_kernel_compiled_on_its_own_declares_its_signature():
    undeclared = [name for name, k in kernels()
                  if k.targetoptions.get("inline", "never") != "always" and name not in LAZY
                  and (len(k.signatures) != 1 or k._can_compile)]
    assert undeclared == [], f"declare these kernels' signatures (engine/sig.py): {undeclared}"


def test_a_declared_kernel_takes_narrower_integers_without_compiling_again():
    before = list(state.eff.signatures)
    cards = np.zeros((2, enums.N_CARD_COLS), dtype=np.int32)
    state.eff(cards, np.int32(1), np.int16(0), np.int8(0))
    assert list(state.eff.signatures) == before


def test_the_inliner_copies_a_callee_once():
    assert inliner.INSTALLED, "numba's inliner moved: inliner.py patches nothing now"
    inline_ir = inliner._inliner.InlineWorker.inline_ir
    assert inspect.unwrap(inline_ir) is not inline_ir  # the wrapper is what numba calls
