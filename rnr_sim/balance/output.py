"""The balance dir (docs/design.md, "Balance dir"): what ``rnr-sim balance`` writes.

- ``suggestions/NN.toml``: each suggestion as a card patch, best first, which ``rnr-sim
  compare --patch`` takes as it is, and ``suggestions/NN-rules.toml`` when it changes
  rules switches: the run's rules profile with them changed, for ``--rules-b``;
- ``suggestions.parquet``: one row per suggestion (``SUGGESTIONS_SCHEMA``);
- ``candidates.parquet``: every candidate the search measured (its changes, distance to
  the targets and paired difference from the unchanged catalog, deals, stages raced);
- ``figures.parquet``: every target's figures before and after each suggestion, on the
  verification's deals, with intervals (``FIGURES_SCHEMA``; rank 0: the unchanged
  catalog on the search's deals, the figures of a "no change needed");
- ``verify/NN/``: ``compare``'s run dirs and ``compare.json`` for suggestion NN, and
  ``discovery/``, the discovery dir of the metagame after it;
- ``manifest.json``: the inputs, the answer (``status``: ``suggestions``, ``no change
  needed``, ``infeasible within scope`` or ``no suggestion``; ``message``), the games and
  seconds of each phase, the search's history. Written last: a dir with a manifest is a
  complete balance run.

Each Parquet file carries the balance run's identity and its name; the manifest seals the
identity and records the SHA-256 of every Parquet file and patch (``searchdirs``).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim import __version__
from rnr_sim.balance.metrics import Figures
from rnr_sim.balance.targets import (
    Changes,
    changes_cards,
    changes_rules,
    describe,
    patch_toml,
    rules_toml,
    switches_changed,
)
from rnr_sim.files import file_sha256, write_json, write_parquet
from rnr_sim.runs import identity, searchdirs
from rnr_sim.runs.schema import WIN_PATHS

SUGGESTIONS_SCHEMA = {
    "rank": pl.Int32, "cards": pl.List(pl.String), "switches": pl.List(pl.String),
    "changes": pl.List(pl.String),
    "targets_met": pl.List(pl.String), "targets_missed": pl.List(pl.String),
    "verified": pl.Boolean, "n_cards": pl.Int32, "size": pl.Float64,
    "distance_search": pl.Float64, "distance_verified": pl.Float64,
    "distance_before": pl.Float64, "file": pl.String, "rules_file": pl.String,
    "compare_dir": pl.String,
    "compare_command": pl.String, "verify_deals": pl.Int64,
    "strongest_after": pl.String, "strongest_after_share": pl.Float64,
    "strongest_after_lo": pl.Float64, "strongest_after_hi": pl.Float64,
    "strongest_after_breaks": pl.Boolean,
}
FIGURES_SCHEMA = {
    "rank": pl.Int32, "target": pl.String, "subject": pl.String,
    "before": pl.Float64, "before_lo": pl.Float64, "before_hi": pl.Float64,
    "after": pl.Float64, "after_lo": pl.Float64, "after_hi": pl.Float64,
    "change": pl.Float64, "change_lo": pl.Float64, "change_hi": pl.Float64,
    "band_lo": pl.Float64, "band_hi": pl.Float64, "met_before": pl.Boolean,
    "met_after": pl.Boolean,
}


def fingerprint(plan, tf, knobs, budget: int, options, weights: np.ndarray) -> dict[str, Any]:
    """Everything that shapes the search's games, in the order a resume compares them."""
    from rnr_sim.runs.manifests import catalog_sources

    return {
        "tool_version": __version__, "seed": options.seed, "budget": budget,
        "suggestions": options.suggestions, "rediscover": options.rediscover,
        "catalog": {"name": plan.catalog.name, "sha256": plan.catalog.sha256,
                    "sources": catalog_sources(plan.catalog)},
        "decks": [{"name": d.name, "path": str(Path(d.path).resolve()), "sha256": d.sha256,
                   "policy": p} for d, p in zip(plan.decks, plan.policies, strict=True)],
        "weights": [float(w) for w in weights],
        "rules": plan.profile.to_dict(),
        "targets": tf.targets.to_json(), "scope": tf.scope.to_json(),
        "knobs": [k.label for k in knobs],
    }


def targets_file(tf) -> dict[str, Any]:
    """The targets file as the manifest records it: its path and the SHA-256 of its text."""
    import hashlib

    return {"path": None if tf.path is None else str(Path(tf.path).resolve()),
            "sha256": hashlib.sha256(tf.text.encode("utf-8")).hexdigest()}


