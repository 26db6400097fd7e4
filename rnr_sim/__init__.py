"""rnr-sim: balance simulator and analytics for the card game Revolt N Reign."""

import os
from pathlib import Path

__version__ = "0.1.0"

# The compiled engine is cached on disk (numba's cache). The Makefile and CI point
# NUMBA_CACHE_DIR at the project's .numba_cache; elsewhere, use a per-user folder rather
# than numba's default beside the sources, which an installed package may not be able to
# write. Set before numba is first imported.
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "rnr-sim" / "numba"))
