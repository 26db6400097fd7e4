"""The pinned sample games (tests/test_engine_golden.py) played in a process of its own, for
a build chosen by the environment (``RNR_SIM_PLAIN_NUMBA=1``: numba as it ships): prints
one JSON line with each thread count's records digest, the patches applied and the folder
the build is cached in."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rnr_sim.engine import driver  # noqa: E402

driver.prepare_cache()

import numba  # noqa: E402
from test_engine_golden import GAMES, records_digest  # noqa: E402

from rnr_sim import bench  # noqa: E402
from rnr_sim.engine import config, indexing, inliner, linker  # noqa: E402

plan = bench.sample_plan(GAMES)
inputs = bench.spread_inputs(plan, GAMES)
print(json.dumps({
    "digests": {t: records_digest(bench.play(plan, inputs, t)) for t in (1, 2)},
    "patched": [name for name, on in (("inliner", inliner.INSTALLED),
                                      ("linker", linker.INSTALLED),
                                      ("indexing", indexing.INSTALLED),
                                      ("line-tables", config.LINE_TABLES_INLINABLE)) if on],
    "cache_dir": numba.config.CACHE_DIR,
}))
