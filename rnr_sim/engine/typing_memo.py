"""numba's typing of the engine, remembered: its compile flags as a dictionary key, and the
signature each call of a global function resolved to.

Every array read and write, every ``min``, every operator in the kernels is a call numba
types by trying the function's templates in turn (about 11 a call). The engine's kernels
make the same calls thousands of times (``pl[p, L.P_LP]`` is ``getitem`` of an int32
matrix by a pair of int64, wherever it is written), and numba resolved each anew.

- **Flags as a key.** Typing an ``@overload`` looks its implementation up in a dictionary
  keyed on the argument types and the compile flags in force
  (``templates._OverloadFunctionTemplate._get_impl``). A flags object (``TargetConfig``)
  hashed and compared by building a dictionary of its 22 options through their
  properties, each time: about 51,000 hashes and 48,000 comparisons in the engine's first
  compile. The hash is numba's own, ``hash(tuple(sorted(self.values())))``: iterating the
  dictionary gives its keys, the option names, so it is the same for every flags object of
  a class; it is computed once a class and kept. A comparison answers at once for the
  same object, or for two objects of one class with the same options set to the same
  values (every option then reads the same); otherwise it compares as numba does.
- **Call types.** A global function's type (``types.Function``: ``operator.getitem``,
  ``min``, ``np.uint64`` ...) remembers the signature each (typing context, argument
  types, keyword types, flags) resolved to, and answers a repeat at once. Its templates
  are fixed when the type is made (numba makes a new type when it registers more), a
  resolution records what lowering needs on the type itself (``_impl_keys``), and one
  that fails is not remembered (it raises, as before).

The same answers as numba's, so the same kernels: the records hash is unchanged and
tests/test_engine_golden.py pins 2,000 sample games. Measured with numba's pass timings
(one cold compile each) and cold compiles run two at a time, one per core, so both see
the same machine: flags, type inference of ``take_turn`` 0.8-1.1 s against 1.5 s, of the
batch worker 0.7-0.8 s against 1.4 s; call types then 0.5 s and 0.6 s, and the first
compile 1.4-3.7 s shorter in five pairs of six (docs/engine.md, "The first compile"). If
a numba version moves these names, nothing is patched and the first compile is only
slower.
"""

from __future__ import annotations

from numba.core import targetconfig as _targetconfig
from numba.core.types import functions as _functions

_HASHES: dict[type, int] = {}
_CALLS = "_rnr_sim_call_types"  # the attribute a function type keeps its signatures in


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


def _patched_call_type(get_call_type):
    def call_type_remembered(self, context, args, kws):
        if type(self) is not _functions.Function:
            return get_call_type(self, context, args, kws)
        key = (context, tuple(args), tuple(kws.items()),
               _targetconfig.ConfigStack.top_or_none())
        known = self.__dict__.setdefault(_CALLS, {})
        sig = known.get(key)
        if sig is None:
            sig = get_call_type(self, context, args, kws)
            if sig is not None:
                known[key] = sig
        return sig

    call_type_remembered.__wrapped__ = get_call_type
    return call_type_remembered


def install() -> bool:
    """Patch numba's flags and call typing once; True when they are (or already were)
    patched."""
    config = getattr(_targetconfig, "TargetConfig", None)
    numba_hash = vars(config).get("__hash__") if config is not None else None
    numba_eq = vars(config).get("__eq__") if config is not None else None
    base = getattr(_functions, "BaseFunction", None)
    get_call_type = vars(base).get("get_call_type") if base is not None else None
    if numba_hash is None or numba_eq is None or get_call_type is None or \
            "_values" not in getattr(config, "__slots__", ()) or \
            not hasattr(_targetconfig, "ConfigStack") or \
            not hasattr(_functions, "Function"):
        return False
    if not hasattr(numba_hash, "__wrapped__"):
        config.__hash__ = _patched_hash(numba_hash)
        config.__eq__ = _patched_eq(numba_eq)
        base.get_call_type = _patched_call_type(get_call_type)
    return True


INSTALLED = install()
