"""The discovery dir's and the balance dir's identities, and their check by content
(docs/design.md, "Discovery dir" and "Balance dir"), as ``rundir`` does for a run dir.

A discovery's identity is what decides its files (``discovery_identity``): the tool
version, the seed, the budget, the batch, ``--meta``, the cells, every rules switch, the
catalog's and each field deck's SHA-256 and pilot, the built-in pilots tried. A balance
run's (``balance_identity``): the tool version, the seed, the budget, the suggestions
asked for, the re-discovery, every rules switch, the catalog's and each metagame deck's
SHA-256 and pilot, the weights, every target and scope field, the targets file's SHA-256,
the numbers searched. Every Parquet file of the dir carries it with its name
(``table_stamp``); the manifest seals it and records the SHA-256 of each Parquet file and
of each text file a user hands to other commands (``elites/NN.txt`` and ``NN.toml``,
``suggestions/NN.toml``). ``verify_discovery_dir`` and ``verify_balance_dir`` check a dir
before ``report``, ``check coverage --discovery`` and ``balance --discovery`` read it: a
file from another dir (another seed, catalog, field...), a file edited by hand since it
was written, or a manifest edited since (a seed: it then disagrees with its own seal) is
refused in one line naming the file and the fix. A dir written before these checks (no
seal, no stamps) is read unchecked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rnr_sim.errors import InputError
from rnr_sim.runs import identity

#: The discovery dir's Parquet tables (``discover/output.py``), stamped with their stem.
DISCOVERY_TABLES = ("archive", "deck_cards", "field", "field_cards", "matchups", "cards",
                    "learned")
#: Tables a discovery dir holds only when asked for (``--yardstick``): checked when present.
DISCOVERY_OPTIONAL = ("yardstick",)
#: The balance dir's Parquet tables (``balance/output.py``).
BALANCE_TABLES = ("suggestions", "candidates", "figures")
#: The power dir's Parquet tables (``power/output.py``): the pool's, or the deck doctor's.
POWER_TABLES = ("power", "worth", "cuts", "adds")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _common(m: Mapping[str, Any], decks: str) -> dict[str, Any]:
    """The fields both kinds share: version, seed, budget, rules, catalog, decks."""
    switches = _dict(_dict(m.get("rules")).get("switches"))
    listed = m.get(decks) if isinstance(m.get(decks), list) else []
    return {
        "tool_version": m.get("tool_version"),
        "seed": m.get("seed"),
        "budget": m.get("budget"),
        **{f"rules.{k}": v for k, v in sorted(switches.items())},
        "catalog_sha256": _dict(m.get("catalog")).get("sha256"),
        decks: [[d.get("name"), d.get("sha256"), d.get("policy")] if isinstance(d, dict)
                else d for d in listed],
    }


def manifest_kind(d: str | Path) -> str | None:
    """The kind ``d``'s manifest.json names (``discovery``, ``balance``, ``power``), ``""``
    for a manifest that names none (a run dir's), None without a readable manifest."""
    try:
        m = json.loads((Path(d) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict):
        return None
    kind = m.get("kind")
    return kind if isinstance(kind, str) else ""


def discovery_identity(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What decides a discovery's files, from its manifest (missing keys: None)."""
    m = manifest
    # ``yardstick_deals`` only when given: a dir written before the check keeps its identity
    return {"kind": "discovery", **_common(m, "field"), "batch": m.get("batch"),
            "meta": m.get("meta"), "cells": m.get("cells"), "pilots": m.get("pilots"),
            **({"yardstick_deals": m["yardstick_deals"]} if "yardstick_deals" in m else {})}


def balance_identity(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What decides a balance run's files, from its manifest (missing keys: None)."""
    m = manifest
    return {"kind": "balance", **_common(m, "decks"), "suggestions": m.get("suggestions_asked"),
            "rediscover": m.get("rediscover"), "weights": m.get("weights"),
            **{f"targets.{k}": v for k, v in sorted(_dict(m.get("targets")).items())},
            **{f"scope.{k}": v for k, v in sorted(_dict(m.get("scope")).items())},
            "targets_sha256": _dict(m.get("targets_file")).get("sha256"),
            "knobs": m.get("knobs")}


def power_identity(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What decides a power run's files, from its manifest (missing keys: None)."""
    m = manifest
    deck = _dict(m.get("deck"))
    return {"kind": "power", **_common(m, "field"), "margin": m.get("margin"),
            "cards_measured": m.get("cards_measured"), "hosts": m.get("hosts"),
            "deck": [deck.get("name"), deck.get("sha256"), deck.get("policy")] if deck
            else None}


def as_read(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` as a reader will find them in the manifest (a JSON round trip), so the
    identity a writer stamps is the one the reader recomputes."""
    return json.loads(json.dumps(fields, ensure_ascii=False))


#: The manifest's own SHA-256 (of every other entry, canonical JSON): its figures (games,
#: seconds, status, message) are sealed with it, as the identity seals the inputs.
CONTENT = "content_sha256"


def seal_content(manifest: dict[str, Any]) -> None:
    """Add ``CONTENT`` to ``manifest`` (as a reader will find it: ``as_read``), last."""
    manifest.pop(CONTENT, None)
    manifest[CONTENT] = identity.digest(as_read(manifest))


def _check_content(root: Path, manifest: Mapping[str, Any], command: str) -> None:
    """Refuse a manifest whose figures were edited since it was written (a dir written
    before the seal has none: read as it is)."""
    want = manifest.get(CONTENT)
    if want is None:
        return
    if identity.digest({k: v for k, v in manifest.items() if k != CONTENT}) != want:
        raise InputError(f"{root / 'manifest.json'}: its figures are not the ones written "
                         "(content SHA-256 differs): the manifest was edited; restore it as "
                         f"written, or run `{command}` again (its command line is in it)")


def table_stamp(ident: Mapping[str, Any], name: str) -> dict[str, str]:
    """The Parquet metadata of table ``name`` (e.g. ``archive``) of the dir."""
    return identity.stamp(ident, file=name)


def _texts(root: Path, table: str, named, recorded) -> list[str]:
    """The text files the dir's manifest must vouch for: those its (verified) ``table``
    names (``named(frame)``), and every non-Parquet file the manifest records."""
    import polars as pl

    path = root / f"{table}.parquet"
    listed = named(pl.read_parquet(path)) if path.is_file() else []
    listed += [rel for rel in (recorded or {}) if not rel.endswith(".parquet")]
    return list(dict.fromkeys(v for v in listed if isinstance(v, str)))


def _check(root: Path, manifest: Mapping[str, Any], ident: dict[str, Any], tables, *,
           what: str, command: str, texts, text_fix: str) -> bool:
    """The Parquet tables by stamp and SHA-256, the text files by SHA-256, then the
    manifest's own seal (after the identity's checks, which name an edited input)."""
    again = f"or run `{command}` again (its command line is in manifest.json)"
    fixes = identity.Fixes(file=f"put back the file as it was written, {again}",
                           record=f"restore manifest.json as it was written, {again}")
    files = manifest.get("files") if isinstance(manifest.get("files"), dict) else None
    expected = {f"{n}.parquet": {"file": n} for n in tables}
    if not identity.verify(root, ident, expected, files, manifest.get("identity"),
                           fixes=fixes, what=what, missing_ok=True):
        return False
    identity.verify_texts(root, texts(files), files, fix=f"{text_fix}; {fixes.file}",
                          fixes=fixes, what=what)
    _check_content(root, manifest, command)
    return True


def verify_discovery_dir(root: str | Path, manifest: Mapping[str, Any]) -> bool:
    """Check a discovery dir by content (module docstring); ``InputError`` names the
    manifest or the first file that is not the discovery's own, with the fix. Returns
    False for a dir written before these checks (no seal, no stamps). Files absent from
    disk are left to the reader that needs them."""
    root = Path(root)

    def named(archive) -> list[str]:  # each elite's list, and its tuned pilot beside it
        return archive["deck_file"].to_list() + [
            f"elites/{p}" for p, t in zip(archive["pilot"], archive["tuned"], strict=True) if t]

    return _check(root, manifest, discovery_identity(manifest),
                  DISCOVERY_TABLES + DISCOVERY_OPTIONAL, what="discovery dir", command="rnr-sim discover",
                  texts=lambda files: _texts(root, "archive", named, files),
                  text_fix="to change an elite, copy its file out of the discovery dir "
                           "and edit the copy")


def _suggestion_files(suggestions) -> list[str]:
    """Each suggestion's card patch and rules profile (a column absent before switches)."""
    cols = [c for c in ("file", "rules_file") if c in suggestions.columns]
    return [f for c in cols for f in suggestions[c].to_list() if f is not None]


def verify_balance_dir(root: str | Path, manifest: Mapping[str, Any]) -> bool:
    """Check a balance dir by content, as ``verify_discovery_dir``. Its ``verify/NN/``
    run dirs are checked by ``rundir`` when read; its ``discovery/`` dirs by
    ``verify_discovery_dir``."""
    root = Path(root)
    return _check(root, manifest, balance_identity(manifest), BALANCE_TABLES,
                  what="balance dir", command="rnr-sim balance",
                  texts=lambda files: _texts(root, "suggestions", _suggestion_files,
                                             files),
                  text_fix="to change a suggestion, copy its patch out of the balance "
                           "dir, edit the copy and try it with `rnr-sim compare --patch`")


def verify_power_dir(root: str | Path, manifest: Mapping[str, Any]) -> bool:
    """Check a power dir by content, as ``verify_discovery_dir`` (it has no text files)."""
    return _check(Path(root), manifest, power_identity(manifest), POWER_TABLES,
                  what="power dir", command="rnr-sim power", texts=lambda files: [],
                  text_fix="")


def read_tables(root: Path, names, what: str, command: str) -> dict[str, Any]:
    """Each ``NAME.parquet`` of ``names`` in a search dir (checked by content first, by the
    caller), by name; ``InputError`` naming the file that cannot be read (the ``what`` is
    incomplete: run ``command`` again)."""
    import polars as pl

    out: dict[str, Any] = {}
    for name in names:
        file = root / f"{name}.parquet"
        try:
            out[name] = pl.read_parquet(file)
        except (OSError, pl.exceptions.PolarsError) as e:
            raise InputError(f"{file}: cannot read ({str(e).splitlines()[0]}); this {what} "
                             f"is incomplete: run `{command}` again") from None
    return out
