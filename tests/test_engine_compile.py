"""How the engine compiles (docs/engine.md, "The first compile"): every kernel it compiles
on its own declares its signature, so it compiles once whatever its callers pass; the
faster copy of numba's inliner is in place for the engine's kernels and numba's own for
any other; the big kernels marked ``@called`` are called by their callers, not copied into
them; and the copies of ``take_turn`` and ``apply_effect`` are always and never inlined.
Any of these lost, the games stay the same but the first compile grows again or the games
run slower (docs/benchmarks.md)."""

from __future__ import annotations

import inspect

import numpy as np
from numba.core.registry import CPUDispatcher

from rnr_sim import enums
from rnr_sim.engine import (
    batch,
    decisions,
    game,
    inliner,
    linker,
    rng,
    search,
    state,
    state_api,
)

# Kernels called from Python only (the batch workers are in batch.py and search_batch.py,
# not listed here): numba compiles them for the arrays they are handed.
LAZY = {"search.search_decision"}


def kernels():
    for module in (game, decisions, state, rng, search, state_api):
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
    worker = inliner._inliner.InlineWorker
    for method in (worker.inline_ir, worker.inline_function):
        assert inspect.unwrap(method) is not method  # the wrapper is what numba calls


def _blocks_of(func):
    from numba.core import compiler

    return compiler.run_frontend(func).blocks


def _callee(a, b):
    c = a + b
    if c > 3:
        return c * 2
    return c - 1


def test_the_inliner_copies_a_kept_ir_once_and_a_fresh_ir_never():
    blocks = list(_blocks_of(_callee).values())
    kept = inliner._Copier(fresh=False)
    copies = [kept.deepcopy(b) for b in blocks]
    assert all(c is not b for c, b in zip(copies, blocks, strict=True))  # a kept IR is copied
    assert len({id(c.scope) for c in copies}) == 1  # with one scope, copied once
    assert [str(c) for c in copies] == [str(b) for b in blocks]  # the same IR
    assert all(kept.deepcopy(c) is c for c in copies)  # the copy to return: not made
    fresh = inliner._Copier(fresh=True)
    assert all(fresh.deepcopy(b) is b for b in blocks)  # an IR made for this inline


def called_kernels():
    return [(name, k) for name, k in kernels() if linker.called_kernel(
        linker.mangled_prefix(k.py_func.__module__, k.py_func.__qualname__) + "E")]


def test_a_called_kernel_is_linked_into_its_callers_as_declarations_only():
    assert linker.INSTALLED, "numba's linking moved: linker.py patches nothing now"
    marked = dict(called_kernels())
    assert {"game.fire_on_destroy", "search.play_search_game"} <= set(marked)
    assert "game.take_turn" not in marked  # its copy is inlined instead (inlined_by_llvm)
    assert "game.apply_effect" not in marked  # copied, never inlined (copied_not_inlined)
    assert "decisions.note_threats" not in marked
    for name, k in marked.items():
        # a callee must be loaded before its callers: declared, so it loads on import
        assert k.targetoptions.get("inline", "never") != "always", name
        assert name not in LAZY and len(k.signatures) == 1 and not k._can_compile, name
        (cres,) = k.overloads.values()
        linked = cres.library._get_module_for_linking()
        bodies = [fn.name for fn in linked.functions if not fn.is_declaration]
        assert bodies == [], f"{name}: its callers would copy {bodies}"
        own = [fn.name for fn in linked.functions
               if linker.called_kernel(fn.name) == k.py_func.__qualname__]
        assert len(own) == 2, own  # the kernel and its cpython wrapper (no cfunc wrapper)


def test_a_kernel_not_marked_is_copied_into_its_callers():
    (cres,) = state.eff.overloads.values()  # small: LLVM inlines it at every call
    linked = cres.library._get_module_for_linking()
    assert any(not fn.is_declaration for fn in linked.functions)


def test_a_called_kernel_loaded_from_the_cache_is_still_callable_from_python():
    batch.play_games_worker  # noqa: B018  (the engine is imported: its kernels are loaded)
    (name, k), *_ = called_kernels()
    (cres,) = k.overloads.values()
    assert cres.library.get_pointer_to_function(cres.fndesc.llvm_cpython_wrapper_name) != 0


