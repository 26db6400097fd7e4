"""A run dir's manifest and tables: what was asked, the catalog and pilots it played, the
chunks complete; read and written atomically (docs/design.md, "Run dir")."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from rnr_sim import __version__, files
from rnr_sim.errors import InputError
from rnr_sim.files import write_json, write_parquet
from rnr_sim.pilots import policy_rows
from rnr_sim.runs import identity, rundir
from rnr_sim.runs.execution import part_name
from rnr_sim.runs.planning import (
    RunPlan,
    main_branch,
)
from rnr_sim.runs.schema import DECKS_SCHEMA, GAMES_SCHEMA, SEATS_SCHEMA

MANIFEST = "manifest.json"


def utc_now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def policy_weights(plan: RunPlan, driver) -> dict[str, list[float]]:
    """The weights of every policy the run's decks use, by name."""
    names, table, index = policy_rows(plan.policies)
    return {names[index[p]]: [float(x) for x in table[index[p]]]
            for p in sorted(set(plan.policies), key=lambda r: names[index[r]])}


def new_manifest(plan: RunPlan, driver, command: str | None) -> dict[str, Any]:
    """The manifest of a run not yet started (no chunk complete)."""
    catalog = plan.catalog
    names = plan.deck_names
    manifest = {
        "tool_version": __version__,
        "created": utc_now(),
        "command": command,
        "status": "incomplete",
        "seed": plan.seed,
        "games_requested": plan.games,
        "games_total": plan.games_total,
        "games_done": 0,
        "players": plan.players,
        "mirrors": plan.mirrors,
        "vs": None if plan.vs is None else names[plan.vs],
        "allow_illegal": plan.allow_illegal,
        "rules": plan.profile.to_dict(),
        "rules_changed": plan.profile.changed(),
        "rules_sha256": file_sha256(plan.profile.source),
        "catalog": {
            "name": catalog.name,
            "version": catalog.version,
            "path": None if catalog.path is None else str(Path(catalog.path).resolve()),
            "sha256": catalog.sha256,
            "sources": catalog_sources(catalog),
        },
        "decks": [
            {
                "name": d.name,
                "path": str(Path(d.path).resolve()),
                "sha256": d.sha256,
                "policy": policy,
                "main_branch": main_branch(d, catalog),
            }
            for d, policy in zip(plan.decks, plan.policies, strict=True)
        ],
        "tables": [[names[i] for i in t] for t in plan.tables.tolist()],
        "policies": policy_weights(plan, driver),
        "chunk_size": plan.chunk_size,
        "chunks": {"total": plan.n_chunks, "complete": []},
        "timings": {"compile_s": 0.0, "simulate_s": 0.0, "write_s": 0.0, "total_s": 0.0,
                    "games_per_s": 0.0},
        "resumed": [],
    }
    manifest["identity"] = identity.seal(rundir.run_identity(manifest))
    manifest["files"] = {}  # path in the run dir -> SHA-256, as each file is written
    return manifest


def catalog_sources(catalog) -> list[dict[str, str | None]]:
    """Every file of ``catalog`` in load order (a base before the file naming it): its
    absolute path and SHA-256, as the manifest records them."""
    return [{"path": None if s.path is None else str(Path(s.path).resolve()),
             "sha256": s.sha256} for s in catalog.sources]


def reload_catalog(cat: dict[str, Any], where: str):
    """The catalog a run was started with, re-read from its files (``sources``, in load
    order; a manifest from before layered catalogs has only ``path``). Raises
    ``InputError`` naming the first file whose SHA-256 differs."""
    from rnr_sim.cards import load_catalog

    sources = cat.get("sources")
    if sources:
        catalog = load_catalog([s["path"] for s in sources])
        now = catalog_sources(catalog)
        for i, source in enumerate(sources):
            if i >= len(now) or now[i] != source:
                raise InputError(f"{where}: the card catalog file {source['path']} changed "
                                 "since the run started (SHA-256 differs); start a new run")
    else:
        catalog = load_catalog(cat["path"])
    if catalog.sha256 != cat["sha256"]:
        shown = cat.get("path") or " + ".join(str(s["path"]) for s in sources or ())
        raise InputError(f"{where}: the card catalog {shown} changed since the run "
                         "started (SHA-256 differs); start a new run")
    return catalog


def file_sha256(path: str | Path | None) -> str | None:
    """A file's SHA-256 (None for no file); an unreadable file is the user's error
    (``files.file_sha256``)."""
    return None if path is None else files.file_sha256(Path(path))


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    """A run dir's manifest (raises ``InputError`` when there is none or it is broken)."""
    path = Path(run_dir) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{run_dir}: not a run dir (no {MANIFEST})") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: broken manifest ({e})") from None
    if not isinstance(manifest, dict) or "chunks" not in manifest:
        raise InputError(f"{path}: not an rnr-sim run manifest")
    return manifest


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    write_json(run_dir / MANIFEST, manifest)


def write_tables(run_dir: Path, plan: RunPlan, manifest: dict[str, Any],
                 cards: pl.DataFrame | None = None) -> None:
    """``decks.parquet`` and ``cards.parquet`` (``cards``: the catalog's own table unless
    given), stamped with the run's identity, their SHA-256 recorded in ``manifest``."""
    frames = {"decks.parquet": decks_frame(plan),
              "cards.parquet": plan.catalog.to_polars(with_set=True) if cards is None
              else cards}
    for name, frame in frames.items():
        manifest.setdefault("files", {})[name] = write_parquet(
            run_dir / name, frame, rundir.table_stamp(manifest, name))


# ---------------------------------------------------------------------------- run dir tables


def decks_frame(plan: RunPlan) -> pl.DataFrame:
    """One row per deck slot: deck, slot (int16, the deck's own order), card."""
    rows = [(d.name, k, name) for d in plan.decks for k, name in enumerate(d.slots)]
    return pl.DataFrame(rows, schema=DECKS_SCHEMA, orient="row")



def complete_parts(run_dir: str | Path) -> list[str]:
    """The part file names of the chunks a run's manifest records as complete, in order
    (a part on disk the manifest does not name is ignored: it is re-made on resume)."""
    return [part_name(c) for c in sorted(read_manifest(run_dir)["chunks"]["complete"])]


def scan_table(run_dir: str | Path, table: str) -> pl.LazyFrame:
    """A run's ``games`` or ``seats`` table over its complete chunks, in game_id order."""
    parts = [Path(run_dir) / table / name for name in complete_parts(run_dir)]
    if not parts:
        return pl.LazyFrame(schema=GAMES_SCHEMA if table == "games" else SEATS_SCHEMA)
    return pl.scan_parquet(parts)


