"""Deck lists: the text format (docs/design.md, "Deck lists") and the Laws of Deck Construction.

A deck list is plain text, one ``COUNT Card Name`` per line (``4x Card Name`` also
reads), ``#`` comments, blank lines, and optional ``Name:``, ``Policy:`` and ``Cards:``
headers. ``Cards:`` names the catalog the deck is built from (``Cards: original``, a
shipped set, or a catalog file relative to the deck; several, comma-separated, layer in
order), so a deck from a run with an expansion carries what it needs: every command that
is not given ``--cards`` loads the catalogs its decks name (``catalog_paths``). UAs
are ordinary lines. ``validate_deck`` checks every law of Article V under the rulings
R1-R6 and the switches of the rules profile, and reports every violation at once.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rnr_sim import enums
from rnr_sim.cards import Catalog
from rnr_sim.errors import InputError, decode_text, read_input, shown
from rnr_sim.rules import DECK_SIZE, N_UAS, RulesProfile  # Art. V §1; Art. IV §3, Art. V §2

RIGHTS_ADVISED = 10  # Art. IV §2, Art. V §2: "approximately 10" (advisory, R6)
#: R57: the built-in abilities a card's stats give it (an Attack's damage, a Pillar's IP,
#: a UA's drain), each one of its two effects under that reading (Art. VII §7).
ABILITIES = ("damage", "ip", "drain")
MAX_EFFECTS = enums.MAX_EFFECTS  # Art. VII §7, Amend. V §1
RIGHTS_LEEWAY = 2  # R6: no warning within 10 ± 2
MAX_COUNT = 999  # a line's count; anything larger is a typo, not a deck
HEADERS = ("name", "policy", "cards")
MAX_PROBLEMS = 10  # problems listed for one file; the rest are counted

# Counts are ASCII digits (``\d`` would also read "١", an Arabic-Indic digit, as 1).
_CARD_LINE = re.compile(r"([0-9]+)[xX]?\s+(\S.*)")
# A TOML line (``key = value``, ``[table]``): a catalog or rules file given as a deck list.
_TOML_LINE = re.compile(r"\[{1,2}[^\]]*\]{1,2}|[A-Za-z_][\w.-]*\s*=.*")
_HEADER_LINE = re.compile(r"([A-Za-z][A-Za-z _-]*?)\s*:\s*(.*)")
_COMMENT = re.compile(r"(^|\s)#.*$")


@dataclass(frozen=True, eq=False)
class Deck:
    """A deck list resolved against a catalog.

    ``slots[k]`` is the catalog name of deck slot k (lines expanded in order, UAs
    included); ``card_ids`` is int32[n_slots], the catalog id of each slot; ``counts``
    maps each catalog name to its copies, in first-appearance order.
    """

    name: str
    policy: str | None
    path: Path | None
    sha256: str
    slots: tuple[str, ...]
    card_ids: np.ndarray
    counts: dict[str, int]

    def __len__(self) -> int:
        return len(self.slots)


def header_line(path: Path | None, key: str) -> int | None:
    """The line number of a deck list's ``key:`` header (e.g. ``Policy:``), if any."""
    if path is None:
        return None
    try:
        lines = Path(path).read_text(encoding="utf-8-sig", errors="replace").splitlines()
    except OSError:
        return None
    for n, line in enumerate(lines, start=1):
        m = _HEADER_LINE.fullmatch(line.strip())
        if m is not None and m.group(1).strip().lower() == key:
            return n
    return None


#: The shipped catalogs (package data); a ``Cards:`` header names one by its file's stem
#: (``Cards: original``).
DATA_DIR = Path(__file__).resolve().parent / "data"


def shipped_catalogs() -> dict[str, Path]:
    """The shipped catalog files by the name a ``Cards:`` header gives them (the stem)."""
    return {p.stem: p for p in sorted(DATA_DIR.glob("*.toml"))}


