"""Card patches: a small TOML file that changes, adds or removes cards of a catalog.

A patch is what a designer writes to ask "what does this change do?" (``rnr-sim
compare --patch``)::

    # optional: a name and a note for the report
    [patch]
    name = "Volley buff"
    note = "Minuteman Volley hits harder"

    remove = ["Gag Rule"]            # top-level keys come before the first [table]

    [cards."Minuteman Volley"]       # change any field of the card contract
    damage = 8
    effects = ["lp 4"]

    [[add]]                           # a whole new card, as in a catalog's [[cards]]
    name = "Lexington Green"
    type = "attack"
    ...

Applying a patch works on the catalog's TOML tables: the named fields replace the card's
(a field the card did not have is added), ``[[add]]`` tables are appended in order,
``remove`` drops cards. The result is written back as TOML and checked by the project's
own catalog loader (``parse_catalog``), so a patched catalog obeys every law a catalog
file does. Every problem is an ``InputError`` of one line naming the patch file, the
card and the field.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rnr_sim.cards import Catalog, load_catalog, parse_catalog
from rnr_sim.cards.catalog import CatalogError
from rnr_sim.cards.catalog import quote_name as quote
from rnr_sim.cards.schema import COMMON_FIELDS, STATS, TYPE_STATS
from rnr_sim.errors import InputError, decode_text, read_input

#: Every field a ``[cards."Name"]`` table may set: any field of the card contract.
CARD_FIELDS: tuple[str, ...] = COMMON_FIELDS + STATS + ("kicker",)
PATCH_KEYS = ("patch", "cards", "add", "remove")
PATCH_INFO_KEYS = ("name", "note")

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Patch:
    """A parsed patch file: ``changes`` maps a card name (as written) to its new fields,
    ``add`` holds whole card tables, ``remove`` card names."""

    path: Path | None
    source: str = "<patch>"  # how errors name it: the file's path as given
    name: str = ""
    note: str = ""
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)
    add: tuple[dict[str, Any], ...] = ()
    remove: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return self.source

    @property
    def empty(self) -> bool:
        return not (self.changes or self.add or self.remove)


@dataclass(frozen=True)
class PatchedCatalog:
    """A patch applied to a catalog: the checked result, its TOML text, and what changed.

    ``changed`` lists (card, field, old, new) for every field the patch set, ``added`` and
    ``removed`` card names, all in catalog names (the patch may spell them in any case).
    """

    base: Catalog
    catalog: Catalog
    text: str
    changed: tuple[tuple[str, str, Any, Any], ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]

    def describe(self) -> list[str]:
        """One line per change, for people: ``Minuteman Volley: damage 3 -> 8`` for every
        field the patch sets, ``Name: added (attack, bison, common, cost 2, damage 6; lp 2)``
        for every card it adds, ``Name: removed``. Names that hold characters that are not
        printable are shown escaped, so each change stays one line."""
        lines = [f"{_name(card)}: {fld} {_show(old)} -> {_show(new)}"
                 for card, fld, old, new in self.changed]
        lines += [f"{_name(name)}: added ({self._summary(name)})" for name in self.added]
        lines += [f"{_name(name)}: removed" for name in self.removed]
        return lines

    def _summary(self, name: str) -> str:
        """An added card as the tool read it: Order, Branch, rarity, stats, then its
        keywords and effects."""
        card = self.catalog.cards[self.catalog.by_name[name]]
        parts = [card.type, card.branch, card.rarity]
        parts += [f"{s} {getattr(card, s)}" for s in TYPE_STATS[card.type]]
        out = ", ".join(parts)
        if card.keywords:
            out += "; " + ", ".join(card.keywords)
        if card.all_effects():
            out += "; " + card.describe_effects()
        return out


def _show(value: Any) -> str:
    if value is None:
        return "(none)"
    return toml_value(value)


def _name(name: str) -> str:
    """A card name as a change line shows it: as written, or escaped if not printable."""
    return name if name.isprintable() else toml_string(name)


# ---------------------------------------------------------------------------- reading


def _near(word: str, valid) -> str:
    near = difflib.get_close_matches(word, list(valid), n=1)
    return f" (did you mean '{near[0]}'?)" if near else ""


def parse_patch(raw: bytes | str, where: str = "<patch>", path: Path | None = None) -> Patch:
    """Parse patch TOML (bytes or text); ``where`` names it in errors."""
    text = decode_text(raw, where, "a card patch is TOML")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{where}: broken TOML: {e}") from None

    for key in data:
        if key not in PATCH_KEYS:
            raise InputError(
                f"{where}: unknown top-level key {quote(key)}{_near(key, PATCH_KEYS)}; a patch "
                "holds [cards.\"Name\"] tables, [[add]] tables, remove = [...] and [patch]"
            )
    info = data.get("patch", {})
    if not isinstance(info, dict):
        raise InputError(f"{where}: 'patch' must be a table: [patch] name = \"...\"")
    for key, value in info.items():
        if key not in PATCH_INFO_KEYS:
            raise InputError(f"{where}: [patch]: unknown key {quote(key)}"
                             f"{_near(key, PATCH_INFO_KEYS)}; valid keys: name, note")
        if not isinstance(value, str):
            raise InputError(f"{where}: [patch]: '{key}' must be a string, not {value!r}")

    changes = data.get("cards", {})
    if not isinstance(changes, dict) or not all(isinstance(v, dict) for v in changes.values()):
        raise InputError(f"{where}: 'cards' must hold one table per card: "
                         "[cards.\"Minuteman Volley\"] damage = 8")
    for name, fields in changes.items():
        at = f"{where}: [cards.{toml_string(name)}]"
        if not fields:
            raise InputError(f"{at}: no fields to change; set one, e.g. cost = 2")
        for key in fields:
            if key not in CARD_FIELDS:
                hint = ("; a top-level `remove = [...]` must come before the first [table]"
                        if key in ("remove", "add") else "")
                raise InputError(f"{at}: unknown field {quote(key)}{_near(key, CARD_FIELDS)}; "
                                 f"card fields: {', '.join(CARD_FIELDS)}{hint}")

    add = data.get("add", [])
    if not isinstance(add, list) or not all(isinstance(c, dict) for c in add):
        raise InputError(f"{where}: 'add' must be [[add]] tables, one whole card each")

    remove = data.get("remove", [])
    if not isinstance(remove, list) or not all(isinstance(n, str) and n.strip()
                                               for n in remove):
        raise InputError(f"{where}: 'remove' must be a list of card names: "
                         "remove = [\"Name\", ...]")
    return Patch(path=path, source=where, name=info.get("name", ""), note=info.get("note", ""),
                 changes=dict(changes), add=tuple(add), remove=tuple(remove))


def load_patch(path: str | Path) -> Patch:
    """Read and parse a patch file (raises ``InputError``, one line)."""
    p = Path(path)
    raw = read_input(p, "patch file", "a card patch (a TOML file)")
    return parse_patch(raw, where=str(p), path=p)


# ---------------------------------------------------------------------------- applying


def _catalog_tables(catalog: Catalog) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The catalog's ``[set]`` table and each card's TOML table in card id order.

    A loaded catalog keeps its tables (``Catalog.card_tables``, errata applied), so a
    layered catalog is patched as the one catalog it makes: its set is the catalog's name
    and version (the sets joined, for several files). A catalog built from ``Card``
    objects has no tables: its file, when it has one, is read again.
    """
    if catalog.card_tables:
        set_table: dict[str, Any] = {"name": catalog.name}
        if catalog.version:
            set_table["version"] = catalog.version
        return set_table, [dict(t) for t in catalog.card_tables]
    if catalog.path is None:
        raise ValueError("a patch applies to a loaded catalog (Catalog.card_tables) or one "
                         "read from a file (catalog.path)")
    try:
        data = tomllib.loads(Path(catalog.path).read_bytes().decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"{catalog.path}: cannot read the card catalog again ({e})") from None
    return data.get("set", {}), [dict(c) for c in data.get("cards", [])]


