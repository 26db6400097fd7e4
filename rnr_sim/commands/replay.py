"""The ``replay`` subcommand: one game, turn by turn, in plain words."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rnr_sim.commands.options import CardsOption, RulesOption


def register(app: typer.Typer) -> None:
    """Add ``replay`` to the app."""
    app.command(
        "replay",
        short_help="Play one game and print it turn by turn.",
        help="Play one game between the decks (seat 0 holds the first deck, seat 1 the "
        "second, ...) and print it turn by turn: setup, every turn's draws, plays, "
        "activations and Resolve steps, and the rule that decided it. Game K is deal K "
        "of table 0 with first seat K mod P: the same game `rnr-sim run` plays for that "
        "seed, table, deal and first seat.",
        epilog="Example: rnr-sim replay decks/scroll_assembly.txt decks/bison_stampede.txt "
        "--game 3",
    )(replay_command)


def replay_command(
    decks: Annotated[
        list[Path],
        typer.Argument(metavar="DECK", show_default=False,
                       help="2 to 4 deck list files, one per seat."),
    ],
    seed: Annotated[
        int | None,
        typer.Option("--seed", metavar="S", show_default=False,
                     help="Master seed (0 to 2**64-1). Default: the run default, 20251129."),
    ] = None,
    game: Annotated[
        int,
        typer.Option("--game", "-g", metavar="K",
                     help="Which game: deal K, first seat K mod the number of decks."),
    ] = 0,
    cards: CardsOption = None,
    rules: RulesOption = None,
    policy: Annotated[
        str | None,
        typer.Option("--policy", metavar="P", show_default=False,
                     help="Heuristic player for every seat, overriding each deck's 'Policy:' "
                     "header (default: that header, else balanced)."),
    ] = None,
    allow_illegal: Annotated[
        bool,
        typer.Option("--allow-illegal", help="Play decks that break Article V."),
    ] = False,
    search_seat: Annotated[
        int | None,
        typer.Option("--search-seat", metavar="Q", show_default=False,
                     help="Seat Q plays the search pilot (its own pilot plays the rollouts); "
                     "the log shows each option it weighed and its value."),
    ] = None,
    rollouts: Annotated[
        int, typer.Option("--rollouts", "-k", metavar="K",
                          help="Search: playouts per option and determinization."),
    ] = 32,
    determinizations: Annotated[
        int, typer.Option("--determinizations", metavar="N",
                          help="Search: redeals of the hidden cards per decision."),
    ] = 2,
) -> None:
    from rnr_sim.bounds import check_deal
    from rnr_sim.replay import replay_game

    check_deal(game, max(len(decks), 1))  # the deal must fit a run's 64-bit game_id
    result = replay_game(decks, seed=seed, game=game, cards=cards, rules=rules, policy=policy,
                         allow_illegal=allow_illegal, log=lambda m: typer.echo(m, err=True),
                         search_seat=search_seat, rollouts=rollouts,
                         determinizations=determinizations)
    typer.echo("\n".join(result.lines))
