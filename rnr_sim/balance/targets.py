"""A designer's targets file (docs/design.md, "Balance targets"): what balanced means, and
which numbers ``rnr-sim balance`` may change to get there.

::

    [targets]
    deck_share_max = 0.55            # no deck's win rate against the metagame above this
    path_share = [0.20, 0.30]        # every victory path's share of all wins in the band
    # path_share = { life = [0.2, 0.3], deck_out = [0.1, 0.3] }   (or path by path)
    first_seat = [0.45, 0.55]        # the first seat's win rate in the band
    min_support = 3                  # at least 3 decks in the metagame's equilibrium
    iwd_max = 0.10                   # no card's adjusted IWD above this

    [scope]
    cards = ["Minuteman Volley", "Stamp Act"]   # or "flagged"; default: every card played
    fields = ["cost", "damage", "effect"]       # default: all of FIELDS
    max_changes = 3                             # card fields changed at most (default 3)
    max_step = 3                                # a field moves at most this far (optional)
    switches = ["attack_lifetime"]              # rules switches it may change (default none)

Every problem is one ``InputError`` line naming the file, the line and the fix.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from rnr_sim.cards import Catalog
from rnr_sim.cards.catalog import quote_name
from rnr_sim.cards.grammar import MAX_NUMBER, VERBS_WITHOUT_AMOUNT
from rnr_sim.cards.schema import POSITIVE_STATS, REQUIRED_STATS, TYPE_STATS
from rnr_sim.errors import InputError, decode_text, read_input
from rnr_sim.runs.schema import WIN_PATHS

#: The numbers a scope may name: the stats of the card contract and ``effect`` (every
#: effect's amount N, ``docs/design.md`` "Effect grammar"; kickers and ``activate K``
#: costs are not searched).
FIELDS = ("cost", "damage", "dp", "ip", "drain", "effect")
TARGET_KEYS = ("deck_share_max", "path_share", "first_seat", "min_support", "iwd_max")
SCOPE_KEYS = ("cards", "fields", "max_changes", "max_step", "switches")
DEFAULT_MAX_CHANGES = 3
MAX_CHANGES_LIMIT = 8
FLAGGED = "flagged"
RULE = "rule"  # a Knob over a rules switch
#: Switches the search leaves alone: those that decide which decks are legal (R1-R4, R31;
#: the metagame's decks are fixed) and those that matter at 3-4 players only (R26, R45;
#: balance plays two).
DECK_SWITCHES = ("deck_includes_uas", "min_pillars", "max_freedom", "max_bills",
                 "max_copies_attack_defense", "max_rares")
MULTIPLAYER_SWITCHES = ("multiplayer", "turn_limit_scales")


@dataclass(frozen=True)
class Targets:
    """What balanced means for this run; ``None``: no such target."""

    deck_share_max: float | None = None
    path_share: dict[str, tuple[float, float]] = field(default_factory=dict)
    first_seat: tuple[float, float] | None = None
    min_support: int | None = None
    iwd_max: float | None = None

    @property
    def empty(self) -> bool:
        return (self.deck_share_max is None and not self.path_share and self.first_seat is None
                and self.min_support is None and self.iwd_max is None)

    def to_json(self) -> dict[str, Any]:
        return {"deck_share_max": self.deck_share_max,
                "path_share": {p: list(b) for p, b in self.path_share.items()},
                "first_seat": None if self.first_seat is None else list(self.first_seat),
                "min_support": self.min_support, "iwd_max": self.iwd_max}

    def names(self) -> list[str]:
        """The targets set, by their keys (the names ``targets_met`` lists)."""
        return [k for k in TARGET_KEYS if (v := getattr(self, k)) is not None and v != {}]


@dataclass(frozen=True)
class Scope:
    """Which numbers may change: ``cards`` (names; empty: every card the metagame plays,
    unless ``no_cards``, written ``cards = []`` beside ``switches``; ``flagged``: the cards
    the report flags), ``fields``, the rules ``switches``, at most ``max_changes`` changes
    (a switch changed is one), each at most ``max_step`` (None: the default span,
    ``Knob.span``)."""

    cards: tuple[str, ...] = ()
    flagged: bool = False
    fields: tuple[str, ...] = FIELDS
    max_changes: int = DEFAULT_MAX_CHANGES
    max_step: int | None = None
    switches: tuple[str, ...] = ()
    no_cards: bool = False

    def to_json(self) -> dict[str, Any]:
        cards = [] if self.no_cards else (list(self.cards) or "every card played")
        out = {"cards": FLAGGED if self.flagged else cards,
               "fields": list(self.fields), "max_changes": self.max_changes,
               "max_step": self.max_step}
        if self.switches:  # absent when none: the identity of a run without them as before
            out["switches"] = list(self.switches)
        return out


@dataclass(frozen=True)
class TargetsFile:
    path: Path | None
    where: str
    text: str
    targets: Targets
    scope: Scope


# ---------------------------------------------------------------------------- reading


class _Lines:
    """``file:line`` of a key or a value in the file's text (tomllib keeps no lines)."""

    def __init__(self, where: str, text: str):
        self.where, self.lines = where, text.splitlines()

    def of(self, *needles: str, table: str | None = None) -> str:
        start = 0
        if table is not None:
            head = re.compile(rf"^\s*\[\s*{re.escape(table)}\s*\]")
            start = next((i for i, ln in enumerate(self.lines) if head.match(ln)), 0)
        for needle in needles:
            for i in range(start, len(self.lines)):
                code = self.lines[i].split("#", 1)[0]
                if needle in code:
                    return f"{self.where}:{i + 1}"
        return self.where