def apply_patch(patch: Patch, catalog: Catalog | None = None) -> PatchedCatalog:
    """``catalog`` (default: the shipped sample) with ``patch`` applied and re-validated.

    Raises ``InputError`` (one line, naming the patch file, the card and the field) for a
    card the catalog does not hold, a field outside the card contract, an added card whose
    name is taken, or a patched catalog that breaks any law of the catalog contract.

    The patched catalog's text is checked to read back as exactly the tables the patch
    made, so every card it holds is a card of the base catalog, changed only as
    ``changed`` lists, or a card ``added`` lists.
    """
    base = catalog if catalog is not None else load_catalog(None)
    where = patch.where
    set_table, cards = _catalog_tables(base)
    index = {c.get("name"): i for i, c in enumerate(cards)}

    def resolve(name: str, at: str) -> int:
        card_id = base.lookup(name)
        if card_id is None:
            near = base.closest(name)
            hint = f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""
            raise InputError(f"{at}: no card {quote(name)} in the catalog "
                             f"{quote(base.name)}{hint}")
        return index[base.cards[card_id].name]

    removed: list[str] = []
    removed_at: set[int] = set()  # by position: a card renamed by the patch is not removed
    for name in patch.remove:
        i = resolve(name, f"{where}: remove")
        real = cards[i]["name"]
        if i in removed_at:
            raise InputError(f"{where}: remove: {quote(real)} is listed twice")
        removed_at.add(i)
        removed.append(real)

    changed: list[tuple[str, str, Any, Any]] = []
    seen: dict[str, str] = {}
    for name, fields in patch.changes.items():
        at = f"{where}: [cards.{toml_string(name)}]"
        i = resolve(name, at)
        real = cards[i]["name"]
        if real in seen:
            raise InputError(f"{at}: {quote(real)} is already changed by "
                             f"[cards.{toml_string(seen[real])}]")
        seen[real] = name
        if i in removed_at:
            raise InputError(f"{at}: {quote(real)} is both changed and removed")
        for key, value in fields.items():
            changed.append((real, key, cards[i].get(key), value))
            cards[i][key] = value

    taken = {str(c.get("name", "")).casefold() for c in cards}
    added: list[str] = []
    for k, table in enumerate(patch.add):
        name = table.get("name")
        label = quote(name) if isinstance(name, str) else f"#{k + 1}"
        if isinstance(name, str) and name.casefold() in taken:
            existing = next(c["name"] for c in cards
                            if str(c.get("name", "")).casefold() == name.casefold())
            raise InputError(f"{where}: [[add]] {label}: the catalog already has a card "
                             f"named {quote(existing)}; change it with "
                             f"[cards.{toml_string(existing)}]")
        if isinstance(name, str):
            taken.add(name.casefold())
            added.append(name)
        cards.append(dict(table))

    kept = [c for i, c in enumerate(cards) if i not in removed_at]
    text = catalog_toml(set_table, kept, header=_header(base, patch))
    try:
        patched = parse_catalog(text, where=where, path=None)
    except CatalogError as e:
        raise InputError(_one_line(e, where, len(e.problems))) from None
    # A checked catalog holds only strings, whole numbers, lists and tables, so the
    # comparison is exact: the file is the tables the summary was made from, no more.
    if tomllib.loads(text) != {"set": set_table, "cards": kept}:
        raise InputError(f"{where}: the patched catalog does not read back as the cards the "
                         "patch lists (a string in the patch or the catalog broke the "
                         "catalog's TOML); please report this patch")
    return PatchedCatalog(base=base, catalog=patched, text=text, changed=tuple(changed),
                          added=tuple(added), removed=tuple(removed))


