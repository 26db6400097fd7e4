"""numba's compile flags hashed once a class, and compared at once when plainly equal.

Typing an ``@overload`` looks its implementation up in a dictionary keyed on the argument
types and the compile flags in force (``templates._OverloadFunctionTemplate._get_impl``),
and the engine's kernels make tens of thousands of such lookups in a first compile. A flags
object (``TargetConfig``) hashes and compares by building a dictionary of all its options
through their properties, each time.

- **The hash** is numba's own, ``hash(tuple(sorted(self.values())))``: iterating that
  dictionary gives its keys, the option names, so it is the same for every flags object of
  a class. It is computed once a class and kept.
- **A comparison** answers at once for the same object, or for two objects of one class
  with the same options set to the same values (every option then reads the same: an
  option not set reads its class's default, one object); otherwise it compares as numba
  does.

Both give numba's answer for every flags object, so they are right for every caller in the
process (tests/test_engine_compile.py compares them with numba's own on each case). What
they save: docs/benchmarks.md. Applied on the numba release they were written for only
(``patching.py``).
"""

from __future__ import annotations

from numba.core import targetconfig as _targetconfig

from rnr_sim.engine import patching

_HASHES: dict[type, int] = {}


def _patched_hash(numba_hash):
    def hash_once_a_class(self):
        cls = type(self)
        h = _HASHES.get(cls)
        if h is None:
            h = _HASHES[cls] = numba_hash(self)  # the sorted option names' hash
        return h

    hash_once_a_class.__wrapped__ = numba_hash
    return hash_once_a_class


def _patched_eq(numba_eq):
    def eq_same_options_at_once(self, other):
        if self is other:
            return True
        if type(self) is type(other) and self._values == other._values:
            return True
        return numba_eq(self, other)

    eq_same_options_at_once.__wrapped__ = numba_eq
    return eq_same_options_at_once


def install() -> bool:
    """Patch numba's flags once; True when they are (or already were) patched."""
    config = getattr(_targetconfig, "TargetConfig", None)
    return patching.wrap("flags", [(config, "__hash__", _patched_hash),
                                   (config, "__eq__", _patched_eq)],
                         found="_values" in getattr(config, "__slots__", ()))


INSTALLED = install()
