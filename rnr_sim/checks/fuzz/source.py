"""Where the fuzzer's random choices come from.

Every generator of ``strategies`` draws through a ``Source``: ``NumpySource`` wraps a
seeded ``numpy.random.Generator`` (the check command: a case is named by one integer
seed), ``HypothesisSource`` wraps hypothesis' ``draw`` (the tests: hypothesis shrinks a
failing case, every integer toward its lower bound, every pick toward its first option).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


class Source:
    """The few kinds of choice a generator makes. Subclasses implement ``integer``."""

    def integer(self, lo: int, hi: int) -> int:
        """A whole number in ``lo..hi`` (both included)."""
        raise NotImplementedError

    def chance(self, p: float) -> bool:
        """True with probability ``p`` (shrinks to False)."""
        return self.integer(0, 999) >= round(1000 * (1.0 - p))

    def pick(self, options: Sequence[T]) -> T:
        """One of ``options``, uniformly (shrinks to the first)."""
        return options[self.integer(0, len(options) - 1)]

    def weighted(self, weights: Sequence[int]) -> int:
        """An index into ``weights`` (whole numbers), index i with weight i's share."""
        total = sum(weights)
        k = self.integer(0, total - 1)
        for i, w in enumerate(weights):
            if k < w:
                return i
            k -= w
        raise AssertionError("unreachable")  # pragma: no cover

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """The items in a random order (Fisher-Yates; shrinks to the given order)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = i - self.integer(0, i)
            out[i], out[j] = out[j], out[i]
        return out


class NumpySource(Source):
    """Choices from ``numpy.random.default_rng(seed)``: the same seed, the same choices."""

    def __init__(self, seed: int | Sequence[int] | np.random.Generator):
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def integer(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi, endpoint=True))


class HypothesisSource(Source):
    """Choices drawn by hypothesis (``draw`` of ``st.composite`` or ``st.data()``)."""

    def __init__(self, draw: Callable[[Any], Any]):
        from hypothesis import strategies as st

        self._draw = draw
        self._st = st

    def integer(self, lo: int, hi: int) -> int:
        return self._draw(self._st.integers(lo, hi))
