"""Files that know whose they are: a directory's identity, stamped into each of its Parquet
files and sealed into its manifest, and each file's SHA-256 (docs/design.md, "Run dir").

A command that writes a directory of Parquet files and a JSON manifest (a run dir, a
discovery dir) describes what decides the files' contents as an *identity*: a flat dict
of JSON values (for a run: the tool version, the seed, every rules switch, the catalog's
and each deck's SHA-256, the tables, the chunk size...). Scalars are kept as they are, so
that a message can say "seed 999 (this run's: 7)"; lists and dicts are kept as their
SHA-256. The identity's ``id`` is the SHA-256 of that description: the same inputs give
the same id, so two runs of the same inputs write the same bytes::

    meta = stamp(identity, file="games", chunk=3)     # Parquet key-value metadata
    sha = files.write_parquet(path, frame, metadata=meta)
    manifest["identity"] = seal(identity)             # {"id", "inputs"}
    manifest["files"]["games/part-00003.parquet"] = sha

and whoever reads or continues the directory checks it with::

    verify(directory, identity, expected={"games/part-00003.parquet": {"file": "games",
           "chunk": 3}}, recorded=manifest["files"], sealed=manifest.get("identity"),
           fixes=Fixes(file="remove it and ...", record="restore it or ..."))

which raises ``InputError`` naming the manifest when it disagrees with its own seal or
with every file (the manifest was edited), or the first file that is not the directory's
own (another identity, another place in it, no stamp, or bytes that are not the ones the
manifest records). The identity is recomputed from the manifest by the reader, never
taken from the files. A deliberate forger can rewrite everything; the checks catch files
mixed up between directories and hand edits.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rnr_sim.errors import InputError
from rnr_sim.files import file_sha256

#: The Parquet key-value metadata key of a stamp.
KEY = "rnr_sim.identity"
_SCALARS = (str, int, float, bool, type(None))


def digest(value: Any) -> str:
    """The SHA-256 of ``value`` as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def describe(identity: Mapping[str, Any]) -> dict[str, Any]:
    """Each field as it is kept: a scalar as itself, anything else as ``sha256:<hex>``."""
    return {k: v if isinstance(v, _SCALARS) else f"sha256:{digest(v)}"
            for k, v in identity.items()}


def seal(identity: Mapping[str, Any]) -> dict[str, Any]:
    """What a manifest records of its identity: ``{"id": ..., "inputs": describe(...)}``."""
    inputs = describe(identity)
    return {"id": digest(inputs), "inputs": inputs}


def stamp(identity: Mapping[str, Any], **place: Any) -> dict[str, str]:
    """The Parquet metadata of one file of the directory: its identity and its ``place``
    in the directory (e.g. ``file="games", chunk=3``)."""
    return {KEY: json.dumps({**seal(identity), "place": place}, sort_keys=True,
                            separators=(",", ":"), ensure_ascii=False)}


def read_stamp(path: Path) -> dict[str, Any] | None:
    """The stamp of a Parquet file (``{"id", "inputs", "place"}``), or None if it has none.
    Only the file's footer is read."""
    import polars as pl

    try:
        meta = pl.read_parquet_metadata(path)
    except Exception as e:  # a truncated or foreign file is bad input, not a crash
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise InputError(f"{path}: unreadable parquet file ({first})") from None
    text = meta.get(KEY)
    if text is None:
        return None
    try:
        found = json.loads(text)
    except json.JSONDecodeError:
        return {"id": None, "inputs": {}, "place": None}
    return found if isinstance(found, dict) else {"id": None, "inputs": {}, "place": None}





def differences(these: Mapping[str, Any], those: Mapping[str, Any], label: str,
                most: int = 3) -> str:
    """The fields where two descriptions differ, in words, ``those`` under ``label``:
    ``seed 999 (this run's: 7)``."""
    out = []
    for k in sorted(set(these) | set(those)):
        a, b = these.get(k, "(none)"), those.get(k, "(none)")
        if a == b:
            continue
        if str(a).startswith("sha256:") or str(b).startswith("sha256:"):
            out.append(f"{k} differs")
        else:
            out.append(f"{k} {a!r} ({label}: {b!r})")
    if not out:
        return "its identity differs"
    more = f" and {len(out) - most} more" if len(out) > most else ""
    return ", ".join(out[:most]) + more


@dataclass(frozen=True)
class Fixes:
    """What to tell the user: ``file`` for a file that is not the directory's own (e.g.
    "remove it and re-play it with `rnr-sim run --resume DIR`"), ``record`` for an
    edited manifest (e.g. "restore it, or start a new run")."""

    file: str
    record: str


