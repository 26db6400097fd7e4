"""numba's compile flags as a dictionary key, hashed and compared without rebuilding them.

When numba types a call to an ``@overload`` function (every array read and write, every
``min``, every arithmetic helper the engine's kernels use) it looks the implementation up
in a dictionary keyed on the argument types and the compile flags in force
(``templates._OverloadFunctionTemplate._get_impl``). A flags object (``TargetConfig``)
hashes and compares by building a dictionary of its 22 options through their properties,
each time: about 51,000 hashes and 48,000 comparisons in the engine's first compile.

- **The hash** is numba's own, ``hash(tuple(sorted(self.values())))``: iterating the
  dictionary gives its keys, the option names, so it is the same for every flags object
  of one class. It is computed once a class and kept.
- **A comparison** answers at once for the same object, or for two objects of one class
  with the same options set to the same values (then every option reads the same);
  otherwise it compares as numba does.

The same answers as numba's, so the same lookups and the same kernels (records hash
unchanged). Measured with numba's pass timings, one cold compile each: type inference of
``take_turn`` 0.8-1.1 s against 1.5 s, of the batch worker 0.7-0.8 s against 1.4 s, and
it shortens the typing of every other kernel (docs/engine.md, "The first compile"). If a
numba version moves these names, nothing is patched and the first compile is only slower.
"""

from __future__ import annotations

from numba.core import targetconfig as _targetconfig

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
    options = getattr(config, "options", None)
    numba_hash = vars(config).get("__hash__") if config is not None else None
    numba_eq = vars(config).get("__eq__") if config is not None else None
    if numba_hash is None or numba_eq is None or options is None or \
            "_values" not in getattr(config, "__slots__", ()):
        return False
    if not hasattr(numba_hash, "__wrapped__"):
        config.__hash__ = _patched_hash(numba_hash)
        config.__eq__ = _patched_eq(numba_eq)
    return True


INSTALLED = install()
