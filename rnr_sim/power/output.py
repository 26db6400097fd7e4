"""The power dir (docs/design.md, "Power dir"): what ``rnr-sim power`` writes.

- ``power.parquet`` (the pool's cards; not with ``--deck``): one row per card measured
  (``POWER_SCHEMA``), by gain, best first;
- ``worth.parquet``: every card of every host, what it is worth to it (its cut's loss);
- ``cuts.parquet`` and ``adds.parquet`` (with ``--deck``): the deck doctor's answer;
- ``manifest.json``: the inputs, the games of each phase, the deals, the flags, the seconds.

Every file is written whole or not at all, the manifest last: a dir with a manifest is a
complete power run. Each Parquet file carries the run's identity and its name; the
manifest seals the identity and records every file's SHA-256 (``searchdirs``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim import __version__
from rnr_sim.files import write_json, write_parquet
from rnr_sim.runs import identity, searchdirs

POWER_SCHEMA = {
    "card": pl.String, "order": pl.String, "branch": pl.String, "rarity": pl.String,
    "cost": pl.Int32, "set": pl.String, "in_field": pl.Int32,
    "gain": pl.Float64, "gain_lo": pl.Float64, "gain_hi": pl.Float64,
    "host": pl.String, "copies": pl.Int32,
    "mean_gain": pl.Float64, "mean_gain_lo": pl.Float64, "mean_gain_hi": pl.Float64,
    "edge": pl.Float64, "edge_lo": pl.Float64, "edge_hi": pl.Float64,
    "gain_search": pl.Float64, "hosts": pl.Int32, "deals": pl.Int64, "games": pl.Int64,
    "flag": pl.String, "p_strong": pl.Float64, "p_weak": pl.Float64,
}
WORTH_SCHEMA = {"host": pl.String, "card": pl.String, "order": pl.String, "copies": pl.Int32,
                "worth": pl.Float64, "worth_lo": pl.Float64, "worth_hi": pl.Float64,
                "replaced_by": pl.String, "deals": pl.Int64}
ADDS_SCHEMA = {"card": pl.String, "out": pl.String, "copies": pl.Int32, "gain": pl.Float64,
               "gain_lo": pl.Float64, "gain_hi": pl.Float64, "gain_search": pl.Float64,
               "deals": pl.Int64}


def fingerprint(setup) -> dict[str, Any]:
    """Everything that shapes a power run's games, in the order a resume compares them."""
    from rnr_sim.runs.manifests import catalog_sources

    plan, o = setup.plan, setup.options
    listed = list(zip(plan.decks, plan.policies, strict=True))
    if setup.deck_plan is not None:
        listed += list(zip(setup.deck_plan.decks, setup.deck_plan.policies, strict=True))
    decks = [{"name": d.name, "path": str(Path(d.path).resolve()) if d.path else None,
              "sha256": d.sha256, "policy": p} for d, p in listed]
    return {
        "tool_version": __version__, "seed": o.seed, "budget": setup.budget,
        "margin": o.margin, "cards_measured": setup.how,
        "catalog": {"name": plan.catalog.name, "sha256": plan.catalog.sha256,
                    "sources": catalog_sources(plan.catalog)},
        "field": decks[:setup.n_field], "hosts": [h.name for h in setup.hosts],
        "deck": decks[setup.n_field] if setup.inputs.doctor else None,
        "rules": plan.profile.to_dict(),
    }


def _card_cols(catalog, card: int) -> dict[str, Any]:
    c = catalog.cards[card]
    return {"card": c.name, "order": c.type, "branch": c.branch, "rarity": c.rarity,
            "cost": c.cost, "set": catalog.set_of(card)}


def _replaced_by(catalog, host, cut: np.ndarray | None) -> str | None:
    if cut is None:
        return None
    changed = cut[host.slots != cut]
    ids, n = np.unique(changed, return_counts=True)
    return ", ".join(f"{k} {catalog.cards[int(i)].name}" for i, k in zip(ids, n, strict=True))


def worth_frame(setup, worths) -> pl.DataFrame:
    """``worth.parquet`` (or ``cuts.parquet``): each host's cards, least valuable first."""
    catalog = setup.plan.catalog
    rows = []
    for w in worths:
        m = w.measured
        rows.append({"host": setup.hosts[w.host].name, "card": catalog.cards[w.card].name,
                     "order": catalog.cards[w.card].type, "copies": w.copies,
                     "worth": None if m is None else -m.gain,
                     "worth_lo": None if m is None else -m.hi,
                     "worth_hi": None if m is None else -m.lo,
                     "replaced_by": _replaced_by(catalog, setup.hosts[w.host], w.cut),
                     "deals": None if m is None else m.deals * setup.n_field})
    return pl.DataFrame(rows, schema=WORTH_SCHEMA).sort(
        ["host", "worth"], nulls_last=True, maintain_order=True)


def power_frame(setup, found) -> pl.DataFrame:
    """``power.parquet``: each card measured, best gain first."""
    from rnr_sim.analytics.stats import Z95
    from rnr_sim.power.measure import edge

    catalog = setup.plan.catalog
    rows = []
    for r in found:
        f, m, s = r.fresh, r.mean, r.search
        e, e_se = edge(r) if f else (None, None)
        rows.append({
            **_card_cols(catalog, r.card), "in_field": int(setup.field_counts[r.card]),
            "gain": f and f.gain, "gain_lo": f and f.lo, "gain_hi": f and f.hi,
            "host": r.best and setup.hosts[r.best[0]].name,
            "copies": r.best and r.best[1],
            "mean_gain": m and m.gain, "mean_gain_lo": m and m.lo, "mean_gain_hi": m and m.hi,
            "edge": e, "edge_lo": f and e - Z95 * e_se, "edge_hi": f and e + Z95 * e_se,
            "gain_search": s and s.gain, "hosts": len({h for h, _ in r.arms}),
            "deals": (f.deals * setup.n_field) if f else None, "games": r.games,
            "flag": r.flag,
            "p_strong": None if np.isnan(r.p_strong) else r.p_strong,
            "p_weak": None if np.isnan(r.p_weak) else r.p_weak})
    return pl.DataFrame(rows, schema=POWER_SCHEMA).sort(
        "gain", descending=True, nulls_last=True, maintain_order=True)


