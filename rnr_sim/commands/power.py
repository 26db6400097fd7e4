"""The ``power`` subcommand: what every card of a pool is worth, by controlled swaps on
common deals; with ``--deck``, the deck doctor (``rnr_sim.power``)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import typer

from rnr_sim.commands import options as opt
from rnr_sim.power import DEFAULT_BUDGET, DEFAULT_MARGIN

OPTIONS = {
    "field": opt.deck_list_option("--field", "The decks the hosts play (and, without --deck, "
                                             "the hosts). Default: the sample decks."),
    "discovery": opt.option(Path | None, "--discovery", metavar="DIR",
                            help="A discovery dir: its field, with its best elites as hosts "
                                 "too (its catalog and rules, unless --cards/--rules)."),
    "deck": opt.option(Path | None, "--deck", metavar="DECK",
                       help="The deck doctor: which cards of this deck to cut, what to put in."),
    "only_set": opt.option(str | None, "--set", metavar="NAME",
                           help="Measure only this set's cards (its new cards and its errata; "
                                "with --card, those too)."),
    "card": opt.option(list[str] | None, "--card", metavar="NAME",
                       help="Measure only this card (the option again for more)."),
    "budget": opt.budget_option(DEFAULT_BUDGET, "the hosts' cards cut, the swaps, the "
                                "fresh deals (ten times discover's and balance's: it measures "
                                "every card)."),
    "margin": opt.option(float, "--margin", default=DEFAULT_MARGIN, metavar="SHARE",
                         show_default=True,
                         help="Too strong: a swap lifts its best host by more than this share."),
    "out": opt.out_option("DIR", "The power dir. Default: runs/power-<date-time>."),
}


@opt.command(
    "power", OPTIONS,
    short_help="What every card is worth, by swapping it into decks on the same deals.",
    help="Measure every card of the catalog (default: the 355-card Original Set; --set "
    "or --card for fewer) by controlled swaps: copies of the card take the place of a "
    "host deck's least valuable cards of the same Order (measured: what the deck loses "
    "when each is cut), at one copy and a full set, and the host plays the field on the "
    "same deals with and without the swap (paired). A card's power is its gain in the "
    "host where it serves best, re-measured on fresh deals, and its mean over hosts, "
    "each with a 95% interval; cards are flagged too strong (the gain above --margin) "
    "or too weak (below 0) under Benjamini-Hochberg. The hosts are the --field decks "
    "(default: the sample decks), or a discovery's field and best elites. Swaps that "
    "plainly do nothing stop early (racing). With --deck, the deck doctor: what each "
    "card of the deck is worth to it (cuts.parquet) and the best swaps "
    "(adds.parquet). --budget bounds every game played; Ctrl-C stops after the games "
    "under way and --resume carries on. `rnr-sim report DIR` draws the result.",
    epilog="Example: rnr-sim power --field decks/*.txt --budget 5000000 --out "
    "runs/power; rnr-sim power --deck decks/eagle_blockade.txt --field decks/*.txt "
    "--out runs/doctor",
)
def power_command(*, field, discovery, deck, only_set, card, budget, margin, out, resume, seed,
                  cards, rules, threads, backend, address, quiet, as_json) -> None:
    from rnr_sim.power import PowerOptions, power
    from rnr_sim.power.output import summary_lines

    options = PowerOptions(field=field or (), discovery=discovery, deck=deck, cards=cards,
                           only_set=only_set, only_cards=card or (), budget=budget,
                           seed=opt.DEFAULT_SEED if seed is None else seed, margin=margin,
                           rules=rules, threads=threads, backend=backend, address=address,
                           out=out, resume=resume,
                           command=shlex.join(["rnr-sim", *sys.argv[1:]]))
    show = not (quiet or as_json)
    result = power(options, progress=show, log=None if show else (lambda m: None))
    opt.exit_if_stopped(result)
    if as_json:
        typer.echo(json.dumps({"out": str(result.out), "manifest": result.manifest,
                               **{k: v.to_dicts() for k, v in result.tables.items()
                                  if k != "worth"}}, indent=2, default=str))
        return
    for line in summary_lines(result):
        typer.echo(line)