def _one_line(error: CatalogError, where: str, n: int) -> str:
    """A catalog's problems as one line: the laws the patched catalog breaks."""
    strip = re.compile(rf"^{re.escape(where)}(:\d+)?: ")
    shown = [strip.sub("", p) for p in error.problems]
    laws = "law" if n == 1 else "laws"
    return (f"{where}: the patched catalog breaks {n} catalog {laws}: " + "; ".join(shown))


def _header(base: Catalog, patch: Patch) -> str:
    """Comment lines naming the base catalog and the patch. Every name in them is written
    as an escaped TOML string, so a line break in a patch's name or a file's path stays
    inside its comment and cannot start a table or a key."""
    files = " + ".join(str(s.path) for s in base.sources if s.path is not None) \
        or str(base.path)
    lines = [f"# The catalog {toml_string(base.name)} ({toml_string(files)}) with "
             f"the patch {toml_string(patch.where)} applied.",
             "# Written by rnr-sim compare; the variant run reads this file."]
    if patch.name:
        lines.append(f"# Patch: {toml_string(patch.name)}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- writing TOML


_SHORT_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n",
                  "\f": "\\f", "\r": "\\r"}


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string that reads back as exactly ``text``.

    Every string is data: quotes and backslashes are escaped, and so is every character
    that is not printable (``str.isprintable``: control characters, DEL included, line and
    paragraph separators, format characters), so the result is one line of printable
    characters that no reader can take for TOML syntax. Lone surrogates have no TOML form.
    """
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'  # the common case, at C speed
    out = ['"']
    for ch in text:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ch == " " or ch.isprintable():
            out.append(ch)
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            raise ValueError(f"a lone surrogate {ch!r} cannot be written as TOML")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(f"\\U{ord(ch):08X}")
    out.append('"')
    return "".join(out)


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


def toml_value(value: Any) -> str:
    """A TOML value for the types a catalog holds (and whatever a patch may set)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if hasattr(value, "isoformat"):  # the dates and times tomllib reads
        return value.isoformat()
    raise TypeError(f"cannot write {value!r} as TOML")


def catalog_toml(set_table: dict[str, Any], cards: list[dict[str, Any]], header: str = "") -> str:
    """A catalog file's text: the ``[set]`` table, then one ``[[cards]]`` table per card
    (fields in the order given)."""
    out = [header] if header else []
    out.append("[set]")
    out += [f"{toml_key(k)} = {toml_value(v)}" for k, v in set_table.items()]
    for card in cards:
        out += ["", "[[cards]]"]
        out += [f"{toml_key(str(k))} = {toml_value(v)}" for k, v in card.items()]
    return "\n".join(out) + "\n"