def verify(directory: Path, identity: Mapping[str, Any], expected: Mapping[str, Mapping],
           recorded: Mapping[str, str] | None, sealed: Mapping[str, Any] | None, *,
           fixes: Fixes, manifest: str = "manifest.json", what: str = "run dir",
           missing_ok: bool = False) -> bool:
    """Check that every file of ``expected`` (path relative to ``directory`` -> its place)
    carries ``identity`` at that place and has the SHA-256 the manifest ``recorded``, and
    that the manifest's ``sealed`` identity is ``identity``; raise ``InputError`` naming
    the manifest or the first file that is not the directory's own, with the fix.

    A manifest without a seal is from before these checks: accepted as unchecked
    (returns False) when no file carries a stamp either, else refused (its seal was
    removed). ``missing_ok``: files absent from disk are skipped (``--resume`` re-makes
    them). Returns True when checked.
    """
    directory = Path(directory)
    record_path = directory / manifest
    ours = seal(identity)
    present = {rel: directory / rel for rel in expected
               if not missing_ok or (directory / rel).is_file()}
    stamps = {rel: read_stamp(path) for rel, path in present.items()}
    if sealed is None:
        stamped = next((rel for rel, s in stamps.items() if s is not None), None)
        if stamped is not None:
            raise InputError(f"{record_path}: records no identity, but {stamped} carries "
                             f"one: the manifest was edited; {fixes.record}")
        return False
    if not isinstance(sealed, Mapping) or sealed.get("id") != ours["id"]:
        then = sealed.get("inputs", {}) if isinstance(sealed, Mapping) else {}
        then = then if isinstance(then, Mapping) else {}
        why = differences(ours["inputs"], then, "as first recorded")
        raise InputError(f"{record_path}: {why}: the manifest disagrees with its own record "
                         f"of the {what} it describes, so it was edited; {fixes.record}")
    foreign = {rel: s for rel, s in stamps.items() if s is None or s.get("id") != ours["id"]}
    if foreign and len(foreign) == len(stamps):
        ids = {None if s is None else s.get("id") for s in foreign.values()}
        first_rel, first = next(iter(foreign.items()))
        if len(ids) == 1 and first is not None:
            why = differences(ours["inputs"], first.get("inputs", {}), "its files'")
            raise InputError(
                f"{record_path}: {why}: every file of the {what} was written otherwise (e.g. "
                f"{first_rel}), so the manifest was edited or the files come from another "
                f"{what}; {fixes.record}")
    for rel, path in present.items():
        found = stamps[rel]
        if found is None:
            raise InputError(f"{path}: carries no {what} identity, so it was not written "
                             f"for this {what}; {fixes.file}")
        if found.get("id") != ours["id"]:
            why = differences(found.get("inputs", {}), ours["inputs"], f"this {what}'s")
            raise InputError(f"{path}: not this {what}'s: it was written with {why}; "
                             f"{fixes.file}")
        if found.get("place") != dict(expected[rel]):
            raise InputError(f"{path}: holds {_place(found.get('place'))} of this {what}, "
                             f"not {_place(expected[rel])}: it was renamed or moved; "
                             f"{fixes.file}")
        want = (recorded or {}).get(rel)
        if want is None:
            raise InputError(f"{record_path}: records no SHA-256 for {rel}: the manifest "
                             f"was edited; {fixes.record}")
        if file_sha256(path) != want:
            raise InputError(f"{path}: its bytes are not the ones {manifest} records "
                             f"(SHA-256 differs): the file was changed after it was "
                             f"written; {fixes.file}")
    return True


def verify_texts(directory: Path, names: Iterable[str], recorded: Mapping[str, str] | None,
                 *, fix: str, fixes: Fixes, manifest: str = "manifest.json",
                 what: str = "run dir") -> None:
    """Check that each of ``names`` (paths relative to ``directory``: the deck lists,
    pilots and patches a user hands to other commands, which have no room for a stamp)
    has the SHA-256 the manifest ``recorded``; raise ``InputError`` naming the manifest
    (no SHA-256 recorded) or the first file that differs, with ``fix``. Call it after
    ``verify`` found the manifest sealed. A file the manifest records that is gone from
    disk is refused too: a page would link to it, a command line name it."""
    directory = Path(directory)
    for rel in names:
        path = directory / rel
        want = (recorded or {}).get(rel)
        if not path.is_file():
            if want is not None:
                raise InputError(f"{path}: {manifest} lists it, but it is gone; {fixes.file}")
            continue
        if want is None:
            raise InputError(f"{directory / manifest}: records no SHA-256 for {rel}: the "
                             f"manifest was edited, or the file was not written by this "
                             f"{what}; {fixes.record}")
        if file_sha256(path) != want:
            raise InputError(f"{path}: its bytes are not the ones {manifest} records "
                             f"(SHA-256 differs): the file was changed after it was "
                             f"written; {fix}")


def _place(place: Any) -> str:
    if not isinstance(place, Mapping):
        return "an unknown place"
    return ", ".join(f"{k} {v}" for k, v in place.items())