def ordered(found, s) -> Changes:
    """A suggestion's changes, the one it relies on most first (``Search.order``)."""
    adds = found.order.get(s.changes, [0.0] * len(s.changes))
    idx = sorted(range(len(s.changes)), key=lambda i: (-adds[i], i))
    return tuple(s.changes[i] for i in idx)


def suggestion_files(rank: int, knobs, changes: Changes) -> tuple[str | None, str | None]:
    """A suggestion's files in the balance dir: its card patch ``suggestions/NN.toml`` when
    it changes cards, its rules profile ``suggestions/NN-rules.toml`` when it changes
    switches (None: not written)."""
    return (f"suggestions/{rank:02d}.toml" if changes_cards(knobs, changes) else None,
            f"suggestions/{rank:02d}-rules.toml" if changes_rules(knobs, changes) else None)


def write_patches(out: Path, catalog, profile, knobs, found, tf
                  ) -> list[tuple[Path | None, Path | None]]:
    """Each suggestion's (card patch, rules profile), best first (``suggestion_files``)."""
    files = []
    for rank, s in enumerate(found.suggestions, start=1):
        ch = ordered(found, s)
        lines = describe(knobs, ch)
        # The search's own score is optimistic (the winner's curse): it is named as such,
        # and the figures on fresh deals are the verification's (figures.parquet).
        note = (f"rnr-sim balance suggestion {rank:02d}: {'; '.join(lines)}. The search's "
                f"own estimate, before verification: {100 * s.distance:.1f} pp from the "
                f"targets on {s.deals} deals a pair (unchanged: "
                f"{100 * found.baseline_judged.distance:.1f} pp); the figures on fresh deals: "
                "figures.parquet, or `rnr-sim report` of this balance dir.")
        name = f"Balance suggestion {rank:02d}"
        patch, rules = suggestion_files(rank, knobs, ch)
        if patch is not None:
            (out / patch).write_text(patch_toml(catalog, knobs, ch, name, note),
                                     encoding="utf-8")
        if rules is not None:
            (out / rules).write_text(rules_toml(profile, knobs, ch, name, note),
                                     encoding="utf-8")
        files.append(tuple(None if f is None else out / f for f in (patch, rules)))
    return files


def _baseline_rows(fig: Figures, names: list[str], t, catalog) -> list[dict[str, Any]]:
    """Rank 0: the unchanged catalog's figures on the search's deals (with ``iwd_max``,
    the watched cards' adjusted IWD)."""
    rows = []

    def add(target, subject, f, lo, hi):
        a, b = f.interval()
        met = (lo is None or f.value >= lo) and (hi is None or f.value <= hi)
        rows.append({"rank": 0, "target": target, "subject": subject, "before": f.value,
                     "before_lo": a, "before_hi": b, "after": None, "after_lo": None,
                     "after_hi": None, "change": None, "change_lo": None, "change_hi": None,
                     "band_lo": lo, "band_hi": hi, "met_before": met, "met_after": None})

    if t.deck_share_max is not None:
        for i, name in enumerate(names):
            add("deck_share_max", name, fig.deck[i], None, t.deck_share_max)
    for k, p in enumerate(WIN_PATHS):
        if p in t.path_share:
            add("path_share", p, fig.path[k], *t.path_share[p])
    if t.first_seat is not None:
        add("first_seat", "first seat", fig.first, *t.first_seat)
    if t.iwd_max is not None:
        for c, f in fig.iwd.items():
            add("iwd_max", catalog.cards[c].name, f, None, t.iwd_max)
    return rows


def _clean(x):
    return None if isinstance(x, float) and math.isnan(x) else x


