"""Which of the engine's changes to numba apply in this process.

A few modules change how numba compiles the engine (``inliner``, ``linker``, ``indexing``,
``config``'s line tables) by wrapping numba functions that are not
part of its public API. Each was written against one numba release and is applied only on
that release (``PATCHES``; pyproject.toml pins numba to it); on any other, it is
left out and one plain sentence on stderr says so, and what that costs. None changes
the games: without them the engine compiles more slowly (and plays a little slower
without ``linker`` and ``indexing``), and the records are the same
(tests/test_engine_golden.py plays both builds).

``RNR_SIM_PLAIN_NUMBA=1`` turns every one of them off: numba as it ships. A comma-separated
list of names (``RNR_SIM_PLAIN_NUMBA=inliner,linker``) turns off those alone, for
measuring what each is worth (docs/benchmarks.md). A build with any of them off is cached
in a folder of its own in the numba cache (``cache_folder``), so it never loads kernels
compiled the other way.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from collections.abc import Callable
from typing import Any

import numba

#: Every patch by name -> the numba release (major, minor) it was written and tested for,
#: and what leaving it out costs, in the words of the warning.
PATCHES: dict[str, tuple[tuple[int, int], str]] = {
    "inliner": ((0, 68), "the first compile takes longer (numba's inliner copies the IR it "
                         "inlines over and over, numba issue #8989)"),
    "linker": ((0, 68), "the first compile takes longer and the games play slower (numba "
                        "copies every kernel into each caller)"),
    "indexing": ((0, 68), "the games play slower (every array index is tested for a "
                          "negative value), and the fuzzer's checked build is not available"),
    "line-tables": ((0, 68), "`rnr-sim bench --profile --lines` profiles a less inlined "
                             "engine"),
    "profiler": ((0, 68), "`rnr-sim bench --profile` cannot place the engine's code"),
}

_PLAIN_VALUE = os.environ.get("RNR_SIM_PLAIN_NUMBA", "").strip()


def _turned_off(value: str) -> frozenset[str]:
    if value in ("", "0"):
        return frozenset()
    if value.lower() in ("1", "all", "true", "yes"):
        return frozenset(PATCHES)
    names = frozenset(n.strip() for n in value.split(",") if n.strip())
    unknown = sorted(names - set(PATCHES))
    if unknown:
        print(f"rnr-sim: RNR_SIM_PLAIN_NUMBA names no patch {', '.join(unknown)}; use 1 for "
              f"all, or some of: {', '.join(PATCHES)}", file=sys.stderr)
    return names & frozenset(PATCHES)


#: The patches ``RNR_SIM_PLAIN_NUMBA`` turns off; read once, when the engine is imported.
OFF = _turned_off(_PLAIN_VALUE)

#: The folder of the numba cache that holds a build with some patches off.
PLAIN_FOLDER = "plain-numba"


def numba_version() -> tuple[int, int]:
    """numba's (major, minor) release, from its version string."""
    found = re.match(r"(\d+)\.(\d+)", numba.__version__)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


_WARNED: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        print(f"rnr-sim: {message} The games are the same.", file=sys.stderr)


def applies(name: str) -> bool:
    """Whether the patch ``name`` is to be applied here: not turned off, and numba is the
    release it was written for (else one warning for all the patches left out)."""
    if name in OFF:
        return False
    if numba_version() != PATCHES[name][0]:
        here = numba_version()
        left_out = [n for n, (v, _) in PATCHES.items() if v != here and n not in OFF]
        written = sorted({f"{v[0]}.{v[1]}" for n, (v, _) in PATCHES.items() if n in left_out})
        _warn_once("version", f"numba {numba.__version__} is not the release the engine's "
                   f"compile patches were written for ({', '.join(written)}), so they are "
                   f"left out ({', '.join(left_out)}): the first compile takes longer and the "
                   "games play slower.")
        return False
    return True


def not_found(name: str) -> bool:
    """Say once that numba lacks what the patch ``name`` wraps; returns False."""
    _warn_once(name, f"numba {numba.__version__} lacks the functions the engine's {name} "
               f"patch wraps, so it is left out: {PATCHES[name][1]}.")
    return False


_MARK = "_rnr_sim_patch"  # set on every wrapper this module installs


def wrap(name: str, places: list[tuple[Any, str, Callable]], found: bool = True) -> bool:
    """Apply the patch ``name``: for each ``(owner, attribute, make)``, replace numba's
    ``owner.attribute`` with ``make(numba's)`` (a classmethod is handed its function), all
    or none, once; ``found`` is False when numba lacks something else the patch needs. True
    when the patch is (or already was) applied."""
    if not applies(name):
        return False
    originals = [inspect.getattr_static(owner, attribute, None) if owner is not None else None
                 for owner, attribute, _ in places]
    if not found or any(original is None for original in originals):
        return not_found(name)
    for (owner, attribute, make), original in zip(places, originals, strict=True):
        function = getattr(original, "__func__", original)
        if getattr(function, _MARK, False):
            continue  # applied already (the module imported twice)
        wrapper = make(function)
        setattr(getattr(wrapper, "__func__", wrapper), _MARK, True)
        setattr(owner, attribute, classmethod(wrapper) if isinstance(original, classmethod)
                and not isinstance(wrapper, classmethod) else wrapper)
    return True


def cache_folder() -> str | None:
    """The folder of the numba cache a build with patches off is kept in, or None."""
    if not OFF:
        return None
    if OFF == frozenset(PATCHES):
        return PLAIN_FOLDER
    return PLAIN_FOLDER + "-" + "-".join(sorted(OFF))