def deck_catalogs(path: str | Path) -> list[Path]:
    """The catalog files a deck list's ``Cards:`` header names, in order; ``[]`` when it has
    none or cannot be read (``load_deck`` then says why). Each comma-separated value is a
    shipped catalog's name (``original``) or a catalog file relative to the deck's folder.

    Raises ``InputError`` (``file:line``) for a value that is neither.
    """
    p = Path(path)
    try:  # read as load_deck reads it: a regular file within the size bound
        lines = read_input(p, "deck list", "a deck list").decode(
            "utf-8-sig", errors="replace").splitlines()
    except InputError:
        return []
    shipped = shipped_catalogs()
    for n, line in enumerate(lines, start=1):
        m = _HEADER_LINE.fullmatch(_COMMENT.sub("", line).strip())
        if m is None or m.group(1).strip().lower() != "cards":
            continue
        out = []
        for value in (v.strip() for v in m.group(2).split(",")):
            if not value:
                continue
            if value.lower() in shipped:
                out.append(shipped[value.lower()])
            elif (p.parent / value).is_file():
                out.append(p.parent / value)
            else:
                raise InputError(
                    f"{p}:{n}: Cards: {shown(value)} is neither a shipped catalog "
                    f"({', '.join(shipped)}) nor a file next to the deck; name a shipped "
                    "catalog, or a catalog file by its path from the deck's folder")
        return out
    return []


def catalog_paths(cards, deck_paths) -> list[Path] | None:
    """The catalog a command loads: ``--cards`` when given (``cards``, as given), else the
    catalogs the decks' ``Cards:`` headers name, layered in the decks' order (each file
    once), else ``None``, the default catalog (the whole Original Set)."""
    if cards:
        return [Path(c) for c in ([cards] if isinstance(cards, str | Path) else cards)]
    out: dict[Path, Path] = {}
    for d in deck_paths:
        for c in deck_catalogs(d):
            out.setdefault(c.resolve(), c)
    return list(out.values()) or None


def cards_header(catalog: Catalog, deck_dir: str | Path | None = None) -> str | None:
    """The ``Cards:`` header line that loads ``catalog`` again (``Cards: original``), for a
    deck written to ``deck_dir``; None for a catalog not read from files. A file another
    one names as its ``base`` is left out (loading the later one brings it in)."""
    import os
    import tomllib

    paths = [s.path for s in catalog.sources]
    if not paths or any(p is None for p in paths):
        return None
    bases = set()
    for p in paths:
        try:
            base = tomllib.loads(Path(p).read_text(encoding="utf-8")).get("base")
        except (OSError, ValueError):
            base = None
        if isinstance(base, str):
            bases.add((Path(p).parent / base).resolve())
    by_file = {f.resolve(): stem for stem, f in shipped_catalogs().items()}
    names = []
    for p in paths:
        r = Path(p).resolve()
        if r in bases:
            continue
        if r in by_file:
            names.append(by_file[r])
        else:
            try:
                names.append(os.path.relpath(r, Path(deck_dir or ".").resolve()))
            except ValueError:  # another drive
                names.append(str(r))
    return f"Cards: {', '.join(names)}"


@dataclass(frozen=True)
class Violation:
    """One broken law of deck construction. ``rule`` cites the article (``Art. V §5``);
    ``ruling`` the docs/rulings.md id it is read under, if any; a ``warning`` is advisory."""

    rule: str
    message: str
    ruling: str = ""
    warning: bool = False

    def __str__(self) -> str:
        kind = "warning" if self.warning else "illegal"
        ruling = f", {self.ruling}" if self.ruling else ""
        return f"{kind} ({self.rule}{ruling}): {self.message}"


# ---------------------------------------------------------------------------- parsing


def load_deck(path: str | Path, catalog: Catalog) -> Deck:
    """Read a deck list file and resolve its names in ``catalog``.

    Raises ``InputError`` naming ``file:line`` for a bad count, a bad header, an empty
    deck, and every unknown card name (with the closest catalog names).
    """
    p = Path(path)
    raw = read_input(p, "deck list", "a deck list")
    text = decode_text(raw, str(p), "a deck list is lines like '4 Minuteman Volley'")
    return _parse(text, catalog, where=str(p), path=p, default_name=p.stem,
                  sha256=hashlib.sha256(raw).hexdigest())


