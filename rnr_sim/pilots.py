"""Pilots as files: a policy is a built-in name or a TOML file of weights over a built-in.

A policy file::

    [policy]
    name = "Scroll Assembly, tuned"   # shown in tables; default: the file's stem
    base = "petition"                  # a built-in to start from; default "balanced"

    [weights]
    petition = 14.0
    stop = 0.2
    "verb:destroy petition" = 5.0      # value per unit of a verb

Every weight, its meaning and its range are ``engine.policies.WEIGHT_SPECS``
(``rnr-sim policies`` lists them). A policy reference (a deck's ``Policy:`` header,
``--policy``) is a built-in name, or a path to such a file (anything ending in ``.toml``;
a relative path in a deck's header is read from the deck's folder).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path

import numpy as np

from rnr_sim.engine.policies import (
    FLAG_WEIGHTS,
    N_WEIGHTS,
    POLICIES,
    POLICY_NAMES,
    WEIGHT_SPECS,
    WHOLE_WEIGHTS,
)
from rnr_sim.errors import InputError, decode_text, read_input

DEFAULT_BASE = "balanced"


@dataclass(frozen=True)
class Pilot:
    """A resolved policy: its display name, its weights (float64[N_WEIGHTS]), where it
    came from (a built-in name, or the file's path), and the built-in it builds on (a
    built-in: itself; a file: its ``base``)."""

    name: str
    weights: np.ndarray
    source: str
    base: str = DEFAULT_BASE

    @property
    def builtin(self) -> bool:
        return self.source in POLICIES


def is_policy_file(ref: str) -> bool:
    return ref.lower().endswith(".toml")


def builtin(name: str) -> Pilot:
    """A built-in policy by name; an unknown name lists the valid ones (and policy files)."""
    if name not in POLICIES:
        near = get_close_matches(name, POLICY_NAMES, n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        raise InputError(f"unknown policy '{name}'{hint}; valid policies: "
                         f"{', '.join(POLICY_NAMES)}, or a policy file ending in .toml")
    return Pilot(name, POLICIES[name].copy(), name, name)


def _line_of(text: str, key: str) -> str:
    for n, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith((f"{key} ", f"{key}=", f'"{key}"', f"'{key}'", f"[{key}]")):
            return f":{n}"
    return ""


def parse_policy(text: str, where: str, default_name: str = "policy") -> Pilot:
    """A policy file's text as a ``Pilot``; every problem is one line naming ``where``, the
    line, and the fix."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{where}: not valid TOML ({e}); a policy file holds [policy] and "
                         "[weights] tables (see rnr-sim policies --help)") from None
    unknown = sorted(set(data) - {"policy", "weights"})
    if unknown:
        raise InputError(f"{where}{_line_of(text, unknown[0])}: unknown table or key "
                         f"'{unknown[0]}'; a policy file holds [policy] and [weights]")
    head = data.get("policy", {})
    if not isinstance(head, dict):
        raise InputError(f"{where}: 'policy' must be a table: [policy]")
    extra = sorted(set(head) - {"name", "base"})
    if extra:
        raise InputError(f"{where}{_line_of(text, extra[0])}: unknown key '{extra[0]}' in "
                         "[policy]; valid keys: name, base")
    name = head.get("name", default_name)
    if not isinstance(name, str) or not name.strip() or any(ch in name for ch in "\n\r"):
        raise InputError(f"{where}{_line_of(text, 'name')}: [policy] name must be a "
                         "one-line string")
    base = head.get("base", DEFAULT_BASE)
    if not isinstance(base, str):
        raise InputError(f"{where}{_line_of(text, 'base')}: [policy] base must be a "
                         f"built-in policy name: {', '.join(POLICY_NAMES)}")
    try:
        weights = builtin(base).weights
    except InputError as e:
        raise InputError(f"{where}{_line_of(text, 'base')}: base: {e}") from None
    table = data.get("weights", {})
    if not isinstance(table, dict):
        raise InputError(f"{where}: 'weights' must be a table: [weights]")
    for key, value in table.items():
        at = f"{where}{_line_of(text, key)}"
        spec = WEIGHT_SPECS.get(key)
        if spec is None:
            near = get_close_matches(key, WEIGHT_SPECS, n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise InputError(f"{at}: unknown weight '{key}'{hint}; rnr-sim policies --help "
                             "lists every weight")
        index, lo, hi, _ = spec
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(float(value)):
            raise InputError(f"{at}: weight '{key}' must be a number from {lo:g} to {hi:g}, "
                             f"not {value!r}")
        x = float(value)
        if not lo <= x <= hi:
            raise InputError(f"{at}: weight '{key}' = {x:g} is out of its range "
                             f"{lo:g} to {hi:g}")
        if key in WHOLE_WEIGHTS and x != int(x):
            raise InputError(f"{at}: weight '{key}' takes a whole number, not {x:g}")
        if key in FLAG_WEIGHTS and x not in (0.0, 1.0):
            raise InputError(f"{at}: weight '{key}' is 0 or 1, not {x:g}")
        weights[index] = x
    if weights[WEIGHT_SPECS["mulligan_min"][0]] > weights[WEIGHT_SPECS["mulligan_max"][0]]:
        raise InputError(f"{where}: mulligan_min is above mulligan_max: every hand would be "
                         "sent back; set mulligan_min <= mulligan_max")
    assert weights.shape == (N_WEIGHTS,)
    return Pilot(name.strip(), weights, where, base)


def load_policy(ref: str, relative_to: Path | None = None) -> Pilot:
    """A policy reference (built-in name or ``.toml`` path) as a ``Pilot``."""
    if not is_policy_file(ref):
        return builtin(ref)
    path = Path(ref)
    if relative_to is not None and not path.is_absolute():
        path = relative_to / path
    kind = "a policy file is TOML with [policy] and [weights] tables"
    text = decode_text(read_input(path, "policy file", kind), str(path), kind)
    return parse_policy(text, str(path), default_name=path.stem)


def describe_weights() -> list[tuple[str, str, str]]:
    """(weight, range, meaning) of every weight, for help texts and docs."""
    out = []
    for key, (_, lo, hi, meaning) in WEIGHT_SPECS.items():
        if key in FLAG_WEIGHTS:
            span = "0 or 1"
        elif key in WHOLE_WEIGHTS:
            span = f"{lo:g}..{hi:g} (whole)"
        else:
            span = f"{lo:g}..{hi:g}"
        out.append((key, span, meaning))
    return out


def resolve_policies(decks: list, override: str | None) -> list[str]:
    """Each deck's policy reference, checked: ``--policy`` (a built-in name, or a policy
    file relative to the working folder) for every deck, else the deck's ``Policy:`` header
    (a file relative to the deck list), else the default. Files become absolute paths."""
    from rnr_sim.decks import header_line

    refs = []
    for deck in decks:
        if override is not None:
            ref, base, where = override, Path.cwd(), "--policy"
        else:
            ref = deck.policy or DEFAULT_BASE
            line = header_line(deck.path, "policy") if deck.policy else None
            base = Path(deck.path).parent if deck.path is not None else Path.cwd()
            where = f"{deck.path}:{line}: Policy" if line else f"deck '{deck.name}' ({deck.path})"
        try:
            pilot = load_policy(ref, relative_to=base)
        except InputError as e:
            raise InputError(f"{where}: {e}") from None
        refs.append(str(Path(pilot.source).resolve()) if is_policy_file(ref) else ref)
    policy_rows(refs)  # two different policies under one name are an error
    return refs


def policy_rows(refs: Sequence[str]) -> tuple[list[str], np.ndarray, dict[str, int]]:
    """(names, table float64[k, N_WEIGHTS], row of each reference) for the engine: the
    built-in policies' rows first, in their fixed order (a built-in's row number never
    depends on the run), then one row per policy file, in first-use order."""
    from rnr_sim.engine.policies import policy_table

    names = list(POLICY_NAMES)
    rows = [policy_table()]
    index = {n: i for i, n in enumerate(POLICY_NAMES)}
    for ref in refs:
        if ref in index:
            continue
        pilot = load_policy(ref)
        if pilot.name in names:
            raise InputError(f"{ref}: policy name '{pilot.name}' is already taken by "
                             f"{'a built-in' if pilot.name in POLICY_NAMES else 'another file'};"
                             " give it another [policy] name")
        index[ref] = len(names)
        names.append(pilot.name)
        rows.append(pilot.weights[None, :])
    return names, np.ascontiguousarray(np.vstack(rows), dtype=np.float64), index
