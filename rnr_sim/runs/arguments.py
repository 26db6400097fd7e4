"""The checks of the arguments every command shares: counts in range, thread counts."""

from __future__ import annotations

from rnr_sim.errors import InputError


def check_count(value: int, what: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (
        high is not None and value > high
    ):
        span = f"{low}..{high}" if high is not None else f"at least {low}"
        raise InputError(f"{what} must be a whole number {span}, not {value!r}")
    return value


def check_threads(threads: int | None) -> None:
    if threads is None:
        return
    import numba

    top = numba.config.NUMBA_NUM_THREADS
    check_count(threads, "--threads", 1, top)