def parse_deck(text: str, catalog: Catalog, where: str = "<deck>") -> Deck:
    """A deck list given as text (``where`` names it in errors and is its default name)."""
    return _parse(text, catalog, where=where, path=None, default_name=where,
                  sha256=hashlib.sha256(text.encode("utf-8")).hexdigest())


def _parse(text: str, catalog: Catalog, where: str, path: Path | None, default_name: str,
           sha256: str) -> Deck:
    problems: list[str] = []
    unknown: list[tuple[int, str]] = []  # (line, name) of each card the catalog lacks
    headers: dict[str, str] = {}
    slots: list[str] = []
    counts: dict[str, int] = {}
    lines = text.splitlines()
    for line_no, line in enumerate(lines, start=1):
        line = _COMMENT.sub("", line).strip()
        if not line:
            continue
        at = f"{where}:{line_no}"
        if line[0] in "0123456789":
            m = _CARD_LINE.fullmatch(line)
            if m is None:
                problems.append(f"{at}: expected 'COUNT Card Name', not {shown(line)}")
                continue
            count, name = int(m.group(1)), m.group(2).strip()
            if not 1 <= count <= MAX_COUNT:
                digits = m.group(1) if len(m.group(1)) <= 12 else shown(m.group(1), 12)
                problems.append(f"{at}: bad count {digits} for {shown(name)}; "
                                f"a count is 1 to {MAX_COUNT}")
                continue
            card_id = catalog.lookup(name)
            if card_id is None:
                unknown.append((line_no, name))
                near = catalog.closest(name) if len(name) <= 200 else []
                hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
                problems.append(f"{at}: unknown card {shown(name)}{hint}")
                continue
            name = catalog.cards[card_id].name
            slots.extend([name] * count)
            counts[name] = counts.get(name, 0) + count
            continue
        if line[0].isdigit():  # a digit, but not 0-9 (e.g. Arabic-Indic)
            problems.append(f"{at}: the count in {shown(line)} is not written with the "
                            "digits 0-9")
            continue
        m = _HEADER_LINE.fullmatch(line)
        if m is None:
            problems.append(f"{at}: expected 'COUNT Card Name' (e.g. '4 Minuteman Volley'), "
                            f"not {shown(line)}")
            continue
        key, value = m.group(1).strip().lower(), m.group(2).strip()
        if key not in HEADERS:
            problems.append(f"{at}: bad header {shown(m.group(1) + ':')}; valid headers: "
                            "Name:, Policy:, Cards:")
        elif key in headers:
            problems.append(f"{at}: second '{m.group(1)}:' header")
        elif not value:
            problems.append(f"{at}: empty '{m.group(1)}:' header")
        else:
            headers[key] = value
    if not slots and not problems:
        problems.append(f"{where}:{max(len(lines), 1)}: no cards in this deck list "
                        "(lines like '4 Minuteman Volley')")
    if problems:
        if not slots and _looks_like_toml(lines):
            raise InputError(f"{where}: looks like a TOML file (a card catalog or a rules "
                             "profile), not a deck list: a deck list is lines like "
                             "'4 Minuteman Volley'; give a catalog with --cards, a rules "
                             "profile with --rules")
        holder = _shipped_catalog_holding([n for _, n in unknown], catalog)
        if holder is not None and len(unknown) == len(problems):
            line, name = unknown[0]
            fix = (f"the deck's own header 'Cards: {headers['cards']}' names its catalog, "
                   "and --cards replaced it: drop --cards" if "cards" in headers else
                   f"add --cards {holder} (or the header line 'Cards: {Path(holder).stem}' "
                   "to the deck)")
            many = len(unknown) > 1
            raise InputError(f"{where}: {len(unknown)} card{'s' if many else ''} not in the "
                             f"catalog ({catalog.name}) {'are' if many else 'is'} in {holder} "
                             f"({shown(name)}, line {line}): {fix}")
        if len(problems) == 1:
            raise InputError(problems[0])
        more = len(problems) - MAX_PROBLEMS
        raise InputError("\n".join([f"{where}: {len(problems)} problems", *problems[:MAX_PROBLEMS],
                                    *([f"(and {more:,} more)"] if more > 0 else [])]))
    return Deck(
        name=headers.get("name", default_name),
        policy=headers.get("policy"),
        path=path,
        sha256=sha256,
        slots=tuple(slots),
        card_ids=np.array([catalog.by_name[s] for s in slots], dtype=np.int32),
        counts=counts,
    )


