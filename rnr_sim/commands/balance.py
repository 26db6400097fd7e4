"""The ``balance`` subcommand: card changes that bring a metagame within a designer's
targets, found by search and verified on fresh deals (``rnr_sim.balance``)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from rnr_sim.commands.options import EXIT_INTERRUPTED, CardsOption, RulesOption, ThreadsOption


def register(app: typer.Typer) -> None:
    """Add ``balance`` to the app."""
    app.command(
        "balance",
        short_help="Suggest card changes that meet a designer's balance targets.",
        help="Search integer changes to the card numbers in a targets file's scope (cost, "
        "damage, DP, IP, drain, effect amounts) for those that bring the metagame within its "
        "targets (no deck above a win rate, each victory path's share of wins in a band, the "
        "first seat in a band, the equilibrium's support), with as few and as small changes "
        "as it can: NSGA-II (pymoo) over three objectives, every candidate played on the "
        "same deals as the unchanged catalog, weak ones stopped early. Each suggestion is "
        "written as a card patch (suggestions/NN.toml, best first), checked by compare on "
        "fresh deals and followed by a discovery with the patched catalog. The metagame is "
        "the --field decks (DECK arguments join them, so --field decks/*.txt works) or a "
        "discovery dir's elites and field, weighted by its equilibrium mix. --budget bounds "
        "every game played. `rnr-sim report DIR` draws the result.",
        epilog="Example: rnr-sim balance --field decks/*.txt --targets targets.toml "
        "--budget 3000000 --seed 7 --out runs/balance",
    )(balance_command)


def balance_command(
    more: Annotated[list[Path] | None, typer.Argument(
        metavar="[DECK]...", show_default=False,
        help="More field decks (what a shell expands --field decks/*.txt into).")] = None,
    field: Annotated[list[Path] | None, typer.Option(
        "--field", metavar="DECK", show_default=False,
        help="A deck of the metagame (repeat, or list the rest after it).")] = None,
    targets: Annotated[Path | None, typer.Option(
        "--targets", metavar="T.toml", show_default=False,
        help="The targets and the scope (docs/design.md, \"Balance targets\").")] = None,
    discovery: Annotated[Path | None, typer.Option(
        "--discovery", metavar="DIR", show_default=False,
        help="A discovery dir: its elites and field, weighted by its equilibrium mix, are "
        "the metagame (its catalog, unless --cards).")] = None,
    budget: Annotated[int, typer.Option("--budget", metavar="GAMES",
                                        help="Every game the command plays.")] = 2_000_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the search.")] = 20261231,
    out: Annotated[Path | None, typer.Option(
        "--out", metavar="DIR", show_default=False,
        help="The balance dir. Default: runs/balance-<date-time>.")] = None,
    suggestions: Annotated[int, typer.Option(
        "--suggestions", metavar="N", help="Suggestions kept and verified, at most.")] = 3,
    rediscover: Annotated[bool, typer.Option(
        "--rediscover/--no-rediscover",
        help="Search the metagame again with each patched catalog (discover).")] = True,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Carry on a stopped balance run in --out (the same options).")] = False,
    cards: CardsOption = None,
    rules: RulesOption = None,
    threads: ThreadsOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q",
                                        help="No progress bars or notes.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    from rnr_sim.balance import BalanceOptions, balance
    from rnr_sim.compare import Interrupted
    from rnr_sim.errors import InputError

    if targets is None:
        raise InputError("balance needs --targets T.toml (docs/design.md, \"Balance targets\")")
    decks = [*(field or []), *(more or [])]
    options = BalanceOptions(targets=targets, field=decks, discovery=discovery, cards=cards,
                             budget=budget, seed=seed, rules=rules, threads=threads, out=out,
                             suggestions=suggestions, rediscover=rediscover, resume=resume,
                             command=shlex.join(["rnr-sim", *sys.argv[1:]]))
    show = not (quiet or as_json)
    try:
        result = balance(options, progress=show, log=None if show else (lambda m: None))
    except (Interrupted, KeyboardInterrupt):
        typer.echo("Stopped during the verification; `--resume` replays the search from its "
                   "checkpoint and verifies again.", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if result.stopped:
        for m in result.messages:
            typer.echo(m, err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    if as_json:
        typer.echo(json.dumps({"out": str(result.out), "manifest": result.manifest,
                               "suggestions": result.suggestions.to_dicts()},
                              indent=2, default=str))
        return
    from rnr_sim.report.balance import balance_text

    typer.echo(balance_text(result.out))
