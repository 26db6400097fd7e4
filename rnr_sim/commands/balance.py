"""The ``balance`` subcommand: card changes that bring a metagame within a designer's
targets, found by search and verified on fresh deals (``rnr_sim.balance``)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import typer

from rnr_sim.balance import DEFAULT_BUDGET, DEFAULT_SUGGESTIONS
from rnr_sim.commands import options as opt

OPTIONS = {
    "field": opt.deck_list_option("--field", "The decks of the metagame (or --discovery)."),
    "targets": opt.option(Path | None, "--targets", metavar="T.toml",
                          help="The targets and the scope (docs/design.md, \"Balance "
                               "targets\")."),
    "discovery": opt.option(Path | None, "--discovery", metavar="DIR",
                            help="A discovery dir: its elites and field, weighted by its "
                                 "equilibrium mix, are the metagame (its catalog, unless "
                                 "--cards)."),
    "budget": opt.budget_option(DEFAULT_BUDGET, "search, verification, re-discovery."),
    "out": opt.out_option("DIR", "The balance dir. Default: runs/balance-<date-time>."),
    "suggestions": opt.option(int, "--suggestions", default=DEFAULT_SUGGESTIONS, metavar="N",
                              show_default=True, help="Suggestions kept and verified, at most."),
    "rediscover": opt.option(bool, "--rediscover/--no-rediscover", default=True,
                             show_default=True,
                             help="Search the metagame again with each patched catalog "
                                  "(discover)."),
    "power": opt.option(Path | None, "--power", metavar="DIR",
                        help="A power dir (rnr-sim power): with cards = \"flagged\", the cards "
                             "it flags too strong or too weak (instead of the report's flags)."),
}


@opt.command(
    "balance", OPTIONS,
    short_help="Suggest card changes that meet a designer's balance targets.",
    help="Search integer changes to the card numbers in a targets file's scope (cost, "
    "damage, DP, IP, drain, effect amounts; and rules switches where the scope lists "
    "them) for those that bring the metagame within its "
    "targets (no deck above a win rate, each victory path's share of wins in a band, the "
    "first seat in a band, the equilibrium's support), with as few and as small changes "
    "as it can: NSGA-II (pymoo) over three objectives, every candidate played on the "
    "same deals as the unchanged catalog, weak ones stopped early. Each suggestion is "
    "written as a card patch (suggestions/NN.toml, best first) and, when it changes "
    "switches, a rules profile (suggestions/NN-rules.toml), checked by compare on "
    "fresh deals and followed by a discovery with the change. The metagame is "
    "the --field decks (several after one flag: --field decks/*.txt) or a "
    "discovery dir's elites and field, weighted by its equilibrium mix. --budget bounds "
    "every game played. `rnr-sim report DIR` draws the result.",
    epilog="Example: rnr-sim balance --field decks/*.txt --targets targets.toml "
    "--budget 3000000 --seed 7 --out runs/balance",
)
def balance_command(*, field, targets, discovery, budget, out, suggestions, rediscover, power,
                    resume, yardstick, seed, cards, rules, threads, backend, address, quiet,
                    as_json) -> None:
    from rnr_sim.balance import BalanceOptions, balance
    from rnr_sim.compare import Interrupted
    from rnr_sim.errors import InputError

    if targets is None:
        if resume and out is not None:  # a finished or foreign dir: said as for discover
            from rnr_sim.balance import CHECKPOINT
            from rnr_sim.runs.outdir import check_dir

            check_dir(out, True, "balance", CHECKPOINT, "balance", "balance run")
        raise InputError("balance needs --targets T.toml (docs/design.md, \"Balance targets\")")
    options = BalanceOptions(targets=targets, field=field or [], discovery=discovery,
                             cards=cards, budget=budget,
                             seed=opt.DEFAULT_SEED if seed is None else seed, rules=rules,
                             threads=threads, backend=backend, address=address, out=out,
                             suggestions=suggestions, rediscover=rediscover, resume=resume,
                             power=power, yardstick=yardstick or 0,
                             command=shlex.join(["rnr-sim", *sys.argv[1:]]))
    show = not (quiet or as_json)
    try:
        result = balance(options, progress=show, log=None if show else (lambda m: None))
    except (Interrupted, KeyboardInterrupt):
        typer.echo("Stopped after the search; `--resume` replays the search from its "
                   "checkpoint and verifies and searches the metagame again.", err=True)
        raise typer.Exit(opt.EXIT_INTERRUPTED) from None
    opt.exit_if_stopped(result)
    if as_json:
        typer.echo(json.dumps({"out": str(result.out), "manifest": result.manifest,
                               "suggestions": result.suggestions.to_dicts()},
                              indent=2, default=str))
        return
    from rnr_sim.report.balance import balance_text

    typer.echo(balance_text(result.out))