def adds_frame(setup, found) -> pl.DataFrame:
    """``adds.parquet``: the deck doctor's best swaps, by their gain on fresh deals."""
    cards = setup.plan.catalog.cards
    rows = [{"card": cards[s.card].name, "out": cards[s.out].name, "copies": s.copies,
             "gain": s.fresh.gain, "gain_lo": s.fresh.lo, "gain_hi": s.fresh.hi,
             "gain_search": s.search.gain, "deals": s.fresh.deals * setup.n_field}
            for s in found]
    return pl.DataFrame(rows, schema=ADDS_SCHEMA)


def write(out: Path, setup, worths, found, first: int, phases: dict[str, int],
          seconds: float):
    """Write the power dir (module docstring); the manifest last."""
    from rnr_sim.power import FRESH_SEED_OFFSET, PowerResult, measure

    fp = fingerprint(setup)
    tables: dict[str, pl.DataFrame] = {}
    if setup.inputs.doctor:
        tables["cuts"] = worth_frame(setup, worths).drop("host")
        tables["adds"] = adds_frame(setup, found)
    else:
        tables["power"] = power_frame(setup, found)
        tables["worth"] = worth_frame(setup, worths)
    games = sum(phases.values())
    manifest: dict[str, Any] = {
        "kind": "power", "mode": "doctor" if setup.inputs.doctor else "pool",
        "status": "complete", "command": setup.options.command, **fp,
        "source": setup.inputs.source,
        "games": {"total": games, **phases},
        "deals": {"worth": setup.worth_deals, "race": measure.stage_ends(first),
                  "fresh": setup.fresh_deals, "fresh_seed": setup.options.seed
                  + FRESH_SEED_OFFSET},
        "flag_fdr": measure.FLAG_FDR,
        "seconds": round(seconds, 2), "games_per_s": round(games / max(seconds, 1e-9)),
    }
    if "power" in tables:
        p = tables["power"]
        manifest["flags"] = {k: int((p["flag"] == k).sum()) for k in ("too strong", "too weak")}
        manifest["cards"] = p.height
    ident = searchdirs.as_read(searchdirs.power_identity(manifest))
    files = {}
    for name, frame in tables.items():
        files[f"{name}.parquet"] = write_parquet(out / f"{name}.parquet", frame,
                                                 searchdirs.table_stamp(ident, name))
    manifest["identity"] = identity.seal(ident)
    manifest["files"] = files
    searchdirs.seal_content(manifest)  # its figures, sealed
    write_json(out / "manifest.json", manifest)
    return PowerResult(out=out, manifest=manifest, tables=tables)


def _pp(x: float) -> str:
    return f"{100 * x:+.1f}"


def summary_lines(result, top: int = 10) -> list[str]:
    """The end-of-run summary: the strongest and weakest cards, or the deck doctor's cuts
    and swaps."""
    m = result.manifest
    g = m["games"]
    lines = [f"Played {g['total']:,} games in {m['seconds']:.0f} s "
             f"({m['games_per_s']:,} games/s): {m['source']}."]
    if m["mode"] == "doctor":
        cuts = result.tables["cuts"]
        lines.append(f"What each card is worth to {m['deck']['name']} (its loss when cut, "
                     "its slots taken by more of the deck's own cards; cut the first first):")
        for r in cuts.head(top).iter_rows(named=True):
            w = "no legal cut" if r["worth"] is None else \
                f"{_pp(r['worth'])} pp [{_pp(r['worth_lo'])}, {_pp(r['worth_hi'])}]"
            if r["worth_hi"] is not None and r["worth_hi"] < 0:
                w += f"  (cut: {r['replaced_by']} instead does better)"
            lines.append(f"  {r['copies']} {r['card']:<34} {w}")
        lines.append("Best swaps (on fresh deals):")
        for r in result.tables["adds"].iter_rows(named=True):
            lines.append(f"  cut {r['copies']} {r['out']}, add {r['copies']} {r['card']}: "
                         f"{_pp(r['gain'])} pp [{_pp(r['gain_lo'])}, {_pp(r['gain_hi'])}]")
    else:
        p = result.tables["power"].filter(pl.col("gain").is_not_null())
        f = m["flags"]
        lines.append(f"{m['cards']} cards measured: {f['too strong']} flagged too strong, "
                     f"{f['too weak']} too weak (Benjamini-Hochberg, FDR {m['flag_fdr']}).")
        parts = [("Strongest", p.head(top)), ("Weakest", p.tail(top))] \
            if p.height > 2 * top else [("By gain", p)]
        for title, part in parts:
            lines.append(f"{title} (gain in the best host, on fresh deals):")
            for r in part.iter_rows(named=True):
                lines.append(
                    f"  {r['card']:<34} {r['order']:<8} {_pp(r['gain'])} pp "
                    f"[{_pp(r['gain_lo'])}, {_pp(r['gain_hi'])}]  x{r['copies']} in "
                    f"{r['host']}{'  ' + r['flag'] if r['flag'] else ''}")
    lines.append(f"Wrote {result.out} (rnr-sim report {result.out} draws it).")
    return lines