def _near(word: str, valid) -> str:
    near = difflib.get_close_matches(word, list(valid), n=1)
    return f" (did you mean '{near[0]}'?)" if near else ""


def _known(lines: _Lines, table: str, key: str, noun: str, word: str, valid) -> None:
    """One line for a word that is not one of ``valid``: where, the closest, the list."""
    if word not in valid:
        raise InputError(f"{lines.of(word, table=table)}: [{table}]{key}: unknown {noun} "
                         f"{quote_name(word)}{_near(word, valid)}; valid: {', '.join(valid)}")


def _share(value: Any, at: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            0.0 <= float(value) <= 1.0) or math.isnan(float(value)):
        raise InputError(f"{at}: {what} must be a share between 0 and 1 (0.55 = 55%), not "
                         f"{value!r}")
    return float(value)


def _band(value: Any, at: str, what: str) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2:
        raise InputError(f"{at}: {what} must be a band [low, high], e.g. [0.45, 0.55], not "
                         f"{value!r}")
    lo, hi = _share(value[0], at, what), _share(value[1], at, what)
    if lo > hi:
        raise InputError(f"{at}: {what} = [{lo:g}, {hi:g}]: the low end is above the high "
                         "end; write [low, high]")
    return lo, hi


def _whole(value: Any, at: str, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{at}: {what} must be a whole number {low}..{high}, not {value!r}")
    return value


def parse_targets(raw: bytes | str, where: str = "<targets>", path: Path | None = None
                  ) -> TargetsFile:
    """Parse a targets file (module docstring); card names are checked later, against the
    catalog (``resolve_scope``)."""
    text = decode_text(raw, where, "a targets file is TOML with [targets] and [scope]")
    lines = _Lines(where, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{where}: broken TOML: {e}") from None
    for key in data:
        if key not in ("targets", "scope"):
            raise InputError(f"{lines.of(key)}: unknown table {quote_name(key)}"
                             f"{_near(key, ('targets', 'scope'))}; a targets file holds "
                             "[targets] and [scope]")
    t = data.get("targets", {})
    s = data.get("scope", {})
    for name, table in (("targets", t), ("scope", s)):
        if not isinstance(table, dict):
            raise InputError(f"{lines.of(name)}: '{name}' must be a table: [{name}]")
    for key in t:
        _known(lines, "targets", "", "target", key, TARGET_KEYS)
    for key in s:
        _known(lines, "scope", "", "key", key, SCOPE_KEYS)

    def at(key: str, table: str) -> str:
        return f"{lines.of(key, table=table)}: [{table}] {key}"

    deck_max = None if "deck_share_max" not in t else _share(
        t["deck_share_max"], at("deck_share_max", "targets"), "deck_share_max")
    paths: dict[str, tuple[float, float]] = {}
    if "path_share" in t:
        v = t["path_share"]
        where_p = at("path_share", "targets")
        if isinstance(v, dict):
            for p, band in v.items():
                _known(lines, "targets", " path_share", "victory path", p, WIN_PATHS)
                paths[p] = _band(band, where_p, f"path_share.{p}")
        else:
            band = _band(v, where_p, "path_share")
            paths = dict.fromkeys(WIN_PATHS, band)
        if sum(lo for lo, _ in paths.values()) > 1.0 + 1e-9 or (
                len(paths) == len(WIN_PATHS) and sum(hi for _, hi in paths.values()) < 1 - 1e-9):
            raise InputError(f"{where_p}: the bands cannot all hold (the paths' shares of "
                             "the wins add up to 1); widen them")
    first = None if "first_seat" not in t else _band(
        t["first_seat"], at("first_seat", "targets"), "first_seat")
    support = None if "min_support" not in t else _whole(
        t["min_support"], at("min_support", "targets"), "min_support", 1, 1000)
    iwd = None if "iwd_max" not in t else _share(t["iwd_max"], at("iwd_max", "targets"),
                                                 "iwd_max")
    targets = Targets(deck_max, paths, first, support, iwd)
    if targets.empty:
        raise InputError(f"{where}: no targets: set at least one in [targets], e.g. "
                         "deck_share_max = 0.55")

    switches = _switches(s, lines, at)
    cards: tuple[str, ...] = ()
    flagged = no_cards = False
    if "cards" in s:
        v = s["cards"]
        if v == FLAGGED:
            flagged = True
        elif v == [] and switches:
            no_cards = True
        elif isinstance(v, list) and v and all(isinstance(c, str) and c.strip() for c in v):
            cards = tuple(v)
        else:
            raise InputError(f"{at('cards', 'scope')} must be a list of card names, e.g. "
                             "[\"Minuteman Volley\"], or \"flagged\"")
    fields = FIELDS
    if "fields" in s:
        v = s["fields"]
        if not isinstance(v, list) or not v or not all(isinstance(f, str) for f in v):
            raise InputError(f"{at('fields', 'scope')} must be a list of fields, e.g. "
                             f"[\"cost\", \"damage\"]; fields: {', '.join(FIELDS)}")
        for f in v:
            _known(lines, "scope", " fields", "field", f, FIELDS)
        fields = tuple(dict.fromkeys(v))
    max_changes = DEFAULT_MAX_CHANGES if "max_changes" not in s else _whole(
        s["max_changes"], at("max_changes", "scope"), "max_changes", 1, MAX_CHANGES_LIMIT)
    max_step = None if "max_step" not in s else _whole(
        s["max_step"], at("max_step", "scope"), "max_step", 1, MAX_NUMBER)
    scope = Scope(cards, flagged, fields, max_changes, max_step, switches, no_cards)
    return TargetsFile(path, where, text, targets, scope)


def _switches(s: dict[str, Any], lines: _Lines, at) -> tuple[str, ...]:
    """``[scope] switches``: rules switches by their names in ``rnr-sim rules``."""
    from rnr_sim.rules import SWITCH_BY_NAME

    if "switches" not in s:
        return ()
    v = s["switches"]
    if not isinstance(v, list) or not v or not all(isinstance(n, str) for n in v):
        raise InputError(f"{at('switches', 'scope')} must be a list of rules switches, e.g. "
                         "[\"attack_lifetime\"] (`rnr-sim rules` lists them)")
    for name in v:
        _known(lines, "scope", " switches", "switch", name, SWITCH_BY_NAME)
        why = ("decides which decks are legal, and the metagame's decks are fixed"
               if name in DECK_SWITCHES else "matters at 3-4 players only, and balance "
               "plays two" if name in MULTIPLAYER_SWITCHES else "")
        if why:
            raise InputError(f"{lines.of(name, table='scope')}: [scope] switches: "
                             f"{quote_name(name)} {why}; drop it")
    return tuple(dict.fromkeys(v))


def load_targets(path: str | Path) -> TargetsFile:
    p = Path(path)
    raw = read_input(p, "targets file", "a targets file (TOML)")
    return parse_targets(raw, where=str(p), path=p)


# ---------------------------------------------------------------------------- knobs


@dataclass(frozen=True)
class Knob:
    """One number the search may move: ``field`` of card ``card_id`` (for ``effect``:
    the amount of its effect number ``effect``), from ``base`` within ``[lo, hi]``."""

    card_id: int
    card: str
    field: str
    effect: int
    base: int
    lo: int
    hi: int
    #: The number as a change line names it: ``damage``, or an effect without its amount
    #: (``lp``, ``each turn: draw``; ``effect 2: lp`` when the card has that verb twice).
    subject: str = ""
    #: A rules switch (``field == "rule"``, ``card`` its name, ``card_id`` its index in the
    #: engine's rules array): what each compiled value stands for (``(False, True)``, the
    #: choices), empty for a whole-number switch.
    values: tuple = ()

    @property
    def rule(self) -> bool:
        return self.field == RULE

    @property
    def label(self) -> str:
        return f"rule {self.card}" if self.rule else f"{self.card}: {self.subject or self.field}"

    def shown(self, value: int) -> str:
        """``value`` as a change line writes it: a switch's ``true``, ``one_shot``, ``200``."""
        if not self.values:
            return str(value)
        v = self.values[value]
        return str(v).lower() if isinstance(v, bool) else str(v)

    def choices(self) -> list[int]:
        """The values the screen tries: a switch's every other legal value; a number's one
        ``step`` down and up."""
        if self.rule and self.values:
            return [v for v in range(self.lo, self.hi + 1) if v != self.base]
        return [v for v in (self.base - self.step, self.base + self.step)
                if self.lo <= v <= self.hi and v != self.base]

    @property
    def step(self) -> int:
        """The screen's first move: half the span, at least 1."""
        return max(1, (self.hi - self.lo) // 4)


def span(value: int) -> int:
    """How far a number may move by default: half its value, at least 2 (cost 1 may go
    to 0 or 3, damage 8 to 4..12)."""
    return max(2, math.ceil(abs(value) / 2))


def _floor(card_type: str, fld: str, value: int) -> int:
    """The smallest value the search tries: the catalog's law (docs/design.md, Cards) --
    0, or 1 for a UA's or a Defense's DP (a card at 0 DP is destroyed, Art. II §3) and for
    an effect's N (the grammar) -- and, for the number that makes a card what it is, 1
    when the card has one: a Pillar's IP (Art. IV §1), an Attack's damage (Art. IV §4)."""
    if fld == "effect" or fld in POSITIVE_STATS.get(card_type, ()):
        return 1
    if fld == REQUIRED_STATS.get(card_type, (None,))[0] and card_type in ("pillar", "attack"):
        return min(1, value)
    return 0


def knobs_of(catalog: Catalog, card_ids: list[int], fields: tuple[str, ...],
             max_step: int | None) -> list[Knob]:
    """Every number of ``card_ids`` named by ``fields`` that the card's Order carries."""
    out: list[Knob] = []
    for cid in card_ids:
        card = catalog.cards[cid]
        for fld in fields:
            if fld == "effect":
                names = [_effect_name(eff) for eff in card.effects]
                for e, eff in enumerate(card.effects):
                    if eff.verb in VERBS_WITHOUT_AMOUNT:
                        continue
                    name = names[e] if names.count(names[e]) == 1 else \
                        f"effect {e + 1}: {names[e]}"
                    out.append(_knob(cid, card, fld, e, eff.amount, max_step, name))
            elif fld in TYPE_STATS[card.type]:
                out.append(_knob(cid, card, fld, -1, int(getattr(card, fld)), max_step, fld))
    return out


def _effect_name(effect) -> str:
    """An effect in the grammar's normal form without its amount: ``each turn: lp``."""
    text = effect.canonical()
    return text[: -len(str(effect.amount))].rstrip()


def _knob(cid: int, card, fld: str, e: int, value: int, max_step: int | None,
          subject: str) -> Knob:
    s = span(value) if max_step is None else max_step
    lo = max(_floor(card.type, fld, value), value - s)
    return Knob(cid, card.name, fld, e, value, lo, min(MAX_NUMBER, value + s), subject)


def switch_knobs(profile, names: tuple[str, ...], max_step: int | None) -> list[Knob]:
    """A knob for each rules switch of ``names`` over its legal values, from its value in
    ``profile`` (the run's ``RulesProfile``): a boolean's other value, a choice switch's
    other choices, a whole-number switch within ``max_step`` (default: the span of a
    number, ``span``) and its own range."""
    from rnr_sim.rules import SWITCH_BY_NAME, SWITCHES

    out = []
    for name in names:
        sw = SWITCH_BY_NAME[name]
        index = SWITCHES.index(sw)
        base = sw.compile(profile[name])
        if sw.kind == "bool":
            out.append(Knob(index, name, RULE, -1, base, 0, 1, values=(False, True)))
        elif sw.kind == "choice":
            out.append(Knob(index, name, RULE, -1, base, 0, len(sw.choices) - 1,
                            values=sw.choices))
        else:
            s = span(base) if max_step is None else max_step
            out.append(Knob(index, name, RULE, -1, base, max(sw.minimum, base - s),
                            min(sw.maximum, base + s)))
    return out


def resolve_cards(tf: TargetsFile, catalog: Catalog) -> list[int]:
    """The scope's cards as catalog ids; an unknown name is one line naming the file, the
    line and the closest names."""
    lines = _Lines(tf.where, tf.text)
    ids = []
    for name in tf.scope.cards:
        cid = catalog.lookup(name)
        if cid is None:
            near = catalog.closest(name)
            hint = f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""
            raise InputError(f"{lines.of(name, table='scope')}: [scope] cards: no card "
                             f"{quote_name(name)} in the catalog {quote_name(catalog.name)}"
                             f"{hint}; fix the name or drop it")
        if cid not in ids:
            ids.append(cid)
    return ids


# ---------------------------------------------------------------------------- changes

#: A candidate: (knob index, new value) pairs, sorted by knob, no knob twice.
Changes = tuple[tuple[int, int], ...]


def patched_card(card, changes: list[tuple[Knob, int]]):
    """``card`` with every (knob, value) applied (``Card`` is frozen: a changed copy)."""
    effects = list(card.effects)
    stats: dict[str, int] = {}
    for knob, value in changes:
        if knob.field == "effect":
            eff = effects[knob.effect]
            effects[knob.effect] = replace(eff, amount=value, source=replace(
                eff, amount=value).canonical())
        else:
            stats[knob.field] = value
    return replace(card, effects=tuple(effects), **stats)


def by_card(knobs: list[Knob], changes: Changes) -> dict[int, list[tuple[Knob, int]]]:
    """The card changes (not the switches) by card id."""
    out: dict[int, list[tuple[Knob, int]]] = {}
    for k, value in changes:
        if not knobs[k].rule:
            out.setdefault(knobs[k].card_id, []).append((knobs[k], value))
    return out


def changes_cards(knobs: list[Knob], changes: Changes) -> bool:
    return any(not knobs[k].rule for k, _ in changes)


def changes_rules(knobs: list[Knob], changes: Changes) -> bool:
    return any(knobs[k].rule for k, _ in changes)


def patched_rules(base: np.ndarray, knobs: list[Knob], changes: Changes) -> np.ndarray:
    """The engine's rules array (``RulesProfile.compile``) with the switch changes applied."""
    out = base.copy()
    for k, value in changes:
        if knobs[k].rule:
            out[knobs[k].card_id] = value
    return out


def rules_toml(profile, knobs: list[Knob], changes: Changes, name: str, note: str) -> str:
    """A rules profile (``rnr_sim.rules``) that ``compare --rules-b`` and ``--rules`` take:
    every switch of ``profile`` (the run's), the changed ones as the changes set them."""
    from rnr_sim.patches import toml_string, toml_value
    from rnr_sim.rules import SWITCHES

    values = dict(profile.values)
    for k, value in changes:
        if knobs[k].rule:
            kn = knobs[k]
            values[kn.card] = kn.values[value] if kn.values else value
    out = [f"# {line}" for line in note.splitlines()]
    out += [f"name = {toml_string(name)}", "", "[rules]"]
    out += [f"{s.name} = {toml_value(values[s.name])}" for s in SWITCHES]
    return "\n".join(out) + "\n"


def switches_changed(knobs: list[Knob], changes: Changes) -> list[str]:
    return [knobs[k].card for k, _ in changes if knobs[k].rule]


def patched_cards(catalog: Catalog, base: np.ndarray, knobs: list[Knob], changes: Changes
                  ) -> np.ndarray:
    """The engine's cards array with ``changes`` applied: each changed card's row compiled
    again by the catalog's own ``compile`` (so it is the row ``apply_patch`` would give)."""
    out = base.copy()
    for cid, kv in by_card(knobs, changes).items():
        card = patched_card(catalog.cards[cid], kv)
        row = Catalog(name=catalog.name, version=catalog.version, cards=(card,)).compile()[0]
        out[cid] = row
    return out


def patch_toml(catalog: Catalog, knobs: list[Knob], changes: Changes, name: str,
               note: str) -> str:
    """A card patch (``rnr_sim.patches``) that ``compare --patch`` takes as it is: one
    ``[cards."Name"]`` table per changed card, ``effects`` written whole (unchanged
    effects as the catalog writes them, changed ones in the grammar's normal form)."""
    from rnr_sim.patches import toml_string, toml_value

    out = ["[patch]", f"name = {toml_string(name)}", f"note = {toml_string(note)}"]
    for cid, kv in by_card(knobs, changes).items():
        card = catalog.cards[cid]
        out += ["", f"[cards.{toml_string(card.name)}]"]
        stats = {k.field: v for k, v in kv if k.field != "effect"}
        for fld in ("cost", "ip", "damage", "dp", "drain"):
            if fld in stats:
                out.append(f"{fld} = {stats[fld]}")
        if any(k.field == "effect" for k, _ in kv):
            new = patched_card(card, [(k, v) for k, v in kv if k.field == "effect"])
            out.append(f"effects = {toml_value([e.source for e in new.effects])}")
    return "\n".join(out) + "\n"


def describe(knobs: list[Knob], changes: Changes) -> list[str]:
    """One line per change: ``Minuteman Volley: damage 8 -> 6``,
    ``rule attack_lifetime: persistent -> one_shot``."""
    return [f"{knobs[k].label}{':' if knobs[k].rule else ''} {knobs[k].shown(knobs[k].base)} "
            f"-> {knobs[k].shown(v)}" for k, v in changes]


def size(knobs: list[Knob], changes: Changes) -> float:
    """How big the changes are: the sum of each move relative to the number it moves (a
    boolean or choice switch changed: 1)."""
    return float(sum(1.0 if knobs[k].values else
                     abs(v - knobs[k].base) / max(1, abs(knobs[k].base)) for k, v in changes))


def cards_changed(knobs: list[Knob], changes: Changes) -> int:
    """The cards changed, each switch changed counted as one more."""
    return len({knobs[k].card_id for k, _ in changes if not knobs[k].rule}) + len(
        switches_changed(knobs, changes))
