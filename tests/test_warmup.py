"""``make demo``'s warm-up (rnr_sim/warmup.py): in a fresh numba cache it compiles what the
report's analysis and the deck search's archive compile, for the types they use, so that
a report read after it compiles nothing more (the cache gains no entry)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _entries(cache: Path) -> set[str]:
    return {str(p.relative_to(cache)) for p in cache.rglob("*.nbc")}


def test_the_warm_up_compiles_what_the_report_and_the_archive_compile(tmp_path):
    cache = tmp_path / "cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-m", "rnr_sim.warmup"], env=env, check=True, cwd=ROOT)
    after_warm = _entries(cache)
    kernels = {Path(e).name.split("-")[0] for e in after_warm}
    assert {"card_kernels.deal_count_vectors", "card_kernels.mh_deal_sums",
            "card_kernels.fold_seat_rows", "argreductions.argmax_driver"} <= kernels
    assert not any(e.startswith("engine") for e in after_warm)  # the engine: not its job
    # another run (other decks, more deals), its report's metrics: nothing new compiled
    code = ("import sys; from pathlib import Path; from rnr_sim import warmup as w; "
            "w.play_plain(Path(sys.argv[1]), Path(sys.argv[2]), first=3, deals=20); "
            "w.compile_report_kernels(Path(sys.argv[1])); w.compile_archive_kernels()")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "run"), str(tmp_path / "pc")],
                   env=env, check=True, cwd=ROOT)
    assert _entries(cache) == after_warm
