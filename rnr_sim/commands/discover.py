"""The ``discover`` subcommand: search a card pool for the decks players will find
(``rnr_sim.discover``)."""

from __future__ import annotations

import json
import shlex
import sys

import typer

from rnr_sim.commands import options as opt
from rnr_sim.discover import BATCH, DEFAULT_BUDGET

OPTIONS = {
    "field": opt.deck_list_option("--field", "The decks every candidate plays. Default: the "
                                             "shipped sample decks."),
    "budget": opt.budget_option(DEFAULT_BUDGET, "search, tuning, held-out, metagame."),
    "out": opt.out_option("DIR", "The discovery dir. Default: runs/discover-<date-time>."),
    "meta": opt.option(bool, "--meta", help="Search in rounds, each against the equilibrium "
                                            "mix of the round before, until the mix settles "
                                            "(at most 3 rounds)."),
    "batch": opt.option(int, "--batch", default=BATCH, metavar="N", show_default=True,
                        help="Children a generation (fewer on a small budget)."),
    "cells": opt.option(str, "--cells", default="path-speed", metavar="KIND",
                        show_default=True,
                        help="The archive's cells: path-speed (the path of most wins x the "
                             "mean turn of the wins) or branch (main Branch x its share of "
                             "the cards)."),
}


@opt.command("discover", OPTIONS,
             short_help="Search the legal decks of a card pool for the strongest of each kind.",
             epilog="Example: rnr-sim discover --field decks/*.txt --budget 3000000 --seed 7 "
                    "--out runs/discovery")
def discover_command(*, field, budget, out, meta, batch, cells, resume, yardstick, seed, cards,
                     rules, threads, backend, address, quiet, as_json) -> None:
    """MAP-Elites (pyribs) over every Article V-legal deck of the loaded cards (default:
    the 355-card Original Set): one cell per kind of deck (--cells), its elite the
    strongest deck of that kind. Most candidates are the block swaps (a full set of a
    card out, another in) the search has learned to expect most of, from what every
    earlier swap did; each plays the --field decks on the same deals as its parent and
    stops as soon as it is clearly below it (paired racing); the best elites' pilots are
    tuned. Every elite is then re-measured on deals
    of a seed the search never used (the figures reported), and the best meet the field in
    a matchup matrix with its equilibrium. --budget bounds every game played. Writes a
    discovery dir: manifest.json, archive.parquet, deck_cards.parquet, field.parquet,
    matchups.parquet, learned.parquet (what the search learned of each card) and
    elites/NN.txt deck lists that validate, run, compare and tune
    take as they are; `rnr-sim report DIR` draws it. Ctrl-C stops after the games under
    way; --resume carries on to the same archive."""
    from rnr_sim.discover import DiscoverOptions, discover

    options = DiscoverOptions(field=field or (), cards=cards, budget=budget,
                              seed=opt.DEFAULT_SEED if seed is None else seed,
                              rules=rules, threads=threads, backend=backend, address=address,
                              out=out, resume=resume, meta=meta, batch=batch, cells=cells,
                              command=shlex.join(["rnr-sim", *sys.argv[1:]]),
                              yardstick=yardstick or 0)
    result = discover(options, progress=not (as_json or quiet),
                      log=(lambda m: None) if quiet else None)
    opt.exit_if_stopped(result)
    if as_json:
        typer.echo(json.dumps({"out": str(result.out), "manifest": result.manifest,
                               "archive": result.archive.to_dicts(),
                               "field": result.field.to_dicts()}, indent=2, default=str))
        return
    if quiet:
        typer.echo(f"Discovery dir: {result.out}")
        return
    for line in summary_lines(result):
        typer.echo(line)


def summary_lines(result) -> list[str]:
    """The end-of-discovery summary: what was played, the best elites (held-out), the field."""
    m = result.manifest
    g, s = m["games"], m["search"]
    r = s["racing"]
    lines = [
        f"Discovered {s['elites']} elites in {s['elites']} of {s['cells']} cells: "
        f"{s['generations']} generations, {s['children']:,} decks tried "
        f"({s['decks_per_million_games']:,.0f} per million games; {s['learned']:,} proposed "
        f"by what the search learned), {g['total']:,} games in {m['seconds']:.0f} s "
        f"({m['games_per_s']:,.0f} games/s).",
        f"Racing: {r['played']:,} search games where playing every deck to the end would take "
        f"{r['flat']:,} ({100 * r['saved']:.0f}% saved).",
        f"Held out ({m['heldout']['deals_per_field_deck']} deals a field deck, a seed the "
        f"search never used); QD-score {m['heldout']['qd_score']:.2f} (the elites' shares "
        "summed):",
    ]
    a = result.archive.head(10)
    lines.append(f"  {'':>2}  {'cell':<34} {'held-out [95% CI]':<20} {'search':>6}  "
                 f"{'pilot':<8} deck")
    for row in a.iter_rows(named=True):
        held = (f"{100 * row['share_heldout']:5.1f}% [{100 * row['share_heldout_lo']:.1f}, "
                f"{100 * row['share_heldout_hi']:.1f}]")
        lines.append(f"  {row['elite_id']:>2}  {row['cell']:<34} {held:<20} "
                     f"{100 * row['share_search']:5.1f}%  {row['pilot']:<8} {row['deck_file']}")
    if result.archive.height > a.height:
        lines.append(f"  and {result.archive.height - a.height} more (archive.parquet, and "
                     "the report's page)")
    best = m["heldout"]["best_field_deck"]
    f = result.field.sort("share_heldout", descending=True).row(0, named=True)
    lines.append(f"Best field deck: {best} {100 * f['share_heldout']:.1f}% "
                 f"[{100 * f['share_heldout_lo']:.1f}, {100 * f['share_heldout_hi']:.1f}].")
    checked = m.get("yardstick")
    if checked is not None:
        from rnr_sim import yardstick as ys

        checks = ys.read_checks(result.out)
        lines.append(f"Checked with a stronger pilot in every seat ({checked['games']:,} "
                     f"games, {checked['deals_per_field_deck']} held-out deals a field deck, "
                     f"{checked['seconds']} s): {ys.summary_sentence(checks)}")
        lines += [f"  {line}" for line in ys.check_lines(checks)]
    lines.append(f"Wrote {result.out} (rnr-sim report {shlex.quote(str(result.out))} draws it).")
    return lines
