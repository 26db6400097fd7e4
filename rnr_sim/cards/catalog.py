"""Loading a card catalog (TOML), checking it against the contract, compiling it to arrays.

Every problem in a file is collected and reported at once, each naming the file, the card
and the field; a file that cannot be read as TOML at all is one line.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import tomllib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from rnr_sim import enums
from rnr_sim.cards.grammar import MAX_NUMBER, Effect, GrammarError, parse_effect, show_source
from rnr_sim.cards.schema import (
    COMMON_FIELDS,
    DESTROYED_BY,
    KEYWORD_ORDER,
    KICKER_FIELDS,
    PETITION_DESTROYED_BY,
    POSITIVE_STATS,
    REQUIRED_STATS,
    SET_FIELDS,
    STATS,
    TOP_LEVEL_KEYS,
    TYPE_STATS,
    Card,
    fields_of,
)
from rnr_sim.errors import InputError, decode_text, read_input

#: The catalog every command loads when given neither ``--cards`` nor a deck's ``Cards:``
#: header: the whole Original Set (355 cards; its ``base``, the Foundation Sample, keeps
#: the sample decks legal and their card ids, so they play the same games).
DEFAULT_CATALOG: Path = Path(__file__).resolve().parent.parent / "data" / "original.toml"
#: The 153-card Foundation Sample, the Original Set's base (package data).
FOUNDATION_CATALOG: Path = Path(__file__).resolve().parent.parent / "data" / "foundation.toml"
#: At most this many problems are spelled out; the first line still counts them all.
MAX_PROBLEMS_SHOWN = 200

_DECK_COMMENT = re.compile(r"\s#")
_CARDS_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*cards[ \t]*\]\]", re.MULTILINE)
_ERRATA_HEADER = re.compile(r"^[ \t]*\[[ \t]*errata[ \t]*\.", re.MULTILINE)
_BASE_KEY = re.compile(r"^[ \t]*base[ \t]*=", re.MULTILINE)
#: Where ``str.splitlines`` (the deck list reader) ends a line.
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def quote_name(name: object) -> str:
    """A card name quoted for a one-line message: ``'Name'``, or its escaped form (Python's
    ``repr``) when it holds a character that is not printable, such as a line break."""
    if isinstance(name, str) and name.isprintable():
        return f"'{name}'"
    return repr(name)


def deck_name_problem(name: str) -> str | None:
    """Why a deck list could not name a card called ``name``, or None when it can.

    A deck list line is ``COUNT Card Name`` (``decks.py``): the reader splits the text at
    every line break ``str.splitlines`` knows, drops a comment from a ``#`` at the start
    of the text or after whitespace, and strips whitespace from both ends of the name. So
    a name must not start or end with whitespace, start with ``#``, hold whitespace
    followed by ``#``, or hold a line break. Control characters (C0, DEL, C1) are refused
    too: a deck line could carry a few of them, but nobody can see or type them.
    """
    if name != name.strip():
        return f"{name!r} has spaces at its ends, which a deck list line drops"
    for ch in ("" if name.isprintable() else name):  # printable: no break, no control
        kind = unicodedata.category(ch)
        if ch in _LINE_BREAKS or kind in ("Zl", "Zp"):
            return (f"{name!r} holds a line break (U+{ord(ch):04X}); a deck list names a "
                    "card on one line")
        if kind == "Cc":
            return (f"{name!r} holds the control character U+{ord(ch):04X}, which a deck "
                    "list cannot show")
    if name.startswith("#"):
        return f"{name!r} starts with '#', which starts a comment in deck lists"
    if _DECK_COMMENT.search(name):
        return f"{name!r} holds ' #', which starts a comment in deck lists"
    return None



class CatalogError(InputError):
    """A catalog with problems: ``problems`` holds one line per problem."""

    def __init__(self, where: str, problems: list[str]):
        self.where = where
        self.problems = problems
        n = len(problems)
        lines = [f"{where}: {n} problem{'s' if n != 1 else ''}"]
        lines += problems[:MAX_PROBLEMS_SHOWN]
        if n > MAX_PROBLEMS_SHOWN:
            lines.append(f"{where}: ... and {n - MAX_PROBLEMS_SHOWN} more")
        super().__init__("\n".join(lines))


class Source(NamedTuple):
    """One catalog file as loaded: its path (None for text given directly) and the SHA-256
    of its bytes."""

    path: Path | None
    sha256: str


@dataclass(frozen=True, eq=False)
class Catalog:
    """A checked card catalog. Card id = index in ``cards``: load order (docs/design.md,
    "Layered catalogs"): a base's cards first, then each later file's new cards; errata
    change a card in place, so ids stay stable as layers are added.

    ``name`` and ``version`` are the set's, joined with " + " and "+" when several files
    were loaded. ``path`` is the file when exactly one was loaded, else None. ``sha256``
    is that file's SHA-256; for several files, the SHA-256 of their SHA-256s, each hex
    digest followed by a newline, in load order. ``sources`` lists every file in load
    order with its SHA-256 (for manifests); ``source_sets`` the (set name, version) of
    each, in the same order; ``sets`` the distinct set names in load order.
    """

    name: str
    version: str
    cards: tuple[Card, ...]
    path: Path | None = None
    sha256: str = ""
    sources: tuple[Source, ...] = ()
    source_sets: tuple[tuple[str, str], ...] = ()
    #: Each card's TOML table as loaded, errata applied (read only; empty when the
    #: catalog was built from ``Card`` objects).
    card_tables: tuple[dict[str, Any], ...] = field(default=(), repr=False)
    by_name: dict[str, int] = field(init=False, repr=False)
    _by_folded: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {c.name: i for i, c in enumerate(self.cards)})
        object.__setattr__(
            self, "_by_folded", {c.name.casefold(): i for i, c in enumerate(self.cards)}
        )

    def __len__(self) -> int:
        return len(self.cards)

    @property
    def sets(self) -> tuple[str, ...]:
        """The distinct set names, in load order (the catalog's name when no file said)."""
        names = [name for name, _ in self.source_sets] or [self.name]
        return tuple(dict.fromkeys(names))

    def set_of(self, card_id: int) -> str:
        """The name of the set that defines card ``card_id``."""
        return self.cards[card_id].set or self.name

    def __repr__(self) -> str:
        return f"Catalog({self.name!r}, version={self.version!r}, {len(self.cards)} cards, " \
            f"path={str(self.path) if self.path else None!r})"

    def lookup(self, name: str) -> int | None:
        """The id of the card of this name (exact, else ignoring case), or None."""
        card_id = self.by_name.get(name)
        if card_id is None:
            card_id = self._by_folded.get(name.casefold())
        return card_id

    def closest(self, name: str, n: int = 3) -> list[str]:
        """Up to ``n`` catalog names that look like ``name``, best first (difflib)."""
        near = difflib.get_close_matches(name.casefold(), self._by_folded, n=n, cutoff=0.6)
        return [self.cards[self._by_folded[f]].name for f in near]

    def compile(self) -> np.ndarray:
        """The catalog as the engine reads it: int32[n_cards, enums.N_CARD_COLS].

        Columns ``C_*`` of ``enums``; effect slot e starts at ``C_EFF0 + e * EFF_STRIDE``
        and holds ``E_TRIGGER, E_VERB, E_AMOUNT, E_COST, E_KICKER``. A Freedom card's kicker
        takes the slot after its own effects, with ``E_KICKER = 1`` and ``E_COST`` its extra
        IP. ``C_N_EFFECTS`` counts the filled slots, the kicker included. Unused slots are 0
        (``V_NONE``). The derived columns ``C_FLAGS``, ``C_RESOLVE_STEPS`` and
        ``C_TURN_STEPS`` restate the effect slots for the engine's hot loops.
        """
        table = np.zeros((len(self.cards), enums.N_CARD_COLS), dtype=np.int32)
        for i, card in enumerate(self.cards):
            row = table[i]
            row[enums.C_TYPE] = card.type_id
            row[enums.C_BRANCH] = card.branch_id
            row[enums.C_RARITY] = card.rarity_id
            row[enums.C_COST] = card.cost
            row[enums.C_IP] = card.ip
            row[enums.C_DAMAGE] = card.damage
            row[enums.C_DP] = card.dp
            row[enums.C_DRAIN] = card.drain
            row[enums.C_KEYWORDS] = card.keyword_mask
            slots = card.all_effects()
            row[enums.C_N_EFFECTS] = len(slots)
            for e, effect in enumerate(slots):
                base = enums.C_EFF0 + e * enums.EFF_STRIDE
                row[base + enums.E_TRIGGER] = effect.trigger_id
                row[base + enums.E_VERB] = effect.verb_id
                row[base + enums.E_AMOUNT] = effect.amount
                row[base + enums.E_COST] = effect.cost
                row[base + enums.E_KICKER] = int(effect.kicker)
            derive_columns(row)
        return table

    def to_polars(self, with_set: bool = False) -> pl.DataFrame:
        """One row per card: id, name, type, branch, rarity, the stats, keywords (joined
        with ", "), effects (as the tool read them, joined with "; ") and text. With
        ``with_set``, a ``set`` column (the set that defines the card) follows ``name``."""
        cards = self.cards
        columns: dict[str, Any] = {
            "id": pl.Series("id", range(len(cards)), dtype=pl.Int32),
            "name": [c.name for c in cards],
        }
        if with_set:
            columns["set"] = [self.set_of(i) for i in range(len(cards))]
        columns |= {
            "type": [c.type for c in cards],
            "branch": [c.branch for c in cards],
            "rarity": [c.rarity for c in cards],
        }
        for stat in STATS:
            columns[stat] = pl.Series(stat, [getattr(c, stat) for c in cards], dtype=pl.Int32)
        columns["keywords"] = [", ".join(c.keywords) for c in cards]
        columns["effects"] = [c.describe_effects() for c in cards]
        columns["text"] = [c.text for c in cards]
        return pl.DataFrame(columns, schema_overrides={k: pl.String for k in (
            "name", "type", "branch", "rarity", "keywords", "effects", "text")
            + (("set",) if with_set else ())})


# ---------------------------------------------------------------------------- loading


CatalogPaths = str | Path | Sequence[str | Path] | None


def load_catalog(path: CatalogPaths = None) -> Catalog:
    """Load and check a card catalog; ``None`` (or an empty sequence) loads
    ``DEFAULT_CATALOG``.

    ``path`` may be one file or several, layered in order (docs/design.md, "Layered
    catalogs"): each file adds its new cards after the earlier ones and may carry
    ``[errata."Card Name"]`` tables changing an earlier file's card in place. A file's
    ``base = "other.toml"`` (relative to the file) is loaded just before it. Each file is
    loaded once, at its first mention, so listing a base that a later file also names is
    harmless.

    Raises ``InputError``: one line when a file cannot be read as TOML, when its ``base``
    is missing or leads back to itself; else a ``CatalogError`` for the first file with
    problems, listing every one (first line: the count).
    """
    if path is None or (not isinstance(path, str | Path) and len(path) == 0):
        paths = [DEFAULT_CATALOG]
    elif isinstance(path, str | Path):
        paths = [Path(path)]
    else:
        paths = [Path(p) for p in path]
    layers = _Layers()
    for p in paths:
        layers.load(p, chain=())
    return layers.catalog()


def parse_catalog(raw: bytes | str, where: str = "<catalog>", path: Path | None = None) -> Catalog:
    """Parse and check catalog TOML given as bytes or text; ``where`` names it in errors.
    A ``base`` key is read relative to ``path`` (so it needs one)."""
    layers = _Layers()
    layers.add(raw.encode("utf-8") if isinstance(raw, str) else raw, where, path, chain=())
    return layers.catalog()


def _read_toml(data_bytes: bytes, where: str) -> tuple[str, dict[str, Any]]:
    """The text and the tables of one catalog file, or one ``InputError`` line."""
    text = decode_text(data_bytes, where, "a card catalog is TOML")
    if not text.strip():
        raise InputError(
            f"{where}: empty file; a card catalog is TOML with a [set] table and [[cards]]"
        )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{where}: broken TOML: {e}") from None
    return text, data


def _line_of(pattern: re.Pattern[str], text: str) -> str:
    """':LINE' of the first match of ``pattern`` in ``text``, or '' when none."""
    m = pattern.search(text)
    return f":{text.count(chr(10), 0, m.start()) + 1}" if m else ""


class _Layers:
    """The catalog being built, one file (layer) at a time, in load order."""

    def __init__(self) -> None:
        self.cards: list[Card] = []
        self.tables: list[dict[str, Any]] = []  # each card's TOML table, errata applied
        self.by_folded: dict[str, int] = {}  # casefolded name -> card id
        self.sources: list[Source] = []
        self.source_sets: list[tuple[str, str]] = []
        self.loaded: set[Path] = set()  # resolved paths of the files loaded

    def lookup(self, name: str) -> int | None:
        """The id of the earlier card of this name, ignoring case (as deck lists do)."""
        return self.by_folded.get(name.casefold()) if isinstance(name, str) else None

    def card_of(self, name: str) -> Card | None:
        card_id = self.lookup(name)
        return None if card_id is None else self.cards[card_id]

    def closest(self, name: str) -> list[str]:
        near = difflib.get_close_matches(name.casefold(), self.by_folded, n=3, cutoff=0.6)
        return [self.cards[self.by_folded[f]].name for f in near]

    def load(self, path: Path, chain: tuple[tuple[Path, str], ...]) -> None:
        """Load the file at ``path`` (its base first), unless it is loaded already.
        ``chain``: (resolved path, name) of the files whose ``base`` led here."""
        if path.resolve() in self.loaded:
            return
        raw = read_input(path, "card catalog file", "a card catalog (a TOML file)")
        self.add(raw, str(path), path, chain)

    def add(self, data_bytes: bytes, where: str, path: Path | None,
            chain: tuple[tuple[Path, str], ...]) -> None:
        text, data = _read_toml(data_bytes, where)
        here = path.resolve() if path is not None else None
        if "base" in data:
            self.load_base(data["base"], f"{where}{_line_of(_BASE_KEY, text)}", where, path,
                           chain + ((here, where),) if here is not None else chain)
        checker = _Checker(where, text)
        set_name, version, cards = checker.check(data, earlier=self)
        errata = checker.check_errata(data.get("errata"), earlier=self, cards=cards)
        if checker.problems:
            raise CatalogError(where, checker.problems)
        for card_id, card, table, at in errata:
            old = self.cards[card_id]
            self.cards[card_id] = replace(card, set=old.set, source=old.source,
                                          errata=old.errata + (at,))
            self.tables[card_id] = table
        for card, table, source in zip(cards, checker.card_tables, checker.card_sources,
                                       strict=True):
            self.by_folded[card.name.casefold()] = len(self.cards)
            self.cards.append(replace(card, set=set_name, source=source))
            self.tables.append(table)
        self.sources.append(Source(path, hashlib.sha256(data_bytes).hexdigest()))
        self.source_sets.append((set_name, version))
        if here is not None:
            self.loaded.add(here)

    def load_base(self, base: Any, at: str, where: str, path: Path | None,
                  chain: tuple[tuple[Path, str], ...]) -> None:
        if not isinstance(base, str) or not base.strip():
            raise InputError(f"{at}: base must be the path of the catalog this one builds "
                             f"on, relative to this file, e.g. base = \"foundation.toml\"; "
                             f"not {base!r}")
        if path is None:
            raise InputError(f"{at}: base {quote_name(base)} is read relative to the "
                             "catalog's file, and this catalog is not a file")
        base_path = path.parent / base
        target = base_path.resolve()
        seen = [p for p, _ in chain]
        if target in seen:
            loop = [name for _, name in chain[seen.index(target):]] + [str(base_path)]
            raise InputError(f"{at}: base {quote_name(base)} makes a cycle "
                             f"({' -> '.join(loop)}); a catalog cannot build on a file "
                             "that builds on it: remove one of these base keys")
        if target in self.loaded:
            return
        try:
            raw = read_input(base_path, "card catalog file", "a card catalog (a TOML file)")
        except InputError as e:
            raise InputError(f"{at}: base {quote_name(base)}: {e}; the path is relative to "
                             f"{where}'s folder") from None
        self.add(raw, str(base_path), base_path, chain)

    def catalog(self) -> Catalog:
        names = list(dict.fromkeys(name for name, _ in self.source_sets))
        versions = [v for _, v in self.source_sets]
        single = len(self.sources) == 1
        if single:
            sha256 = self.sources[0].sha256
        else:
            sha256 = hashlib.sha256("".join(
                f"{s.sha256}\n" for s in self.sources).encode("ascii")).hexdigest()
        return Catalog(
            name=" + ".join(names),
            version=versions[0] if single else "+".join(versions) if any(versions) else "",
            cards=tuple(self.cards),
            path=self.sources[0].path if single else None,
            sha256=sha256,
            sources=tuple(self.sources),
            source_sets=tuple(self.source_sets),
            card_tables=tuple(self.tables),
        )


def _toml_key(name: str) -> str:
    """``name`` as a TOML key: a basic string with its quotes and backslashes escaped."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _near(word: str, valid: tuple[str, ...] | list[str]) -> str:
    near = difflib.get_close_matches(word, valid, n=1)
    return f" (did you mean '{near[0]}'?)" if near else ""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Checker:
    """Walks the parsed TOML, building cards and collecting every problem."""

    def __init__(self, where: str, text: str):
        self.where = where
        self.text = text
        self.problems: list[str] = []
        self._header_lines: list[int] | None = None
        self._errata_lines: dict[str, int] | None = None
        self._n_cards = 0
        #: The TOML table and ``file:line`` of each card ``check`` returned, in order.
        self.card_tables: list[dict[str, Any]] = []
        self.card_sources: list[str] = []

    # -- problem lines
    def file_problem(self, message: str) -> None:
        self.problems.append(f"{self.where}: {message}")

    def card_line(self, index: int) -> str:
        """':LINE' of card ``index``'s ``[[cards]]`` header, when there is one header per
        card (not for an inline ``cards = [...]`` array)."""
        if self._header_lines is None:
            self._header_lines, line_no, last = [], 1, 0
            for m in _CARDS_HEADER.finditer(self.text):
                line_no += self.text.count("\n", last, m.start())
                last = m.start()
                self._header_lines.append(line_no)
        if len(self._header_lines) == self._n_cards:
            return f":{self._header_lines[index]}"
        return ""

    def errata_line(self, name: str) -> str:
        """':LINE' of the ``[errata."name"]`` header (or of a table under it), or ''."""
        if self._errata_lines is None:
            self._errata_lines = {}
            for m in _ERRATA_HEADER.finditer(self.text):
                end = self.text.find("\n", m.start())
                header = self.text[m.start():end if end >= 0 else len(self.text)]
                try:  # the header line alone is a TOML document naming the card
                    names = tomllib.loads(header).get("errata", {})
                except tomllib.TOMLDecodeError:
                    continue
                for key in names:
                    self._errata_lines.setdefault(
                        key, self.text.count("\n", 0, m.start()) + 1)
        line = self._errata_lines.get(name)
        return "" if line is None else f":{line}"

    def card_problem(self, index: int, name: Any, message: str,
                     line: str | None = None) -> None:
        who = f"card {quote_name(name)}" if isinstance(name, str) and name \
            else f"card #{index + 1}"
        at = self.card_line(index) if line is None else line
        self.problems.append(f"{self.where}{at}: {who}: {message}")

    # -- the file
    def check(self, data: dict[str, Any], earlier: _Layers | None = None
              ) -> tuple[str, str, list[Card]]:
        """The set's name and version and the file's new cards; ``earlier`` holds the
        cards of the files loaded before this one (a name they hold is a duplicate)."""
        for key in data:
            if key not in TOP_LEVEL_KEYS:
                self.file_problem(
                    f"unknown top-level key {quote_name(key)}{_near(key, TOP_LEVEL_KEYS)}; "
                    "a catalog holds a [set] table and [[cards]] tables"
                )
        set_name, version = self.check_set(data.get("set"))
        raw_cards = data.get("cards")
        cards: list[Card] = []
        if raw_cards is None:
            if "errata" not in data:  # a later layer may only change earlier cards
                self.file_problem("no [[cards]] tables")
        elif not isinstance(raw_cards, list):
            self.file_problem("'cards' must be an array of tables ([[cards]])")
        else:
            if not raw_cards:
                self.file_problem("no [[cards]] tables")
            self._n_cards = len(raw_cards)
            seen: dict[str, tuple[int, str]] = {}
            for index, raw in enumerate(raw_cards):
                card = self.check_card(index, raw)
                if card is not None:
                    cards.append(card)
                    self.card_tables.append(dict(raw))
                    self.card_sources.append(f"{self.where}{self.card_line(index)}")
                name = raw.get("name") if isinstance(raw, dict) else None
                if not isinstance(name, str) or not name.strip():
                    continue
                if earlier is not None and (old := earlier.card_of(name)) is not None:
                    self.card_problem(
                        index, name,
                        f"field 'name': already card {quote_name(old.name)} of "
                        f"{old.source} (set {quote_name(old.set)}); to change that card "
                        f"write [errata.{_toml_key(old.name)}] with the changed fields "
                        "instead of a [[cards]] table, or give this card another name",
                    )
                    continue
                # Deck lists match names ignoring case, so names must differ in more than case.
                first = seen.setdefault(name.casefold(), (index, name))
                if first[0] != index:
                    same = "the name" if first[1] == name else f"the name of '{first[1]}'"
                    self.card_problem(
                        index, name,
                        f"field 'name': duplicate: {same} is already card #{first[0] + 1}",
                    )
        return set_name, version, cards

    def check_set(self, table: Any) -> tuple[str, str]:
        if table is None:
            self.file_problem("missing [set] table with the set's name")
            return "", ""
        if isinstance(table, str):  # set = "Name": the short form, no version
            table = {"name": table}
        if not isinstance(table, dict):
            self.file_problem("'set' must be a table: [set] name = \"...\" "
                              "(or the short form set = \"...\")")
            return "", ""
        for key in table:
            if key not in SET_FIELDS:
                self.file_problem(
                    f"[set]: unknown key {quote_name(key)}{_near(key, SET_FIELDS)}; "
                    f"valid keys: {', '.join(SET_FIELDS)}"
                )
        name = table.get("name")
        if not isinstance(name, str) or not name.strip():
            self.file_problem("[set]: missing name (a non-empty string)")
            name = ""
        version = table.get("version", "")
        if _is_int(version):
            version = str(version)
        elif not isinstance(version, str):
            self.file_problem(f"[set]: version must be a string, not {version!r}")
            version = ""
        return name, version

    # -- errata
    def check_errata(self, value: Any, earlier: _Layers, cards: list[Card]
                     ) -> list[tuple[int, Card, dict[str, Any], str]]:
        """Each ``[errata."Name"]`` table of this file as (card id, the changed card, its
        TOML table, ``file:line``). Errata change a card an earlier file defines, field by
        field; the result is checked as any card is. Problems go to ``self.problems``."""
        if value is None:
            return []
        if not isinstance(value, dict):
            self.file_problem("'errata' must be tables naming earlier cards: "
                              "[errata.\"Card Name\"] then the changed fields")
            return []
        here = {c.name.casefold(): c.name for c in cards}
        out: list[tuple[int, Card, dict[str, Any], str]] = []
        done: dict[int, str] = {}
        for name, fields in value.items():
            line = self.errata_line(name)
            at = f"[errata.{_toml_key(name)}]"

            def problem(message: str, name: str = name, line: str = line) -> None:
                self.problems.append(f"{self.where}{line}: errata for {quote_name(name)}: "
                                     f"{message}")

            card_id = earlier.lookup(name)
            if card_id is None:
                if name.casefold() in here:
                    problem(f"{quote_name(here[name.casefold()])} is defined in this file; "
                            f"change its [[cards]] table instead of writing {at}")
                else:
                    near = earlier.closest(name)
                    hint = f" (did you mean {' or '.join(map(quote_name, near))}?)" \
                        if near else ""
                    problem(f"no earlier catalog file defines this card{hint}; errata "
                            "change a card of a file loaded before this one (its base or an "
                            "earlier --cards), a new card needs a [[cards]] table")
                continue
            old = earlier.cards[card_id]
            if card_id in done:
                problem(f"{quote_name(old.name)} already has errata in this file "
                        f"({done[card_id]}); write them in one table")
                continue
            done[card_id] = at
            if not isinstance(fields, dict) or not fields:
                problem(f"{at} must be a table of the fields it changes, e.g. cost = 3")
                continue
            if "name" in fields and fields["name"] != old.name:
                problem(f"errata cannot rename a card (deck lists name it by "
                        f"{quote_name(old.name)}); drop 'name', or add a new card in a "
                        "[[cards]] table")
                continue
            table = dict(earlier.tables[card_id])
            new_type = fields.get("type")
            if isinstance(new_type, str) and new_type.strip().lower() in enums.CARD_TYPES:
                # A new Order drops the fields the old one had and the new one cannot carry.
                allowed = fields_of(new_type.strip().lower())
                table = {k: v for k, v in table.items() if k in allowed}
            table.update(fields)
            n_before = len(self.problems)
            card = self.check_card(0, table, line=line, after=f"after {at} over {old.source}")
            if card is not None and len(self.problems) == n_before:
                out.append((card_id, card, table, f"{self.where}{line}"))
        return out

    # -- one card
    def check_card(self, index: int, raw: Any, line: str | None = None,
                   after: str = "") -> Card | None:
        """The card of one TOML table, or None after adding its problems. ``line``
        replaces the ``[[cards]]`` header's line in problems; ``after`` ends each one
        (for errata: which table changed which card)."""
        if not isinstance(raw, dict):
            self.card_problem(index, None, "a card must be a table ([[cards]])")
            return None
        name = raw.get("name")
        n_before = len(self.problems)
        tail = f" ({after})" if after else ""

        def problem(message: str) -> None:
            self.card_problem(index, name, message + tail, line=line)

        if not isinstance(name, str) or not name.strip():
            problem("missing field 'name' (a non-empty string)" if name is None
                    else f"field 'name' must be a non-empty string, not {name!r}")
            name = None
        elif (why := deck_name_problem(name)) is not None:
            problem(f"field 'name': {why}")

        card_type = self.choice(raw, "type", enums.CARD_TYPES, problem)
        branch = self.choice(raw, "branch", enums.BRANCHES, problem)
        rarity = self.choice(raw, "rarity", enums.RARITIES, problem)

        # Unknown keys, and stats that do not belong to this Order.
        allowed = fields_of(card_type) if card_type else COMMON_FIELDS + STATS + ("kicker",)
        for key in raw:
            if key in allowed:
                continue
            if key == "kicker":
                problem(f"field 'kicker': a kicker is for Freedom cards only (Art. IV §6), "
                        f"not a {card_type} card")
            elif key in STATS:
                has = ", ".join(TYPE_STATS[card_type]) or "no stats"
                problem(f"field '{key}' does not belong to a {card_type} card "
                        f"(a {card_type} card has: {has})")
            else:
                problem(f"unknown field {quote_name(key)}{_near(key, allowed)}; "
                        f"valid fields: {', '.join(allowed)}")

        stats = {}
        for stat in STATS:
            if stat not in raw or (card_type and stat not in TYPE_STATS[card_type]):
                if card_type and stat in REQUIRED_STATS.get(card_type, ()):
                    problem(f"missing field '{stat}' (a {card_type} card needs it)")
                continue
            value = raw[stat]
            if not _is_int(value):
                problem(f"field '{stat}' must be a whole number, not {value!r}")
            elif value < 0:
                problem(f"field '{stat}' must not be negative, not {value}")
            elif value > MAX_NUMBER:
                problem(f"field '{stat}' must be at most {MAX_NUMBER}, not {value}")
            elif value == 0 and stat in POSITIVE_STATS.get(card_type, ()):
                problem(f"field '{stat}' must be at least 1: a card at 0 DP is destroyed "
                        "(Art. II §3)")
            else:
                stats[stat] = value

        keywords = self.keywords(raw.get("keywords", []), card_type, problem)
        raw_effects = raw.get("effects", [])
        effects = self.effects(raw_effects, problem)
        has_kicker = card_type == "freedom" and "kicker" in raw
        kicker = self.kicker(raw["kicker"], problem) if has_kicker else None
        # Counted as written, so a misspelt effect does not hide a third one.
        n_effects = (len(raw_effects) if isinstance(raw_effects, list) else 0) + has_kicker
        if n_effects > enums.MAX_EFFECTS:
            what = "effects, the kicker counted" if has_kicker else "effects"
            problem(f"field 'effects': {n_effects} {what}; a card has at most "
                    f"{enums.MAX_EFFECTS} (Art. VII §7, Amend. V §1, R30)")

        for effect in effects + ((kicker,) if kicker is not None else ()):
            self.never_fires(effect, card_type, keywords, problem)

        text = raw.get("text", "")
        if not isinstance(text, str):
            problem(f"field 'text' must be a string, not {text!r}")
            text = ""

        if len(self.problems) > n_before:
            return None
        return Card(
            name=name, type=card_type, branch=branch, rarity=rarity,
            keywords=keywords, effects=effects, kicker=kicker, text=text, **stats,
        )

    @staticmethod
    def never_fires(effect: Effect, card_type: str | None, keywords: tuple[str, ...],
                    problem) -> None:
        """An effect the engine could never fire on a card of this Order."""
        at = f"field '{'kicker' if effect.kicker else 'effects'}': {show_source(effect.source)}"
        if card_type == "ua" and effect.trigger == "on_resolve":
            # Art. IV §3.2: a UA starts in play and is never played, so nothing resolves it.
            problem(f"{at} fires when the card is played, and a UA is never played: it "
                    "starts the game in the UA Area (Art. IV §3.2, Art. VII §1); give it "
                    "'each turn:', 'activate K:' or 'on destroy:'")
        elif card_type == "pillar" and effect.trigger == "activate":
            # Amend. V §4, R34: a Pillar is "not subject to effect activation".
            problem(f"{at} is an 'activate' effect, and Pillars are not subject to effect "
                    "activation (Amend. V §4, R34); give it 'each turn:' or put the effect "
                    "on another card type")
        elif effect.trigger == "on_destroy" and card_type is not None:
            if card_type in DESTROYED_BY or (card_type == "rights" and "petition" in keywords):
                return
            why = {"rights": "a Rights card is destroyed only " + PETITION_DESTROYED_BY
                             + ", and this one has no 'petition' keyword",
                   "freedom": "a Freedom card is discarded after resolving or stays in "
                              "play (R27), and nothing destroys it",
                   "bill": "a Bill returns to hand after resolving (R28)",
                   "pillar": "no rule or effect destroys a Pillar"}[card_type]
            problem(f"{at} never fires: a {card_type} card is never destroyed ({why}); "
                    "only Defenses, UAs, Attacks and Petitions are")

    @staticmethod
    def choice(raw: dict, key: str, valid: tuple[str, ...], problem) -> str | None:
        value = raw.get(key)
        if value is None:
            problem(f"missing field '{key}'; one of: {', '.join(valid)}")
            return None
        if isinstance(value, str):
            value = value.strip().lower()  # any case, as effects are read
        if value not in valid:
            problem(f"field '{key}': unknown {key} {raw[key]!r}{_near(str(value), valid)}; "
                    f"valid: {', '.join(valid)}")
            return None
        return value

    @staticmethod
    def keywords(value: Any, card_type: str | None, problem) -> tuple[str, ...]:
        if not isinstance(value, list):
            problem(f"field 'keywords' must be a list of strings, not {value!r}")
            return ()
        out: list[str] = []
        valid = tuple(enums.KEYWORDS)
        for kw in value:
            if isinstance(kw, str) and kw.strip().lower() in enums.KEYWORDS:
                kw = kw.strip().lower()  # any case, as effects are read
            if not isinstance(kw, str) or kw not in enums.KEYWORDS:
                problem(f"field 'keywords': unknown keyword {kw!r}"
                        f"{_near(str(kw), valid)}; valid: {', '.join(valid)}")
            elif kw in out:
                problem(f"field 'keywords': '{kw}' is listed twice")
            elif card_type and KEYWORD_ORDER.get(kw, card_type) != card_type:
                rule = {"petition": "Art. II §4: only Rights cards are Petitions",
                        "one_shot": "R16: only Attacks strike and are discarded"}[kw]
                problem(f"field 'keywords': '{kw}' on a {card_type} card ({rule})")
            else:
                out.append(kw)
        return tuple(out)

    @staticmethod
    def effects(value: Any, problem) -> tuple[Effect, ...]:
        if not isinstance(value, list):
            problem(f"field 'effects' must be a list of strings, not {value!r}")
            return ()
        out: list[Effect] = []
        for source in value:
            try:
                out.append(parse_effect(source))
            except GrammarError as e:
                problem(f"field 'effects': {e}")
        return tuple(out)

    @staticmethod
    def kicker(value: Any, problem) -> Effect | None:
        if not isinstance(value, dict):
            problem("field 'kicker' must be a table: kicker = { cost = 2, effect = \"draw 2\" }")
            return None
        ok = True
        for key in value:
            if key not in KICKER_FIELDS:
                problem(f"field 'kicker': unknown key {quote_name(key)}"
                        f"{_near(key, KICKER_FIELDS)}; valid keys: {', '.join(KICKER_FIELDS)}")
                ok = False
        cost = value.get("cost")
        if cost is None:
            problem("field 'kicker': missing 'cost' (the extra IP)")
            ok = False
        elif not _is_int(cost) or cost < 0 or cost > MAX_NUMBER:
            problem(f"field 'kicker': 'cost' must be a whole number 0..{MAX_NUMBER}, "
                    f"not {cost!r}")
            ok = False
        source = value.get("effect")
        if source is None:
            problem("field 'kicker': missing 'effect' (one effect string)")
            return None
        try:
            effect = parse_effect(source)
        except GrammarError as e:
            problem(f"field 'kicker': {e}")
            return None
        if effect.trigger == "activate":
            # The kicker's slot holds its extra IP in E_COST; an activate cost has no room.
            problem("field 'kicker': a kicker is bought when the card is played; "
                    "it cannot be an 'activate K:' effect")
            return None
        if not ok:
            return None
        return Effect(effect.trigger, effect.verb, effect.amount, cost=cost,
                      source=source, kicker=True)


def derive_columns(row: np.ndarray) -> None:
    """Fill a compiled card row's derived columns from its effect slots (see ``enums``)."""
    flags = resolve_steps = turn_steps = 0
    for e in range(enums.MAX_EFFECTS):
        base = enums.C_EFF0 + e * enums.EFF_STRIDE
        verb = int(row[base + enums.E_VERB])
        if verb == enums.V_NONE:
            continue
        trigger = int(row[base + enums.E_TRIGGER])
        kicker = row[base + enums.E_KICKER] != 0
        step = 1 << enums.RESOLVE_STEP[verb]
        if not kicker:  # what a policy's value of the card reads (decisions.card_value)
            if enums.VERB_READS_PILLARS[verb]:
                flags |= enums.CF_VALUE_READS_PILLARS
            if enums.VERB_QUEUES[verb]:
                flags |= enums.CF_VALUE_READS_QUEUE  # see decisions.note_queued
        if trigger == enums.TRIG_ON_RESOLVE:
            resolve_steps |= step
            if enums.VERB_GIVES_IP[verb] != enums.IP_NONE and not kicker:
                flags |= enums.CF_IP_ON_RESOLVE
        elif trigger == enums.TRIG_ON_DESTROY:
            flags |= enums.CF_ON_DESTROY
        else:  # each turn, activate: R27 lasting
            flags |= enums.CF_LASTING_KICKED | (0 if kicker else enums.CF_LASTING)
            if trigger == enums.TRIG_ACTIVATE:
                turn_steps |= step
                flags |= 0 if kicker else enums.CF_ACTIVATE
            elif enums.VERB_GIVES_IP[verb] != enums.IP_NONE:
                flags |= enums.CF_EACH_TURN_IP
            else:
                turn_steps |= step
    if row[enums.C_TYPE] == enums.PILLAR or (row[enums.C_KEYWORDS] & enums.KW_PETITION):
        flags |= enums.CF_VALUE_READS_PILLARS  # see decisions.card_value
    row[enums.C_FLAGS] = flags
    row[enums.C_RESOLVE_STEPS] = resolve_steps
    row[enums.C_TURN_STEPS] = turn_steps
