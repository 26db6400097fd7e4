"""Compile flags of the engine's kernels, in one place (STYLE.md: flags in one place).

``_nrt=False``: the game kernels never allocate, so they run without numba's reference
counting of array arguments; measured with perf, those atomic increments and decrements
took over half the engine's time. Only the batch kernels, which allocate each task's
scratch state, keep it on.
"""

KERNEL = {"cache": True, "_nrt": False}
BATCH = {"cache": True}