def write(out: Path, plan, tf, meta, knobs, found, checked, after, options, scope_how,
          budget: int, seconds: dict[str, float], adaptation: dict | None = None,
          yardstick: dict | None = None):
    """Write the balance dir (module docstring); returns a ``Balance``."""
    from rnr_sim.balance import CHECKPOINT, Balance

    t = tf.targets
    fig_rows = _baseline_rows(found.baseline, meta.names, t, plan.catalog)
    sug_rows = []
    for s, v in zip(found.suggestions, checked, strict=False):
        ch = ordered(found, s)
        a = after.get(v.rank)
        patch, rules = suggestion_files(v.rank, knobs, ch)
        sug_rows.append({
            "rank": v.rank, "cards": list(dict.fromkeys(knobs[k].card for k, _ in ch
                                                        if not knobs[k].rule)),
            "switches": switches_changed(knobs, ch), "changes": describe(knobs, ch), "targets_met": v.met,
            "targets_missed": v.missed, "verified": v.verified, "n_cards": s.n_cards,
            "size": s.size, "distance_search": s.distance, "distance_verified": v.distance,
            "distance_before": v.distance_before,
            "file": patch, "rules_file": rules,
            "compare_dir": str(v.compare_dir.relative_to(out)),
            "compare_command": v.command, "verify_deals": v.deals,
            "strongest_after": None if a is None else f"{a['deck']} ({a['cell']})",
            "strongest_after_share": None if a is None else a["share"],
            "strongest_after_lo": None if a is None else a["share_lo"],
            "strongest_after_hi": None if a is None else a["share_hi"],
            "strongest_after_breaks": None if a is None else a["breaks"],
        })
        for r in v.rows:
            fig_rows.append({"rank": v.rank, "target": r.target, "subject": r.subject,
                             **{k: _clean(getattr(r, k)) for k in (
                                 "before", "before_lo", "before_hi", "after", "after_lo",
                                 "after_hi", "change", "change_lo", "change_hi", "band_lo",
                                 "band_hi")},
                             "met_before": r.met_before, "met_after": r.met_after})
    suggestions = pl.DataFrame(sug_rows, schema=SUGGESTIONS_SCHEMA)
    figures = pl.DataFrame(fig_rows, schema=FIGURES_SCHEMA)
    status, message = answer(found, checked, t)
    # "suggestions" is the list of them below: the number asked for is kept apart.
    inputs = {**fingerprint(plan, tf, knobs, budget, options, meta.weights),
              "suggestions_asked": options.suggestions, "targets_file": targets_file(tf)}
    ident = searchdirs.balance_identity(searchdirs.as_read(inputs))
    files = {f"{name}.parquet": write_parquet(out / f"{name}.parquet", frame,
                                              metadata=searchdirs.table_stamp(ident, name))
             for name, frame in (("suggestions", suggestions),
                                 ("candidates", candidates_frame(found, knobs)),
                                 ("figures", figures))}
    files |= {r[k]: file_sha256(out / r[k]) for r in sug_rows
              for k in ("file", "rules_file") if r[k] is not None}
    games_verify = sum(v.games for v in checked)
    games_re = sum(a["games"] for a in after.values())
    games_adapt = 0 if adaptation is None else adaptation["games"]
    j0 = found.baseline_judged
    manifest = {
        "kind": "balance", "status": status, "message": message, "command": options.command,
        **inputs,
        "metagame": {"source": meta.source, "decks": meta.names,
                     "weights": [float(w) for w in meta.weights]},
        "scope_cards": scope_how,
        "baseline": {"deals": found.baseline_deals, "distance": j0.distance,
                     "missed": j0.missed, "support": found.baseline.support,
                     "mix": dict(zip(meta.names, map(float, found.baseline.mix), strict=True))},
        "games": {"total": found.games + games_verify + games_re + games_adapt
                  + int(scope_how.get("games", 0)), "search": found.games,
                  "verify": games_verify, "rediscover": games_re, "adapt": games_adapt,
                  "flagged_run": int(scope_how.get("games", 0))},
        "search": {"knobs": found.knobs, "screened": found.screened,
                   "generations": found.generations, "candidates": found.candidates,
                   "racing": {"played": found.games, "flat": found.flat_games,
                              "saved": 1 - found.games / found.flat_games
                              if found.flat_games else 0.0},
                   "history": found.history, "attribution": found.attribution,
                   "phases": found.phases},
        "suggestions": [{"rank": r["rank"], "changes": r["changes"],
                         "targets_met": r["targets_met"], "targets_missed": r["targets_missed"],
                         "verified": r["verified"], "support": list(v.support),
                         "after": after.get(v.rank)} for r, v in zip(sug_rows, checked,
                                                                      strict=True)],
        "adaptation": adaptation,
        "yardstick": yardstick,
        "seconds": {k: round(x, 1) for k, x in seconds.items()},
        "identity": identity.seal(ident), "files": files,
    }
    if not (out / "suggestions").exists():
        (out / "suggestions").mkdir()
    searchdirs.seal_content(manifest)  # its figures, sealed
    write_json(out / "manifest.json", manifest)
    shutil.rmtree(out / CHECKPOINT, ignore_errors=True)
    return Balance(out=out, status=status, manifest=manifest, suggestions=suggestions,
                   figures=figures, messages=[message])


def candidates_frame(found, knobs) -> pl.DataFrame:
    """Every candidate the search measured, nearest the targets first."""
    rows = sorted(found.scored.values(), key=lambda s: (-s.deals, s.distance, s.changes))
    return pl.DataFrame({
        "changes": [describe(knobs, s.changes) for s in rows],
        "distance": [s.distance for s in rows],
        "delta": [s.delta for s in rows], "delta_se": [s.delta_se for s in rows],
        "deals": [s.deals for s in rows], "stages": [s.stage for s in rows],
        "n_cards": [s.n_cards for s in rows], "size": [s.size for s in rows],
        "missed": [s.missed for s in rows], "safe": [s.safe for s in rows]},
        schema={"changes": pl.List(pl.String), "distance": pl.Float64, "delta": pl.Float64,
                "delta_se": pl.Float64, "deals": pl.Int64, "stages": pl.Int32,
                "n_cards": pl.Int32, "size": pl.Float64, "missed": pl.List(pl.String),
                "safe": pl.Boolean})


