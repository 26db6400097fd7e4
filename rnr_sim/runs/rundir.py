"""A run dir's identity, and its check by content (docs/design.md, "Run dir").

A run's identity is what decides its files (``run_identity``): the tool version, the
seed, the shape (players, deals per table, tables, chunk size, mirrors, ``--vs``), every
rules switch, the catalog's and each deck's SHA-256 and policy, and the policies' weights.
Every part is stamped with it and with its place (``part_stamp``: which table, which
chunk, its first and last ``game_id`` and their (table, deal, seat order)); the manifest
seals it and records each file's SHA-256 (``identity``). ``verify_run_dir`` checks a run
dir against its manifest by content before ``report``, ``compare`` and ``run --resume``
read it: a part from another run (another seed, rules, decks...), a part moved to
another chunk's name, a part altered since it was written, or a manifest edited since
(a seed, a switch) is refused in one line naming the file and the fix.

The same functions serve any dir kind built the same way: ``identity.stamp`` /
``identity.seal`` / ``identity.verify`` with an identity dict of its own.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from rnr_sim.runs import identity
from rnr_sim.runs.execution import part_name

#: The run dir's tables besides its parts, stamped and recorded like them.
TABLE_FILES = ("decks.parquet", "cards.parquet")


def run_identity(manifest: dict[str, Any]) -> dict[str, Any]:
    """What decides a run's files, from its manifest (a flat dict; missing keys: None)."""
    m = manifest
    rules = m.get("rules") if isinstance(m.get("rules"), dict) else {}
    switches = rules.get("switches") if isinstance(rules.get("switches"), dict) else {}
    catalog = m.get("catalog") if isinstance(m.get("catalog"), dict) else {}
    decks = m.get("decks") if isinstance(m.get("decks"), list) else []
    return {
        "kind": "run",
        "tool_version": m.get("tool_version"),
        "seed": m.get("seed"),
        "players": m.get("players"),
        "games_requested": m.get("games_requested"),
        "games_total": m.get("games_total"),
        "chunk_size": m.get("chunk_size"),
        "mirrors": m.get("mirrors"),
        "vs": m.get("vs"),
        **{f"rules.{k}": v for k, v in sorted(switches.items())},
        "catalog_sha256": catalog.get("sha256"),
        "decks": [[d.get("name"), d.get("sha256"), d.get("policy")] if isinstance(d, dict)
                  else d for d in decks],
        "tables": m.get("tables"),
        "policies": m.get("policies"),
    }


def _ints(*values: Any) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values)


def part_place(manifest: dict[str, Any], table: str, chunk: int) -> dict[str, Any]:
    """Where a part belongs: its table, chunk, first and last ``game_id`` and their
    [table, deal, seat order] (from the manifest's shape; chunk alone if it has none)."""
    place: dict[str, Any] = {"file": table, "chunk": chunk}
    size, total = manifest.get("chunk_size"), manifest.get("games_total")
    games, players = manifest.get("games_requested"), manifest.get("players")
    if not _ints(size, total, games, players):
        return place
    start, stop = chunk * size, min(chunk * size + size, total)

    def coordinates(g: int) -> list[int]:  # the inverse of runner's game_id numbering
        return [g // (games * players), (g // players) % games, g % players]

    return {**place, "game_id": [start, stop - 1], "first": coordinates(start),
            "last": coordinates(stop - 1)}


def part_stamp(manifest: dict[str, Any], table: str, chunk: int) -> dict[str, str]:
    """The Parquet metadata of chunk ``chunk`` 's part in ``table`` (games or seats)."""
    return identity.stamp(run_identity(manifest), **part_place(manifest, table, chunk))


def table_stamp(manifest: dict[str, Any], name: str) -> dict[str, str]:
    """The Parquet metadata of ``decks.parquet`` or ``cards.parquet``."""
    return identity.stamp(run_identity(manifest), file=Path(name).stem)


def expected_files(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every file the manifest vouches for (path relative to the run dir -> its place):
    both parts of each complete chunk, and the decks and cards tables."""
    chunks = manifest.get("chunks") if isinstance(manifest.get("chunks"), dict) else {}
    complete = chunks.get("complete") if isinstance(chunks.get("complete"), list) else []
    out: dict[str, dict[str, Any]] = {}
    for c in sorted(c for c in complete if isinstance(c, int) and not isinstance(c, bool)):
        for table in ("games", "seats"):
            out[f"{table}/{part_name(c)}"] = part_place(manifest, table, c)
    for name in TABLE_FILES:
        out[name] = {"file": Path(name).stem}
    return out


def verify_run_dir(run_dir: str | Path, manifest: dict[str, Any]) -> bool:
    """Check a run dir by content (see the module docstring); ``InputError`` names the
    first file or the manifest entry that is not the run's own, with the fix. A run dir
    written before these checks (no sealed identity, no stamps) passes unchecked
    (False). Files not on disk are skipped: ``analytics.run.check_parts`` says which are
    missing, and ``--resume`` re-makes them."""
    run_dir = Path(run_dir)
    resume = f"rnr-sim run --resume {shlex.quote(str(run_dir))}"
    fixes = identity.Fixes(
        file=f"remove it and `{resume}` writes it again",
        record="restore manifest.json as the run wrote it, or start a new run")
    files = manifest.get("files") if isinstance(manifest.get("files"), dict) else None
    return identity.verify(run_dir, run_identity(manifest), expected_files(manifest),
                           files, manifest.get("identity"), fixes=fixes, missing_ok=True)
