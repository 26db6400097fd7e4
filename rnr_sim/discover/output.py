"""The discovery dir (docs/design.md, "Discovery dir"): what ``rnr-sim discover`` writes.

- ``manifest.json``: the inputs (seed, catalog sources and hashes, field, budget, rules,
  pilots), the games of each phase, the racing saving, the seconds;
- ``archive.parquet``: one row per elite (``ARCHIVE_SCHEMA``);
- ``deck_cards.parquet``: ``elite_id``, ``card`` (its name), ``copies``;
- ``field.parquet``: the field's decks on the held-out deals, beside the elites;
- ``field_cards.parquet`` (``deck``, ``card``, ``copies``) and ``cards.parquet`` (the
  catalog as a table, as in a run dir): what the report compares the elites with;
- ``matchups.parquet``: the metagame matrix (best elites and field decks), with its mix;
- ``learned.parquet``: what the search learned of each card (``proposals.SwapModel``):
  ``card``, ``type``, its share per copy over every deck with a 95% interval, and how many
  children's swaps named it;
- ``yardstick.parquet`` (with ``--yardstick``): the best elites' held-out shares checked
  with the search pilot in every seat (``yardstick.CHECK_SCHEMA``);
- ``elites/NN.txt``: each elite as a deck list with ``Name:`` and ``Policy:`` headers, which
  ``validate``, ``run``, ``compare`` and ``tune`` take as they are (``NN.toml`` beside it:
  its tuned pilot).

Every file is written whole or not at all, the manifest last: a dir with a manifest is a
complete discovery. Each Parquet file carries the discovery's identity and its name; the
manifest seals the identity and records every file's SHA-256 (``searchdirs``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim import __version__, enums
from rnr_sim.analytics.stats import Z95
from rnr_sim.discover.search import CELL_PATHS, HOLDOUT_SEED_OFFSET, PILOTS
from rnr_sim.files import atomic_write, file_sha256, write_json, write_parquet
from rnr_sim.runs import identity, searchdirs

ARCHIVE_SCHEMA = {
    "elite_id": pl.Int32, "cell": pl.String, "cell_row": pl.Int32, "cell_col": pl.Int32,
    "row": pl.String, "col_lo": pl.Float64, "col_hi": pl.Float64,
    "measures": pl.List(pl.Float64),
    "pilot": pl.String, "pilot_base": pl.String, "tuned": pl.Boolean,
    "tune_gain": pl.Float64, "tune_gain_lo": pl.Float64, "tune_gain_hi": pl.Float64,
    "share_search": pl.Float64, "share_heldout": pl.Float64,
    "share_heldout_lo": pl.Float64, "share_heldout_hi": pl.Float64,
    "edge": pl.Float64, "edge_lo": pl.Float64, "edge_hi": pl.Float64,
    "games": pl.Int64, "main_path": pl.String, "win_turn": pl.Float64,
    **{f"wins_{p}": pl.Float64 for p in CELL_PATHS},
    "pillars": pl.Int32, "rights": pl.Int32, "most_copies": pl.Int32,
    "beyond_four": pl.Boolean, "deck_file": pl.String,
}


def fingerprint(plan, budget: int, batch: int, meta: bool, cells: str,
                cards: list, yardstick: int = 0) -> dict[str, Any]:
    """Everything that shapes a discovery's games, in the order a resume compares them
    (``yardstick_deals`` only when the best elites are checked with the yardstick: a
    discovery without the check keeps the identity it had before the check existed)."""
    from rnr_sim.runs.manifests import catalog_sources

    extra = {"yardstick_deals": yardstick} if yardstick else {}
    return {
        "tool_version": __version__,
        "seed": plan.seed, "budget": budget, "batch": batch, "meta": meta,
        "cells": cells,
        "cards": [str(Path(c).resolve()) for c in cards],  # --cards as given, in order
        "catalog": {"name": plan.catalog.name, "sha256": plan.catalog.sha256,
                    "sources": catalog_sources(plan.catalog)},
        "field": [{"name": d.name, "path": str(Path(d.path).resolve()), "sha256": d.sha256,
                   "policy": p} for d, p in zip(plan.decks, plan.policies, strict=True)],
        "rules": plan.profile.to_dict(),
        "pilots": list(PILOTS),
        **extra,
    }


def elite_name(rank: int, cells, cell) -> str:
    """An elite's deck name in the dir: ``Discovered NN (cell)``, NN its rank by held-out
    share."""
    return f"Discovered {rank:02d} ({cells.label(int(cell[0]), int(cell[1]))})"




def deck_text(laws, counts: np.ndarray, name: str, policy: str, comment: list[str],
              deck_dir: Path | None = None) -> str:
    """A deck list: headers (with the ``Cards:`` line that loads the catalog again, so every
    command reads the elite without ``--cards``: ``decks.cards_header``), then its cards by
    Order (``COUNT Card Name``)."""
    from rnr_sim.decks import cards_header

    cards = laws.catalog.cards
    header = cards_header(laws.catalog, deck_dir)
    lines = [f"# {c}" for c in comment] + [f"Name: {name}", f"Policy: {policy}"]
    lines += ([header] if header else []) + [""]
    for card_type in enums.CARD_TYPES:
        rows = [i for i in np.flatnonzero(counts) if cards[i].type == card_type]
        if not rows:
            continue
        lines.append(f"# {card_type} ({int(counts[rows].sum())})")
        lines += [f"{int(counts[i])} {cards[i].name}" for i in rows]
        lines.append("")
    return "\n".join(lines)


def learned_table(laws, model) -> pl.DataFrame:
    """The search's estimate of each card's share per copy (``proposals.SwapModel``), the
    cards its children's swaps named most first: a guide to where the search looked, not a
    measure (``rnr-sim power`` measures a card)."""
    mean, sd = model.estimates()
    cards = laws.catalog.cards
    return pl.DataFrame({
        "card": [c.name for c in cards], "type": [c.type for c in cards],
        "per_copy": mean, "per_copy_lo": mean - Z95 * sd, "per_copy_hi": mean + Z95 * sd,
        "observed": model.seen.astype(np.int64),
    }).sort(["observed", "per_copy"], descending=True, maintain_order=True)


def write(out: Path, plan, laws, cells, found, tuned, held, matrix, fp: dict[str, Any],
          games: int,
          seconds: float, command: str | None, checked: tuple | None = None):
    """Write the discovery dir (module docstring); returns a ``Discovery``. ``checked``:
    the yardstick check of the best elites (``meta.yardstick``), written as
    ``yardstick.parquet`` and the manifest's ``yardstick``."""
    from rnr_sim.discover import Discovery

    ident = searchdirs.discovery_identity(searchdirs.as_read(fp))
    files: dict[str, str] = {}  # every file's SHA-256, recorded in the manifest

    def table(name: str, frame: pl.DataFrame) -> None:
        files[f"{name}.parquet"] = write_parquet(out / f"{name}.parquet", frame,
                                                 metadata=searchdirs.table_stamp(ident, name))

    def text(rel: str, body: str) -> None:
        atomic_write(out / rel, lambda tmp: tmp.write_text(body, encoding="utf-8"))
        files[rel] = file_sha256(out / rel)

    edges = cells.col_edges()
    pillar, rights = laws.of_type("pillar"), laws.of_type("rights")
    rows, deck_rows = [], []
    (out / "elites").mkdir(exist_ok=True)
    order = np.argsort(-held.share, kind="stable")  # elite ids: best held-out first
    for rank, k in enumerate(order):
        counts = found.counts[k]
        row, col = int(found.cell[k][0]), int(found.cell[k][1])
        label = cells.label(row, col)
        name = elite_name(rank + 1, cells, found.cell[k])
        base = PILOTS[int(found.pilot[k])]
        fit = tuned.results.get(int(k)) if tuned is not None else None
        pilot = base
        file = f"elites/{rank + 1:02d}.txt"
        if fit is not None and fit.kept:  # its tuned pilot, beside it (Policy: NN.toml)
            from rnr_sim.tune import policy_toml

            fit.deck = name
            pilot = f"{rank + 1:02d}.toml"
            text(f"elites/{pilot}", policy_toml(fit, base))
        unlimited = counts[pillar | rights]
        comment = [
            f"Found by rnr-sim discover (seed {plan.seed}); cell: {label}; mean winning "
            f"turn {found.win_turn[k]:.1f}.",
            f"Held-out share {100 * held.share[k]:.1f}% [{100 * held.lo[k]:.1f}, "
            f"{100 * held.hi[k]:.1f}] against the field over {held.deals} deals a deck "
            f"(search: {100 * found.share[k]:.1f}%).",
        ]
        text(file, deck_text(laws, counts, name, pilot, comment, (out / file).parent) + "\n")
        rows.append({
            "elite_id": rank + 1, "cell": label, "cell_row": row, "cell_col": col,
            "row": cells.rows[row], "col_lo": float(edges[col]), "col_hi": float(edges[col + 1]),
            "measures": [float(x) for x in found.measures[k]], "pilot": pilot,
            "pilot_base": base, "tuned": bool(fit is not None and fit.kept),
            "tune_gain": None if fit is None else fit.gain,
            "tune_gain_lo": None if fit is None else fit.gain_lo,
            "tune_gain_hi": None if fit is None else fit.gain_hi,
            "share_search": float(found.share[k]), "share_heldout": float(held.share[k]),
            "share_heldout_lo": float(held.lo[k]), "share_heldout_hi": float(held.hi[k]),
            "edge": float(held.edge[k]), "edge_lo": float(held.edge_lo[k]),
            "edge_hi": float(held.edge_hi[k]), "games": int(found.games[k]),
            "main_path": CELL_PATHS[int(np.argmax(found.path_share[k]))]
            if found.path_share[k].sum() > 0 else None,
            "win_turn": float(found.win_turn[k]),
            **{f"wins_{p}": float(found.path_share[k][i]) for i, p in enumerate(CELL_PATHS)},
            "pillars": int(counts[pillar].sum()), "rights": int(counts[rights].sum()),
            "most_copies": int(unlimited.max()) if len(unlimited) else 0,
            "beyond_four": bool((unlimited > 4).any()), "deck_file": file,
        })
        deck_rows += [{"elite_id": rank + 1, "card": laws.catalog.cards[i].name,
                       "copies": int(counts[i])} for i in np.flatnonzero(counts)]
    archive = pl.DataFrame(rows, schema=ARCHIVE_SCHEMA)
    table("archive", archive)
    table("deck_cards", pl.DataFrame(
        deck_rows, schema={"elite_id": pl.Int32, "card": pl.String, "copies": pl.Int32}))
    field_rank = np.argsort(-held.field_share, kind="stable")
    field = pl.DataFrame({
        "deck": list(plan.deck_names),
        "policy": [Path(p).name if p.endswith(".toml") else p for p in plan.policies],
        "share_heldout": held.field_share, "share_heldout_lo": held.field_lo,
        "share_heldout_hi": held.field_hi,
        "rank_among_field": np.argsort(field_rank).astype(np.int32) + 1,
        "elites_above": [int((held.lo > s).sum()) for s in held.field_hi],
    })
    table("field", field)
    table("field_cards", pl.DataFrame(
        [{"deck": d.name, "card": name, "copies": n} for d in plan.decks
         for name, n in d.counts.items()],
        schema={"deck": pl.String, "card": pl.String, "copies": pl.Int32}))
    table("cards", laws.catalog.to_polars(with_set=True))
    table("learned", learned_table(laws, found.model))
    elite_of = {}
    if matrix.get("elite_rows") is not None:
        elite_of = {int(k): int(np.flatnonzero(order == k)[0]) + 1 for k in matrix["elite_rows"]}
    labels = [f"elite {elite_of[k]:02d}" for k in matrix["elite_rows"]] + \
        matrix["names"][len(matrix["elite_rows"]):]
    n = len(labels)
    table("matchups", pl.DataFrame({
        "deck": np.repeat(labels, n), "opponent": np.tile(labels, n),
        "share": matrix["share"].ravel(), "share_lo": matrix["lo"].ravel(),
        "share_hi": matrix["hi"].ravel(), "deals": np.full(n * n, matrix["deals"]),
        "mix": np.repeat(matrix["mix"], n)}))
    if checked is not None:
        from rnr_sim import yardstick

        table("yardstick", yardstick.frame(checked[0]))
    r = found.racing
    manifest = {
        "kind": "discovery", "status": "complete", "command": command, **fp,
        "games": {"total": games, "search": found.search_games,
                  "tuning": 0 if tuned is None else tuned.games, "heldout": held.games,
                  "matrix": matrix["games"]},
        "search": {"generations": found.generations, "children": found.children,
                   "learned": sum(h.get("learned", 0) for h in found.history),
                   "decks_per_million_games": found.children / max(games, 1) * 1e6,
                   "elites": len(found.share), "cells": int(np.prod(cells.dims)),
                   "racing": {"played": r.played, "flat": r.flat, "saved": r.saved,
                              "stopped_after_stage": list(r.stopped)},
                   "history": found.history, "rounds": found.rounds},
        "heldout": {"seed_offset": f"seed + {HOLDOUT_SEED_OFFSET}", "deals_per_field_deck": held.deals,
                    "qd_score": float(held.share.sum()),
                    "best_field_deck": plan.deck_names[held.best_field]},
        "metagame": {"paths": dict(zip(CELL_PATHS, map(float, matrix["paths"]), strict=True)),
                     "mix": dict(zip(labels, map(float, matrix["mix"]), strict=True))},
        **({"yardstick": checked[1]} if checked is not None else {}),
        "seconds": round(seconds, 1),
        "games_per_s": round(games / seconds, 1) if seconds > 0 else None,
        "identity": identity.seal(ident), "files": files,
    }
    searchdirs.seal_content(manifest)  # its figures, sealed
    write_json(out / "manifest.json", manifest)
    return Discovery(out=out, manifest=manifest, archive=archive, field=field)