def _shipped_catalog_holding(names: list[str], catalog: Catalog) -> str | None:
    """The smallest shipped catalog file (``rnr_sim/data/*.toml``, as a path from here when
    it can be) that holds every one of ``names``, the catalog loaded aside, or None: a deck
    of the expansion given without its ``--cards`` is told which file to add (the smallest:
    an expansion that layers over the Original Set holds its cards too)."""
    import os

    from rnr_sim.cards.catalog import load_catalog

    if not names:
        return None
    holders = []
    for path in sorted((Path(__file__).parent / "data").glob("*.toml")):
        try:
            other = load_catalog(path)
        except InputError:
            continue
        if other.sha256 != catalog.sha256 and all(other.lookup(n) is not None for n in names):
            holders.append((len(other.cards), path))
    if not holders:
        return None
    path = min(holders)[1]
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)


def _looks_like_toml(lines: list[str]) -> bool:
    """Most of the file's lines (comments and blanks aside) are TOML: ``[table]`` or
    ``key = value``."""
    body = [x for x in (_COMMENT.sub("", line).strip() for line in lines) if x]
    toml = sum(1 for x in body if _TOML_LINE.fullmatch(x))
    return bool(body) and toml * 2 > len(body)


# ---------------------------------------------------------------------------- Article V


