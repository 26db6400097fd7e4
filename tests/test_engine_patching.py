"""Which numba patches apply (engine/patching.py): each only on the numba release it was
written for, with one warning for those left out; ``RNR_SIM_PLAIN_NUMBA`` turns all or some
off, and such a build is cached in a folder of its own. The games such a build plays:
tests/test_engine_golden.py."""

from __future__ import annotations

import types

import pytest

from rnr_sim.engine import indexing, inliner, patching


def test_every_patch_applies_on_the_release_it_was_written_for():
    here = patching.numba_version()
    assert all(version == here for version, _ in patching.PATCHES.values()), (
        "pyproject.toml pins numba to the release the patches were written for")
    assert patching.OFF == frozenset()  # the tests play the default build
    assert all(patching.applies(name) for name in patching.PATCHES)


def test_on_another_release_nothing_applies_and_one_line_says_so(monkeypatch, capsys):
    monkeypatch.setattr(patching, "numba_version", lambda: (0, 99))
    monkeypatch.setattr(patching, "_WARNED", set())
    assert not any(patching.applies(name) for name in patching.PATCHES)
    assert not patching.applies("inliner")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("rnr-sim: numba ") and "left out (inliner, linker, indexing" in lines[0]
    assert lines[0].endswith("The games are the same.")


@pytest.mark.parametrize(("value", "off"), [
    ("", set()), ("0", set()), ("1", set(patching.PATCHES)), ("all", set(patching.PATCHES)),
    ("inliner, linker", {"inliner", "linker"}),
])
def test_the_switch_turns_all_or_the_named_patches_off(value, off):
    assert patching._turned_off(value) == off


def test_a_misspelt_patch_name_is_said_and_ignored(capsys):
    assert patching._turned_off("inliner,linkr") == {"inliner"}
    assert "no patch linkr" in capsys.readouterr().err


def test_a_build_with_patches_off_is_cached_apart(monkeypatch):
    monkeypatch.setattr(patching, "OFF", frozenset(patching.PATCHES))
    assert indexing.build_cache_dir("/c") == "/c/plain-numba"
    assert indexing.build_cache_dir("/c/plain-numba") == "/c/plain-numba"
    monkeypatch.setattr(indexing, "CHECKED", True)
    assert indexing.build_cache_dir("/c") == "/c/plain-numba/checked-indices"
    monkeypatch.setattr(patching, "OFF", frozenset({"linker", "inliner"}))
    assert indexing.build_cache_dir("/c") == "/c/plain-numba-inliner-linker/checked-indices"
    assert indexing.is_build_folder("plain-numba-inliner-linker")
    assert not indexing.is_build_folder("engine")


def test_the_inliner_wrapper_leaves_other_code_to_numba():
    """numba's inliner runs as it is for IR that is not an engine kernel's: its copies are
    made by ``copy`` itself; for an engine kernel's, by the wrapper's copier."""
    seen = []

    def numba_inline_ir(self, caller_ir, *args, **kwargs):
        seen.append(type(inliner._inliner.copy).__name__)
        return "inlined"

    wrapped = inliner._patched_inline_ir(numba_inline_ir)
    worker = types.SimpleNamespace()

    def ir_of(module):
        return types.SimpleNamespace(func_id=types.SimpleNamespace(modname=module))

    assert wrapped(worker, ir_of("rnr_sim.analytics.metrics")) == "inlined"
    assert wrapped(worker, ir_of("rnr_sim.engineering")) == "inlined"
    assert wrapped(worker, ir_of("rnr_sim.engine.game")) == "inlined"
    assert seen == ["module", "module", "_Copier"]
    assert inliner._inliner.copy is inliner.copy