def test_one_process_at_a_time_prepares_the_cache(tmp_path, monkeypatch):
    """``driver.prepare_cache`` checks the stamp and loads or compiles the kernels under
    the cache's lock: a second process started meanwhile waits, then loads."""
    import fcntl
    import threading

    from rnr_sim.engine import driver

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(driver, "_CACHE_PREPARED", False)
    with open(tmp_path / "rnr_sim_engine.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process compiling
        waiter = threading.Thread(target=driver.prepare_cache)
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive() and not (tmp_path / "rnr_sim_engine.stamp").exists()
        fcntl.flock(held, fcntl.LOCK_UN)
    waiter.join(30)
    assert not waiter.is_alive()
    assert (tmp_path / "rnr_sim_engine.stamp").read_text() == driver._source_digest()


def test_the_copies_a_kernel_links_of_its_callees_are_its_own():
    """A callee's code linked into a kernel's module is made internal before LLVM optimizes
    the module (linker.py): LLVM may then inline it, drop the arguments it never reads, or
    keep one private copy; the kernel's own functions stay external."""
    import llvmlite.binding as ll
    from numba.core import codegen

    optimize = codegen.CPUCodeLibrary._optimize_final_module
    assert inspect.unwrap(optimize) is not optimize  # the wrapper is what numba calls
    def linkages(own: str) -> dict:
        module = ll.parse_assembly(
            "define linkonce_odr i64 @copy(i64 %x) { ret i64 %x }\n"
            f'define i64 @"{own}"(i64 %x) {{ %y = call i64 @copy(i64 %x)\n ret i64 %y }}\n'
            "declare i64 @called(i64)\n")
        seen = {}

        class Library:
            _final_module = module

        def passes(library):
            seen.update({fn.name: fn.linkage for fn in library._final_module.functions})

        linker._patched_optimize(passes)(Library())
        return seen

    engine_kernel = linker.mangled_prefix("rnr_sim.engine.game", "own") + "E"
    assert linkages(engine_kernel) == {"copy": ll.Linkage.internal,
                                       engine_kernel: ll.Linkage.external,
                                       "called": ll.Linkage.external}
    # another's kernel (the analytics', a user's) is linked as numba links it
    elsewhere = linker.mangled_prefix("rnr_sim.analytics", "own") + "E"
    assert linkages(elsewhere)["copy"] == ll.Linkage.linkonce_odr


def test_the_copies_of_marked_kernels_are_told_how_to_inline():
    """``take_turn`` is compiled on its own, and the copy its caller links is marked
    ``alwaysinline`` when it is made internal (linker.py): LLVM inlines it into the batch
    worker's loop of turns. ``apply_effect``'s copies are marked ``noinline``. Another copy
    is left to LLVM's choice."""
    import llvmlite.binding as ll

    turn = linker.mangled_prefix(game.take_turn.py_func.__module__, "take_turn")
    effect = linker.mangled_prefix(game.apply_effect.py_func.__module__, "apply_effect")
    assert linker.copy_attribute(turn + "B3v1E") == linker.copy_attribute(turn + "E") \
        == "alwaysinline"
    assert linker.copy_attribute(effect + "B3v54E") == "noinline"
    threats = linker.mangled_prefix(decisions.note_threats.py_func.__module__, "note_threats")
    assert linker.copy_attribute(threats + "E") == "noinline"
    assert linker.copy_attribute(turn + "_elsewhere") is None
    assert linker.copy_attribute(linker.mangled_prefix("rnr_sim.engine.game", "destroy") + "E") \
        is None
    worker = linker.mangled_prefix("rnr_sim.engine.batch", "worker") + "E"
    module = ll.parse_assembly(
        f'define linkonce_odr i64 @"{turn}E"(i64 %x) {{ ret i64 %x }}\n'
        f'define linkonce_odr i64 @"{effect}E"(i64 %x) {{ ret i64 %x }}\n'
        "define linkonce_odr i64 @copy(i64 %x) { ret i64 %x }\n"
        f'define i64 @"{worker}"(i64 %x) {{ ret i64 %x }}\n')
    seen = {}

    class Library:
        _final_module = module

    def passes(library):
        seen.update({fn.name: [bytes(a).decode() for a in fn.attributes]
                     for fn in library._final_module.functions})

    linker._patched_optimize(passes)(Library())
    assert seen == {f"{turn}E": ["alwaysinline"], f"{effect}E": ["noinline"], "copy": [],
                    worker: []}


def test_kernels_are_told_their_arrays_never_overlap():
    """``config.EngineCompiler`` compiles every engine kernel with ``noalias`` array
    arguments, and a kernel compiled so marks its arrays' data pointers ``noalias`` in its
    LLVM function (a kernel compiled without it marks none)."""
    import numpy as np
    from numba import njit

    from rnr_sim.engine.config import KERNEL

    def bump(a, b):
        a[0] += b[0]
        a[0] += b[0]

    flags = {k: v for k, v in KERNEL.items() if k != "cache"}
    told = njit(**flags)(bump)
    plain = njit(_nrt=False)(bump)
    args = (np.zeros(1), np.ones(1))
    told(*args)
    plain(*args)

    def pointer_marks(kernel):
        ir = next(iter(kernel.inspect_llvm().values()))
        head = next(line for line in ir.splitlines() if line.startswith("define") and "bump" in line)
        return head.count("noalias")

    assert pointer_marks(told) > pointer_marks(plain) + 2