def answer(found, checked, t) -> tuple[str, str]:
    """The run's answer in one status and one sentence (docs/search.md)."""
    j0 = found.baseline_judged
    if not j0.missed:
        return ("no change needed",
                f"No change needed: every target is met by the unchanged catalog on "
                f"{found.baseline_deals:,} deals a pair ({', '.join(t.names())}).")
    good = [v for v in checked if v.verified]
    if good:
        return ("suggestions",
                f"{len(good)} of {len(checked)} suggestions meet every target on fresh deals "
                f"(best: suggestion {good[0].rank:02d}).")
    if not checked:
        full = [x for x in found.scored.values() if x.full and x.changes]
        if full:
            return ("infeasible within scope",
                    f"Infeasible within the scope: of the {len(full)} changes measured in "
                    f"full, none comes nearer the targets than the unchanged cards "
                    f"({100 * j0.distance:.1f} pp from them on {found.baseline_deals:,} deals "
                    "a pair).")
        return ("no suggestion",
                "No candidate was measured in full within the budget: raise --budget.")
    best = min(checked, key=lambda v: v.distance)
    worst = [r for r in best.rows if not r.met_after]
    shown = "; ".join(_outside(r) for r in worst[:4]) + (
        f"; and {len(worst) - 4} more (the suggestion's table)" if len(worst) > 4 else "")
    missed = ", ".join(best.missed)
    return ("infeasible within scope",
            f"Infeasible within the scope: no suggestion meets {missed} on fresh deals. "
            f"Closest: suggestion {best.rank:02d}, {100 * best.distance:.1f} pp from the "
            f"targets (unchanged: {100 * best.distance_before:.1f} pp)"
            + (f"; still outside: {shown}" if shown else "") + ".")


def yardstick_lines(m: dict[str, Any]) -> list[str]:
    """The first suggestion checked with a stronger pilot (``balance --yardstick``)."""
    y = m.get("yardstick")
    if not y:
        return []
    return [f"With a stronger pilot (suggestion {y['suggestion']:02d}, {y['deals']} deals a "
            f"pair, {y['games']:,} games): {y['summary']}"] + [f"  {x}" for x in y["lines"]]


def adaptation_lines(m: dict[str, Any]) -> list[str]:
    """The double-oracle loop's rounds in words (``adapt``), from a balance manifest."""
    a = m.get("adaptation")
    if not a:
        return []
    verdict = {True: "holds after adaptation", False: "does not hold after adaptation",
               None: "not settled (the budget ended first)"}[a["holds"]]
    lines = [f"After adaptation: suggestion {a['suggestion']:02d} {verdict} "
             f"({len(a['rounds'])} round{'s' if len(a['rounds']) != 1 else ''}, "
             f"{a['games']:,} games)."]
    for r in a["rounds"]:
        head = (f"  round {r['round']}: patch {'; '.join(r['patch'])}; strongest deck found "
                f"{Path(r['deck']).name if r['deck'] else '-'} ({100 * r['deck_share']:.1f}% "
                "held out)")
        if r["holds"]:
            lines.append(head + ": with it in the metagame, every target holds.")
            continue
        nxt = ("; next: " + "; ".join(r["next"]) + (" (verified)" if r["next_verified"]
                                                   else " (not verified)")) \
            if r["next"] else (f"; no change found meets the targets against it "
                               f"({r.get('candidates', 0)} candidates, {r['games']:,} games)")
        lines.append(head + f": it breaks {', '.join(r['missed'])} "
                     f"({100 * r['distance']:.1f} pp from the targets){nxt}.")
    return lines


def _outside(r) -> str:
    """A figure still outside its band after a suggestion, in its target's units (a card's
    IWD in points, the shares in %)."""
    if r.target == "iwd_max":
        return (f"iwd_max {r.subject.split(' -> ')[-1]} {100 * r.after:+.1f} pp (at most "
                f"{100 * r.band_hi:+.1f} pp)")
    return f"{r.target} {r.subject} {100 * r.after:.1f}% (band {_band(r)})"


def _band(r) -> str:
    lo = "" if r.band_lo is None else f"{100 * r.band_lo:.0f}%"
    hi = "" if r.band_hi is None else f"{100 * r.band_hi:.0f}%"
    return f"{lo}..{hi}" if lo else f"at most {hi}"