def validate_deck(deck: Deck, catalog: Catalog, profile: RulesProfile) -> list[Violation]:
    """Every law of Article V the deck breaks, under R1-R6 and ``profile``'s switches;
    an empty list for a legal deck. Warnings (R6) have ``warning=True``."""
    card_of = {name: catalog.cards[catalog.by_name[name]] for name in deck.counts}
    by_type: dict[str, Counter[str]] = {t: Counter() for t in enums.CARD_TYPES}
    for name, n in deck.counts.items():
        by_type[card_of[name].type][name] += n
    n_of = {t: sum(c.values()) for t, c in by_type.items()}
    out: list[Violation] = []

    # Art. V §1 (R1): 60 cards; whether the 3 UAs are among them is a switch.
    n_uas = n_of["ua"]
    if profile["deck_includes_uas"]:
        if len(deck) != DECK_SIZE:
            out.append(Violation("Art. V §1", f"{len(deck)} cards; a deck has exactly "
                                 f"{DECK_SIZE}, its {N_UAS} UAs included", "R1"))
    elif len(deck) - n_uas != DECK_SIZE:
        out.append(Violation("Art. V §1", f"{len(deck) - n_uas} cards besides the UAs; a deck "
                             f"has exactly {DECK_SIZE} plus its {N_UAS} UAs", "R1"))

    # Art. IV §3, Art. V §2: exactly 3 UAs, each a different name.
    if n_uas != N_UAS:
        out.append(Violation("Art. V §2", f"{n_uas} Unconstitutional Acts; a deck has "
                             f"exactly {N_UAS} (Art. IV §3)"))
    for name, n in by_type["ua"].items():
        if n > 1:
            out.append(Violation("Art. IV §3", f"{n} copies of the UA '{name}'; the "
                                 f"{N_UAS} UAs each bear a different name"))

    # Art. V §2 (R2): the minimum of Pillars is the law of construction.
    if n_of["pillar"] < profile["min_pillars"]:
        out.append(Violation("Art. V §2", f"{n_of['pillar']} Pillars; a deck has at least "
                             f"{profile['min_pillars']}", "R2"))

    # Art. V §3 (R3): at most N Freedom cards and N Bills, each a single copy.
    for card_type, switch, order, plural in (
        ("freedom", "max_freedom", "Art. IV §6", "Freedom cards"),
        ("bill", "max_bills", "Art. IV §7", "Bills"),
    ):
        limit = profile[switch]
        if n_of[card_type] > limit:
            out.append(Violation("Art. V §3", f"{n_of[card_type]} {plural}; a deck has at "
                                 f"most {limit} ({order})", "R3"))
        for name, n in by_type[card_type].items():
            if n > 1:
                out.append(Violation("Art. V §3", f"{n} copies of '{name}'; {plural} are "
                                     "unique, one copy each", "R3"))

    # Art. V §4: Rares, UAs not counted.
    n_rares = sum(n for name, n in deck.counts.items()
                  if card_of[name].rarity == "rare" and card_of[name].type != "ua")
    if n_rares > profile["max_rares"]:
        out.append(Violation("Art. V §4", f"{n_rares} Rare cards (UAs not counted); a deck "
                             f"has at most {profile['max_rares']}", "R31"))

    # Art. V §5 (R4): copies of each named Attack and Defense.
    limit = profile["max_copies_attack_defense"]
    for card_type, order in (("attack", "Attack"), ("defense", "Defense")):
        for name, n in by_type[card_type].items():
            if n > limit:
                out.append(Violation("Art. V §5", f"{n} copies of the {order} '{name}'; "
                                     f"at most {limit}", "R4"))

    # Art. V §6 (R5): each of the four Branches, any card counting (UAs too, unless R54's
    # switch keeps them outside the deck, as Art. V §1 reads).
    counts_uas = profile["branch_counts_uas"]
    present = {card.branch for card in card_of.values() if counts_uas or card.type != "ua"}
    missing = [b for b in enums.BRANCHES if b not in present]
    if missing:
        out.append(Violation("Art. V §6", f"no card of the {_branch_list(missing)} "
                             f"Branch{'es' if len(missing) > 1 else ''}; a deck holds at "
                             "least one card of each of the four"
                             + ("" if counts_uas else ", UAs not counted"),
                             "R5" if counts_uas else "R54"))

    # Art. VII §7, Amend. V §1 (R57 switched on): a built-in ability counts as an effect
    # (Amend. IV §3 calls a UA's drain one of its "effects"), so a card holding one beside
    # two written effects (a kicker counted, R39) carries three. A warning: the catalog
    # defines the card, and the engine plays it as written.
    if profile["abilities_are_effects"]:
        for name in deck.counts:
            card = card_of[name]
            ability = [f"{stat} {getattr(card, stat)}" for stat in ABILITIES
                       if getattr(card, stat) > 0]
            if ability and len(card.all_effects()) + len(ability) > MAX_EFFECTS:
                out.append(Violation("Art. VII §7", f"'{name}' holds {', '.join(ability)} "
                                     f"beside {len(card.all_effects())} effects: more than "
                                     f"{MAX_EFFECTS} when a built-in ability counts as an "
                                     "effect", "R57", warning=True))

    # Art. V §2 (R6): about 10 Rights is advice, never an error.
    if abs(n_of["rights"] - RIGHTS_ADVISED) > RIGHTS_LEEWAY:
        out.append(Violation("Art. V §2", f"{n_of['rights']} Rights cards; about "
                             f"{RIGHTS_ADVISED} are advised", "R6", warning=True))
    return out


def _branch_list(branches: list[str]) -> str:
    names = [b.replace("_", " ").title() for b in branches]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def is_legal(violations: list[Violation]) -> bool:
    """True when no violation is more than a warning."""
    return not any(not v.warning for v in violations)
