"""``@called`` kernels (engine/linker.py) through numba's cache, on two tiny kernels in a
scratch module and cache: a caller loaded from the cache calls the callee by name, a callee
loaded from the cache is still callable from Python, and a cached caller that names a
callee another process compiled again is compiled again too (without that check, LLVM's
linker stops the process: "Symbol not found")."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

MODULE = """
from numba import int64, njit

from rnr_sim.engine.linker import called


@njit(int64(int64), cache=True)
@called
def callee(x):
    return x * 3 + 1


@njit(int64(int64), cache=True)
def caller(x):
    return callee(x) + 100
"""

# A process that compiles a few other kernels first numbers its kernels differently.
RUN = """
import sys
from numba import njit
for i in range(int(sys.argv[1])):
    exec(f"@njit\\ndef other{i}(x): return x + {i}\\nother{i}(1)")
import called_pair
print(called_pair.caller(2), called_pair.callee(2), sum(called_pair.caller.stats.cache_hits.values()))
"""


def _run(tmp_path, others: int) -> str:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run([sys.executable, "-c", RUN, str(others)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_called_kernels_through_the_cache(tmp_path):
    (tmp_path / "called_pair.py").write_text(textwrap.dedent(MODULE))
    assert _run(tmp_path, 0)[:2] == ["107", "7"]  # compiled
    caller, callee, hits = _run(tmp_path, 0)  # both loaded from the cache
    assert (caller, callee, hits) == ("107", "7", "1")
    for f in (tmp_path / "cache").rglob("called_pair.callee-*"):
        f.unlink()  # the callee compiled again, under another number
    assert _run(tmp_path, 5)[:2] == ["107", "7"]
    assert _run(tmp_path, 0)[:2] == ["107", "7"]
