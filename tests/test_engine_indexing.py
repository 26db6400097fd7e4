"""How the engine's kernels index arrays (engine/indexing.py): by default as they are, a
negative index not counted from the end; in the checked build (``RNR_SIM_CHECKED_INDICES``,
the fuzzer's) an index out of range, negative or too large, raises ``IndexError``; other
numba code keeps numba's indexing. A turn tests that the state has the layout's shapes
(``game.laid_out``, which buys constant strides) and raises when it has not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest
from engine_harness import Table
from numba import njit

from rnr_sim import enums
from rnr_sim.engine import decisions, indexing
from rnr_sim.engine import layout as L

PROBE = """
def at(a, i):
    return a[i]
"""


def _probe(module: str):
    """``at(a, i) = a[i]`` compiled as a function of ``module``."""
    mod = types.ModuleType(module)
    exec(PROBE, mod.__dict__)
    return njit(mod.at)


def test_an_engine_kernel_does_not_count_a_negative_index_from_the_end():
    assert indexing.INSTALLED, "numba's indexing moved: indexing.py patches nothing now"
    assert not indexing.CHECKED  # the tests play the default build
    base = np.arange(10, dtype=np.int64) * 10
    view = base[4:]  # the element before the view is base[3], memory of the same array
    assert _probe("rnr_sim.engine.probe")(view, -1) == 30
    assert _probe("rnr_sim.engine.probe")(view, 2) == 60
    assert _probe("some.other.module")(view, -1) == 90  # numba's indexing elsewhere


CHECKED_RUN = """
import types
import numba
from numba import njit
import rnr_sim.engine.config  # noqa: F401  (the patches and the checked build's cache folder)
from rnr_sim.engine import indexing
mod = types.ModuleType("rnr_sim.engine.probe")
exec("def at(a, i):\\n    return a[i]\\n", mod.__dict__)
at = njit(mod.at)
import numpy as np
a = np.arange(5, dtype=np.int64)
out = [indexing.CHECKED, numba.config.CACHE_DIR.endswith("checked-indices"), int(at(a, 4))]
for i in (-1, 5, -6):
    try:
        at(a, i)
        out.append("read")
    except IndexError as e:
        out.append(str(e))
print(out)
"""


def test_the_checked_build_raises_on_an_index_out_of_range(tmp_path):
    env = {**os.environ, "RNR_SIM_CHECKED_INDICES": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", CHECKED_RUN], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    message = "rnr-sim engine: array index out of range"
    assert done.stdout.strip() == str([True, True, 4, message, message, message])


def test_the_fuzzer_plays_the_checked_build(checked_fuzz):
    """A short ``rnr-sim check fuzz`` in a process of its own (conftest.CHECKED_FUZZ_ARGS):
    the engine's checked build (compiled once into its folder of the numba cache) plays
    clean games."""
    code, out, err = checked_fuzz
    assert code == 0, (out + err)[-3000:]
    report = json.loads(out)
    assert report["indices_checked"] is True
    assert report["games"] == 512
    assert sum(report["failures_by_category"].values()) == 0, report["failures_by_check"]


@pytest.mark.parametrize("array", ["memo", "acts", "pl", "sl", "ls", "masks"])
def test_a_turn_on_arrays_not_of_the_layouts_shapes_raises(array):
    t = Table()
    t.take_turn(0)  # the layout's shapes: a turn is played
    assert t.pl[0, L.P_TURNS] == 1
    wider = {"memo": (enums.MAX_PLAYERS, decisions.MEMO_WIDTH + 1),
             "acts": (L.MAX_ACTIONS, L.ACT_WIDTH + 1),
             "pl": (enums.MAX_PLAYERS, L.N_PLAYER_FIELDS + 1),
             "sl": (enums.MAX_PLAYERS, enums.MAX_SLOTS, L.N_SLOT_FIELDS + 1),
             "ls": (enums.MAX_PLAYERS, L.N_LISTS + 1, enums.MAX_SLOTS),
             "masks": (enums.MAX_PLAYERS, L.N_MASKS + 1)}[array]
    old = getattr(t, array)
    new = np.zeros(wider, dtype=old.dtype)
    new[tuple(slice(0, n) for n in old.shape)] = old
    setattr(t, array, new)
    with pytest.raises(ValueError, match="not the layout's shapes"):
        t.take_turn(1)
    assert t.pl[1, L.P_TURNS] == 0  # refused before anything was played
